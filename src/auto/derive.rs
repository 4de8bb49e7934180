//! The sampler an `auto` run uses, with every setting derived from public quantities (n, d,
//! the budget left for the chains, the clip bound and the initial point, both released
//! under DP) and never from the data.
//!
//! The full-data samplers charge one Gaussian release of `μ = 1/(2τ²n)` per test, so a budget
//! `μ_chains` buys `copies·k = 2nτ²μ_chains` tests: the noise scale and the iteration count
//! trade one for the other. The rule fixes the count at a target `K` (default 2000 for the
//! DP penalty, 500 for DP HMC) and sets τ from it. That costs nothing in mixing: the noise of
//! a DP penalty test is `σ = 2bΔτ√n`, so at the noise level the warm-up settles on (σ ≈ 2,
//! acceptance ≈ 0.25) the squared distance a chain covers, `k·Δ² ∝ k/τ² ∝ μ_chains`, does not
//! depend on `K`; `K` only sets how finely the path is resolved (and the compute).

use serde::{Deserialize, Serialize};

use super::AutoAlgorithm;
use crate::accounting::Method;
use crate::error::Result;
use crate::experiments::Sampler;
use crate::samplers::{DpBarker, DpHmc, DpPenalty, MinibatchPenalty, StepSize};

/// Leapfrog steps of an `auto` DP HMC run.
pub const HMC_LEAPFROG_STEPS: usize = 10;

/// The noise scale and the first step of an `auto` sampler (the proposal standard deviation of
/// the random-walk kernels, the step size of DP HMC; warm-up adapts it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DerivedSettings {
    /// Iterations per chain the noise scale was chosen for (Algorithm 2 gives the final count).
    pub target_iterations: usize,
    /// τ of the DP penalty / minibatch penalty, τ_l of DP HMC (none for DP Barker).
    pub tau: Option<f64>,
    /// τ_g of DP HMC.
    pub tau_g: Option<f64>,
    /// Batch size of the minibatch samplers.
    pub batch_size: Option<usize>,
    /// The first step before warm-up: the RMS over coordinates of the proposal standard
    /// deviations (DP HMC: the step size); each coordinate's is this times its `shape`.
    pub initial_step: f64,
}

/// Inputs of the derivation (all public or released).
pub(crate) struct Public {
    pub n: usize,
    pub d: usize,
    /// Copies of the chain's releases a budget covers (chains, or 1 per chain).
    pub copies: usize,
    /// Gaussian `μ` left for the chains.
    pub mu_chains: f64,
    /// Clip bound (per unit distance for ratios, per row for gradients).
    pub clip: Option<f64>,
    /// A scale for the first step when no clip bound gives one (the initial point's last step
    /// lengths, or the public initial step).
    pub fallback_step: f64,
    /// Relative scales of the coordinates (RMS 1), from the DP initial point's curvature:
    /// proposal standard deviations (HMC: inverse square-root masses) in proportion to them.
    pub shape: Vec<f64>,
    pub target_iterations: Option<usize>,
}

pub(crate) fn derive(alg: AutoAlgorithm, p: &Public) -> Result<(Sampler, DerivedSettings)> {
    let n = p.n as f64;
    let d = p.d as f64;
    let rate = |k: usize, per_test: f64| -> f64 {
        // τ with copies·k tests of μ = per_test/(2τ²n) each summing to μ_chains
        (p.copies as f64 * k as f64 * per_test / (2.0 * n * p.mu_chains)).sqrt()
    };
    Ok(match alg {
        AutoAlgorithm::DpPenalty => {
            let k = p.target_iterations.unwrap_or(2000);
            let b = p.clip.unwrap_or(1.0);
            let tau = rate(k, 1.0);
            // σ = 2bΔτ√n = 2 at the first step
            let step = 1.0 / (b * tau * n.sqrt()) / d.sqrt();
            let s = DpPenalty::builder()
                .tau(tau)
                .clip_bound(b)
                .proposal_sd(StepSize::PerCoordinate(
                    p.shape.iter().map(|r| r * step).collect(),
                ))
                .accountant(Method::Pld);
            (
                Sampler::DpPenalty(s),
                DerivedSettings {
                    target_iterations: k,
                    tau: Some(tau),
                    tau_g: None,
                    batch_size: None,
                    initial_step: step,
                },
            )
        }
        AutoAlgorithm::DpHmc => {
            let k = p.target_iterations.unwrap_or(500);
            let l = HMC_LEAPFROG_STEPS;
            let b = p.clip.unwrap_or(1.0);
            // τ_g = τ_l·√(2(L+1)): the L+1 gradient releases together cost half the ratio's
            let tau_l = rate(k, 1.5);
            let tau_g = tau_l * (2.0 * (l + 1) as f64).sqrt();
            // a posterior scale of √d/(b√n) per coordinate, covered in one trajectory
            let eta = 2.0 * d.sqrt() / (b * n.sqrt()) / l as f64;
            let s = DpHmc::builder()
                .tau_l(tau_l)
                .tau_g(tau_g)
                .leapfrog_steps(l)
                .step_size(eta)
                .mass(p.shape.iter().map(|r| 1.0 / (r * r)).collect())
                .clip_bound(b)
                .grad_clip_bound(b)
                .accountant(Method::Pld);
            (
                Sampler::DpHmc(s),
                DerivedSettings {
                    target_iterations: k,
                    tau: Some(tau_l),
                    tau_g: Some(tau_g),
                    batch_size: None,
                    initial_step: eta,
                },
            )
        }
        AutoAlgorithm::MinibatchPenalty => {
            let batch = p.n.min(1000.max(p.n.div_ceil(100)));
            let b = p.clip.unwrap_or(1.0);
            let tau = 1.0;
            let step = 1.0 / (b * n.sqrt()) / d.sqrt();
            let s = MinibatchPenalty::builder()
                .tau(tau)
                .clip_bound(b)
                .batch_size(batch)
                .proposal_sd(StepSize::PerCoordinate(
                    p.shape.iter().map(|r| r * step).collect(),
                ))
                .accountant(Method::Pld);
            (
                Sampler::MinibatchPenalty(s),
                DerivedSettings {
                    target_iterations: 0,
                    tau: Some(tau),
                    tau_g: None,
                    batch_size: Some(batch),
                    initial_step: step,
                },
            )
        }
        AutoAlgorithm::DpBarker => {
            let batch = p.n.min(1300 * p.d.div_ceil(5).max(1));
            let step = p.fallback_step;
            let s = DpBarker::builder()
                .batch_size(batch)
                .proposal_sd(StepSize::PerCoordinate(
                    p.shape.iter().map(|r| r * step).collect(),
                ))
                .accountant(Method::RdpExact);
            (
                Sampler::DpBarker(s),
                DerivedSettings {
                    target_iterations: 0,
                    tau: None,
                    tau_g: None,
                    batch_size: Some(batch),
                    initial_step: step,
                },
            )
        }
    })
}
