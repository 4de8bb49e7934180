//! Calibration: the noise each DP kernel adds is the noise its accountant assumes.
//!
//! Every accountant charges a step as "noise std ÷ sensitivity = σ" for some noise multiplier σ
//! (DP penalty and DP HMC: `τ√n`, Gaussian PLD / zCDP; minibatch DP penalty: `√τ` relative to
//! its statistic's substitute sensitivity `c`, Fourier accountant / RDP; DP Barker: Theorem 7,
//! which assumes per-row bounds `T·|r_j| ≤ √b/n` and the noise `N(0, 2 − σ_b²)`; discrete noise:
//! `ρ = 1/(2σ²)` zCDP per release). Nothing in the kernels' formulas is copied here: the tests
//! measure the kernels through their public `step`/`trajectory`, on data built so that every row
//! sits at the clip bound (checked through `StepInfo`), and compare with the accountant.
//!
//! (a) **Sensitivity.** The kernel steps on D and on a neighbour D' (one row changed, the
//!     substitute relation all accountants here assume) from the same random stream, so the
//!     noise is identical and `log_alpha(D) − log_alpha(D')` is the change of the released
//!     statistic. With every row at ±B and one row flipped, that is the worst case.
//! (b) **Noise.** On a D whose statistic is known (e.g. a clipped sum of exactly 0), the noise
//!     is recovered from `log_alpha` and standardised by (accountant's σ) × (sensitivity
//!     measured in (a)); N = 20 000 draws are tested for unit variance (χ², two-sided,
//!     α = 1e-6) and zero mean. The χ² test resolves the variance to about ±5 %, so a missing
//!     factor 2 (or √2), a tempering applied to the wrong term, or a wrong clip bound fails.
//! (c) **Releases.** A run's data passes and gradient evaluations are counted, and the ε the run
//!     reports must be the accountant's ε for exactly those releases.
//!
//! A statistical test fails with probability ≤ 2·10⁻⁶ by chance; the seeds are fixed. Every
//! configuration of a test uses the same streams, so when the noise scales exactly as the
//! accountant says (with √n, with T) the standardised draws, and the printed variance ratios,
//! coincide across configurations.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dp_mcmc::accounting::{
    Accountant, AccountantKind, BarkerRdp, CertifiedPld, Fourier, Pld, PrivacyEvent, Rdp,
    cks_zcdp_epsilon, discrete_gaussian_rho,
};
use dp_mcmc::models::Model;
use dp_mcmc::noise::{Lattice, Noise};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::Gradient;
#[path = "budget_queries/mod.rs"]
mod budget_queries;
use budget_queries::MaxIterations;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::vcorr::vcorr;
use dp_mcmc::samplers::{
    ClipDistance, DpBarker, DpFastMh, DpHmc, DpPenalty, DpSgld, DpSgnht, Kernel, MinibatchPenalty,
    PrivacySpent, ProposalKind, StepInfo,
};
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

/// Draws per statistical test.
const DRAWS: usize = 20_000;
/// Two-sided level of every statistical test.
const ALPHA: f64 = 1e-6;
const SEED: u64 = 2012;
/// Per-row log-likelihood ratio per unit of `Σ_i(θ'_i − θ_i)`: far above any clip bound used.
const RATIO_SCALE: f64 = 1e12;
/// Norm of every per-row gradient: far above any gradient clip bound used.
const GRAD_SCALE: f64 = 1e9;

// ---------------------------------------------------------------------------------------------
// The test model.

/// Rows whose per-row terms are set by hand: row `j`'s log-likelihood ratio is
/// `a_j·RATIO_SCALE·Σ_i(θ'_i − θ_i)` and its gradient `g_j·GRAD_SCALE·(1, …, 1)/√d`, so with
/// `a_j, g_j = ±1` every row is clipped to `±B` (ratio) or to `±b_g·u` (gradient, `‖u‖ = 1`).
/// For the proposals used (1-d, or one coordinate at a time) `|Σ_i(θ'_i − θ_i)| = ‖θ' − θ‖₂`.
/// The model records the last proposal it saw and counts the rows it evaluated (releases).
struct Rows {
    a: Vec<f64>,
    g: Vec<f64>,
    dim: usize,
    tempering: f64,
    ratio_rows: AtomicUsize,
    grad_rows: AtomicUsize,
    last_step: Mutex<Vec<f64>>,
}

impl Rows {
    fn new(a: Vec<f64>, g: Vec<f64>, dim: usize, tempering: f64) -> Self {
        assert_eq!(a.len(), g.len());
        Rows {
            a,
            g,
            dim,
            tempering,
            ratio_rows: AtomicUsize::new(0),
            grad_rows: AtomicUsize::new(0),
            last_step: Mutex::new(Vec::new()),
        }
    }

    /// `plus` ratio signs +1 then `minus` −1, gradients 0 (unused).
    fn ratios(plus: usize, minus: usize, dim: usize, t: f64) -> Self {
        let a = signs(plus, minus);
        let g = vec![0.0; a.len()];
        Rows::new(a, g, dim, t)
    }

    /// The neighbour with row `j`'s ratio sign flipped (its gradient unchanged).
    fn flip_ratio(&self, j: usize) -> Self {
        let mut a = self.a.clone();
        a[j] = -a[j];
        Rows::new(a, self.g.clone(), self.dim, self.tempering)
    }

    /// The neighbour with row `j`'s gradient sign flipped (its ratio unchanged).
    fn flip_grad(&self, j: usize) -> Self {
        let mut g = self.g.clone();
        g[j] = -g[j];
        Rows::new(self.a.clone(), g, self.dim, self.tempering)
    }

    fn last_step(&self) -> Vec<f64> {
        self.last_step.lock().unwrap().clone()
    }

    /// Record `θ' − θ`, count `rows`, return `Σ_i(θ'_i − θ_i)`.
    fn record(&self, theta: &[f64], theta_new: &[f64], rows: usize) -> f64 {
        let step: Vec<f64> = theta_new.iter().zip(theta).map(|(a, b)| a - b).collect();
        let sum = step.iter().sum();
        *self.last_step.lock().unwrap() = step;
        self.ratio_rows.fetch_add(rows, Ordering::Relaxed);
        sum
    }
}

impl Model for Rows {
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_rows(&self) -> usize {
        self.a.len()
    }
    fn tempering(&self) -> f64 {
        self.tempering
    }
    fn log_prior(&self, _theta: &[f64]) -> f64 {
        0.0
    }
    fn grad_log_prior(&self, _theta: &[f64], grad: &mut [f64]) {
        grad.fill(0.0);
    }
    fn log_lik_row(&self, theta: &[f64], j: usize) -> f64 {
        self.a[j] * RATIO_SCALE * theta.iter().sum::<f64>()
    }
    fn has_direct_ratio(&self) -> bool {
        true
    }
    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        let s = self.record(theta, theta_new, out.len());
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.a[start + k] * RATIO_SCALE * s;
        }
    }
    fn log_lik_ratio_indexed(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        out: &mut [f64],
    ) {
        let s = self.record(theta, theta_new, rows.len());
        for (o, &j) in out.iter_mut().zip(rows) {
            *o = self.a[j] * RATIO_SCALE * s;
        }
    }
    fn has_gradient(&self) -> bool {
        true
    }
    fn grad_log_lik_row(&self, _theta: &[f64], j: usize, grad: &mut [f64]) -> dp_mcmc::Result<()> {
        self.grad_rows.fetch_add(1, Ordering::Relaxed);
        grad.fill(self.g[j] * GRAD_SCALE / (self.dim as f64).sqrt());
        Ok(())
    }
}

