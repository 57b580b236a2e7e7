//! Micro-benchmark: flex matmul with weights that do not fit in cache (20 distinct
//! 256×1024 matrices), row-major `[in, out]` versus a transposed view of `[out, in]`.
use std::time::Instant;

use burn::tensor::{Device, Distribution, Tensor};

fn main() {
    let device = Device::flex();
    let ws: Vec<Tensor<2>> = (0..20)
        .map(|_| Tensor::random([256, 1024], Distribution::Default, &device))
        .collect();
    let wts: Vec<Tensor<2>> = (0..20)
        .map(|_| Tensor::random([1024, 256], Distribution::Default, &device))
        .collect();
    for m in [1, 2, 5, 8, 16] {
        let x = Tensor::<2>::random([m, 256], Distribution::Default, &device);
        let reps = 30;
        let t = Instant::now();
        for _ in 0..reps {
            for w in &ws {
                let _ = x.clone().matmul(w.clone()).into_data();
            }
        }
        let row = t.elapsed().as_secs_f64() / (reps * 20) as f64 * 1e6;
        let t = Instant::now();
        for _ in 0..reps {
            for w in &wts {
                let _ = x.clone().matmul(w.clone().transpose()).into_data();
            }
        }
        let col = t.elapsed().as_secs_f64() / (reps * 20) as f64 * 1e6;
        let t = Instant::now();
        for _ in 0..reps {
            for w in &wts {
                let _ = w.clone().matmul(x.clone().transpose()).into_data();
            }
        }
        let wx = t.elapsed().as_secs_f64() / (reps * 20) as f64 * 1e6;
        let rows: Vec<Tensor<2>> = (0..m).map(|i| x.clone().narrow(0, i, 1)).collect();
        let t = Instant::now();
        for _ in 0..reps {
            for w in &ws {
                let outs: Vec<Tensor<2>> =
                    rows.iter().map(|r| r.clone().matmul(w.clone())).collect();
                let _ = Tensor::cat(outs, 0).into_data();
            }
        }
        let split = t.elapsed().as_secs_f64() / (reps * 20) as f64 * 1e6;
        println!(
            "m={m}: x@W {row:.1} us, x@Wt^T {col:.1} us, Wt@x^T {wx:.1} us, {m} x (row@W) {split:.1} us"
        );
    }
}
