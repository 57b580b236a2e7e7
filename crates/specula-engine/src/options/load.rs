//! Loading the models, defined once: where they run ([`BackendChoice`], [`DraftBackend`]),
//! the package's `load()` options ([`LoadOptions`], checked on the page before any module
//! is downloaded, by the names and choices generated from here into `web/src/limits.js`),
//! and the files the bindings' `Engine.load` and `DraftEngine.load` read
//! ([`ModuleLoadOptions`], [`DraftLoadOptions`]). Files cross as [`Raw::Bytes`], which
//! the bindings make of a `Uint8Array` or an `ArrayBuffer`.

use serde::Serialize;

use super::{FromRaw, OptionError, Raw, object_entries};

/// The names of the package's `load()` options, as JavaScript spells them.
pub const LOAD_OPTION_NAMES: [&str; 11] = [
    "backend",
    "draftBackend",
    "cpuSimd",
    "threads",
    "onProgress",
    "weightsUrl",
    "target",
    "draft",
    "wasmUrl",
    "wasmCpuUrl",
    "wasmCpuRelaxedUrl",
];

/// The names of a [`GgufSource`].
pub const GGUF_SOURCE_NAMES: [&str; 1] = ["url"];

/// Where the models run, as asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// WebGPU when available, else the CPU.
    #[default]
    Auto,
    /// WebGPU or an error.
    WebGpu,
    /// The CPU backend inside wasm.
    Cpu,
}

impl BackendChoice {
    /// Every choice, the default first.
    pub const ALL: [Self; 3] = [Self::Auto, Self::WebGpu, Self::Cpu];

    /// The name the options give it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::WebGpu => "webgpu",
            Self::Cpu => "cpu",
        }
    }

    /// The choice named `name` (the default when `None`).
    ///
    /// # Errors
    /// [`OptionError`] about `backend` for any other name.
    pub fn parse(name: Option<&str>) -> Result<Self, OptionError> {
        one_of("backend", name, &Self::ALL.map(|c| (c.name(), c)))
    }
}

/// Where the draft model runs, asked for at `load`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum DraftBackend {
    /// Wherever the target runs.
    #[default]
    Same,
    /// On the CPU inside wasm even when the target is on WebGPU: no dispatches at all
    /// (MODELS.md, "On WebGPU").
    Cpu,
    /// Wherever the target runs, but on WebGPU without the fused draft pass (one dispatch
    /// per block): burn's operations and the few-row kernels, a few dozen dispatches per
    /// call, as before the fusion. For measuring what the fusion saves.
    Unfused,
}

impl DraftBackend {
    /// Every choice, the default first.
    pub const ALL: [Self; 3] = [Self::Same, Self::Cpu, Self::Unfused];

    /// The name the options give it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Same => "same",
            Self::Cpu => "cpu",
            Self::Unfused => "unfused",
        }
    }

    /// The choice named `name` (the default when `None`).
    ///
    /// # Errors
    /// [`OptionError`] about `draftBackend` for any other name.
    pub fn parse(name: Option<&str>) -> Result<Self, OptionError> {
        one_of("draftBackend", name, &Self::ALL.map(|c| (c.name(), c)))
    }
}

/// The choice named `given` among `choices` (the first when `None`); another name is
/// refused as `field`, listing the choices.
///
/// # Errors
/// [`OptionError`] naming `field`.
pub fn one_of<T: Copy>(
    field: &str,
    given: Option<&str>,
    choices: &[(&str, T)],
) -> Result<T, OptionError> {
    let Some(given) = given else {
        return choices
            .first()
            .map(|&(_, value)| value)
            .ok_or_else(|| OptionError::invalid(field, "one of no choices", "a value"));
    };
    if let Some(&(_, value)) = choices.iter().find(|(name, _)| *name == given) {
        return Ok(value);
    }
    let names: Vec<String> = choices
        .iter()
        .map(|(name, _)| format!("{name:?}"))
        .collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    };
    let shown: String = given.chars().take(40).collect();
    Err(OptionError::invalid(field, list, format!("{shown:?}")))
}

