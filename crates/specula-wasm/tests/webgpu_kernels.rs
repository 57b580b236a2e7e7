//! The WebGPU kernels of `specula-kernels` against burn's own operations, in headless
//! Chromium with WebGPU (its own page: burn's WebGPU device can be initialised once per
//! page, and the tests here share it); the fused pass of a small model against burn's pass
//! and the CPU through a model's cached steps. The models' greedy checks in `browser.rs`
//! run them inside whole forward passes.
#![cfg(target_arch = "wasm32")]

use burn::tensor::{Device, Tensor, TensorData};
use specula_engine::{ForwardRequest, Query, Role};
use specula_model::{BurnLm, Gpt, ModelConfig, ModelRole};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

thread_local! {
    /// burn's WebGPU device, initialised by the first test that needs it.
    static DEVICE: std::cell::RefCell<Option<Device>> = const { std::cell::RefCell::new(None) };
}

/// The page's WebGPU device (burn's WebGPU runtime can be initialised once per page).
async fn webgpu() -> Device {
    use burn::tensor::wgpu::WgpuBackend;
    if let Some(device) = DEVICE.with(|d| d.borrow().clone()) {
        return device;
    }
    // The module's constructors register CubeCL's IR types; the engine runs them.
    let _engine = specula_wasm::Engine::new();
    let device = Device::wgpu_options()
        .graphics_api(WgpuBackend::WebGpu)
        .init_with_setup_async()
        .await
        .expect("WebGPU (Chromium with --enable-unsafe-webgpu)")
        .0;
    DEVICE.with(|d| *d.borrow_mut() = Some(device.clone()));
    device
}

/// Deterministic values in [-0.5, 0.5), different for each `salt`.
fn values(len: usize, salt: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7919 + salt * 104_729) % 1000) as f32 / 1000.0 - 0.5)
        .collect()
}

fn tensor<const D: usize>(shape: [usize; D], salt: usize, device: &Device) -> Tensor<D> {
    let len = shape.iter().product();
    Tensor::from_data(TensorData::new(values(len, salt), shape), device)
}

async fn read<const D: usize>(t: Tensor<D>) -> (Vec<usize>, Vec<f32>) {
    let data = t.into_data_async().await.expect("read-back");
    (
        data.shape().to_vec(),
        data.try_to_vec::<f32>().expect("f32"),
    )
}

async fn assert_close<const D: usize>(got: Tensor<D>, want: Tensor<D>, what: &str) {
    let (got_shape, got) = read(got).await;
    let (want_shape, want) = read(want).await;
    assert_eq!(got_shape, want_shape, "{what}: shape");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "{what}: element {i} is {g}, burn gives {w}"
        );
    }
}