fn signs(plus: usize, minus: usize) -> Vec<f64> {
    let mut v = vec![1.0; plus];
    v.extend(std::iter::repeat_n(-1.0, minus));
    v
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// One step of `kernel` from `theta0` on `d` and on `d2` with the same stream `chain_rng(SEED,
/// trial)`: the two steps see the same proposal (asserted) and the same noise draws.
fn pair<K: Kernel>(
    kernel: &K,
    d: &Rows,
    d2: &Rows,
    theta0: &[f64],
    trial: usize,
) -> (StepInfo, StepInfo, Vec<f64>) {
    let one = |m: &Rows| {
        let mut rng = chain_rng(SEED, trial as u64);
        let mut s = kernel.init(m, theta0, &mut rng).unwrap();
        let info = kernel.step(m, &mut s, &mut rng);
        (info, m.last_step())
    };
    let (i1, s1) = one(d);
    let (i2, s2) = one(d2);
    assert_eq!(s1, s2, "D and D' must see the same proposal");
    (i1, i2, s1)
}

fn z_crit() -> f64 {
    Normal::new(0.0, 1.0)
        .unwrap()
        .inverse_cdf(1.0 - ALPHA / 2.0)
}

fn assert_rel(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs(),
        "{what}: {got} vs {want}"
    );
}

/// `z` are N(0, 1) draws: the χ² variance test ((N−1)s² between the α/2 and 1 − α/2 quantiles
/// of χ²(N−1)) and the z-test of the mean, both two-sided at α.
fn assert_unit_normal(z: &[f64], what: &str) {
    let n = z.len() as f64;
    let mean = z.iter().sum::<f64>() / n;
    let s2 = z.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let chi = ChiSquared::new(n - 1.0).unwrap();
    let (lo, hi) = (
        chi.inverse_cdf(ALPHA / 2.0) / (n - 1.0),
        chi.inverse_cdf(1.0 - ALPHA / 2.0) / (n - 1.0),
    );
    println!(
        "{what}: noise variance / accountant's = {s2:.4} (accept [{lo:.4}, {hi:.4}]), mean {mean:+.4}"
    );
    assert!(
        lo < s2 && s2 < hi,
        "{what}: noise variance ÷ the accountant's = {s2:.4}, outside [{lo:.4}, {hi:.4}] (N = {n})"
    );
    assert!(
        mean.abs() * n.sqrt() < z_crit(),
        "{what}: standardised noise has mean {mean:.4} (N = {n})"
    );
}

/// The reported ε equals the accountant's ε at the reported δ for `event`.
fn assert_charged(spent: &PrivacySpent, mut acc: impl Accountant, event: PrivacyEvent, what: &str) {
    acc.compose(&event).unwrap();
    let want = acc.epsilon(spent.delta).unwrap();
    assert_rel(spent.epsilon, want, 1e-9, &format!("{what}: ε charged"));
}

// ---------------------------------------------------------------------------------------------
// DP penalty.

/// DP penalty, full / OCU / GWMH, continuous noise. Accountant assumption (Thm 6, PLD): each
/// step is a Gaussian mechanism with μ = 1/(2τ²n), i.e. noise multiplier τ√n relative to the
/// substitute sensitivity of the released `T·Σ_j clip(r_j, ±B)`, `B = b‖θ' − θ‖`.
/// (a) flipping one row of an all-clipped D changes the statistic by exactly `2TB`
/// (tolerance 1e-9: rounding only); (b) the noise, standardised by `τ√n·2TB`, is N(0, 1) at
/// n = 10 and 100 (noise ∝ √n), T = 1 and 0.5. D is balanced (±1 rows), so the clipped sum is
/// 0 and `log α = T·ξ − ½(Tσ)²` with a flat prior.
#[test]
fn dp_penalty_noise_is_the_pld_accountants() {
    let (tau, b, iters) = (0.3, 1.5, 50);
    for (kind, dim, n, t) in [
        (ProposalKind::Full, 1, 10, 1.0),
        (ProposalKind::Full, 1, 10, 0.5),
        (ProposalKind::Full, 1, 100, 1.0),
        (ProposalKind::Full, 1, 100, 0.5),
        (ProposalKind::OneComponent, 2, 30, 0.5),
        (ProposalKind::GuidedWalk, 2, 30, 1.0),
    ] {
        let what = format!("DP penalty {kind:?}, n = {n}, T = {t}");
        let builder = DpPenalty::builder()
            .tau(tau)
            .clip_bound(b)
            .proposal_sd(0.2)
            .proposal(kind)
            .chains(1)
            .iterations(iters);
        let nm = tau * (n as f64).sqrt();
        let dp_mcmc::samplers::IterationBudget {
            iterations: k,
            spent,
            ..
        } = builder.budget(n).unwrap();
        assert_charged(
            &spent,
            Pld::new(),
            PrivacyEvent::gaussian(nm).repeat(k as u64),
            &what,
        );
        let d = Rows::ratios(n / 2, n / 2, dim, t);
        let d2 = d.flip_ratio(0);
        let kernel = builder.kernel(&d).unwrap();
        let theta0 = vec![0.0; dim];
        let z: Vec<f64> = (0..DRAWS)
            .map(|i| {
                let (x, x2, step) = pair(&kernel, &d, &d2, &theta0, i);
                assert_eq!((x.clipped, x2.clipped), (n as u64, n as u64), "{what}");
                let sens = (x.log_alpha - x2.log_alpha).abs();
                assert_rel(sens, 2.0 * t * b * norm(&step), 1e-9, &what);
                let sd = nm * sens;
                (x.log_alpha + 0.5 * sd * sd) / sd
            })
            .collect();
        assert_unit_normal(&z, &what);
    }
}

/// `(m, s²)` of a lattice release with sensitivity `c` and squared noise multiplier `nm2`, from
/// the lattice's public rounding rules (sensitivity units, σ² snapped up; `s² = σ²/h²`).
fn lattice_noise(l: &Lattice, c: f64, nm2: f64) -> (u64, u64, f64) {
    let h = l.h();
    let m = l.sensitivity_units(c).unwrap();
    let j = l.snap_sigma2(nm2 * (m as f64 * h).powi(2)).unwrap();
    (m, j, j as f64 / h)
}

/// The change of the released lattice integer between D and D' (same noise): `Δq` units.
fn lattice_units(l: &Lattice, la: f64, la2: f64, what: &str) -> u64 {
    let dq = (la - la2) / l.h();
    assert!((dq - dq.round()).abs() < 1e-6, "{what}: Δq = {dq}");
    dq.round().abs() as u64
}