/// The options of the package's `load()`: its declaration, and the names the page
/// checks them by ([`LOAD_OPTION_NAMES`]). They are checked on the page, not in the
/// module: `wasmUrl` says where the module is, and the URLs resolve against the page.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename_all = "camelCase"))]
pub struct LoadOptions {
    /// Default "auto": WebGPU when the browser gives an adapter, otherwise the CPU inside
    /// wasm.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub backend: Option<BackendChoice>,
    /// Default "same" (on WebGPU a draft call of one or two positions is then one fused
    /// dispatch per block). "cpu" keeps the small draft model on the CPU inside wasm while
    /// the target runs on WebGPU. "unfused" is "same" without the fusion, to measure it.
    /// No effect when the target runs on the CPU.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub draft_backend: Option<DraftBackend>,
    /// Default "auto": which build of the CPU-only module runs the models on the CPU
    /// (`BackendInfo.simd` says which did). "auto" loads the relaxed-SIMD build where the
    /// browser compiles it and it is served (`wasmCpuRelaxedUrl`), else the `simd128`
    /// one; "relaxed-simd" insists (else code "backend_unavailable"); "simd128" gives the
    /// same logits on every machine. No effect on models on WebGPU.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cpu_simd: Option<super::CpuSimd>,
    /// Default "auto": Web Workers sharing the target's dense layers on the CPU, 1 or 2
    /// (`CpuThreads`; `BackendInfo.threads` says how many run, `threadsReason` why one).
    /// 2 needs a cross-origin isolated page (else code "backend_unavailable"). No effect
    /// on a target on WebGPU.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub threads: Option<super::CpuThreads>,
    /// Called with each file's download progress.
    #[cfg_attr(feature = "ts", ts(optional, type = "(progress: Progress) => void"))]
    pub on_progress: Option<()>,
    /// Where draft.json, draft.bpk, target.json, target.bpk and manifest.json live
    /// (default: bundled with the package).
    #[cfg_attr(feature = "ts", ts(optional, type = "string | URL"))]
    pub weights_url: Option<String>,
    /// A Llama-family GGUF file as the target model (docs/real-models.md), instead of
    /// the bundled pair: give `draft` with it, and not `weightsUrl`. The two must share a
    /// tokenizer (else code "bad_weights"). With GGUF models `alphabet` is "",
    /// generation stops at the file's end token, and `sample()` and `parallelDraft` are
    /// refused ("invalid_option").
    #[cfg_attr(feature = "ts", ts(optional))]
    pub target: Option<GgufSource>,
    /// The draft model's GGUF file; required with `target`.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub draft: Option<GgufSource>,
    /// Where the full module's specula_wasm_bg.wasm (WebGPU and CPU) lives (default:
    /// bundled with the package, dist/wasm/). Given without `wasmCpuUrl`, this module
    /// serves every backend and the math calls.
    #[cfg_attr(feature = "ts", ts(optional, type = "string | URL"))]
    pub wasm_url: Option<String>,
    /// Where the CPU-only module's specula_wasm_bg.wasm lives (default: bundled with the
    /// package, dist/wasm-cpu/): loaded for backend "cpu", for "auto" when the browser
    /// gives no WebGPU adapter, and for plan(), theory(), retarget() and checkOptions().
    #[cfg_attr(feature = "ts", ts(optional, type = "string | URL"))]
    pub wasm_cpu_url: Option<String>,
    /// Where the relaxed-SIMD build of the CPU-only module lives (default: bundled with
    /// the package, dist/wasm-cpu-relaxed/). Not loaded when `wasmUrl` or `wasmCpuUrl`
    /// is given without it.
    #[cfg_attr(feature = "ts", ts(optional, type = "string | URL"))]
    pub wasm_cpu_relaxed_url: Option<String>,
}

