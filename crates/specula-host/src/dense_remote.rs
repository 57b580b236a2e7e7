//! A second copy of the model, somewhere this thread cannot share memory with (another
//! wasm instance in another Web Worker), that computes the helper's half of each large
//! dense call: the [helper thread](crate::helper_thread) where no thread can be spawned.
//!
//! Why: std for `wasm32-unknown-unknown` is built without atomics on stable Rust, so one
//! wasm instance cannot run threads; two instances of the same module, each holding the
//! model, can split a dense call's output columns as the helper thread does, exchanging
//! only the call's inputs and the remote's outputs (a few KB; docs/host-forward-pass.md,
//! "Two workers"). Each column is computed by one side with the same kernel, so the
//! logits are those of one thread, bit for bit.

use std::fmt;
use std::sync::Arc;

use crate::dense::PackedDense;
use crate::dense_split::{self, Activation};

/// One dense call handed to the remote: which layer (in the order a forward pass reads
/// them, the head last), its inputs and what follows the product.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseCall<'a> {
    /// The layer's index among the model's dense layers (per block: attention's
    /// query/key/value, its output, the MLP's input, its output; then the head).
    pub layer: u32,
    /// Whether GELU follows the product (the bundled architecture's MLP input).
    pub gelu: bool,
    /// Rows of `x`.
    pub rows: u32,
    /// The layer's output width: the remote's answer has at most `rows × d_out` values.
    pub d_out: u32,
    /// `rows × d_in` inputs, row-major.
    pub x: &'a [f32],
}

/// The caller's end of a remote helper.
pub trait DenseRemote: Send + Sync {
    /// Hands `call` to the remote, which starts on it at once; `false` when it cannot
    /// take it (too large for the exchange, or the remote is gone), and the caller
    /// computes the whole call itself.
    fn post(&self, call: DenseCall<'_>) -> bool;

    /// The remote's part of the posted call
    /// ([`DeviceLm::serve_dense`](crate::DeviceLm::serve_dense) of the same call on the
    /// model's other copy), waiting for it; `None` when the remote failed, and the caller
    /// computes that part itself.
    fn collect(&self) -> Option<Vec<f32>>;
}

/// The remote helper of a model, if any (a field of the host models, which are `Debug`
/// and `Clone`: a clone shares the remote).
#[derive(Clone, Default)]
pub(crate) struct RemoteSlot(pub(crate) Option<Arc<dyn DenseRemote>>);

impl fmt::Debug for RemoteSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "RemoteSlot(Some(..))"
        } else {
            "RemoteSlot(None)"
        })
    }
}

/// The remote's side: the helper's part of `call` on `layers` (the model's dense layers
/// in forward order), as [`DenseRemote::collect`] expects it; `None` for a layer index
/// or an input length that does not fit.
pub(crate) fn serve<'m>(
    mut layers: impl Iterator<Item = &'m PackedDense>,
    call: DenseCall<'_>,
) -> Option<Vec<f32>> {
    let layer = layers.nth(call.layer as usize)?;
    let activation = if call.gelu {
        Activation::Gelu
    } else {
        Activation::Identity
    };
    dense_split::their_part(layer, call.x, call.rows as usize, activation)
}

/// The index of `layer` among `layers`, by address (the layer a forward pass is at).
pub(crate) fn index_of<'m>(
    mut layers: impl Iterator<Item = &'m PackedDense>,
    layer: &PackedDense,
) -> Option<u32> {
    layers
        .position(|l| std::ptr::eq(l, layer))
        .and_then(|i| u32::try_from(i).ok())
}
