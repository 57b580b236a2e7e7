//! The JavaScript files generated from Rust definitions stay equal to what the Rust
//! code generates today:
//! - `web/src/limits.js`, every default and limit of the options
//!   (`specula_engine::options::limits`), which the npm package exports and the page's
//!   controls read;
//! - `web/src/types.d.ts` and `web/src/types/*.d.ts`, the TypeScript declarations (ts-rs,
//!   from the serde attributes) of everything that crosses to JavaScript: the options and
//!   their error, rounds and traces, metrics, the summary.
//!
//! `SPECULA_BLESS=1 cargo test -p specula-wasm --test generated` rewrites those that
//! differ and still fails, naming them (a blessed run passes only when nothing drifted);
//! it is refused in CI.

use std::path::PathBuf;

use specula_engine::options::limits::LIMITS;
use specula_engine::options::{
    BackendChoice, CALLER_SIDE_SAMPLE_SETTINGS, CpuSimd, CpuThreads, DECODE_OPTION_NAMES,
    DraftBackend, GGUF_SOURCE_NAMES, LOAD_OPTION_NAMES, METHOD_OPTIONS, PLAN_OPTION_NAMES,
    RETARGET_OPTION_NAMES, SAMPLE_SETTING_NAMES, THEORY_OPTION_NAMES,
};
use ts_rs::{Config, TS};

/// A type's name and declaration.
fn decl<T: TS>(cfg: &Config) -> (String, String) {
    (T::name(cfg), T::decl(cfg))
}

/// A generated file's name, what it holds, and its declarations.
type Group = (&'static str, &'static str, Vec<(String, String)>);