/// One GGUF file of [`LoadOptions`]: `target` or `draft`.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GgufSource {
    /// Where the file is served, resolved against the page's location like
    /// `weightsUrl`; a `blob:` or `data:` URL works too. At most 2 GiB (larger files are
    /// refused with code "bad_weights" before they are read whole); a failed download is
    /// "download_failed".
    #[cfg_attr(feature = "ts", ts(type = "string | URL"))]
    pub url: String,
}

/// Download progress of one file (the wasm module, then the weight files).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Progress {
    /// The file's name.
    pub file: String,
    /// Bytes so far.
    pub loaded: f64,
    /// Bytes expected, when known.
    pub total: Option<f64>,
}

/// The names `Engine.load` of the bindings takes (what the package's worker sends).
pub const MODULE_LOAD_OPTION_NAMES: [&str; 8] = [
    "backend",
    "draftBackend",
    "draftMeta",
    "draftWeights",
    "targetMeta",
    "targetWeights",
    "draftGguf",
    "targetGguf",
];

/// The names `DraftEngine.load` of the bindings takes (a draft worker's).
pub const DRAFT_LOAD_OPTION_NAMES: [&str; 8] = [
    "draftMeta",
    "draftWeights",
    "targetMeta",
    "draftGguf",
    "targetGguf",
    "target",
    "pause",
    "targetBackend",
];

/// The model files of either load, as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileOptions {
    /// The draft's description (JSON text).
    pub draft_meta: Option<String>,
    /// The draft's weights.
    pub draft_weights: Option<Vec<u8>>,
    /// The target's description (JSON text).
    pub target_meta: Option<String>,
    /// The target's weights (`Engine.load` only).
    pub target_weights: Option<Vec<u8>>,
    /// The draft's GGUF file.
    pub draft_gguf: Option<Vec<u8>>,
    /// The target's GGUF file.
    pub target_gguf: Option<Vec<u8>>,
}

/// The model files, checked: the bundled architecture's or a GGUF pair.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelFiles {
    /// Descriptions and weights of the bundled architecture (`target_weights` empty for
    /// a draft worker, which never reads them).
    Bundled {
        /// The draft's description.
        draft_meta: String,
        /// The draft's weights.
        draft_weights: Vec<u8>,
        /// The target's description.
        target_meta: String,
        /// The target's weights.
        target_weights: Vec<u8>,
    },
    /// Two GGUF files.
    Gguf {
        /// The draft's file.
        draft: Vec<u8>,
        /// The target's file.
        target: Vec<u8>,
    },
}

