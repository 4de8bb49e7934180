//! Poisson-subsampled clipped gradient sums, and the privacy of releasing them with Gaussian
//! noise: what the stochastic-gradient samplers (DP-SGLD, DP-SGNHT) share.
//!
//! Each row joins a batch independently with probability `q` (Poisson subsampling), drawn in
//! O(batch) by geometric skips; each row's gradient is clipped to L2 norm `C`, and the clipped
//! gradients are summed. Changing one row's value changes the sum by at most `2C` in L2 when its
//! slot is sampled and not at all otherwise (substitution, the relation of every accountant of
//! the crate), so a release of the sum with `N(0, σ²C²I)` noise is charged as
//! [`PrivacyEvent::gaussian(σ/2).poisson_substitute(q)`](PrivacyEvent::poisson_substitute): noise
//! multiplier `σ/2` relative to the substitute sensitivity `2C` (docs/ACCOUNTING.md,
//! "Stochastic-gradient samplers").

use rand::RngExt;

use crate::accounting::{Accountant, AccountantKind, CertifiedPld, Fourier, PrivacyEvent};
use crate::error::{Error, Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::kernel::StepInfo;

/// A Poisson batch of row indices and the buffers of its clipped gradient sum (allocated once
/// per chain; a batch larger than the capacity reserved up front, more than 8 standard
/// deviations above its mean, grows the buffer once).
#[derive(Clone, Debug)]
pub struct PoissonBatch {
    rate: f64,
    /// `ln(1 − rate)`, the geometric skips' scale.
    log_keep: f64,
    n: usize,
    rows: Vec<usize>,
    grad: Vec<f64>,
}

impl PoissonBatch {
    /// Batches of `n` rows at sampling rate `rate` (validated by the caller: `0 < rate ≤ 1`)
    /// for a `dim`-parameter model.
    pub fn new(n: usize, rate: f64, dim: usize) -> Self {
        let mean = n as f64 * rate;
        let capacity = (mean + 8.0 * mean.sqrt() + 16.0).min(n as f64) as usize;
        PoissonBatch {
            rate,
            log_keep: (-rate).ln_1p(),
            n,
            rows: Vec::with_capacity(capacity),
            grad: vec![0.0; dim],
        }
    }

    /// Draw a fresh batch: row `j` is in it with probability `rate`, independently (the gap to
    /// the next sampled row is geometric).
    pub fn draw(&mut self, rng: &mut ChainRng) -> &[usize] {
        self.rows.clear();
        if self.rate >= 1.0 {
            self.rows.extend(0..self.n);
            return &self.rows;
        }
        let mut j = 0usize;
        loop {
            // 1 − U ∈ (0, 1]: the number of rows skipped before the next sampled one
            let u: f64 = 1.0 - rng.random::<f64>();
            let skip = (u.ln() / self.log_keep).floor();
            if skip.is_nan() || skip >= (self.n - j) as f64 {
                break;
            }
            j += skip as usize;
            self.rows.push(j);
            j += 1;
            if j >= self.n {
                break;
            }
        }
        &self.rows
    }

    /// The rows of the last batch.
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    /// Draw a batch and write `Σ_{j ∈ batch} clip_C(∇ℓ_j(θ))` into `out` (length d); returns
    /// `(rows clipped, rows in the batch)`. A row whose gradient has a NaN or infinite
    /// component contributes zero (and counts as clipped), so every row's contribution stays
    /// in the ball of radius `bound`.
    ///
    /// # Errors
    /// The model's gradient error.
    pub fn clipped_grad_sum<M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        bound: f64,
        rng: &mut ChainRng,
        out: &mut [f64],
    ) -> Result<(u64, u64)> {
        self.draw(rng);
        out.fill(0.0);
        let mut clipped = 0u64;
        for &j in &self.rows {
            model.grad_log_lik_row(theta, j, &mut self.grad)?;
            let factor = clip_factor(&self.grad, bound);
            clipped += u64::from(factor < 1.0);
            if factor > 0.0 {
                for (o, g) in out.iter_mut().zip(&self.grad) {
                    *o += factor * g;
                }
            }
        }
        Ok((clipped, self.rows.len() as u64))
    }
}

