//! One pass over the data: clipped per-row log-likelihood ratios, summed (no allocation).
//!
//! Every kernel of this crate spends its time here. Rows are processed in chunks of
//! [`CHUNK`] so the per-row terms stay in L1 between the model writing them and the kernel
//! clipping them; the model decides how to compute the terms (closed-form ratio, or one
//! likelihood evaluation against a cache of the current state's per-row values).
//!
//! Two passes: the ratio pass (`ratio.rs`: clipped per-row log-likelihood ratios, with the
//! per-row cache of models without a closed-form ratio; ratios linear in the row computed where
//! they are clipped, `linear_ratio.rs`) and the gradient pass (`gradient.rs`:
//! clipped per-row gradients, column by column, with their clip factors from
//! `clip_factors.rs`); the clipped-curvature pass (`curvature.rs`: per-row Hessians by
//! finite differences of the gradients, clipped and summed) serves the DP initial point and
//! the noise-aware path of library models.

mod clip_factors;
mod curvature;
mod gradient;
mod linear_ratio;
mod lockstep;
mod ratio;
#[cfg(test)]
mod tests;

pub(crate) use clip_factors::clip_factor;
pub(crate) use curvature::{clipped_hessian_sum, hessian_norms};
pub use gradient::GradBuffer;
pub(crate) use lockstep::{Lockstep, run_member};
pub use ratio::{ClippedSum, RowCache};

/// Rows per chunk of a data pass.
pub const CHUNK: usize = 1024;
