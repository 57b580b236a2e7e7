//! Measures forward and training-step costs of candidate model shapes on the CPU backend:
//! `cargo run --release -p specula-train --example measure -- [d_model n_layers n_heads]...`
//! (each triple is one shape; the MLP is 4× wide, 256 positions, 65 tokens). Forward costs
//! are given with burn's forward and with the host forward, in one run. `REPS` sets the
//! forwards averaged per cost (default 30; a few thousand give the steady state, with the
//! weights as warm in cache as decoding leaves them), `TRAIN=0` skips the training step.

use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};
use specula_engine::{ForwardRequest, LanguageModel, Query, Role};
use specula_host::{HostLm, HostPass};
use specula_model::{BurnLm, CachedLm, ForwardPass, Gpt, ModelConfig};

/// Mean ms of `lm`'s forward over `extra` new positions queried in one call after a
/// committed prefix of the 100 tokens of `prompt`.
fn one<P: ForwardPass>(
    lm: &mut CachedLm<P>,
    prompt: &[u32],
    extra: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let reps = env_usize("REPS", 30);
    let mut total = 0.0;
    for r in 0..reps + 3 {
        let mut seq = prompt.to_vec();
        seq.extend((0..extra).map(|i| ((i + r) % 65) as u32));
        let queries = (0..extra)
            .map(|i| Query {
                sequence: 0,
                prefix_len: 101 + i,
            })
            .collect();
        let req = ForwardRequest {
            role: Role::Target,
            committed_len: 100,
            sequences: vec![seq],
            queries,
        };
        lm.truncate(100);
        let t = Instant::now();
        lm.forward(&req)?;
        if r >= 3 {
            total += t.elapsed().as_secs_f64();
        }
    }
    Ok(total / reps as f64 * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let shapes: Vec<[usize; 3]> = if args.is_empty() {
        vec![[64, 2, 4], [128, 4, 4], [256, 6, 8], [384, 6, 6]]
    } else {
        args.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
    };
    let batch = env_usize("BATCH", 16);
    let ctx = env_usize("CTX", 128);
    for [d, l, h] in shapes {
        let config = ModelConfig {
            vocab_size: 65,
            d_model: d,
            n_layers: l,
            n_heads: h,
            d_ff: 4 * d,
            max_seq: 256,
        };
        let device = Device::flex();
        let model = Gpt::new(&config, 1, 0.0, &device)?;
        let mut host = HostLm::from_pass(HostPass::new(&model, config)?);
        let mut lm = BurnLm::new(model, config, device.clone())?;
        let prompt: Vec<u32> = (0..100).map(|i| (i * 7 % 65) as u32).collect();
        // burn's forward first, then the host forward, side by side.
        let burn = [
            one(&mut lm, &prompt, 1)?,
            one(&mut lm, &prompt, 5)?,
            one(&mut lm, &prompt, 8)?,
        ];
        let [t1, t5, t8] = [
            one(&mut host, &prompt, 1)?,
            one(&mut host, &prompt, 5)?,
            one(&mut host, &prompt, 8)?,
        ];
        println!(
            "d={d} L={l} h={h} burn forward: fwd 1pos {:.3} ms, 5pos {:.3} ms, 8pos {:.3} ms (8/1 = {:.2})",
            burn[0],
            burn[1],
            burn[2],
            burn[2] / burn[0]
        );
        let host = format!(
            "d={d} L={l} h={h} params={:.2}M  host: fwd 1pos {t1:.3} ms, 5pos {t5:.3} ms, 8pos {t8:.3} ms (8/1 = {:.2})",
            config.num_params() as f64 / 1e6,
            t8 / t1,
        );
        if env_usize("TRAIN", 1) == 0 {
            println!("{host}");
            continue;
        }
        // Training step cost.
        let ad = device.clone().autodiff();
        let mut model = Gpt::new(&config, 1, 0.1, &ad)?;
        let mut optim = AdamWConfig::new().init();
        let data: Vec<i64> = (0..batch * ctx).map(|i| (i * 13 % 65) as i64).collect();
        let mut step_ms = 0.0;
        let steps = 6;
        for s in 0..steps + 2 {
            let t = Instant::now();
            let inputs =
                Tensor::<2, Int>::from_data(TensorData::new(data.clone(), [batch, ctx]), &ad);
            let targets =
                Tensor::<2, Int>::from_data(TensorData::new(data.clone(), [batch * ctx, 1]), &ad);
            let logits = model.forward(inputs).reshape([batch * ctx, 65]);
            let loss = log_softmax(logits, 1).gather(1, targets).neg().mean();
            let _ = loss.clone().into_scalar::<f32>();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(1e-3, model.clone(), grads);
            if s >= 2 {
                step_ms += t.elapsed().as_secs_f64() * 1e3;
            }
        }
        step_ms /= steps as f64;
        println!(
            "{host}  train step {batch}x{ctx}: {step_ms:.0} ms ({:.0} tok/s)",
            (batch * ctx) as f64 / step_ms * 1e3,
        );
        let _ = model.num_params();
    }
    Ok(())
}

/// The environment variable `name` as a number, or `default`.
fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