/// What the stochastic-gradient kernels compute from the data and the prior in one step: the
/// clipped gradient sum of a fresh Poisson batch and the prior's gradient, in buffers allocated
/// once per chain.
#[derive(Clone, Debug)]
pub struct GradientDrift {
    /// `Σ_{j ∈ batch} clip_C(∇ℓ_j(θ))`.
    pub(crate) sum: Vec<f64>,
    /// `∇ ln p(θ)`.
    pub(crate) prior: Vec<f64>,
    batch: PoissonBatch,
}

/// The raw-data diagnostics of one drift (not private) and whether the model failed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DriftInfo {
    clipped: u64,
    rows: u64,
    /// The model's gradient failed: the step must not move.
    pub(crate) failed: bool,
}

impl GradientDrift {
    /// Buffers for `model`, batches at sampling rate `rate`.
    pub(crate) fn new<M: Model + ?Sized>(model: &M, rate: f64) -> Self {
        let d = model.dim();
        GradientDrift {
            sum: vec![0.0; d],
            prior: vec![0.0; d],
            batch: PoissonBatch::new(model.n_rows(), rate, d),
        }
    }

    /// Draw a batch; fill [`sum`](Self::sum) (clip bound `bound`) and the prior's gradient at
    /// `theta`.
    pub(crate) fn compute<M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        bound: f64,
        rng: &mut ChainRng,
    ) -> DriftInfo {
        let info = match self
            .batch
            .clipped_grad_sum(model, theta, bound, rng, &mut self.sum)
        {
            Ok((clipped, rows)) => DriftInfo {
                clipped,
                rows,
                failed: false,
            },
            Err(_) => DriftInfo {
                clipped: 0,
                rows: self.batch.rows().len() as u64,
                failed: true,
            },
        };
        model.grad_log_prior(theta, &mut self.prior);
        info
    }
}

impl DriftInfo {
    /// The step's record: every step is "accepted" unless it did not move (`moved = false`: a
    /// model error or a non-finite state).
    pub(crate) fn step_info(self, moved: bool) -> StepInfo {
        StepInfo {
            accepted: moved,
            log_alpha: 0.0,
            grad_clipped: self.clipped,
            grad_rows: self.rows,
            nonfinite: !moved,
            ..StepInfo::default()
        }
    }
}

/// The factor `min(1, B/‖g‖)` that clips `g` to L2 norm `bound`; 0 for a gradient with a NaN
/// or infinite component. The norm is computed without overflow when `‖g‖²` overflows.
fn clip_factor(g: &[f64], bound: f64) -> f64 {
    let sq: f64 = g.iter().map(|x| x * x).sum();
    if sq.is_finite() {
        return if sq > bound * bound {
            bound / sq.sqrt()
        } else {
            1.0
        };
    }
    if !g.iter().all(|x| x.is_finite()) {
        return 0.0;
    }
    let big = g.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let norm = big * g.iter().map(|x| (x / big).powi(2)).sum::<f64>().sqrt();
    (bound / norm).min(1.0)
}

/// One release per iteration of a Poisson-subsampled clipped gradient sum with noise multiplier
/// `sigma` relative to the clip bound `C` (the per-row bound), rate `q`: the substitute pair
/// of [`PrivacyEvent::poisson_substitute`] with multiplier `sigma/2` relative to the
/// substitute sensitivity `2C`.
pub(crate) fn gradient_release(sigma: f64, q: f64) -> Result<PrivacyEvent> {
    check::positive("noise_multiplier", sigma)?;
    let q = check::rate("sampling_rate", q)?;
    Ok(PrivacyEvent::gaussian(0.5 * sigma).poisson_substitute(q))
}

