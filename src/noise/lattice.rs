//! The lattice `hℤ`, `h = 2^k`: odd (sign-symmetric) rounding of the data term to the lattice,
//! the rounded sensitivity in lattice units, σ² snapped (upwards) onto the lattice, and the
//! noisy lattice release used by the penalty tests.
//!
//! A power-of-two `h` makes `x/h` and `j·h` exact in `f64`, so the rounding below is the exact
//! rounding of the computed data term, and `σ² = j·h` is an exact float.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::exact::DiscreteGaussian;
use crate::error::{Error, Result};

/// Smallest allowed `lattice_log2`.
pub const MIN_LOG2: i32 = -60;
/// Largest allowed `lattice_log2`.
pub const MAX_LOG2: i32 = 20;

/// Relative safety margin on the sensitivity for the floating-point evaluation of the data term
/// (the clipped sum): the rounded sensitivity covers evaluation errors up to `2⁻²⁰·c + h`.
const SENS_MARGIN: f64 = 1.0 + 1.0 / (1u64 << 20) as f64;
/// Relative margin making the snapped σ² at least the target despite the rounding of `τ²n·m²·h`.
const SIGMA2_MARGIN: f64 = 1.0 + 1.0 / (1u64 << 50) as f64;

/// The lattice `hℤ` with `h = 2^log2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lattice {
    log2: i32,
}

/// One noisy release on the lattice: the integer `q + Y` and the exact `σ² = j·h` it was drawn
/// with (`Y ~ N_ℤ(0, σ²/h²)`, so `h·Y` is discrete Gaussian on `hℤ` with parameter `σ²`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatticeRelease {
    /// `q + Y` in lattice units (`q` = the rounded data term).
    pub units: i64,
    /// The noise parameter σ² (real units; an exact multiple of `h`).
    pub sigma2: f64,
    /// The sensitivity in lattice units `m` the noise was calibrated to.
    pub sensitivity_units: u64,
    /// `h`.
    pub h: f64,
}

impl LatticeRelease {
    /// The penalty-test term `h·(q + Y) − σ²/2` (add the public prior difference to get
    /// `log α`).
    pub fn log_term(&self) -> f64 {
        self.h * self.units as f64 - 0.5 * self.sigma2
    }
}

