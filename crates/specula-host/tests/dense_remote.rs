//! A remote copy of the model taking half of each large dense call (the browser's second
//! worker) gives the logits of one thread, bit for bit, for both architectures; a remote
//! that refuses or answers wrongly changes nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use burn::tensor::Device;
use specula_engine::{ForwardRequest, LanguageModel, Query, Role};
use specula_gguf::GgufModel;
use specula_gguf::synthetic::SyntheticLlama;
use specula_host::{DenseCall, DenseRemote, DeviceLm, HostLm, HostPass};
use specula_model::{Gpt, ModelConfig};

/// How the in-process remote behaves.
#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    Serve,
    Refuse,
    /// Answers one value short: the caller must notice and compute the part itself.
    Truncate,
}

/// The other copy of the model, answering at `post` as the browser's worker answers
/// between `post` and `collect`.
struct InProcess {
    model: DeviceLm,
    behaviour: Behaviour,
    answer: Mutex<Option<Vec<f32>>>,
    calls: AtomicUsize,
}

// `DeviceLm` is moved between threads natively; the remote only reads it.
impl DenseRemote for InProcess {
    fn post(&self, call: DenseCall<'_>) -> bool {
        if self.behaviour == Behaviour::Refuse {
            return false;
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut answer = self.model.serve_dense(call);
        if self.behaviour == Behaviour::Truncate {
            answer.as_mut().map(Vec::pop);
        }
        *self.answer.lock().unwrap() = answer;
        true
    }

    fn collect(&self) -> Option<Vec<f32>> {
        self.answer.lock().unwrap().take()
    }
}

fn gpt() -> DeviceLm {
    let config = ModelConfig {
        vocab_size: 11,
        d_model: 128,
        n_layers: 2,
        n_heads: 4,
        d_ff: 512,
        max_seq: 48,
    };
    let model = Gpt::new(&config, 7, 0.0, &Device::flex()).unwrap();
    DeviceLm::Host(HostLm::from_pass(HostPass::new(&model, config).unwrap()))
}

fn llama() -> DeviceLm {
    let spec = SyntheticLlama {
        d_model: 128,
        d_ff: 512,
        seed: 3,
        ..SyntheticLlama::tiny()
    };
    let file = GgufModel::from_bytes(spec.build(), None).unwrap();
    DeviceLm::from_gguf(&file, &Device::flex()).unwrap()
}

/// A prompt of `len` tokens below `vocab`, then queries at every position from 2 on.
fn request(vocab: u32, len: usize) -> ForwardRequest {
    let seq: Vec<u32> = (0..len as u32).map(|i| (i * 7 + i * i) % vocab).collect();
    ForwardRequest {
        role: Role::Target,
        committed_len: 0,
        sequences: vec![seq],
        queries: (2..=len)
            .map(|prefix_len| Query {
                sequence: 0,
                prefix_len,
            })
            .collect(),
    }
}

#[test]
fn a_remote_half_gives_the_logits_of_one_thread() {
    for (name, build) in [("gpt", gpt as fn() -> DeviceLm), ("llama", llama)] {
        let mut alone = build();
        let vocab = alone.vocab_size() as u32;
        // Eight positions at once: wide enough that the dense calls are split.
        let r = request(vocab, 8);
        let want = alone.forward(&r).unwrap();
        for behaviour in [Behaviour::Serve, Behaviour::Refuse, Behaviour::Truncate] {
            let remote = Arc::new(InProcess {
                model: build(),
                behaviour,
                answer: Mutex::new(None),
                calls: AtomicUsize::new(0),
            });
            let mut split = build();
            assert!(split.set_dense_remote(Some(Arc::clone(&remote) as Arc<dyn DenseRemote>)));
            let got = split.forward(&r).unwrap();
            for i in 0..want.rows() {
                assert_eq!(want.row(i), got.row(i), "{name}, row {i}");
            }
            let calls = remote.calls.load(Ordering::Relaxed);
            if behaviour == Behaviour::Refuse {
                assert_eq!(calls, 0);
            } else {
                assert!(calls >= 5, "{name}: {calls} calls reached the remote");
            }
            assert!(split.set_dense_remote(None));
        }
    }
}

#[test]
fn a_call_that_does_not_fit_the_model_gets_no_answer() {
    let model = llama();
    let x = vec![0.5; 128];
    fn call(layer: u32, x: &[f32]) -> DenseCall<'_> {
        DenseCall {
            layer,
            gelu: false,
            rows: 1,
            d_out: 0,
            x,
        }
    }
    assert!(model.serve_dense(call(0, &x)).is_some());
    assert_eq!(model.serve_dense(call(10_000, &x)), None, "no such layer");
    assert_eq!(model.serve_dense(call(0, &x[1..])), None, "a short input");
}