/// The accountant of the stochastic-gradient samplers: the certified PLD accountant's upper
/// bound (default) or the Fourier accountant (the same pair, the thesis' tool).
pub(crate) fn gradient_accountant(
    key: &str,
    method: AccountantKind,
) -> Result<Box<dyn Accountant>> {
    Ok(match method {
        AccountantKind::CertifiedPld => Box::new(CertifiedPld::new().upper_only(true)),
        AccountantKind::Fourier => Box::new(Fourier::new()),
        m => return Err(gradient_unsupported(key, m)),
    })
}

/// The accountant a stochastic-gradient sampler's `set_accountant(method)` sets (`None`: PLD).
pub(crate) fn gradient_method_checked(
    key: &str,
    method: Option<AccountantKind>,
) -> Result<AccountantKind> {
    match method
        .unwrap_or(AccountantKind::CertifiedPld)
        .numerical_pld()
    {
        m @ (AccountantKind::CertifiedPld | AccountantKind::Fourier) => Ok(m),
        m => Err(gradient_unsupported(key, m)),
    }
}

fn gradient_unsupported(key: &str, method: AccountantKind) -> Error {
    Error::invalid(
        "accountant",
        method.key(),
        format!(
            "{key} supports --accountant pld (certified) or fourier: its Poisson-subsampled \
             release under substitution has no RDP bound in the crate"
        ),
    )
}

/// Checks a stochastic-gradient sampler's settings: step size, clip bound and noise multiplier
/// (0 allowed: the injected noise alone), the sampling rate and the tempering bound (in (0, 1]).
pub(crate) fn check_gradient_settings(
    step_size: f64,
    clip_bound: f64,
    rate: f64,
    noise_multiplier: f64,
    tempering: f64,
) -> Result<()> {
    check::rate("tempering", tempering)?;
    check::positive("step_size", step_size)?;
    check::positive("clip_bound", clip_bound)?;
    check::rate("sampling_rate", rate)?;
    check::non_negative("noise_multiplier", noise_multiplier)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::chain_rng;

    /// Every row is in a batch with probability q, independently: 20 000 batches of n = 50 at
    /// q = 0.1 give per-row counts 2000 ± 42 (binomial sd); chi-square over 50 rows at α = 1e-6
    /// (critical value 102.2 for 49 df), and the batch sizes have mean nq (z-test, 5 sd).
    #[test]
    fn rows_are_sampled_independently_at_rate_q() {
        let (n, q, draws) = (50, 0.1, 20_000);
        let mut b = PoissonBatch::new(n, q, 1);
        let mut rng = chain_rng(4, 0);
        let mut counts = vec![0u64; n];
        let mut total = 0usize;
        for _ in 0..draws {
            let rows = b.draw(&mut rng);
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
            total += rows.len();
            for &j in rows {
                counts[j] += 1;
            }
        }
        let e = draws as f64 * q;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 102.2, "chi2 = {chi2}");
        let mean = total as f64 / draws as f64;
        let sd = (n as f64 * q * (1.0 - q) / draws as f64).sqrt();
        assert!((mean - n as f64 * q).abs() < 5.0 * sd, "mean batch {mean}");
        let mut all = PoissonBatch::new(7, 1.0, 1);
        assert_eq!(all.draw(&mut rng), &[0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn clip_factor_bounds_every_row() {
        assert_eq!(clip_factor(&[3.0, 4.0], 10.0), 1.0);
        assert!((clip_factor(&[3.0, 4.0], 1.0) - 0.2).abs() < 1e-15);
        assert_eq!(clip_factor(&[f64::NAN, 1.0], 1.0), 0.0);
        assert_eq!(clip_factor(&[f64::INFINITY, 1.0], 1.0), 0.0);
        let big = clip_factor(&[1e200, 1e200], 1.0);
        assert!((big * 1e200 * 2f64.sqrt() - 1.0).abs() < 1e-12);
    }
}