impl FileOptions {
    /// Reads `key` if it names a file; `Ok(false)` when it names none.
    fn take(&mut self, key: &str, value: Raw) -> Result<bool, OptionError> {
        match key {
            "draftMeta" => self.draft_meta = String::take(key, value)?,
            "draftWeights" => self.draft_weights = Vec::take(key, value)?,
            "targetMeta" => self.target_meta = String::take(key, value)?,
            "targetWeights" => self.target_weights = Vec::take(key, value)?,
            "draftGguf" => self.draft_gguf = Vec::take(key, value)?,
            "targetGguf" => self.target_gguf = Vec::take(key, value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Both GGUF files, or the bundled files (`target_weights` required when `weights`).
    fn resolve(self, weights: bool) -> Result<ModelFiles, OptionError> {
        let required = |name: &str, what: &str| OptionError::missing(name, what.to_owned());
        if self.draft_gguf.is_some() || self.target_gguf.is_some() {
            let bundled = [
                ("draftMeta", self.draft_meta.is_some()),
                ("draftWeights", self.draft_weights.is_some()),
                ("targetMeta", self.target_meta.is_some()),
                ("targetWeights", self.target_weights.is_some()),
            ];
            if let Some((name, _)) = bundled.into_iter().find(|(_, given)| *given) {
                return Err(OptionError::invalid(
                    name,
                    "left out with GGUF files (draftGguf, targetGguf)",
                    "a value",
                ));
            }
            let gguf = "both GGUF files (draftGguf, targetGguf)";
            return Ok(ModelFiles::Gguf {
                draft: self.draft_gguf.ok_or_else(|| required("draftGguf", gguf))?,
                target: self
                    .target_gguf
                    .ok_or_else(|| required("targetGguf", gguf))?,
            });
        }
        let bundled = "the models' files (descriptions and weights) or two GGUF files";
        Ok(ModelFiles::Bundled {
            draft_meta: self
                .draft_meta
                .ok_or_else(|| required("draftMeta", bundled))?,
            draft_weights: self
                .draft_weights
                .ok_or_else(|| required("draftWeights", bundled))?,
            target_meta: self
                .target_meta
                .ok_or_else(|| required("targetMeta", bundled))?,
            target_weights: match self.target_weights {
                Some(w) => w,
                None if weights => return Err(required("targetWeights", bundled)),
                None => Vec::new(),
            },
        })
    }
}

/// `Engine.load`'s options as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModuleLoadOptions {
    /// One of [`BackendChoice::ALL`] by name.
    pub backend: Option<String>,
    /// One of [`DraftBackend::ALL`] by name.
    pub draft_backend: Option<String>,
    /// The model files.
    pub files: FileOptions,
}

/// `Engine.load`'s options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleLoad {
    /// Where the models run.
    pub backend: BackendChoice,
    /// Where the draft runs.
    pub draft_backend: DraftBackend,
    /// The files.
    pub files: ModelFiles,
}

impl ModuleLoadOptions {
    /// Reads the options: names from [`MODULE_LOAD_OPTION_NAMES`], files as bytes.
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown option or value of a wrong type.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { backend, draftMeta }")? {
            match key.as_str() {
                "backend" => o.backend = String::take(&key, value)?,
                "draftBackend" => o.draft_backend = String::take(&key, value)?,
                _ => {
                    if !o.files.take(&key, value)? {
                        return Err(OptionError::unknown(key, &MODULE_LOAD_OPTION_NAMES));
                    }
                }
            }
        }
        Ok(o)
    }

    /// Checks the choices and that the files are one complete set.
    ///
    /// # Errors
    /// [`OptionError`] naming an unknown choice, a missing file, or a bundled file given
    /// with GGUF files.
    pub fn resolve(self) -> Result<ModuleLoad, OptionError> {
        Ok(ModuleLoad {
            backend: BackendChoice::parse(self.backend.as_deref())?,
            draft_backend: DraftBackend::parse(self.draft_backend.as_deref())?,
            files: self.files.resolve(true)?,
        })
    }
}

/// `DraftEngine.load`'s options as given; `target` and `pause` are functions, which the
/// bindings take from the object themselves once these are checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DraftLoadOptions {
    /// The model files (no target weights).
    pub files: FileOptions,
    /// Whether `target` is a function.
    pub target: Option<bool>,
    /// Whether `pause` is a function.
    pub pause: Option<bool>,
    /// Where the target runs now: `"webgpu"` or `"cpu"`.
    pub target_backend: Option<String>,
}

/// `DraftEngine.load`'s options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftLoad {
    /// The files (no target weights).
    pub files: ModelFiles,
    /// Whether the target runs on WebGPU.
    pub target_on_gpu: bool,
}