#[wasm_bindgen_test]
async fn kernels_equal_burns_operations_and_decline_what_they_do_not_handle() {
    let device = webgpu().await;

    // Dense: one row and several (blocks of four with a ragged end), widths of 4-, 2- and
    // 1-lane vectors.
    for rows in [1, 2, 3, 4, 5, 8, 9] {
        for n in [12, 6, 7] {
            let k = 20;
            let x = tensor([rows, k], 1, &device);
            let w = tensor([k, n], 2, &device);
            let b = tensor([n], 3, &device);
            let got = specula_kernels::dense(&x, &w, &b).expect("dense runs on WebGPU");
            let want = x.matmul(w) + b.unsqueeze::<2>();
            assert_close(got, want, &format!("dense rows={rows} n={n}")).await;
        }
    }
    // Dense with GELU in the same dispatch, against burn's dense then burn's GELU.
    for rows in [1, 3, 6] {
        let x = tensor([rows, 24], 11, &device).mul_scalar(4.0);
        let (w, b) = (tensor([24, 12], 12, &device), tensor([12], 13, &device));
        let got = specula_kernels::dense_gelu(&x, &w, &b).expect("dense_gelu");
        let want = burn::tensor::activation::gelu(x.matmul(w) + b.unsqueeze::<2>());
        assert_close(got, want, &format!("dense_gelu rows={rows}")).await;
    }
    // Dense plus a residual in the same dispatch, against burn's residual + dense; a
    // residual of another shape is declined.
    for rows in [1, 5] {
        let x = tensor([rows, 16], 18, &device);
        let (w, b) = (tensor([16, 8], 19, &device), tensor([8], 20, &device));
        let residual = tensor([rows, 8], 21, &device);
        let got = specula_kernels::dense_residual(&x, &w, &b, &residual).expect("dense_residual");
        let want = residual + (x.clone().matmul(w.clone()) + b.clone().unsqueeze::<2>());
        assert_close(got, want, &format!("dense_residual rows={rows}")).await;
        let wrong = tensor([rows, 9], 22, &device);
        assert!(specula_kernels::dense_residual(&x, &w, &b, &wrong).is_none());
    }
    // Layer normalisation, against burn's (also on a transposed, non-contiguous input).
    for rows in [1, 2, 5] {
        let x = tensor([rows, 20], 14, &device)
            .mul_scalar(3.0)
            .add_scalar(0.7);
        let (gamma, beta) = (tensor([20], 15, &device), tensor([20], 16, &device));
        let got = specula_kernels::layer_norm(&x, &gamma, &beta, 1e-5).expect("layer_norm");
        let want = burn::tensor::module::layer_norm(x, gamma, Some(beta), 1e-5);
        assert_close(got, want, &format!("layer_norm rows={rows}")).await;
    }
    let x = tensor([20, 3], 17, &device).transpose();
    let (gamma, beta) = (tensor([20], 15, &device), tensor([20], 16, &device));
    let got = specula_kernels::layer_norm(&x, &gamma, &beta, 1e-5).expect("layer_norm");
    let want = burn::tensor::module::layer_norm(x, gamma, Some(beta), 1e-5);
    assert_close(got, want, "layer_norm, transposed x").await;

    // A transposed (non-contiguous) input is made contiguous first.
    let x = tensor([20, 3], 4, &device).transpose();
    let (w, b) = (tensor([20, 8], 5, &device), tensor([8], 6, &device));
    let got = specula_kernels::dense(&x, &w, &b).expect("dense");
    assert_close(got, x.matmul(w) + b.unsqueeze::<2>(), "dense, transposed x").await;

    // Batched: the views attention passes — heads swapped in, keys transposed, a narrowed
    // slice of the probabilities, a prefix broadcast over rows.
    let q = tensor([2, 5, 3, 8], 7, &device).swap_dims(1, 2); // [2, 3, 5, 8]
    let keys = tensor([1, 3, 11, 8], 8, &device).expand([2, 3, 11, 8]);
    let scores_t = keys.swap_dims(2, 3); // [2, 3, 8, 11]
    let got = specula_kernels::batched_matmul(&q, &scores_t).expect("batched");
    assert_close(got, q.clone().matmul(scores_t.clone()), "scores").await;
    let probs = tensor([2, 3, 5, 16], 9, &device).narrow(3, 4, 11);
    let v = tensor([2, 3, 11, 8], 10, &device);
    let got = specula_kernels::batched_matmul(&probs, &v).expect("batched");
    assert_close(got, probs.matmul(v), "mixing").await;

    // Declined: mismatched shapes, empty products, tensors on the CPU.
    let (x, w, b) = (
        tensor([2, 4], 1, &device),
        tensor([5, 3], 2, &device),
        tensor([3], 3, &device),
    );
    assert!(specula_kernels::dense(&x, &w, &b).is_none());
    let empty = Tensor::<2>::zeros([0, 4], &device);
    assert!(specula_kernels::dense(&empty, &tensor([4, 3], 2, &device), &b).is_none());
    let (gamma, beta) = (tensor([4], 4, &device), tensor([4], 5, &device));
    assert!(specula_kernels::layer_norm(&empty, &gamma, &beta, 1e-5).is_none());
    assert!(specula_kernels::layer_norm(&x, &tensor([3], 4, &device), &beta, 1e-5).is_none());
    let a = tensor([1, 2, 3, 4], 1, &device);
    assert!(specula_kernels::batched_matmul(&a, &tensor([1, 2, 5, 3], 2, &device)).is_none());
    let cpu = Device::flex();
    let (x, w, b) = (
        tensor([2, 4], 1, &cpu),
        tensor([4, 3], 2, &cpu),
        tensor([3], 3, &cpu),
    );
    assert!(specula_kernels::dense(&x, &w, &b).is_none());
    assert!(specula_kernels::dense_gelu(&x, &w, &b).is_none());
    let (gamma, beta) = (tensor([4], 4, &cpu), tensor([4], 5, &cpu));
    assert!(specula_kernels::layer_norm(&x, &gamma, &beta, 1e-5).is_none());
    let a = tensor([1, 2, 3, 4], 1, &cpu);
    assert!(specula_kernels::batched_matmul(&a, &tensor([1, 2, 4, 5], 2, &cpu)).is_none());
}