/// Discrete-noise draw shared by the penalty tests: `log α = h·(q + Y) − σ²/2` (flat prior) with
/// `σ² = j·h` from the lattice rules for sensitivity `c` and squared noise multiplier `nm2`.
/// Checks that `q + Y` is an integer (so `j` has the hypothesised parity: a different σ²
/// fails about half of the trials; tolerance 1e-3 units for DP HMC's unobservable kinetic
/// term, < 1e-5 units here) and that the release's ρ is at most the accountant's
/// `1/(2·nm2)`; returns `(Y/s, m)`.
fn lattice_draw(l: &Lattice, la: f64, q: i64, c: f64, nm2: f64, what: &str) -> (f64, u64) {
    let (m, j, s2) = lattice_noise(l, c, nm2);
    assert!(discrete_gaussian_rho(m, s2).unwrap() <= 0.5 / nm2 * (1.0 + 1e-12));
    let units = la / l.h() + 0.5 * j as f64;
    assert!(
        (units - units.round()).abs() < 1e-3,
        "{what}: q + Y = {units} is not an integer: σ² ≠ {j}·h"
    );
    ((units.round() - q as f64) / s2.sqrt(), m)
}

/// At the worst case the rounded statistic changes by ⌊c/h⌋ or ⌊c/h⌋ + 1 units; the noise is
/// calibrated to `m = ⌊c(1 + 2⁻²⁰)/h⌋ + 2`: covered, and not more than 3 units above.
fn assert_units_covered(dq: u64, m: u64, what: &str) {
    assert!(
        dq <= m && m <= dq + 3,
        "{what}: Δq = {dq} lattice units, noise calibrated to m = {m}"
    );
}

/// DP penalty with discrete Gaussian noise on a coarse lattice (h = 1/16, so the rounding and
/// the sensitivity margin are a visible part of the noise). Accountant assumption (zCDP,
/// CKS20): each step is `ρ = 1/(2τ²n)`-zCDP, i.e. the noise `N_hℤ(0, σ²)` has
/// `σ² ≥ τ²n·(m·h)²` where `m` bounds the change of the rounded statistic in lattice units.
/// (a) `|Δq| ≤ m`; (b) `Y/s` with `s² = σ²/h²` from the lattice rules is N(0, 1) (the discrete
/// Gaussian's variance is s² up to e^{−2π²s²}, negligible for s ≥ 3 as here).
#[test]
fn dp_penalty_discrete_noise_is_the_zcdp_accountants() {
    let (tau, b, n, iters) = (0.3, 1.5, 30, 50);
    let l = Lattice::new(-4).unwrap();
    for t in [1.0, 0.5] {
        let what = format!("DP penalty discrete, n = {n}, T = {t}");
        let builder = DpPenalty::builder()
            .tau(tau)
            .clip_bound(b)
            .proposal_sd(0.2)
            .noise(Noise::discrete(-4))
            .chains(1)
            .iterations(iters);
        let nm2 = tau * tau * n as f64;
        let dp_mcmc::samplers::IterationBudget {
            iterations: k,
            spent,
            ..
        } = builder.budget(n).unwrap();
        let want = cks_zcdp_epsilon(k as f64 * 0.5 / nm2, spent.delta).unwrap();
        assert_rel(spent.epsilon, want, 1e-12, &what);
        let d = Rows::ratios(n / 2, n / 2, 1, t);
        let d2 = d.flip_ratio(0);
        let kernel = builder.kernel(&d).unwrap();
        let z: Vec<f64> = (0..DRAWS)
            .map(|i| {
                let (x, x2, step) = pair(&kernel, &d, &d2, &[0.0], i);
                assert_eq!((x.clipped, x2.clipped), (n as u64, n as u64));
                // The clipped sum's sensitivity 2TB (measured in the continuous test).
                let c = 2.0 * t * b * norm(&step);
                let (z, m) = lattice_draw(&l, x.log_alpha, 0, c, nm2, &what);
                assert_units_covered(
                    lattice_units(&l, x.log_alpha, x2.log_alpha, &what),
                    m,
                    &what,
                );
                z
            })
            .collect();
        assert_unit_normal(&z, &what);
    }
}

// ---------------------------------------------------------------------------------------------
// Minibatch DP penalty.

/// Minibatch DP penalty, continuous and discrete noise. Accountant assumption (Fourier
/// accountant / RDP, substitute relation, sampling without replacement): each step releases
/// `nT·r̄ − ½σ_b²` with noise multiplier √τ relative to the sensitivity `c` the kernel states
/// (`MinibatchPenaltyKernel::sensitivity`, Lemma 1 with the constant 3).
/// (a) Worst case: every row of D at `+B` (or every row at `−B`; the max of both is taken, as
/// `B`'s sign follows the proposal) and one row flipped. When the flipped row is in the batch
/// the change must be ≤ c and ≥ (2/3)·c: the exact worst change of a population variance is
/// `range²(b−1)/b²`, so the measured change is `Δ_λ + (2/3)·Δ_σ` (a c too small, or more than
/// 1.5× too large, fails). With b < n the factor n/b is exercised.
/// (b) Noise on the all-`+1` D, whose batch mean is `b_clip·(θ' − θ)` and variance 0 whatever
/// the batch: `(log α − nT·r̄ + ½(τc² + σ_b²))/(√τ·c)` is N(0, 1); discrete: `Y/s` as for DP
/// penalty (`nm² = τ`).
#[test]
fn minibatch_penalty_noise_is_the_subsampled_accountants() {
    let (tau, b_clip, iters) = (0.5, 1.0, 30);
    let l = Lattice::new(-4).unwrap();
    for (n, batch, t, noise) in [
        (40, 20, 1.0, Noise::Gaussian),
        (40, 20, 0.5, Noise::Gaussian),
        (100, 10, 1.0, Noise::Gaussian),
        (40, 20, 0.5, Noise::discrete(-4)),
    ] {
        let what = format!("minibatch penalty {noise:?}, n = {n}, b = {batch}, T = {t}");
        let builder = MinibatchPenalty::builder()
            .tau(tau)
            .clip_bound(b_clip)
            .batch_size(batch)
            .proposal_sd(0.1)
            .noise(noise)
            .chains(1)
            .iterations(iters);
        // The charged multiplier does not depend on q = b/n; it is read at q = 0.02 because the
        // Fourier accountant cannot evaluate q = 1/2 at this noise level (the privacy loss
        // leaves its window).
        let n_acc = 50 * batch;
        let dp_mcmc::samplers::IterationBudget {
            iterations: k,
            spent,
            ..
        } = builder.budget(n_acc).unwrap();
        let event = PrivacyEvent::gaussian(tau.sqrt())
            .without_replacement(n_acc as u64, batch as u64)
            .repeat(k as u64);
        if noise.is_discrete() {
            assert_charged(&spent, Rdp::new(), event, &what);
        } else {
            assert_charged(&spent, Fourier::new(), event, &what);
        }
        let plus = Rows::ratios(n, 0, 1, t);
        let plus2 = plus.flip_ratio(0);
        let minus = Rows::ratios(0, n, 1, t);
        let minus2 = minus.flip_ratio(0);
        let kernel = builder.kernel(&plus).unwrap();
        let (nf, h) = (n as f64, l.h());
        let mut in_batch = 0;
        let z: Vec<f64> = (0..DRAWS)
            .map(|i| {
                let (x, x2, step) = pair(&kernel, &plus, &plus2, &[0.0], i);
                let (y, y2, _) = pair(&kernel, &minus, &minus2, &[0.0], i);
                for s in [x, x2, y, y2] {
                    assert_eq!(s.clipped, batch as u64, "{what}");
                }
                let c = kernel.sensitivity(nf, t, b_clip * step[0].abs());
                let sens = (x.log_alpha - x2.log_alpha)
                    .abs()
                    .max((y.log_alpha - y2.log_alpha).abs());
                let mean_term = nf * t * b_clip * step[0];
                if noise.is_discrete() {
                    let q = l.round(mean_term - 0.5 * x.batch_var).unwrap();
                    let (z, m) = lattice_draw(&l, x.log_alpha, q, c, tau, &what);
                    let dq = lattice_units(&l, x.log_alpha, x2.log_alpha, &what)
                        .max(lattice_units(&l, y.log_alpha, y2.log_alpha, &what));
                    // (Δq = 0 also when the row is in the batch but the change is < h/2.)
                    if dq > 0 {
                        assert!(
                            dq <= m && (dq + 1) as f64 * h >= c * (2.0 / 3.0),
                            "{what}: Δq = {dq} units, c/h = {}, m = {m}",
                            c / h
                        );
                    }
                    z
                } else {
                    if sens > 0.0 {
                        in_batch += 1;
                        assert!(
                            sens <= c * (1.0 + 1e-9) && sens >= c * (2.0 / 3.0) * (1.0 - 1e-9),
                            "{what}: measured sensitivity {sens}, stated c = {c}"
                        );
                    }
                    let sd = tau.sqrt() * c;
                    (x.log_alpha - mean_term + 0.5 * (sd * sd + x.batch_var)) / sd
                }
            })
            .collect();
        // The flipped row is in the batch with probability b/n (continuous noise: every
        // in-batch change is seen).
        if !noise.is_discrete() {
            assert_in_batch(in_batch, batch as f64 / nf, &what);
        }
        assert_unit_normal(&z, &what);
    }
}

