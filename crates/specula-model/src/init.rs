//! Seeded, backend-independent weight initialisation (GPT-2 style): the same seed gives
//! the same weights on every backend, because the numbers come from ChaCha, not the device.

use burn::module::Param;
use burn::nn::{Embedding, LayerNorm, LayerNormConfig, Linear};
use burn::tensor::{Device, Tensor, TensorData};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// Standard deviation of every initial weight (GPT-2).
const STD: f64 = 0.02;

/// Draws initial weights (or, for a model about to be loaded, zeros).
pub(crate) struct Init<'a> {
    /// `None`: every weight is zero (the placeholder a loaded record overwrites; drawing
    /// 7.5 M normal numbers was a third of loading the target).
    rng: Option<ChaCha8Rng>,
    device: &'a Device,
}

impl<'a> Init<'a> {
    pub(crate) fn new(seed: u64, device: &'a Device) -> Self {
        use rand::SeedableRng;
        Self {
            rng: Some(ChaCha8Rng::seed_from_u64(seed)),
            device,
        }
    }

    /// Zeros instead of random weights: the shapes for a record to be loaded into.
    pub(crate) fn zeros(device: &'a Device) -> Self {
        Self { rng: None, device }
    }

    fn normal(&mut self, shape: [usize; 2], std: f64) -> Tensor<2> {
        // STD and the scaled variants are positive and finite, so Normal::new cannot fail;
        // fall back to zeros rather than panic if it ever did.
        let (Some(rng), Ok(dist)) = (&mut self.rng, Normal::new(0.0, std)) else {
            return Tensor::zeros(shape, self.device);
        };
        let values: Vec<f32> = (0..shape[0] * shape[1])
            .map(|_| dist.sample(rng) as f32)
            .collect();
        Tensor::from_data(TensorData::new(values, shape), self.device)
    }

    /// A `[d_in, d_out]` linear layer, weights N(0, (0.02·scale)²), bias 0.
    pub(crate) fn linear(&mut self, d_in: usize, d_out: usize, scale: f64) -> Linear {
        let weight = Param::from_tensor(self.normal([d_in, d_out], STD * scale));
        let bias = Param::from_tensor(Tensor::zeros([d_out], self.device));
        Linear {
            weight,
            bias: Some(bias),
        }
    }

    /// An embedding table `[n, d]`, N(0, 0.02²).
    pub(crate) fn embedding(&mut self, n: usize, d: usize) -> Embedding {
        Embedding {
            weight: Param::from_tensor(self.normal([n, d], STD)),
        }
    }

    /// A layer norm with scale 1 and shift 0.
    pub(crate) fn layer_norm(&mut self, d: usize) -> LayerNorm {
        LayerNormConfig::new(d).init(self.device)
    }

    /// A fresh seed for a sub-generator (keeps streams independent of layer order).
    #[allow(dead_code)]
    pub(crate) fn fork(&mut self) -> u64 {
        self.rng.as_mut().map_or(0, |rng| rng.random())
    }
}