/// Attention the long way, with burn's operations: every key and value concatenated,
/// scores masked after each new position, softmax, weighted values.
fn reference_attention(
    qkv: &Tensor<3>,
    heads: usize,
    shared: Option<(&Tensor<4>, &Tensor<4>)>,
    branch: Option<(&Tensor<4>, &Tensor<4>)>,
) -> Tensor<3> {
    let [rows, n, three_d] = qkv.dims();
    let d = three_d / 3;
    let hd = d / heads;
    let split = |i: usize| {
        qkv.clone()
            .narrow(2, i * d, d)
            .reshape([rows, n, heads, hd])
            .swap_dims(1, 2)
    };
    let (q, k, v) = (split(0), split(1), split(2));
    let mut keys = Vec::new();
    let mut values = Vec::new();
    if let Some((sk, sv)) = shared {
        let len = sk.dims()[2];
        keys.push(sk.clone().expand([rows, heads, len, hd]));
        values.push(sv.clone().expand([rows, heads, len, hd]));
    }
    if let Some((bk, bv)) = branch {
        keys.push(bk.clone());
        values.push(bv.clone());
    }
    keys.push(k);
    values.push(v);
    let (keys, values) = (Tensor::cat(keys, 2), Tensor::cat(values, 2));
    let total = keys.dims()[2];
    let cached = total - n;
    let scores = q
        .matmul(keys.swap_dims(2, 3))
        .mul_scalar(1.0 / (hd as f64).sqrt());
    let mask: Vec<bool> = (0..n)
        .flat_map(|i| (0..total).map(move |c| c > cached + i))
        .collect();
    let mask = Tensor::<4, burn::tensor::Bool>::from_data(
        TensorData::new(mask, [1, 1, n, total]),
        &scores.device(),
    )
    .expand([rows, heads, n, total]);
    let probs = burn::tensor::activation::softmax(scores.mask_fill(mask, f32::NEG_INFINITY), 3);
    probs.matmul(values).swap_dims(1, 2).reshape([rows, n, d])
}

#[wasm_bindgen_test]
async fn the_attention_kernel_equals_burns_operations() {
    let device = webgpu().await;
    let (heads, hd) = (3, 8);
    let d = heads * hd;
    // Rows × new positions, with and without a shared prefix (stored once, or per row)
    // and a per-row branch.
    for (rows, n) in [(1, 1), (1, 5), (2, 3)] {
        let qkv = tensor([rows, n, 3 * d], 20, &device);
        let shared_once = (
            tensor([1, heads, 7, hd], 21, &device),
            tensor([1, heads, 7, hd], 22, &device),
        );
        let shared_rows = (
            tensor([rows, heads, 6, hd], 23, &device),
            tensor([rows, heads, 6, hd], 24, &device),
        );
        let branch = (
            tensor([rows, heads, 2, hd], 25, &device),
            tensor([rows, heads, 2, hd], 26, &device),
        );
        let cases = [
            (None, None),
            (Some((&shared_once.0, &shared_once.1)), None),
            (
                Some((&shared_once.0, &shared_once.1)),
                Some((&branch.0, &branch.1)),
            ),
            (
                Some((&shared_rows.0, &shared_rows.1)),
                Some((&branch.0, &branch.1)),
            ),
            (None, Some((&branch.0, &branch.1))),
        ];
        for (i, (shared, branch)) in cases.into_iter().enumerate() {
            let got = specula_kernels::attention(&qkv, heads, shared, branch).expect("attention");
            let want = reference_attention(&qkv, heads, shared, branch);
            assert_close(got, want, &format!("attention rows={rows} n={n} case {i}")).await;
        }
    }
    // A strided qkv (a transposed view) is read in place.
    let qkv = tensor([1, 3 * d, 4], 27, &device).swap_dims(1, 2);
    let got = specula_kernels::attention(&qkv, heads, None, None).expect("attention");
    assert_close(
        got,
        reference_attention(&qkv, heads, None, None),
        "strided qkv",
    )
    .await;
    // Declined: widths that do not split into heads, keys of another head width, a branch
    // stored once for all rows, tensors on the CPU.
    let qkv = tensor([2, 3, 3 * d], 28, &device);
    assert!(specula_kernels::attention(&qkv, 5, None, None).is_none());
    let wrong = tensor([1, heads, 4, hd + 1], 29, &device);
    assert!(specula_kernels::attention(&qkv, heads, Some((&wrong, &wrong)), None).is_none());
    let once = tensor([1, heads, 4, hd], 30, &device);
    assert!(specula_kernels::attention(&qkv, heads, None, Some((&once, &once))).is_none());
    let cpu = Device::flex();
    assert!(
        specula_kernels::attention(&tensor([1, 2, 3 * d], 31, &cpu), heads, None, None).is_none()
    );
}

/// A seeded model of `config` on burn's pass on `device`, the fused pass on (for passes of
/// up to 64 positions) or off.
fn burn_lm(config: &ModelConfig, device: &Device, fused: bool) -> BurnLm {
    let model = Gpt::new(config, 7, 0.0, device).expect("a valid shape");
    let mut lm = BurnLm::new(model, *config, device.clone()).expect("the model fits");
    lm.pass_mut().set_fused(if fused { 64 } else { 0 });
    lm
}