/// `hits` of DRAWS trials with probability `p` each: binomial z-test at α.
fn assert_in_batch(hits: usize, p: f64, what: &str) {
    let expect = DRAWS as f64 * p;
    let sd = (DRAWS as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (hits as f64 - expect).abs() < z_crit() * sd,
        "{what}: changed row in {hits} of {DRAWS} batches"
    );
}

// ---------------------------------------------------------------------------------------------
// DP-SGLD and DP-SGNHT.

/// A stochastic-gradient sampler under test, with its settings.
#[derive(Clone, Copy, Debug)]
enum StochasticGradient {
    Sgld { eta: f64 },
    Sgnht { h: f64, a: f64 },
}

impl StochasticGradient {
    /// One step from θ = 0 on `m` with stream `trial`: the released gradient sum (noise
    /// included) read back from the public state, and the sampler's charged noise multiplier.
    /// SGLD: `θ' − θ = (ηT/(2q))·release` (flat prior); SGNHT: `p' − (1 − ξh)p = (hT/q)·release`.
    fn release(
        self,
        m: &Rows,
        c: f64,
        q: f64,
        sigma: f64,
        bound: f64,
        trial: usize,
    ) -> (Vec<f64>, f64) {
        let t = m.tempering;
        let mut rng = chain_rng(SEED, trial as u64);
        let theta0 = vec![0.0; m.dim];
        match self {
            StochasticGradient::Sgld { eta } => {
                let s = DpSgld::builder()
                    .tempering(bound)
                    .step_size(eta)
                    .clip_bound(c)
                    .sampling_rate(q)
                    .noise_multiplier(sigma);
                let k = s.kernel(m).unwrap();
                let mut st = k.init(m, &theta0, &mut rng).unwrap();
                let info = k.step(m, &mut st, &mut rng);
                assert!(info.accepted);
                let coef = eta * t / (2.0 * q);
                let r = k.position(&st).iter().map(|x| x / coef).collect();
                (r, s.charged_noise_multiplier().unwrap())
            }
            StochasticGradient::Sgnht { h, a } => {
                let s = DpSgnht::builder()
                    .tempering(bound)
                    .step_size(h)
                    .diffusion(a)
                    .clip_bound(c)
                    .sampling_rate(q)
                    .noise_multiplier(sigma);
                let k = s.kernel(m).unwrap();
                let mut st = k.init(m, &theta0, &mut rng).unwrap();
                let (p, xi) = (st.momentum().to_vec(), st.thermostat());
                k.step(m, &mut st, &mut rng);
                let coef = h * t / q;
                let r = st
                    .momentum()
                    .iter()
                    .zip(&p)
                    .map(|(p1, p0)| (p1 - (1.0 - xi * h) * p0) / coef)
                    .collect();
                (r, s.charged_noise_multiplier().unwrap())
            }
        }
    }
}