impl DraftLoadOptions {
    /// Reads the options: names from [`DRAFT_LOAD_OPTION_NAMES`], files as bytes.
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown option or value of a wrong type.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { draftMeta, target }")? {
            match key.as_str() {
                "target" | "pause" => {
                    let is_function = value == Raw::Other("a function");
                    if !is_function && value != Raw::Null {
                        return Err(OptionError::invalid(key, "a function", value.describe()));
                    }
                    let slot = if key == "target" {
                        &mut o.target
                    } else {
                        &mut o.pause
                    };
                    *slot = is_function.then_some(true);
                }
                "targetBackend" => o.target_backend = String::take(&key, value)?,
                "targetWeights" => return Err(OptionError::unknown(key, &DRAFT_LOAD_OPTION_NAMES)),
                _ => {
                    if !o.files.take(&key, value)? {
                        return Err(OptionError::unknown(key, &DRAFT_LOAD_OPTION_NAMES));
                    }
                }
            }
        }
        Ok(o)
    }

    /// Checks that both functions are there and the files are one complete set (the
    /// target's GGUF file is read for its tokenizer and context only).
    ///
    /// # Errors
    /// [`OptionError`] naming a missing function or file.
    pub fn resolve(self) -> Result<DraftLoad, OptionError> {
        for (name, given) in [("target", self.target), ("pause", self.pause)] {
            if given != Some(true) {
                return Err(OptionError::missing(name, "a function"));
            }
        }
        Ok(DraftLoad {
            files: self.files.resolve(false)?,
            target_on_gpu: self.target_backend.as_deref() == Some("webgpu"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes() -> Raw {
        Raw::Bytes(vec![1, 2, 3])
    }

    fn object(entries: Vec<(&str, Raw)>) -> Raw {
        Raw::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    fn module(entries: Vec<(&str, Raw)>) -> Result<ModuleLoad, OptionError> {
        ModuleLoadOptions::from_raw(object(entries))?.resolve()
    }

    #[test]
    fn choices_are_named_once() {
        assert_eq!(BackendChoice::parse(None), Ok(BackendChoice::Auto));
        assert_eq!(
            BackendChoice::parse(Some("webgpu")),
            Ok(BackendChoice::WebGpu)
        );
        assert_eq!(
            DraftBackend::parse(Some("unfused")),
            Ok(DraftBackend::Unfused)
        );
        let e = DraftBackend::parse(Some("gpu")).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"draftBackend must be "same", "cpu" or "unfused", got "gpu""#
        );
        for choice in BackendChoice::ALL {
            let json = serde_json::to_value(choice).unwrap();
            assert_eq!(json, choice.name());
        }
        for choice in DraftBackend::ALL {
            assert_eq!(serde_json::to_value(choice).unwrap(), choice.name());
        }
    }

    #[test]
    fn module_load_options_are_one_complete_set() {
        let gguf = module(vec![("draftGguf", bytes()), ("targetGguf", bytes())]).unwrap();
        assert!(matches!(gguf.files, ModelFiles::Gguf { .. }));
        let text = || Raw::String("{}".into());
        let bundled = module(vec![
            ("backend", Raw::String("cpu".into())),
            ("draftMeta", text()),
            ("draftWeights", bytes()),
            ("targetMeta", text()),
            ("targetWeights", bytes()),
        ])
        .unwrap();
        assert_eq!(bundled.backend, BackendChoice::Cpu);
        for (entries, field) in [
            (vec![("targetGguf", bytes())], "draftGguf"),
            (
                vec![
                    ("targetGguf", bytes()),
                    ("draftGguf", bytes()),
                    ("draftMeta", text()),
                ],
                "draftMeta",
            ),
            (vec![("draftWeights", text())], "draftWeights"),
            (vec![("draftMeta", text())], "draftWeights"),
            (vec![("backend", Raw::String("metal".into()))], "backend"),
            (vec![("weights", bytes())], "weights"),
        ] {
            assert_eq!(module(entries).unwrap_err().field, field);
        }
    }

    #[test]
    fn draft_load_options_need_both_functions() {
        let function = || Raw::Other("a function");
        let draft = |entries| DraftLoadOptions::from_raw(object(entries))?.resolve();
        let ok = draft(vec![
            ("draftGguf", bytes()),
            ("targetGguf", bytes()),
            ("target", function()),
            ("pause", function()),
            ("targetBackend", Raw::String("webgpu".into())),
        ])
        .unwrap();
        assert!(ok.target_on_gpu);
        let e = draft(vec![
            ("draftGguf", bytes()),
            ("targetGguf", bytes()),
            ("target", function()),
        ]);
        assert_eq!(e.unwrap_err().field, "pause");
        let e = draft(vec![("target", Raw::Number(1.0))]);
        assert_eq!(e.unwrap_err().field, "target");
        let e = draft(vec![("targetWeights", bytes())]);
        assert_eq!(e.unwrap_err().field, "targetWeights");
    }
}