/// The declarations in four files by theme (`web/src/types/<file>.d.ts`, each under a
/// few hundred lines), every type once, in an order a reader can follow.
fn groups() -> Vec<Group> {
    // u64 counters (nanoseconds, seeds) are plain numbers in JavaScript.
    let cfg = &Config::new().with_large_int("number");
    vec![
        (
            "options",
            "The options of generate(), their limits, the configuration they resolve to, and the one error shape.",
            vec![
                decl::<specula_engine::options::DecodeOptions>(cfg),
                decl::<specula_wasm::CheckedOptions>(cfg),
                decl::<specula_engine::options::MethodName>(cfg),
                decl::<specula_engine::options::MethodOption>(cfg),
                decl::<specula_engine::options::OptionError>(cfg),
                decl::<specula_engine::options::Problem>(cfg),
                decl::<specula_engine::ApiError>(cfg),
                decl::<specula_engine::ErrorCode>(cfg),
                decl::<specula_engine::options::limits::Limits>(cfg),
                decl::<specula_engine::DecodeConfig>(cfg),
                decl::<specula_engine::Method>(cfg),
                decl::<specula_engine::DraftShape>(cfg),
                decl::<specula_engine::Selection>(cfg),
                decl::<specula_engine::GammaPolicy>(cfg),
                decl::<specula_core::SamplingConfig>(cfg),
                decl::<specula_core::Bug>(cfg),
            ],
        ),
        (
            "rounds",
            "One round of decoding as generate() yields it: the report, the engine's trace, each depth's tests and plans.",
            vec![
                decl::<specula_wasm::RoundReport>(cfg),
                decl::<specula_engine::RoundTrace>(cfg),
                decl::<specula_engine::DraftNode>(cfg),
                decl::<specula_engine::DepthStep>(cfg),
                decl::<specula_engine::StepPlan>(cfg),
                decl::<specula_engine::BonusStep>(cfg),
                decl::<specula_engine::TokenSource>(cfg),
                decl::<specula_engine::TokenCounts>(cfg),
                decl::<specula_engine::Timing>(cfg),
                decl::<specula_engine::FinishReason>(cfg),
                decl::<specula_core::TokenOutcome>(cfg),
                decl::<specula_core::DraftTest>(cfg),
                decl::<specula_core::TestRule>(cfg),
                decl::<specula_core::ResidualDraw>(cfg),
                decl::<specula_core::Residual>(cfg),
                decl::<specula_core::ResidualParts>(cfg),
                decl::<specula_core::KSeqPlan>(cfg),
                decl::<specula_core::RacePlan>(cfg),
                decl::<specula_core::MentoredPlan>(cfg),
                decl::<specula_core::TypicalPlan>(cfg),
            ],
        ),
        (
            "summary",
            "A whole generation's summary and metrics, load()'s options and where the models run, a model's stage profile, and the options and curves of theory() and retarget().",
            vec![
                decl::<specula_wasm::Summary>(cfg),
                decl::<specula_engine::Metrics>(cfg),
                decl::<specula_engine::MetricsSummary>(cfg),
                decl::<specula_wasm::BackendInfo>(cfg),
                decl::<specula_wasm::StageReport>(cfg),
                decl::<specula_engine::ForwardStage>(cfg),
                decl::<specula_wasm::BackendChoice>(cfg),
                decl::<specula_wasm::ModuleKind>(cfg),
                decl::<specula_engine::options::SimdLevel>(cfg),
                decl::<specula_engine::options::CpuSimd>(cfg),
                decl::<specula_engine::options::CpuThreads>(cfg),
                decl::<specula_wasm::GpuCalls>(cfg),
                decl::<specula_wasm::ThreadCalls>(cfg),
                decl::<specula_engine::options::LoadOptions>(cfg),
                decl::<specula_engine::options::GgufSource>(cfg),
                decl::<specula_engine::options::Progress>(cfg),
                decl::<specula_wasm::DraftBackend>(cfg),
                decl::<specula_engine::options::TheoryOptions>(cfg),
                decl::<specula_wasm::TheoryCurves>(cfg),
                decl::<specula_engine::options::RetargetOptions>(cfg),
            ],
        ),
        (
            "lab",
            "The lab: many runs' first or second character against its exact distribution (Engine.exact, fit, Specula.sample).",
            vec![
                decl::<specula_engine::options::SampleSettings>(cfg),
                decl::<specula_wasm::SampleResult>(cfg),
                decl::<specula_wasm::LabExact>(cfg),
                decl::<specula_engine::lab::Exact>(cfg),
                decl::<specula_engine::lab::Fit>(cfg),
            ],
        ),
        (
            "plan",
            "The options and the report of plan(), the token-level analysis (`specula plan --json`).",
            vec![
                decl::<specula_engine::options::PlanOptions>(cfg),
                decl::<specula_core::PlanMethod>(cfg),
                decl::<specula_core::PlanSelection>(cfg),
                decl::<specula_core::PlanReport>(cfg),
                decl::<specula_core::BugReport>(cfg),
                decl::<specula_core::PlanNote>(cfg),
                decl::<specula_core::PlanNoteKind>(cfg),
            ],
        ),
    ]
}

const HEADER: &str = "// Generated from the Rust types by `SPECULA_BLESS=1 cargo test -p specula-wasm --test\n\
                      // generated` (ts-rs): do not edit. What each field means is documented on the Rust type.\n";

/// Each generated file's path under `web/src` and text: one per group, importing what it
/// uses from the others, and `types.d.ts` re-exporting them all.
fn type_files() -> Vec<(String, String)> {
    let groups = groups();
    let owner = |name: &str| {
        groups
            .iter()
            .find(|(_, _, decls)| decls.iter().any(|(n, _)| n == name))
            .map(|g| g.0)
    };
    let mut files = Vec::new();
    let mut index =
        format!("{HEADER}// Every data type that crosses from the wasm module to JavaScript.\n\n");
    for (file, about, decls) in &groups {
        let mut imports: std::collections::BTreeMap<&str, std::collections::BTreeSet<String>> =
            Default::default();
        for (_, text) in decls {
            for word in text.split(|c: char| !c.is_alphanumeric()) {
                if let Some(other) = owner(word).filter(|o| o != file) {
                    imports.entry(other).or_default().insert(word.to_owned());
                }
            }
        }
        let mut out = format!("{HEADER}// {about}\n");
        for (other, names) in &imports {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            out.push_str(&format!(
                "import type {{ {} }} from \"./{other}\";\n",
                names.join(", ")
            ));
        }
        for (_, text) in decls {
            out.push_str(&format!("\nexport {text}\n"));
        }
        files.push((format!("types/{file}.d.ts"), out));
        index.push_str(&format!("export type * from \"./types/{file}\";\n"));
    }
    files.push(("types.d.ts".to_owned(), index));
    files
}

