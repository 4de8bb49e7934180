//! Floating-point-safe privacy noise: the exact discrete Gaussian on `hℤ` (Canonne, Kamath &
//! Steinke 2020), lattice rounding for the penalty tests, and secure (OS-keyed) random sources.
//!
//! **Why.** Continuous Gaussian noise sampled in floating point leaks the data through its low
//! bits (Mironov 2012; the thesis' Conclusions). With [`Noise::DiscreteGaussian`] the DP
//! kernels round the data-dependent part of the log acceptance ratio to the lattice
//! `hℤ, h = 2^k`, with an odd rounding, and add exact discrete Gaussian noise `Z` on `hℤ`
//! whose parameter `σ²` is snapped (upwards) onto `hℤ`. The released quantity is then an
//! *integer* (in lattice units) computed without floating point in any random decision:
//! [`exact`] draws only uniform integers and compares them with integers.
//!
//! **Exactness.** The penalty test accepts with probability `min(1, exp(λ + Z − σ²/2))`.
//! When `σ² ∈ hℤ`, `p(z)·e^{z−σ²/2} = p(σ²−z)` and `z ↦ σ²−z` maps `hℤ` onto itself, so
//! `g(λ) = E[min(1, e^{λ+Z−σ²/2})]` satisfies `g(λ) = e^λ·g(−λ)` for every real λ: DP penalty
//! stays exact. The only perturbation of the target is the rounding of the data term, at most
//! `h/2` in the log ratio of every move (the chain is reversible for a target whose log ratios
//! differ from the clipped ones by at most `h/2`; with `h = 2⁻²⁰` that is below 5·10⁻⁷).
//!
//! **Privacy.** The rounded data term has sensitivity `m·h` with `m` from
//! [`Lattice::sensitivity_units`] (rounding can add up to `h`); the noise is calibrated to that
//! rounded sensitivity with the same noise multiplier as the continuous kernel, so each step is
//! `ρ ≤ 1/(2τ²n)`-zCDP (CKS20) — the same per-step ρ as the continuous mechanism. Algorithm 2
//! then runs on a zCDP accountant with the CKS20 conversion
//! ([`ZcdpConversion::Cks20`](crate::accounting::ZcdpConversion::Cks20); the Gaussian PLD formula is
//! *not* claimed for discrete noise).

pub mod exact;
mod lattice;
mod secure;

#[cfg(test)]
mod tests;

pub use exact::{DiscreteGaussian, DiscreteLaplace, bernoulli_exp_neg};
pub use lattice::{Lattice, LatticeRelease};
pub use secure::{RngMode, os_chacha20, os_chain_rng};

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The noise of a penalty test (DP penalty, minibatch DP penalty, DP HMC's ratio test).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Noise {
    /// Continuous Gaussian noise in floating point (the thesis; default).
    #[default]
    Gaussian,
    /// Exact discrete Gaussian noise on `hℤ`, `h = 2^lattice_log2`.
    DiscreteGaussian {
        /// `log2` of the lattice spacing h (e.g. −20: the target is perturbed by at most
        /// `h/2 ≈ 4.8·10⁻⁷` in each log ratio).
        lattice_log2: i32,
    },
}

impl Noise {
    /// Discrete Gaussian noise on `2^lattice_log2 · ℤ`.
    ///
    /// ```
    /// use dp_mcmc::noise::Noise;
    /// let n = Noise::discrete(-20);
    /// assert!(n.lattice()?.is_some());
    /// assert!(Noise::discrete(99).lattice().is_err());
    /// assert!(Noise::Gaussian.lattice()?.is_none());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn discrete(lattice_log2: i32) -> Self {
        Noise::DiscreteGaussian { lattice_log2 }
    }

    /// The validated lattice (`None` for continuous noise).
    ///
    /// # Errors
    /// `lattice_log2` outside `[-60, 20]`.
    pub fn lattice(&self) -> Result<Option<Lattice>> {
        match *self {
            Noise::Gaussian => Ok(None),
            Noise::DiscreteGaussian { lattice_log2 } => Lattice::new(lattice_log2).map(Some),
        }
    }

    /// `true` for discrete Gaussian noise.
    pub fn is_discrete(&self) -> bool {
        matches!(self, Noise::DiscreteGaussian { .. })
    }
}