/// DP-SGLD and DP-SGNHT. Accountant assumption: every step releases the clipped gradient sum
/// `G` of a Poisson batch (rate q) with noise std σ_c·C (`charged_noise_multiplier` σ_c, C the
/// per-row clip bound), charged as `gaussian(σ_c/2).poisson_substitute(q)`: noise multiplier
/// σ_c/2 relative to the substitute sensitivity 2C. The release is read back from the public
/// state (`StochasticGradient::release`).
/// (a) D' is D with row 0's gradient reversed (substitution): on the same stream the release
/// moves by exactly 2C (tolerance 1e-9) when row 0 is in the batch and not at all otherwise,
/// and row 0 is in the batch at rate q (binomial test at α);
/// (b) on a D whose gradients are all 0 (G = 0) the noise standardised by σ_c·C is N(0, 1)
/// where the model's tempering T equals the sampler's bound (T = 1 and 0.5), both where the
/// injected noise alone pays the charge (σ = 0) and where extra noise is added (σ above the
/// injected noise's); with T = 0.5 under the bound 1 the injected noise exceeds the charge:
/// the variance ratio must not fall below 1 (one-sided χ²).
#[test]
fn stochastic_gradient_noise_is_the_poisson_accountants() {
    let (n, c, q) = (40, 0.5, 0.3);
    let samplers = [
        StochasticGradient::Sgld { eta: 1e-3 },
        StochasticGradient::Sgnht { h: 1e-2, a: 2.0 },
    ];
    for sampler in samplers {
        for (sigma, t, bound) in [
            (0.0, 1.0, 1.0),
            (50.0, 1.0, 1.0),
            (0.0, 0.5, 0.5),
            (0.0, 0.5, 1.0),
        ] {
            let what = format!("{sampler:?}, σ = {sigma}, T = {t} (bound {bound})");
            let d = Rows::new(vec![0.0; n], vec![1.0; n], 2, t);
            let d2 = d.flip_grad(0);
            let mut hits = 0;
            for i in 0..DRAWS {
                let (r, _) = sampler.release(&d, c, q, sigma, bound, i);
                let (r2, _) = sampler.release(&d2, c, q, sigma, bound, i);
                let diff: Vec<f64> = r.iter().zip(&r2).map(|(a, b)| a - b).collect();
                let moved = norm(&diff);
                if moved > c * 1e-3 {
                    assert_rel(moved, 2.0 * c, 1e-9, &what);
                    hits += 1;
                }
            }
            assert_in_batch(hits, q, &what);
            let zero = Rows::new(vec![0.0; n], vec![0.0; n], 2, t);
            let mut z = Vec::with_capacity(DRAWS);
            for i in 0..DRAWS / 2 {
                let (r, charged) = sampler.release(&zero, c, q, sigma, bound, i);
                z.extend(r.iter().map(|x| x / (charged * c)));
            }
            if t == bound {
                assert_unit_normal(&z, &what);
            } else {
                let nz = z.len() as f64;
                let s2 = z.iter().map(|x| x * x).sum::<f64>() / nz;
                let lo = ChiSquared::new(nz).unwrap().inverse_cdf(ALPHA) / nz;
                println!("{what}: noise variance / accountant's = {s2:.4} (≥ {lo:.4})");
                assert!(s2 > lo, "{what}: noise below the charge ({s2:.4})");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// DP-Fast MH.

/// DP-Fast MH. Accountant assumption (`PrivacyEvent::poisson_multiplicity`, docs/ACCOUNTING.md
/// "DP-Fast MH"): a row appears `Poisson(μ)` times, `μ = (λ + L)/n ≤ K/n`, `L = nTcM`; each
/// appearance moves TunaMH's log ratio by at most `2a`, `a = ln(1 + L/λ)`; the noise is
/// `N(0, (σ·2a)²)`. (a) On an all-`±B` D against D' with row 0 flipped (the same stream, so the
/// same proposal, draws and coins), the released statistic moves by a whole number of `a`
/// (an appearance kept on both sides moves it by `2a`, kept on D' only by `a`), at most `2a`
/// per appearance; every step that reads rows has `μ < K/n`; the fraction of steps that move
/// is the Poisson chance `1 − e^{−μ}` that row 0 is drawn (z-test on the sum of the per-step
/// probabilities, n = 40: the fraction is large enough to test). (b) With every ratio 0 the
/// statistic is exactly 0 (`u = ½`: each kept draw adds `ln 1`), and the noise standardised by
/// the charged `σ·2a` is N(0, 1) at T = 1 and 0.5.
#[test]
fn dp_fast_mh_noise_and_multiplicity_are_the_charges() {
    let (n, c, lambda, cap, sigma) = (40, 1.0, 2.0, 30.0, 1.7);
    for t in [1.0, 0.5] {
        let what = format!("DP-Fast MH, T = {t}");
        let s = DpFastMh::builder()
            .noise_multiplier(sigma)
            .clip_bound(c)
            .lambda(lambda)
            .batch_cap(cap)
            .proposal_sd(0.3);
        let d = Rows::ratios(n, 0, 1, t);
        let d2 = d.flip_ratio(0);
        let k = s.kernel(&d).unwrap();
        let a_of = |m: f64| (n as f64 * t * c * m / lambda).ln_1p();
        let (mut moved, mut expected, mut var, mut read) = (0usize, 0.0, 0.0, 0usize);
        for trial in 0..DRAWS {
            let (i1, i2, step) = pair(&k, &d, &d2, &[0.0], trial);
            if step.is_empty() || !i1.log_alpha.is_finite() {
                continue; // beyond the cap: no row read
            }
            read += 1;
            let m = step[0].abs();
            let mu = (lambda + n as f64 * t * c * m) / n as f64;
            assert!(mu < cap / n as f64, "{what}: μ = {mu} above the charge's");
            let a = a_of(m);
            // the sign of the ratios follows the step's direction
            let units = ((i1.log_alpha - i2.log_alpha) / a).abs();
            assert!(
                (units - units.round()).abs() < 1e-6,
                "{what}: moved by {units} a"
            );
            let p = -(-mu).exp_m1();
            expected += p;
            var += p * (1.0 - p);
            moved += usize::from(units.round() > 0.0);
        }
        assert!(read > DRAWS / 2, "{what}: {read} steps read rows");
        let z = (moved as f64 - expected) / var.sqrt();
        assert!(
            z.abs() < z_crit(),
            "{what}: {moved} steps moved, {expected:.1} expected"
        );

        let zero = Rows::new(vec![0.0; n], vec![0.0; n], 1, t);
        let k = s.kernel(&zero).unwrap();
        let mut zs = Vec::with_capacity(DRAWS);
        for trial in 0..DRAWS {
            let mut rng = chain_rng(SEED, trial as u64);
            let mut st = k.init(&zero, &[0.0], &mut rng).unwrap();
            *zero.last_step.lock().unwrap() = Vec::new();
            let info = k.step(&zero, &mut st, &mut rng);
            let step = zero.last_step();
            if step.is_empty() || !info.log_alpha.is_finite() {
                continue;
            }
            let sd = sigma * 2.0 * a_of(step[0].abs());
            zs.push((info.log_alpha + 0.5 * sd * sd) / sd);
        }
        assert!(zs.len() > DRAWS / 2);
        assert_unit_normal(&zs, &what);
    }
}

// ---------------------------------------------------------------------------------------------
// DP Barker.

/// Mean and variance of `x` against the noise `N(0, g) + V_corr`: z-tests at α with the
/// asymptotic variance of s², `(μ₄ − σ⁴)/N`, from the mixture's exact fourth moment (the noise
/// is close to logistic, not Gaussian, so the χ² variance test does not apply).
fn assert_barker_noise(x: &[f64], g: f64, what: &str) {
    let comps = vcorr().components();
    let m: f64 = comps.iter().map(|c| c.weight * c.mean).sum();
    let v = |c: &dp_mcmc::samplers::vcorr::Component| c.sd * c.sd + g;
    let var: f64 = comps
        .iter()
        .map(|c| c.weight * ((c.mean - m).powi(2) + v(c)))
        .sum();
    let mu4: f64 = comps
        .iter()
        .map(|c| {
            let d2 = (c.mean - m).powi(2);
            c.weight * (d2 * d2 + 6.0 * d2 * v(c) + 3.0 * v(c) * v(c))
        })
        .sum();
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let s2 = x.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let z_var = (s2 - var) / ((mu4 - var * var) / n).sqrt();
    println!(
        "{what}: noise variance {s2:.4} vs N(0, {g:.4}) + V_corr: {var:.4} (z = {z_var:+.2}), mean {mean:+.4}"
    );
    assert!(z_var.abs() < z_crit(), "{what}: variance {s2} vs {var}");
    assert!(
        (mean - m).abs() / (var / n).sqrt() < z_crit(),
        "{what}: mean {mean} vs {m}"
    );
}

/// DP Barker. Accountant assumption (Theorem 7): every row's tempered ratio satisfies
/// `T·|r_j| ≤ √b/n`, and the statistic `λ = nT·r̄` gets the noise `N(0, C − σ_b²)`, C = 2,
/// `σ_b²` the batch variance (≤ 1), completed by `V_corr`.
/// (a) Per-row bound: on D₊ (every row `+B`) and D₋ (every row `−B`), `λ₊ − λ₋ = 2nT·B` with
/// identical noise, so `T·B` is measured; it must be ≤ √b/n and ≥ 0.99·√b/n (the thesis code's
/// factor). With b < n a bound using n where b belongs fails.
/// (b) Noise: `½(log α₊ + log α₋)` is the noise (λ₊ = −λ₋); on D₊, σ_b² = 0. With b = n odd
/// and D = (k+1 rows +1, k rows −1), D' its neighbour with one row flipped (k, k+1), σ_b² is
/// the same for D and D' and known exactly, `(nT·B)²/b·(1 − 1/b²)` ≈ 0.98, so the subtraction
/// `C − σ_b²` is exercised: the kernel's reported σ_b² must equal it (1e-9), the change of λ is
/// `2nTB/b ≤ 2/√b` (Thm 7's per-row bound, substitute relation), and the noise variance must
/// be `C − σ_b² + Var(V_corr)`.
#[test]
fn dp_barker_noise_is_theorem_7s() {
    for (n, batch, t) in [(60, 21, 1.0), (60, 21, 0.5), (21, 21, 1.0), (21, 21, 0.5)] {
        let what = format!("DP Barker, n = {n}, b = {batch}, T = {t}");
        let (nf, bf) = (n as f64, batch as f64);
        let builder = DpBarker::builder().batch_size(batch).proposal_sd(0.1);
        let (d, d2) = if batch < n {
            (Rows::ratios(n, 0, 1, t), Rows::ratios(0, n, 1, t))
        } else {
            let d = Rows::ratios(n / 2 + 1, n / 2, 1, t);
            let d2 = d.flip_ratio(0);
            (d, d2)
        };
        let kernel = builder.kernel(&d).unwrap();
        let mut g = f64::NAN;
        let noise: Vec<f64> = (0..DRAWS)
            .map(|i| {
                let (x, x2, _) = pair(&kernel, &d, &d2, &[0.0], i);
                assert_eq!((x.clipped, x2.clipped), (batch as u64, batch as u64));
                // Same multiset of squares; the means differ in sign only (up to rounding).
                assert!((x.batch_var - x2.batch_var).abs() <= 1e-12, "{what}");
                let diff = (x.log_alpha - x2.log_alpha).abs();
                let (tb, sigma_b2) = if batch < n {
                    (diff / (2.0 * nf), 0.0)
                } else {
                    assert!(diff <= 2.0 / bf.sqrt(), "{what}: Δλ = {diff}");
                    let tb = diff * bf / (2.0 * nf);
                    (tb, (nf * tb).powi(2) / bf * (1.0 - 1.0 / (bf * bf)))
                };
                let bound = bf.sqrt() / nf;
                assert!(
                    tb <= bound && tb >= 0.99 * bound * (1.0 - 1e-9),
                    "{what}: T·B = {tb}, Theorem 7 needs ≤ √b/n = {bound}"
                );
                assert!(
                    (x.batch_var - sigma_b2).abs() <= 1e-9 * sigma_b2 + 1e-12,
                    "{what}: σ_b² = {} vs {sigma_b2}",
                    x.batch_var
                );
                g = 2.0 - sigma_b2;
                0.5 * (x.log_alpha + x2.log_alpha)
            })
            .collect();
        assert_barker_noise(&noise, g, &what);
    }
}

// ---------------------------------------------------------------------------------------------
// DP HMC.

/// DP HMC gradients, fresh and re-use. Accountant assumption (Thm 12, PLD): every gradient
/// release `T·(Σ_j clip_{b_g}(∇ℓ_j) + N(0, σ_g² I))` has noise multiplier τ_g√n relative to
/// the substitute L2 sensitivity 2·T·b_g (μ_g = 1/(2τ_g²n) each).
/// The released gradients are read off `HmcKernel::trajectory` (mass 1): the leapfrog gives
/// `θ_{k+1} − 2θ_k + θ_{k−1} = η²·G(θ_k)` for k = 1..L−1 exactly, and the first gradient (fresh,
/// or the one stored by `init` with re-use) enters `θ_1 = θ_0 + η(p_0 + ½ηG(θ_0))` with the
/// same `p_0` on D and D'. D has balanced gradient signs (clipped sum 0), D' one row flipped.
/// (a) every release changes by exactly 2T·b_g in L2 (tolerance 1e-8: the recovery's
/// rounding; per-coordinate clipping would give 2√2·T·b_g); (b) each coordinate of
/// `G(θ_k)/(τ_g√n·2T·b_g)` is N(0, 1), at n = 16 and 64, T = 1 and 0.5.
#[test]
fn dp_hmc_gradient_noise_is_the_pld_accountants() {
    let (tau_g, b_g, eta, l) = (0.5, 0.1, 0.05, 5);
    for (n, t, mode) in [
        (16, 1.0, Gradient::Fresh),
        (16, 0.5, Gradient::Reuse),
        (64, 1.0, Gradient::Fresh),
        (64, 0.5, Gradient::Reuse),
    ] {
        let what = format!("DP HMC gradient {mode:?}, n = {n}, T = {t}");
        let d = Rows::new(vec![0.0; n], signs(n / 2, n / 2), 2, t);
        let d2 = d.flip_grad(0);
        let kernel = DpHmc::builder()
            .tau_g(tau_g)
            .grad_clip_bound(b_g)
            .leapfrog_steps(l)
            .step_size(eta)
            .mass(vec![1.0, 1.0])
            .gradient(mode)
            .kernel(&d)
            .unwrap();
        let sens = 2.0 * t * b_g;
        let sd = tau_g * (n as f64).sqrt() * sens;
        let trajectories = DRAWS / (2 * (l - 1));
        let mut z = Vec::with_capacity(DRAWS);
        for i in 0..trajectories {
            let path = |m: &Rows| {
                let mut rng = chain_rng(SEED, i as u64);
                let mut s = kernel.init(m, &[0.0, 0.0], &mut rng).unwrap();
                kernel.trajectory(m, &mut s, &mut rng)
            };
            let (p, p2) = (path(&d), path(&d2));
            let grad = |p: &[Vec<f64>], k: usize| -> Vec<f64> {
                (0..2)
                    .map(|c| (p[k + 1][c] - 2.0 * p[k][c] + p[k - 1][c]) / (eta * eta))
                    .collect()
            };
            let g0: Vec<f64> = (0..2)
                .map(|c| 2.0 * (p[1][c] - p2[1][c]) / (eta * eta))
                .collect();
            assert_rel(norm(&g0), sens, 1e-8, &format!("{what}, first gradient"));
            for k in 1..l {
                let (g, g2) = (grad(&p, k), grad(&p2, k));
                let diff: Vec<f64> = g.iter().zip(&g2).map(|(a, b)| a - b).collect();
                assert_rel(norm(&diff), sens, 1e-8, &what);
                z.extend(g.iter().map(|x| x / sd));
            }
        }
        // Every per-row gradient was clipped (the worst case holds).
        let mut rng = chain_rng(SEED, 0);
        let mut s = kernel.init(&d, &[0.0, 0.0], &mut rng).unwrap();
        let info = kernel.step(&d, &mut s, &mut rng);
        assert_eq!(info.grad_clipped, info.grad_rows, "{what}");
        assert_unit_normal(&z, &what);
    }
}

/// DP HMC's ratio test, continuous and discrete. Accountant assumption (Thm 12, PLD; discrete:
/// zCDP): one release per iteration of `T·Σ_j clip(r_j, ±b_l·Δ)`, Δ = ‖θ' − θ‖₂, with noise
/// multiplier τ_l√n (μ_l = ρ_l = 1/(2τ_l²n)).
/// D has balanced ratio and gradient signs; D' flips one row's ratio only, so the trajectory
/// (and θ') is the same on both. (a) the statistic changes by exactly 2T·b_l·Δ; (b) on D the
/// clipped sum is 0 and `log α = ΔK + T·ξ − ½(Tσ_l)²`. The kinetic-energy change ΔK is not
/// observable; a tiny leapfrog step (η = 1e-7, with b_l = 1e6 so that B is of order 1) makes
/// it below 1e-6 in log α, i.e. below 1e-5 of the noise sd: far under the tests' resolution.
#[test]
fn dp_hmc_ratio_noise_is_the_accountants() {
    let (tau_l, b_l, eta, l) = (0.3, 1e6, 1e-7, 3);
    let lat = Lattice::new(-4).unwrap();
    // The last case: the thesis' clipping-study distance `|Σ_i(θ'_i − θ_i)|` in 2-d, where it
    // differs from `‖θ' − θ‖₂`: the noise must follow the bound the ratios are clipped at.
    // (Before that fix the noise used `‖θ' − θ‖₂` whatever the clip distance, so the
    // standardised draws had variance `E[(‖s‖₂/|Σs|)²] ≠ 1` and this case failed.)
    for (n, t, noise, dim, distance) in [
        (16, 1.0, Noise::Gaussian, 1, ClipDistance::L2),
        (16, 0.5, Noise::Gaussian, 1, ClipDistance::L2),
        (64, 1.0, Noise::Gaussian, 1, ClipDistance::L2),
        (16, 0.5, Noise::discrete(-4), 1, ClipDistance::L2),
        (16, 1.0, Noise::Gaussian, 2, ClipDistance::AbsSumThesis),
    ] {
        let what = format!("DP HMC ratio {noise:?}, n = {n}, T = {t}, {distance:?}");
        let d = Rows::new(signs(n / 2, n / 2), signs(n / 2, n / 2), dim, t);
        let d2 = d.flip_ratio(0);
        let kernel = DpHmc::builder()
            .tau_l(tau_l)
            .tau_g(1.0)
            .grad_clip_bound(0.1)
            .clip_bound(b_l)
            .leapfrog_steps(l)
            .step_size(eta)
            .noise(noise)
            .kernel(&d)
            .unwrap()
            .with_clip_distance(distance);
        let nm = tau_l * (n as f64).sqrt();
        let origin = vec![0.0; dim];
        let z: Vec<f64> = (0..DRAWS)
            .map(|i| {
                let (x, x2, step) = pair(&kernel, &d, &d2, &origin, i);
                assert_eq!((x.clipped, x2.clipped), (n as u64, n as u64));
                let c = 2.0 * t * b_l * distance.eval(&origin, &step);
                if noise.is_discrete() {
                    let (z, m) = lattice_draw(&lat, x.log_alpha, 0, c, nm * nm, &what);
                    let dq = lattice_units(&lat, x.log_alpha, x2.log_alpha, &what);
                    assert_units_covered(dq, m, &what);
                    z
                } else {
                    let sens = (x.log_alpha - x2.log_alpha).abs();
                    assert_rel(sens, c, 1e-9, &what);
                    let sd = nm * sens;
                    (x.log_alpha + 0.5 * sd * sd) / sd
                }
            })
            .collect();
        assert_unit_normal(&z, &what);
    }
}

// ---------------------------------------------------------------------------------------------
// Releases per run.

/// Releases counted in a run (2 chains × 30 iterations, a whole-release budget) against the
/// accountant: the ε a run reports must be the accountant's ε for exactly the passes over the
/// data (one ratio release per iteration) and gradient evaluations (÷ n: one release per full
/// pass) the run made. DP HMC: k(L+1) gradient releases per chain fresh, kL + 1 with re-use
/// (the `+1` made by `init`), as Algorithm 2's count (`MaxIterations::dp_hmc` params) assumes.
/// Exact counts; ε to 1e-9 (the same accountant evaluated twice). The subsampled kernels run
/// on n = 1000 rows (q = 0.02), where the Fourier accountant can evaluate ε. The field's
/// samplers: one release per iteration (DP-SGLD/SGNHT at the Poisson rate, DP-Fast MH at the
/// cap's multiplicity K/n).
#[test]
fn releases_per_run_are_what_the_accountant_charges() {
    let (n, n_sub, batch, k, chains, l) = (40, 1000, 20, 30, 2, 4);
    let (tau, tau_l, tau_g) = (0.3, 0.4, 0.8);
    let nf = n as f64;
    let rows = |n: usize| Rows::new(signs(n / 2, n / 2), signs(n / 2, n / 2), 1, 1.0);
    let model = || rows(n);
    let releases = |m: &Rows, per: usize| {
        let rows = m.ratio_rows.load(Ordering::Relaxed);
        assert_eq!(rows % per, 0);
        rows / per
    };

    for noise in [Noise::Gaussian, Noise::discrete(-20)] {
        let m = model();
        let run = DpPenalty::builder()
            .tau(tau)
            .proposal_sd(0.1)
            .noise(noise)
            .iterations(k)
            .chains(chains)
            .progress(false)
            .start(vec![0.0])
            .run(&m)
            .unwrap();
        let r = releases(&m, n);
        assert_eq!(
            r,
            chains * k,
            "DP penalty {noise:?}: one release per iteration"
        );
        let spent = run.privacy.unwrap();
        if noise.is_discrete() {
            let want = cks_zcdp_epsilon(r as f64 / (2.0 * tau * tau * nf), spent.delta).unwrap();
            assert_rel(spent.epsilon, want, 1e-12, "DP penalty discrete");
        } else {
            let ev = PrivacyEvent::gaussian(tau * nf.sqrt()).repeat(r as u64);
            assert_charged(&spent, Pld::new(), ev, "DP penalty");
        }
    }

    for (mode, noise) in [
        (Gradient::Fresh, Noise::Gaussian),
        (Gradient::Reuse, Noise::Gaussian),
        (Gradient::Fresh, Noise::discrete(-20)),
    ] {
        let what = format!("DP HMC {mode:?} {noise:?}");
        let m = model();
        let run = DpHmc::builder()
            .tau_l(tau_l)
            .tau_g(tau_g)
            .leapfrog_steps(l)
            .step_size(0.01)
            .gradient(mode)
            .noise(noise)
            .iterations(k)
            .chains(chains)
            .progress(false)
            .start(vec![0.0])
            .run(&m)
            .unwrap();
        let ratio = releases(&m, n);
        let grad_rows = m.grad_rows.load(Ordering::Relaxed);
        assert_eq!(grad_rows % n, 0, "{what}: gradients come in full passes");
        // passes over the data (counted by the model): one per leapfrog position, plus the
        // start point's once per chain; Fresh's first release of each iteration adds new
        // noise to the sum computed when the chain arrived at θ, without a pass
        assert_eq!(
            grad_rows / n,
            chains * (k * l + 1),
            "{what}: gradient passes"
        );
        // releases (each its own noise draw), as the kernel reports them
        let released: u64 = run.chains.iter().map(|c| c.totals().grad_rows).sum();
        assert_eq!(released % n as u64, 0, "{what}: releases are full sums");
        let grads = (released / n as u64) as usize;
        let per_chain = match mode {
            Gradient::Fresh => k * (l + 1),
            Gradient::Reuse => k * l + 1,
        };
        assert_eq!(ratio, chains * k, "{what}: one ratio release per iteration");
        assert_eq!(grads, chains * per_chain, "{what}: gradient releases");
        // Algorithm 2 counts the same releases.
        let budget = MaxIterations::dp_hmc(tau_l, tau_g, l as u32, n as u64)
            .epsilon(1.0)
            .gradient(mode)
            .compute()
            .unwrap();
        let param = |name: &str| budget.params.iter().find(|p| p.0 == name).unwrap().1;
        let counted =
            k as f64 * param("gradient_releases_per_iteration") + param("gradient_releases_once");
        assert_eq!(counted, per_chain as f64, "{what}: Algorithm 2's count");
        let spent = run.privacy.unwrap();
        if noise.is_discrete() {
            let rho = ratio as f64 / (2.0 * tau_l * tau_l * nf)
                + grads as f64 / (2.0 * tau_g * tau_g * nf);
            let want = cks_zcdp_epsilon(rho, spent.delta).unwrap();
            assert_rel(spent.epsilon, want, 1e-12, &what);
        } else {
            let ev = PrivacyEvent::compose(vec![
                PrivacyEvent::gaussian(tau_l * nf.sqrt()).repeat(ratio as u64),
                PrivacyEvent::gaussian(tau_g * nf.sqrt()).repeat(grads as u64),
            ]);
            assert_charged(&spent, Pld::new(), ev, &what);
        }
    }

    for method in [AccountantKind::Fourier, AccountantKind::Rdp] {
        let m = rows(n_sub);
        let run = MinibatchPenalty::builder()
            .tau(tau)
            .batch_size(batch)
            .proposal_sd(0.1)
            .accountant(method)
            .iterations(k)
            .chains(chains)
            .progress(false)
            .start(vec![0.0])
            .run(&m)
            .unwrap();
        let r = releases(&m, batch);
        assert_eq!(
            r,
            chains * k,
            "minibatch penalty: one release per iteration"
        );
        let ev = PrivacyEvent::gaussian(tau.sqrt())
            .without_replacement(n_sub as u64, batch as u64)
            .repeat(r as u64);
        let spent = run.privacy.unwrap();
        match method {
            AccountantKind::Rdp => {
                assert_charged(&spent, Rdp::new(), ev, "minibatch penalty (RDP)")
            }
            _ => assert_charged(&spent, Fourier::new(), ev, "minibatch penalty (Fourier)"),
        }
    }

    let m = rows(n_sub);
    let run = DpBarker::builder()
        .batch_size(batch)
        .proposal_sd(0.1)
        .iterations(k)
        .chains(chains)
        .progress(false)
        .start(vec![0.0])
        .run(&m)
        .unwrap();
    let r = releases(&m, batch);
    assert_eq!(r, chains * k, "DP Barker: one release per iteration");
    let spent = run.privacy.unwrap();
    let want = BarkerRdp::new(batch as u64, n_sub as u64)
        .unwrap()
        .epsilon(r as f64, spent.delta)
        .unwrap()
        .0;
    assert_rel(spent.epsilon, want, 1e-12, "DP Barker");

    // DP-SGLD / DP-SGNHT: one Poisson-subsampled gradient release per iteration (multiplier
    // σ_c/2 relative to the substitute sensitivity 2C); the gradients the model evaluated are
    // the batches' rows, as the kernels report them.
    let q = 0.1;
    for method in [AccountantKind::Pld, AccountantKind::Fourier] {
        for sgnht in [false, true] {
            let what = format!(
                "{} ({method:?})",
                if sgnht { "DP-SGNHT" } else { "DP-SGLD" }
            );
            let m = rows(n_sub);
            let (run, sigma) = if sgnht {
                let s = DpSgnht::builder()
                    .step_size(1e-2)
                    .sampling_rate(q)
                    .accountant(method);
                let sigma = s.charged_noise_multiplier().unwrap();
                let s = s
                    .iterations(k)
                    .chains(chains)
                    .progress(false)
                    .start(vec![0.0]);
                (s.run(&m).unwrap(), sigma)
            } else {
                let s = DpSgld::builder()
                    .step_size(1e-3)
                    .sampling_rate(q)
                    .accountant(method);
                let sigma = s.charged_noise_multiplier().unwrap();
                let s = s
                    .iterations(k)
                    .chains(chains)
                    .progress(false)
                    .start(vec![0.0]);
                (s.run(&m).unwrap(), sigma)
            };
            let evaluated = m.grad_rows.load(Ordering::Relaxed) as u64;
            let reported: u64 = run.chains.iter().map(|c| c.totals().grad_rows).sum();
            assert_eq!(evaluated, reported, "{what}: gradient rows");
            let mean = evaluated as f64 / (chains * k) as f64;
            assert!(
                (mean - q * n_sub as f64).abs() < 10.0,
                "{what}: batch mean {mean}"
            );
            let steps: u64 = run.chains.iter().map(|c| c.totals().steps).sum();
            assert_eq!(
                steps,
                (chains * k) as u64,
                "{what}: one release per iteration"
            );
            let ev = PrivacyEvent::gaussian(sigma / 2.0)
                .poisson_substitute(q)
                .repeat(steps);
            let spent = run.privacy.unwrap();
            match method {
                AccountantKind::Fourier => assert_charged(&spent, Fourier::new(), ev, &what),
                _ => assert_charged(&spent, CertifiedPld::new().upper_only(true), ev, &what),
            }
        }
    }
    // DP-Fast MH: one release per iteration, each charged at the cap's multiplicity K/n (the
    // ratios it reads are counted by the model: a Poisson number per step, none beyond the cap)
    let m = rows(n_sub);
    let (sigma, cap) = (3.0, 40.0);
    let run = DpFastMh::builder()
        .noise_multiplier(sigma)
        .lambda(10.0)
        .batch_cap(cap)
        .proposal_sd(0.01)
        .iterations(k)
        .chains(chains)
        .progress(false)
        .start(vec![0.0])
        .run(&m)
        .unwrap();
    let steps: u64 = run.chains.iter().map(|c| c.totals().steps).sum();
    assert_eq!(
        steps,
        (chains * k) as u64,
        "DP-Fast MH: one release per iteration"
    );
    let read = m.ratio_rows.load(Ordering::Relaxed) as f64 / steps as f64;
    assert!(read > 0.0 && read < cap, "DP-Fast MH: {read} rows per step");
    let ev = PrivacyEvent::gaussian(sigma)
        .poisson_multiplicity(cap / n_sub as f64)
        .repeat(steps);
    let spent = run.privacy.unwrap();
    assert_charged(
        &spent,
        CertifiedPld::new().upper_only(true),
        ev,
        "DP-Fast MH",
    );
}