fn limits_js() -> String {
    let json = serde_json::to_string_pretty(&LIMITS).expect("limits serialise");
    let bugs: Vec<serde_json::Value> = specula_core::Bug::ALL
        .iter()
        .map(|b| serde_json::json!({ "name": b.name(), "description": b.description() }))
        .collect();
    let bugs = serde_json::to_string_pretty(&bugs).expect("bugs serialise");
    // In the table's order (a JSON map would sort the methods).
    let methods: Vec<String> = METHOD_OPTIONS
        .iter()
        .map(|(method, options)| {
            let options = serde_json::to_string(options).expect("options serialise");
            format!("  {:?}: {options}", method.as_str())
        })
        .collect();
    let methods = format!("{{\n{}\n}}", methods.join(",\n"));
    let list = |names: &[&str]| serde_json::to_string(names).expect("names serialise");
    let backends: Vec<&str> = BackendChoice::ALL.iter().map(|c| c.name()).collect();
    let draft_backends: Vec<&str> = DraftBackend::ALL.iter().map(|c| c.name()).collect();
    let cpu_simds: Vec<&str> = CpuSimd::ALL.iter().map(|c| c.name()).collect();
    let threads = CpuThreads::ALL;
    let names = format!(
        "/** The names of load()'s options and of a GGUF file's, and the choices of backend, draftBackend, cpuSimd and threads (specula_engine::options::LoadOptions). */\n\
         export const LOAD_OPTION_NAMES = Object.freeze({});\n\
         export const GGUF_SOURCE_NAMES = Object.freeze({});\n\
         export const BACKENDS = Object.freeze({});\n\
         export const DRAFT_BACKENDS = Object.freeze({});\n\
         export const CPU_SIMDS = Object.freeze({});\n\
         export const THREADS = Object.freeze({});\n\
         \n\
         /** The names of sample()'s settings (specula_engine::options::SampleSettings), and those the package keeps on the calling side. */\n\
         export const SAMPLE_SETTING_NAMES = Object.freeze({});\n\
         export const CALLER_SIDE_SAMPLE_SETTINGS = Object.freeze({});\n",
        list(&LOAD_OPTION_NAMES),
        list(&GGUF_SOURCE_NAMES),
        list(&backends),
        list(&draft_backends),
        list(&cpu_simds),
        serde_json::to_string(&threads).expect("choices serialise"),
        list(&SAMPLE_SETTING_NAMES),
        list(&CALLER_SIDE_SAMPLE_SETTINGS),
    );
    let files = format!(
        "/** The most bytes of a model description, of a weight file (two bytes a parameter of the largest model plus slack) and of a GGUF file: the worker refuses a larger one before downloading it (specula_model::MAX_META_BYTES, MAX_PARAMS, WEIGHTS_SLACK_BYTES; specula_wasm::MAX_GGUF_FILE_BYTES). */\n\
         export const FILE_LIMITS = Object.freeze({{ descriptionBytes: {}, weightsBytes: {}, ggufBytes: {} }});\n",
        specula_model::MAX_META_BYTES,
        2 * specula_model::MAX_PARAMS as u64 + specula_model::WEIGHTS_SLACK_BYTES,
        specula_wasm::MAX_GGUF_FILE_BYTES,
    );
    format!(
        "// Generated from specula_engine::options::limits (crates/specula-engine/src/options/limits.rs),\n\
         // METHOD_OPTIONS (crates/specula-engine/src/options/method_options.rs) and the names of\n\
         // the options of load() and sample() (crates/specula-engine/src/options/load.rs, sample.rs)\n\
         // by `SPECULA_BLESS=1 cargo test -p specula-wasm --test generated`: do not edit.\n\
         \n\
         /** Every default and limit of the generate() options, as the engine checks them. */\n\
         export const LIMITS = Object.freeze({json});\n\
         \n\
         /** The deliberate bugs `bug` plants, with what each gets wrong (specula_core::Bug). */\n\
         export const BUGS = Object.freeze({bugs});\n\
         \n\
         /** The options each method takes besides the common ones; the others are refused. */\n\
         export const METHOD_OPTIONS = Object.freeze(Object.fromEntries(Object.entries({methods}).map(([method, options]) => [method, Object.freeze(options)])));\n\
         \n\
         {names}\n\
         {files}"
    )
}

