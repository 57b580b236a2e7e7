//! What the GGUF tests of the CLI share: small synthetic Llama files in a scratch
//! directory and runs of the CLI under a time limit.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use specula_gguf::GgufModel;
use specula_gguf::synthetic::{MatrixType, SyntheticLlama};

/// A run on the tiny models takes well under a second; a run still going after this is
/// hung (a FIFO read, a loop), and waiting longer would only hide it. Generous, for a
/// loaded CI machine.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Refusals happen before any model runs, so they get less time before they count as hung.
pub const REFUSAL_LIMIT: Duration = Duration::from_secs(30);

pub const PROMPT: &str = "the cat sat on the mat";

/// A directory under the system's temp dir, unique to this process and call, removed
/// when dropped (also when the test fails).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "specula-gguf-{name}-{}-{nanos}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self(dir)
    }

    /// Writes `bytes` to `name` in the directory and returns its path as an argument.
    pub fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write");
        arg(&path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn arg(path: &Path) -> String {
    path.display().to_string()
}

/// The target: the tiny synthetic model with its own output head (a tied head makes
/// these random weights repeat one token, which would hide a wrong token in the tests'
/// comparisons), context `context`.
pub fn target_model(context: u32) -> SyntheticLlama {
    SyntheticLlama {
        seed: 2,
        untied_output: true,
        context,
        ..SyntheticLlama::tiny()
    }
}

/// A draft for [`target_model`]: its weights quantized to Q4_1, the same tokenizer. It
/// agrees with the target's argmax about half the time, so that greedy runs take both
/// the acceptance and the rejection path (a random draft of fewer layers agrees almost
/// never).
pub fn draft_model(context: u32) -> SyntheticLlama {
    SyntheticLlama {
        matrix_type: MatrixType::Q4_1,
        ..target_model(context)
    }
}

/// A draft of another shape: one layer, other weights; it rejects nearly every token.
pub fn small_draft_model(context: u32) -> SyntheticLlama {
    SyntheticLlama {
        seed: 5,
        n_layers: 1,
        ..target_model(context)
    }
}

/// A scratch directory holding `target.gguf`, `draft.gguf` and `small.gguf`, and their
/// paths.
pub fn models(name: &str, context: u32) -> (Scratch, String, String, String) {
    let dir = Scratch::new(name);
    let target = dir.write("target.gguf", &target_model(context).build());
    let draft = dir.write("draft.gguf", &draft_model(context).build());
    let small = dir.write("small.gguf", &small_draft_model(context).build());
    (dir, target, draft, small)
}

/// [`models`] without the small draft.
pub fn pair(name: &str, context: u32) -> (Scratch, String, String) {
    let (dir, target, draft, _) = models(name, context);
    (dir, target, draft)
}

pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `specula args`, killing it and failing the test if it runs past `limit`.
/// Output goes to files, so that a chatty child cannot block on a full pipe while the
/// test polls it.
pub fn run_within(args: &[&str], limit: Duration) -> Run {
    let dir = Scratch::new("out");
    let (out_path, err_path) = (dir.0.join("stdout"), dir.0.join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).expect("output file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_specula"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(file(&out_path))
        .stderr(file(&err_path))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run specula: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("specula {args:?} still ran after {limit:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).expect("read")).into_owned();
    Run {
        status,
        stdout: read(&out_path),
        stderr: read(&err_path),
    }
}

pub fn run(args: &[&str]) -> Run {
    run_within(args, RUN_LIMIT)
}

/// A run that must succeed with nothing on stderr.
pub fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "specula {args:?}: {}: {}",
        out.status,
        out.stderr
    );
    out.stdout
}

/// `generate --json` on `prompt` with `extra` flags: the output object.
pub fn generate_json(models: &[&str], extra: &[&str]) -> Value {
    let args = [
        &["generate", "--prompt", PROMPT, "--json"][..],
        models,
        extra,
    ]
    .concat();
    serde_json::from_str(&run_ok(&args)).expect("one JSON object")
}

pub fn tokens(value: &Value) -> Vec<u32> {
    value["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .map(|t| u32::try_from(t.as_u64().expect("a token id")).expect("a u32"))
        .collect()
}

/// The target file's own tokenizer, independent of the CLI's loading.
pub fn tokenizer(path: &str) -> specula_gguf::BpeTokenizer {
    let bytes = std::fs::read(path).expect("read");
    GgufModel::from_bytes(bytes, None)
        .expect("the synthetic file loads")
        .tokenizer
}

/// SmolLM2-135M's path, when `scripts/smollm2-reference.sh` has fetched it; `None` (with
/// a note) without it, unless `SPECULA_REQUIRE_REAL_MODELS` is set, as in
/// specula-model's tests/smollm2.rs.
pub fn smollm2() -> Option<String> {
    if let Ok(gguf) = std::env::var("SPECULA_SMOLLM2_GGUF") {
        return Some(gguf);
    }
    assert!(
        std::env::var_os("SPECULA_REQUIRE_REAL_MODELS").is_none(),
        "SPECULA_REQUIRE_REAL_MODELS is set but SPECULA_SMOLLM2_GGUF is not \
         (eval \"$(bash scripts/smollm2-reference.sh)\")"
    );
    eprintln!("skipped: no SmolLM2 file (eval \"$(bash scripts/smollm2-reference.sh)\")");
    None
}