impl Lattice {
    /// The lattice `2^log2 · ℤ`, `log2` in `[-60, 20]`.
    ///
    /// ```
    /// use dp_mcmc::noise::Lattice;
    /// let l = Lattice::new(-3)?;
    /// assert_eq!(l.h(), 0.125);
    /// assert_eq!(l.round(0.1876), Some(2));
    /// assert_eq!(l.round(-0.1876), Some(-2)); // odd: round(−x) = −round(x)
    /// assert!(Lattice::new(100).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new(log2: i32) -> Result<Self> {
        if !(MIN_LOG2..=MAX_LOG2).contains(&log2) {
            return Err(Error::invalid(
                "lattice_log2",
                log2,
                format!(
                    "the lattice spacing is h = 2^lattice_log2; use {MIN_LOG2} ≤ lattice_log2 ≤ {MAX_LOG2}"
                ),
            ));
        }
        Ok(Lattice { log2 })
    }

    /// `log2 h`.
    pub fn log2(&self) -> i32 {
        self.log2
    }

    /// The spacing `h = 2^log2` (exact).
    pub fn h(&self) -> f64 {
        2f64.powi(self.log2)
    }

    /// Odd rounding of `x` to the lattice, in lattice units: `round_half_away_from_zero(x/h)`,
    /// so `round(−x) = −round(x)` and the antisymmetry `λ(θ,θ') = −λ(θ',θ)` survives. `None`
    /// for a non-finite `x` or `|x/h| ≥ 2^62`. The result is within `h/2` of `x`.
    pub fn round(&self, x: f64) -> Option<i64> {
        let u = (x / self.h()).round(); // exact division by a power of two
        if u.is_finite() && u.abs() < 4.611_686_018_427_388e18 {
            Some(u as i64)
        } else {
            None
        }
    }

    /// The sensitivity `c` of the data term after rounding, in lattice units (pessimistic):
    /// `m = ⌊c·(1 + 2⁻²⁰)/h⌋ + 2`. Rounding two values that differ by at most `d` gives lattice
    /// values differing by at most `⌊d/h⌋ + 1` units; the extra unit and the relative margin
    /// cover the floating-point evaluation error of the data term (assumed `≤ 2⁻²⁰·c + h`).
    /// `None` if `c` is negative, not finite or `m ≥ 2^53`.
    pub fn sensitivity_units(&self, c: f64) -> Option<u64> {
        if !(c.is_finite() && c >= 0.0) {
            return None;
        }
        let m = (c * SENS_MARGIN / self.h()).floor() + 2.0;
        (m < 9.007_199_254_740_992e15).then_some(m as u64)
    }

    /// σ² snapped onto the lattice: the smallest `j·h ≥ target` (`j ≥ 1`), returned as `j`.
    /// Snapping *up* only adds noise, so it can only lower the privacy loss. `None` if the
    /// target is not finite and positive or `j ≥ 2^53`.
    pub fn snap_sigma2(&self, target: f64) -> Option<u64> {
        if !(target.is_finite() && target > 0.0) {
            return None;
        }
        let j = (target / self.h() * SIGMA2_MARGIN).ceil().max(1.0);
        (j < 9.007_199_254_740_992e15).then_some(j as u64)
    }

    /// `σ² = j·h` in lattice units (`σ²/h² = j/h`) as an exact fraction `(num, den)`.
    pub fn sigma2_units(&self, j: u64) -> Option<(u64, u64)> {
        if self.log2 <= 0 {
            let shift = u32::try_from(-self.log2).ok()?;
            j.checked_mul(1u64.checked_shl(shift)?).map(|num| (num, 1))
        } else {
            Some((j, 1u64 << self.log2))
        }
    }

    /// The noisy release of a data term `x` with sensitivity `c` and squared noise multiplier
    /// `nm2` (noise std ÷ sensitivity, squared: `τ²n` for DP penalty, `τ` for the minibatch
    /// test): `q = round(x)`, `m = sensitivity_units(c)`, `σ² = snap(nm2·(m·h)²)` and
    /// `q + Y` with `Y ~ N_ℤ(0, σ²/h²)` drawn exactly. The release is `ρ`-zCDP with
    /// `ρ = (m·h)²/(2σ²) ≤ 1/(2·nm2)` (CKS20: the discrete Gaussian with integer sensitivity
    /// `m` and parameter `s²` is `m²/(2s²)`-zCDP).
    ///
    /// ```
    /// use dp_mcmc::noise::Lattice;
    /// let l = Lattice::new(-10)?;
    /// let r = l.release(0.5, 0.04, 1000.0, &mut dp_mcmc::rng::chain_rng(1, 0))?;
    /// assert_eq!(r.sensitivity_units, 42); // ⌊0.04·1024⌋ + 2
    /// assert!(r.sigma2 >= 1000.0 * (42.0f64 / 1024.0).powi(2));
    /// assert!(l.release(f64::NAN, 0.04, 1000.0, &mut dp_mcmc::rng::chain_rng(1, 0)).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Numerical`] if `x` or `c` is not finite, or the lattice is too fine for the
    /// sensitivity (integers beyond range).
    pub fn release<R: Rng + ?Sized>(
        &self,
        x: f64,
        c: f64,
        nm2: f64,
        rng: &mut R,
    ) -> Result<LatticeRelease> {
        let fail = |reason: &str| Error::Numerical {
            what: "lattice release",
            reason: reason.to_string(),
        };
        let q = self
            .round(x)
            .ok_or_else(|| fail("the data term is not finite or too large for the lattice"))?;
        let m = self.sensitivity_units(c).ok_or_else(|| {
            fail("the sensitivity is not finite, or too large for the lattice: raise lattice_log2")
        })?;
        let h = self.h();
        let mh = m as f64 * h;
        let j = self
            .snap_sigma2(nm2 * mh * mh)
            .ok_or_else(|| fail("σ² out of range: raise lattice_log2"))?;
        let (num, den) = self
            .sigma2_units(j)
            .ok_or_else(|| fail("σ²/h² overflows u64: raise lattice_log2"))?;
        let y = DiscreteGaussian::new(num, den)?.sample(rng)?;
        let units = q
            .checked_add(y)
            .ok_or_else(|| fail("q + Y overflows i64"))?;
        Ok(LatticeRelease {
            units,
            sigma2: j as f64 * h,
            sensitivity_units: m,
            h,
        })
    }
}