/// `want` is in `web/src/<name>`. With `SPECULA_BLESS` set (refused in CI) a file that
/// differs is written and the test still fails, naming it: a blessed run passes only when
/// nothing had drifted, so blessing cannot hide a drift, and the rerun checks what it wrote.
fn check_generated(name: &str, want: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../web/src")
        .join(name);
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    let bless = std::env::var_os("SPECULA_BLESS").is_some();
    assert!(
        !(bless && std::env::var_os("CI").is_some()),
        "SPECULA_BLESS is set in CI: generated files are never rewritten there"
    );
    if bless {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("web/src/types");
        }
        std::fs::write(&path, want).unwrap_or_else(|e| panic!("write web/src/{name}: {e}"));
        panic!("web/src/{name} was regenerated: review the diff, then rerun without SPECULA_BLESS");
    }
    panic!(
        "web/src/{name} differs from what the Rust definitions generate; regenerate it with \
         SPECULA_BLESS=1 cargo test -p specula-wasm --test generated\n--- want:\n{want}"
    );
}

#[test]
fn limits_js_is_generated_from_the_engine() {
    check_generated("limits.js", &limits_js());
}

#[test]
fn types_d_ts_is_generated_from_the_rust_types() {
    let files = type_files();
    let types: String = files.iter().map(|(_, text)| text.as_str()).collect();
    // Every key JavaScript sees is camelCase: a snake_case field means a type crossing
    // to JavaScript lacks `#[serde(rename_all = "camelCase")]`.
    for line in types
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with('*'))
    {
        for word in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            let field = line.contains(&format!("{word}:")) || line.contains(&format!("{word}?:"));
            assert!(
                !(field && word.contains('_')),
                "snake_case key {word} in: {line}"
            );
        }
    }
    for (name, text) in &files {
        check_generated(name, text);
        assert!(
            text.lines().count() <= 600,
            "{name} is over 600 lines: split its group"
        );
    }
}

/// The field names of a generated declaration (`name:` or `name?:` at the start of a
/// line that is not a comment).
fn declared_fields(decl: &str) -> std::collections::BTreeSet<String> {
    decl.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('*') && !l.starts_with('/'))
        .filter_map(|l| {
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let rest = &l[name.len()..];
            (!name.is_empty() && (rest.starts_with(':') || rest.starts_with("?:"))).then_some(name)
        })
        .collect()
}

/// Every options type's declaration has exactly the names its reader takes (and the
/// page checks by): a field added to the struct or a name to the list only fails here.
#[test]
fn each_options_declaration_has_the_names_its_reader_takes() {
    use specula_engine::options as o;
    let cfg = &Config::new().with_large_int("number");
    let cases: [(String, &[&str]); 7] = [
        (o::DecodeOptions::decl(cfg), &DECODE_OPTION_NAMES),
        (o::PlanOptions::decl(cfg), &PLAN_OPTION_NAMES),
        (o::TheoryOptions::decl(cfg), &THEORY_OPTION_NAMES),
        (o::RetargetOptions::decl(cfg), &RETARGET_OPTION_NAMES),
        (o::SampleSettings::decl(cfg), &SAMPLE_SETTING_NAMES),
        (o::LoadOptions::decl(cfg), &LOAD_OPTION_NAMES),
        (o::GgufSource::decl(cfg), &GGUF_SOURCE_NAMES),
    ];
    for (decl, names) in cases {
        let names: std::collections::BTreeSet<String> =
            names.iter().map(|n| (*n).to_owned()).collect();
        assert_eq!(declared_fields(&decl), names, "{decl}");
    }
    // The reader sees a field added on one side.
    let extra = o::TheoryOptions::decl(cfg).replacen('{', "{\nextra?: number,", 1);
    assert_ne!(
        declared_fields(&extra),
        THEORY_OPTION_NAMES
            .iter()
            .map(|n| (*n).to_owned())
            .collect()
    );
}