fn draft_request(sequences: Vec<Vec<u32>>, queries: &[(usize, usize)]) -> ForwardRequest {
    ForwardRequest {
        role: Role::Draft,
        committed_len: 0,
        sequences,
        queries: queries
            .iter()
            .map(|&(sequence, prefix_len)| Query {
                sequence,
                prefix_len,
            })
            .collect(),
    }
}

fn assert_logits_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "{what}: logit {i} is {g}, the reference gives {w}"
        );
    }
}

#[wasm_bindgen_test]
async fn the_fused_pass_equals_burns_pass_and_the_cpu_through_steps_rollbacks_and_branches() {
    let device = webgpu().await;
    // The bundled draft's shape (two blocks: a first and a last), and three blocks of odd
    // widths (a middle block, three heads).
    let odd = ModelConfig {
        vocab_size: 11,
        d_model: 24,
        n_layers: 3,
        n_heads: 3,
        d_ff: 40,
        max_seq: 32,
    };
    for config in [ModelConfig::for_role(ModelRole::Draft, 65), odd] {
        let v = config.vocab_size as u32;
        let mut fused = burn_lm(&config, &device, true);
        let mut plain = burn_lm(&config, &device, false);
        // As the draft is run: fused for passes of up to two positions.
        let mut limited = burn_lm(&config, &device, true);
        limited.pass_mut().set_fused(2);
        // burn's CPU backend declines the kernel: the reference of both.
        let mut cpu = burn_lm(&config, &Device::flex(), true);
        let t: Vec<u32> = (0..12_u32).map(|i| (i * 7 + i * i + 3) % v).collect();
        let rolled: Vec<u32> = [&t[..5], &[1 % v, 2 % v, 4 % v, 5 % v]].concat();
        let one = [&rolled[..], &[6 % v, 7 % v]].concat();
        let two = [&rolled[..], &[8 % v, 9 % v]].concat();
        let steps = [
            (
                "a first pass of six positions",
                draft_request(vec![t[..6].to_vec()], &[(0, 1), (0, 3), (0, 6)]),
            ),
            (
                "one position",
                draft_request(vec![t[..7].to_vec()], &[(0, 7)]),
            ),
            ("one more", draft_request(vec![t[..8].to_vec()], &[(0, 8)])),
            // Back to five cached positions, four new ones over the stale tail.
            (
                "after a rollback",
                draft_request(vec![rolled.clone()], &[(0, 6), (0, 9)]),
            ),
            // Two drafts after the prefix: burn's batched pass over a branch.
            (
                "two branches",
                draft_request(vec![one.clone(), two], &[(0, 11), (1, 10), (1, 11)]),
            ),
            // The first branch promoted into the prefix, then one new position after it.
            (
                "after the branch",
                draft_request(vec![[&one[..], &[3 % v]].concat()], &[(0, 12)]),
            ),
        ];
        for (what, request) in &steps {
            let what = format!("{what} (d_model {})", config.d_model);
            let got = fused.answer_async(request).await.expect("fused");
            let burn = plain.answer_async(request).await.expect("burn's");
            let host = cpu.answer_async(request).await.expect("cpu");
            assert_logits_close(&got, &burn, &format!("{what}: fused vs burn's pass"));
            assert_logits_close(&got, &host, &format!("{what}: fused vs the CPU"));
            let mixed = limited.answer_async(request).await.expect("limited");
            assert_logits_close(&mixed, &burn, &format!("{what}: up to two positions"));
        }
        // The first pass, the steps, the rollback and the step after the branch.
        assert_eq!(fused.pass().fused_passes(), 5, "d_model {}", config.d_model);
        // Only the one-position steps.
        assert_eq!(
            limited.pass().fused_passes(),
            3,
            "d_model {}",
            config.d_model
        );
        assert_eq!(plain.pass().fused_passes() + cpu.pass().fused_passes(), 0);
    }

    // Declined, with the same logits from burn's pass: working vectors beyond workgroup
    // memory, and passes longer than 64 positions.
    let long = ModelConfig {
        vocab_size: 11,
        d_model: 16,
        n_layers: 1,
        n_heads: 2,
        d_ff: 32,
        max_seq: 2048,
    };
    let mut fused = burn_lm(&long, &device, true);
    let mut cpu = burn_lm(&long, &Device::flex(), false);
    let tokens: Vec<u32> = (0..70_u32).map(|i| (i * 5 + 1) % 11).collect();
    for len in [3, 70] {
        let request = draft_request(vec![tokens[..len].to_vec()], &[(0, len)]);
        let got = fused.answer_async(&request).await.expect("fused");
        let host = cpu.answer_async(&request).await.expect("cpu");
        assert_logits_close(&got, &host, &format!("declined, {len} positions"));
    }
    assert_eq!(fused.pass().fused_passes(), 0);
}
