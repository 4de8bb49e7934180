//! Empirical privacy audit of ONE step of every DP kernel.
//!
//! For each kernel we draw its one-step release many times (seeded) on a worst-case pair of
//! neighbouring data sets and compute a statistically valid LOWER bound on ε at the δ the
//! accountant reports, with the threshold test of `tests/audit_stats` (Clopper-Pearson bounds,
//! Bonferroni over a threshold grid fixed before the draws; confidence `1 − ALPHA` per audit).
//! Each audit checks two things:
//! * the correct kernel's lower bound stays at or below the ε its accountant charges for that
//!   step (a violation would be a privacy bug);
//! * the same kernel with its noise standard deviation halved (DP Barker: a clip bound 16 times
//!   too large), still charged at the original setting, gives a lower bound ABOVE the charge:
//!   the audit can fail, and detects a factor-2 noise bug with these draws.
//!
//! **What is audited.** The release of a step is `StepInfo::log_alpha` (the accept decision is
//! a post-processing of it) together with the proposal `θ'`, which does not depend on the data
//! (DP HMC: it is a post-processing of the gradient releases) and on which every accountant
//! conditions. The statistic `S` of each audit standardises `log_alpha` with the public
//! parameters and `θ'`; any function of the release is a valid post-processing, so the bound
//! is valid whatever `S` is (standardising only gives the test its power).
//!
//! **Worst-case neighbours** (substitute relation, as every accountant of the crate assumes):
//! [`WorstCase`] rows have per-row log-likelihood ratios (or gradients) of `±R` with `R` far
//! above every clip bound, so each row contributes exactly `±B` after clipping; `D` has every
//! row at `+R`, `D'` the first row (Barker's broken case: the first 16 rows) at `−R`.
//!
//! **Power, computed beforehand** (expected bounds from the expected counts, `DRAWS` per data
//! set, the same grids and α): for a Gaussian release with noise multiplier 1.5 (μ_PLD = 0.222,
//! charged ε = 1.91 at δ = 1e-3) the correct kernel's bound is ≈ 1.42 and the broken one's
//! ≈ 3.21; minibatch (q = 0.2, τ = 0.5): charge 2.76, correct ≈ 1.61, broken ≈ 4.64; DP Barker
//! (b = n = 100, Theorem 7 charge 1.64): correct ≈ 0.10, 16-fold clip bound ≈ 2.81.
//!
//! `cargo test --test audit -- --nocapture` prints every bound.

mod audit_stats;

use std::sync::atomic::{AtomicU64, Ordering};

use audit_stats::{AuditBound, audit, cp_lower, cp_upper, grid};
use dp_mcmc::accounting::{
    Accountant, AccountantKind, CertifiedPld, Fourier, PrivacyEvent, cks_zcdp_epsilon, pld_epsilon,
};
use dp_mcmc::models::Model;
use dp_mcmc::noise::{Lattice, Noise};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::{
    DpBarker, DpFastMh, DpHmc, DpPenalty, DpSgld, DpSgnht, Kernel, MinibatchPenalty, PrivacySpent,
};

/// Draws of the release per data set.
const DRAWS: usize = 100_000;
/// Confidence level of each audit: the bound is valid with probability ≥ 1 − ALPHA.
const ALPHA: f64 = 1e-3;
/// Rows of the data sets (the accountants' δ is 0.1/n = 1e-3).
const N: usize = 100;
/// Per-row ratios / gradients of the worst-case rows: far above every clip bound.
const R: f64 = 1e12;

/// A one-parameter model with fixed per-row log-likelihood ratios and gradients:
/// `ℓ_j(θ) = r_j·[θ ≠ θ₀]` with `θ₀ = 0` (so every move away from `θ₀` has ratio `r_j`) and
/// `∇ℓ_j = g_j`; flat prior, no tempering. It records the last proposal it was asked about,
/// so the audit can read `θ'` (public) next to `log_alpha`.
struct WorstCase {
    ratios: Vec<f64>,
    grads: Vec<f64>,
    proposal: AtomicU64,
}

impl WorstCase {
    /// `(D, D')`: every row of `D` has ratio `ratio` and gradient `grad`; `D'` flips the sign
    /// of the first `changed` rows.
    fn pair(ratio: f64, grad: f64, changed: usize) -> (WorstCase, WorstCase) {
        let make = |flip: usize| WorstCase {
            ratios: (0..N)
                .map(|j| if j < flip { -ratio } else { ratio })
                .collect(),
            grads: (0..N)
                .map(|j| if j < flip { -grad } else { grad })
                .collect(),
            proposal: AtomicU64::new(f64::NAN.to_bits()),
        };
        (make(0), make(changed))
    }

    /// Record the proposal `θ'` of a ratio evaluation.
    fn record(&self, theta_new: &[f64]) {
        self.proposal
            .store(theta_new[0].to_bits(), Ordering::Relaxed);
    }
}

impl Model for WorstCase {
    fn dim(&self) -> usize {
        1
    }
    fn n_rows(&self) -> usize {
        self.ratios.len()
    }
    fn log_prior(&self, _: &[f64]) -> f64 {
        0.0
    }
    fn grad_log_prior(&self, _: &[f64], g: &mut [f64]) {
        g[0] = 0.0;
    }
    fn log_lik_row(&self, theta: &[f64], j: usize) -> f64 {
        if theta[0] == 0.0 { 0.0 } else { self.ratios[j] }
    }
    fn has_gradient(&self) -> bool {
        true
    }
    fn grad_log_lik_row(&self, _: &[f64], j: usize, g: &mut [f64]) -> dp_mcmc::Result<()> {
        g[0] = self.grads[j];
        Ok(())
    }
    // d = 1: column-major gradients are the rows (spares the kernel's transposition).
    fn has_column_gradients(&self) -> bool {
        true
    }
    fn grad_log_lik_cols(&self, _: &[f64], start: usize, out: &mut [f64]) -> dp_mcmc::Result<()> {
        out.copy_from_slice(&self.grads[start..start + out.len()]);
        Ok(())
    }
    fn has_direct_ratio(&self) -> bool {
        true
    }
    fn log_lik_ratio_rows(&self, theta: &[f64], theta_new: &[f64], start: usize, out: &mut [f64]) {
        self.record(theta_new);
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.log_lik_row(theta_new, start + k) - self.log_lik_row(theta, start + k);
        }
    }
    fn log_lik_ratio_indexed(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        out: &mut [f64],
    ) {
        self.record(theta_new);
        for (o, &j) in out.iter_mut().zip(rows) {
            *o = self.log_lik_row(theta_new, j) - self.log_lik_row(theta, j);
        }
    }
}

/// `DRAWS` one-step releases of `kernel` on `model` from `θ₀ = 0`: draw `i` builds a fresh
/// state and steps once on the stream `chain_rng(seed, first_stream + i)` (independent
/// draws), and is mapped to `stat(log_alpha, θ')`.
fn releases<K: Kernel>(
    kernel: &K,
    model: &WorstCase,
    seed: u64,
    first_stream: u64,
    stat: &impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    (0..DRAWS as u64)
        .map(|i| {
            let mut rng = chain_rng(seed, first_stream + i);
            let mut state = kernel.init(model, &[0.0], &mut rng).unwrap();
            model.proposal.store(f64::NAN.to_bits(), Ordering::Relaxed);
            let info = kernel.step(model, &mut state, &mut rng);
            let proposal = f64::from_bits(model.proposal.load(Ordering::Relaxed));
            stat(info.log_alpha, proposal)
        })
        .collect()
}

/// Threshold audit of `kernel` on `pair` (`D` on streams `0..DRAWS`, `D'` on the next `DRAWS`).
fn audit_kernel<K: Kernel>(
    kernel: &K,
    pair: &(WorstCase, WorstCase),
    seed: u64,
    thresholds: &[f64],
    delta: f64,
    stat: impl Fn(f64, f64) -> f64,
) -> AuditBound {
    let xs = releases(kernel, &pair.0, seed, 0, &stat);
    let ys = releases(kernel, &pair.1, seed, DRAWS as u64, &stat);
    audit(&xs, &ys, thresholds, ALPHA, delta)
}

/// Thresholds for statistics standardised to unit noise (65 points).
fn unit_grid() -> Vec<f64> {
    grid(-8.0, 8.0, 0.25)
}

/// The correct kernel's bound must not exceed the charge (nor the charge of any other
/// accountant offered for the kernel, `others`); the broken kernel's must exceed the charge.
fn check(
    name: &str,
    charged: f64,
    others: &[(&str, f64)],
    correct: &AuditBound,
    broken: &AuditBound,
) {
    println!(
        "{name}: charged ε = {charged:.4} (δ = 0.1/n); correct kernel: ε ≥ {:.4} ({}, t = {}, \
         p ≥ {:.3e}, q ≤ {:.3e}); broken kernel: ε ≥ {:.4} ({}, t = {}); other accountants: {others:?}",
        correct.epsilon,
        correct.event,
        correct.threshold,
        correct.p_lower,
        correct.q_upper,
        broken.epsilon,
        broken.event,
        broken.threshold
    );
    for &(accountant, eps) in [("default", charged)].iter().chain(others) {
        assert!(
            correct.epsilon <= eps,
            "PRIVACY VIOLATION? {name}: the audit's lower bound {} exceeds the ε = {eps} charged \
             by the {accountant} accountant",
            correct.epsilon
        );
    }
    assert!(
        broken.epsilon > charged,
        "{name}: the audit did not catch the broken kernel ({} ≤ charged {charged})",
        broken.epsilon
    );
}

/// The Clopper-Pearson bounds against scipy 1.17.1 `beta.ppf` (and the closed forms for no
/// success or failure): within 1e-8 relative, and on the conservative side (lower bounds not
/// above, upper bounds not below the reference, up to the reference's own 1e-13 rounding).
#[test]
fn clopper_pearson_matches_scipy() {
    // (k, n, a, beta.ppf(a, k, n−k+1), beta.ppf(1−a, k+1, n−k))
    let cases = [
        (1, 10, 0.05, 0.005116196891823701, 0.39416330243650466),
        (7, 100, 1e-3, 0.015555283659518644, 0.1841809198920783),
        (2000, 100_000, 1e-6, 0.01796416518655518, 0.0221841287759758),
        (
            99_990,
            100_000,
            1e-6,
            0.9996557632042139,
            0.9999872313190414,
        ),
        (
            23,
            100_000,
            3.8e-6,
            7.461300996094396e-05,
            0.0005253643464014036,
        ),
    ];
    for (k, n, a, lo, hi) in cases {
        let (l, h) = (cp_lower(k, n, a), cp_upper(k, n, a));
        let ok_lower = l <= lo * (1.0 + 1e-13) && l >= lo * (1.0 - 1e-8);
        let ok_upper = h >= hi * (1.0 - 1e-13) && h <= hi * (1.0 + 1e-8);
        assert!(ok_lower, "lower k={k} n={n}: {l} vs {lo}");
        assert!(ok_upper, "upper k={k} n={n}: {h} vs {hi}");
    }
    assert_eq!(cp_lower(0, 50, 0.01), 0.0);
    assert_eq!(cp_upper(50, 50, 0.01), 1.0);
    // No success: the upper bound is 1 − a^{1/n}; no failure: the lower bound is a^{1/n}.
    let (h, want) = (cp_upper(0, 1000, 1e-3), 1.0 - 1e-3f64.powf(1e-3));
    assert!(h >= want && h <= want * (1.0 + 1e-8), "{h} vs {want}");
    let (l, want) = (cp_lower(1000, 1000, 1e-3), 1e-3f64.powf(1e-3));
    assert!(l <= want && l >= want * (1.0 - 1e-8), "{l} vs {want}");
}

/// An audit of a DP penalty release (the ratio noise scale `tau`, clip bound `clip`) on the
/// worst-case pair `WorstCase::pair(R, 0, 1)`: the statistic is
/// `S = (log α + σ²/2 − N·bΔ)/σ` with `Δ = |θ'|`, `σ = τ√N·2bΔ` (the noise on the clipped sum
/// of `N` rows, each clipped to `bΔ`), `N(0, 1)` on `D` and `N(−1/(τ√N), 1)` on `D'`.
struct PenaltyAudit {
    name: &'static str,
    tau: f64,
    clip: f64,
    seed: u64,
}

impl PenaltyAudit {
    /// Audits the kernel `kernel_at(τ, D)` at `tau` (must stay within the charge `spent`)
    /// and at `tau/2` (must exceed it); `zcdp` is zCDP's ε for the same run, for the report.
    fn check<K: Kernel>(
        &self,
        spent: &PrivacySpent,
        zcdp: f64,
        kernel_at: impl Fn(f64, &WorstCase) -> K,
    ) {
        let pair = WorstCase::pair(R, 0.0, 1);
        let run = |tau: f64| {
            let clip = self.clip;
            let stat = move |la: f64, th: f64| {
                let bound = clip * th.abs();
                let sd = tau * (N as f64).sqrt() * 2.0 * bound;
                (la + 0.5 * sd * sd - N as f64 * bound) / sd
            };
            let kernel = kernel_at(tau, &pair.0);
            audit_kernel(&kernel, &pair, self.seed, &unit_grid(), spent.delta, stat)
        };
        check(
            self.name,
            spent.epsilon,
            &[("zCDP", zcdp)],
            &run(self.tau),
            &run(self.tau / 2.0),
        );
    }
}

/// DP penalty (full update): `ξ ~ N(0, (τ√n·2bΔ)²)` on the clipped sum, tight Gaussian PLD
/// charge `μ = 1/(2τ²n)`. `S = (log α + σ²/2 − n·bΔ)/σ` is `N(0, 1)` on `D` and
/// `N(−1/(τ√n), 1)` on `D'`. Draws: 2 × `DRAWS` per kernel, α = `ALPHA`, 65 thresholds.
#[test]
fn dp_penalty_step_is_within_its_pld_charge() {
    let (tau, clip) = (0.15, 1.0);
    let sampler = DpPenalty::builder()
        .tau(tau)
        .clip_bound(clip)
        .proposal_sd(0.1)
        .iterations(1)
        .chains(1);
    let dp_mcmc::samplers::IterationBudget { spent, .. } = sampler.budget(N).unwrap();
    let mu = 1.0 / (2.0 * tau * tau * N as f64);
    assert_eq!(spent.epsilon, pld_epsilon(mu, spent.delta).unwrap());
    let zcdp = sampler
        .clone()
        .accountant(AccountantKind::Zcdp)
        .budget(N)
        .unwrap()
        .spent;
    let audit = PenaltyAudit {
        name: "dp-penalty",
        tau,
        clip,
        seed: 11,
    };
    audit.check(&spent, zcdp.epsilon, |t, m| {
        sampler.clone().tau(t).kernel(m).unwrap()
    });
}

/// DP penalty with exact discrete Gaussian noise on `2⁻¹⁰ℤ`: each step is `1/(2τ²n)`-zCDP,
/// charged with the CKS20 conversion. `S` standardises the lattice release with the σ² the
/// kernel snaps (public: from Δ). Draws: 2 × `DRAWS` per kernel, α = `ALPHA`, 65 thresholds.
#[test]
fn discrete_dp_penalty_step_is_within_its_zcdp_charge() {
    let (tau, clip, log2) = (0.15, 1.0, -10);
    let sampler = DpPenalty::builder()
        .tau(tau)
        .clip_bound(clip)
        .proposal_sd(0.1)
        .noise(Noise::discrete(log2))
        .iterations(1)
        .chains(1);
    let dp_mcmc::samplers::IterationBudget { spent, .. } = sampler.budget(N).unwrap();
    let rho = 1.0 / (2.0 * tau * tau * N as f64);
    assert_eq!(spent.epsilon, cks_zcdp_epsilon(rho, spent.delta).unwrap());
    let lattice = Lattice::new(log2).unwrap();
    let h = lattice.h();
    let pair = WorstCase::pair(R, 0.0, 1);
    let run = |tau: f64| {
        let kernel = sampler.clone().tau(tau).kernel(&pair.0).unwrap();
        audit_kernel(&kernel, &pair, 12, &unit_grid(), spent.delta, |la, th| {
            let bound = clip * th.abs();
            let m = lattice.sensitivity_units(2.0 * bound).unwrap() as f64;
            let j = lattice
                .snap_sigma2(tau * tau * N as f64 * (m * h).powi(2))
                .unwrap();
            let sigma2 = j as f64 * h;
            (la + 0.5 * sigma2 - N as f64 * bound) / sigma2.sqrt()
        })
    };
    check(
        "dp-penalty (discrete)",
        spent.epsilon,
        &[],
        &run(tau),
        &run(tau / 2.0),
    );
}

/// Minibatch DP penalty, b = 20 of n = 100 rows without replacement (q = 0.2), noise
/// `N(0, τc²)` on `nT·r̄ − σ_b²/2` with the substitute sensitivity `c`; the Fourier accountant
/// charges `(1−q)N(0,τ) + qN(±1,τ)`. The clip bound keeps `(n/b)·B ≈ 1e-3`, so the actual
/// change of the data term is `≈ c`. `S = (log α + τc²/2 − nB)/(√τ·c)`: `N(0, 1)` on `D`, a
/// q-mixture with `N(≈ −1/√τ, 1)` on `D'`. Broken: noise std halved (τ/4). Draws: 2 × `DRAWS`
/// per kernel, α = `ALPHA`, 65 thresholds.
#[test]
fn minibatch_penalty_step_is_within_its_fourier_charge() {
    let (tau, clip, batch) = (0.5, 2e-3, 20);
    let sampler = MinibatchPenalty::builder()
        .tau(tau)
        .clip_bound(clip)
        .batch_size(batch)
        .proposal_sd(0.1)
        .iterations(1)
        .chains(1);
    let dp_mcmc::samplers::IterationBudget { spent, .. } = sampler.budget(N).unwrap();
    // The charge is the Fourier accountant's ε of one subsampled Gaussian event.
    let mut fourier = Fourier::new();
    fourier
        .compose(&PrivacyEvent::gaussian(tau.sqrt()).without_replacement(N as u64, batch as u64))
        .unwrap();
    assert_eq!(spent.epsilon, fourier.epsilon(spent.delta).unwrap());
    let pair = WorstCase::pair(R, 0.0, 1);
    let run = |tau: f64| {
        let kernel = sampler.clone().tau(tau).kernel(&pair.0).unwrap();
        audit_kernel(&kernel, &pair, 13, &unit_grid(), spent.delta, |la, th| {
            let bound = clip * th.abs();
            let c = kernel.sensitivity(N as f64, 1.0, bound);
            (la + 0.5 * tau * c * c - N as f64 * bound) / (tau.sqrt() * c)
        })
    };
    let rdp = |thesis: bool| {
        let s = sampler
            .clone()
            .accountant(AccountantKind::Rdp)
            .thesis_compatible(thesis);
        s.budget(N).unwrap().spent.epsilon
    };
    check(
        "minibatch-penalty",
        spent.epsilon,
        &[
            ("RDP (WBK19 Thm 9)", rdp(false)),
            ("RDP (thesis code)", rdp(true)),
        ],
        &run(tau),
        &run(tau / 4.0),
    );
}

/// DP Barker, b = n = 100 (q = 1: no amplification, the audit's best case), Theorem 7 charge.
/// The release is `λ + N(0, 2 − σ_b²) + V_corr ≈ λ + Logistic(0, 1)` with `λ = nT·r̄`; the
/// clip bound `0.99√b/(nT)` gives one row a shift of `1.98/√b ≈ 0.2` in `λ`, so the release
/// is close to pure 0.2-DP and the Theorem 7 charge (1.64) is loose by a factor ≈ 8: a
/// factor-2 bug is invisible in one step. The broken case is a pair differing in 16 rows
/// (what a clip bound 16 times too large would release for one row). `S = log α − 0.99√b`.
/// Draws: 2 × `DRAWS` per case, α = `ALPHA`, 97 thresholds.
#[test]
fn dp_barker_step_is_within_its_theorem7_charge() {
    let batch = N;
    let sampler = DpBarker::builder()
        .batch_size(batch)
        .proposal_sd(0.1)
        .iterations(1)
        .chains(1);
    let dp_mcmc::samplers::IterationBudget { spent, .. } = sampler.budget(N).unwrap();
    let kernel = sampler.kernel(&WorstCase::pair(R, 0.0, 1).0).unwrap();
    let centre = 0.99 * (batch as f64).sqrt();
    let thresholds = grid(-12.0, 12.0, 0.25);
    let run = |changed: usize| {
        let pair = WorstCase::pair(R, 0.0, changed);
        audit_kernel(&kernel, &pair, 14, &thresholds, spent.delta, |la, _| {
            la - centre
        })
    };
    check("dp-barker", spent.epsilon, &[], &run(1), &run(16));
}

/// DP HMC's log-likelihood-ratio release (τ_l): gradients are the same on `D` and `D'` (0)
/// and their noise is negligible (`b_g = 1e-9`, τ_g = 1000, μ_g = 5e-9), so the trajectory
/// does not depend on the data and `p ≈ p₀`; the release is DP penalty's with `Δ = ‖θ' − θ‖`.
/// Charged: the whole step (`μ_l + 2μ_g`, L = 1, fresh gradients) from `DpHmc::budget`.
/// Draws: 2 × `DRAWS` per kernel, α = `ALPHA`, 65 thresholds.
#[test]
fn dp_hmc_ratio_release_is_within_its_charge() {
    let (tau_l, clip) = (0.15, 1.0);
    let sampler = DpHmc::builder()
        .tau_l(tau_l)
        .tau_g(1e3)
        .grad_clip_bound(1e-9)
        .clip_bound(clip)
        .leapfrog_steps(1)
        .step_size(0.1)
        .iterations(1)
        .chains(1);
    let dp_mcmc::samplers::IterationBudget { spent, .. } = sampler.budget(N).unwrap();
    let n = N as f64;
    let mu = 1.0 / (2.0 * tau_l * tau_l * n) + 2.0 / (2.0 * 1e6 * n);
    assert_eq!(spent.epsilon, pld_epsilon(mu, spent.delta).unwrap());
    let zcdp = sampler
        .clone()
        .accountant(AccountantKind::Zcdp)
        .budget(N)
        .unwrap()
        .spent;
    let audit = PenaltyAudit {
        name: "dp-hmc ratio",
        tau: tau_l,
        clip,
        seed: 15,
    };
    audit.check(&spent, zcdp.epsilon, |t, m| {
        sampler.clone().tau_l(t).kernel(m).unwrap()
    });
}

/// DP HMC's first gradient release `G(θ₀) = Σ clip(∇ℓ_j) + N(0, σ_g²)`, `σ_g = 2τ_g√n·b_g`,
/// seen through the proposal: with L = 1, `θ' = θ₀ + η(p₀ + ηG/2)/m`, and with m = 1e-6,
/// η = 1 the momentum adds noise of std `2√m/η = 2e-3` to `W = 2m(θ' − θ₀)/η²` against
/// `σ_g = 3`. Ratios are the same on both data sets (0). Charged: ONE gradient release,
/// `μ_g = 1/(2τ_g²n)` (the accountant's per-release term; the step adds a second gradient and
/// the ratio release). `S = (W − n·b_g)/σ_g`. Draws: 2 × `DRAWS` per kernel, α = `ALPHA`,
/// 65 thresholds.
#[test]
fn dp_hmc_gradient_release_is_within_its_charge() {
    let (tau_g, grad_clip, eta, mass) = (0.15, 1.0, 1.0, 1e-6);
    let sampler = DpHmc::builder()
        .tau_l(1e3)
        .tau_g(tau_g)
        .grad_clip_bound(grad_clip)
        .clip_bound(1.0)
        .leapfrog_steps(1)
        .step_size(eta)
        .mass(vec![mass])
        .iterations(1)
        .chains(1);
    let dp_mcmc::samplers::IterationBudget { spent, .. } = sampler.budget(N).unwrap();
    let n = N as f64;
    let mu_g = 1.0 / (2.0 * tau_g * tau_g * n);
    let charged = pld_epsilon(mu_g, spent.delta).unwrap();
    assert!(charged < spent.epsilon);
    println!("dp-hmc: the whole step is charged ε = {:.4}", spent.epsilon);
    let pair = WorstCase::pair(0.0, R, 1);
    let run = |tau_g: f64| {
        let kernel = sampler.clone().tau_g(tau_g).kernel(&pair.0).unwrap();
        let sd = 2.0 * tau_g * n.sqrt() * grad_clip;
        audit_kernel(&kernel, &pair, 16, &unit_grid(), spent.delta, |_, th| {
            (2.0 * mass * th / (eta * eta) - n * grad_clip) / sd
        })
    };
    check(
        "dp-hmc gradient",
        charged,
        &[],
        &run(tau_g),
        &run(tau_g / 2.0),
    );
}

/// DP-SGLD and DP-SGNHT: one step's release, the clipped gradient sum of a Poisson batch
/// (q = 0.5) with noise std σ·C (σ = 1.5 relative to the clip bound C = 1), charged as
/// `gaussian(σ/2).poisson_substitute(q)` (certified PLD upper bound; the Fourier accountant is
/// also checked). Worst case under substitution: `D` has one row with gradient R (clipped to
/// C) and every other row 0, `D'` that row at −R, so the release is `(1 − q)N(0, σ²) + qN(C, σ²)`
/// against `(1 − q)N(0, σ²) + qN(−C, σ²)`. The step is read back from the public state from
/// θ = 0 (flat prior): SGLD `S = θ'/(coef·σC)`, coef = η/(2q); SGNHT
/// `S = (p' − (1 − ξh)p)/(coef·σC)`, coef = h/q. Both run where σ exceeds the injected noise's
/// multiplier (η = 4: 2q/(C√η) = 0.5; h = 0.01, A = 0.005: q√(2A/h)/C = 0.5), so a broken
/// variant really changes the noise. The charge places the sampled components 4C apart where
/// they are at most 2C (docs/ACCOUNTING.md), so a kernel with half the noise is still within
/// it: the broken variant has a quarter of the noise (still charged at σ).
#[test]
fn stochastic_gradient_steps_are_within_their_poisson_charge() {
    let (q, sigma, c) = (0.5, 1.5, 1.0);
    let delta = 0.1 / N as f64;
    let event = PrivacyEvent::gaussian(sigma / 2.0).poisson_substitute(q);
    let eps_of = |mut acc: Box<dyn Accountant>| {
        acc.compose(&event).unwrap();
        acc.epsilon(delta).unwrap()
    };
    let charged = eps_of(Box::new(CertifiedPld::new().upper_only(true)));
    let fourier = eps_of(Box::new(Fourier::new()));
    let data = |first: f64| WorstCase {
        ratios: vec![0.0; N],
        grads: (0..N).map(|j| if j == 0 { first } else { 0.0 }).collect(),
        proposal: AtomicU64::new(0),
    };
    let pair = (data(R), data(-R));
    // the release of one step on `m` from stream `stream`, standardised by the charged noise
    let step = |sgnht: bool, asked: f64, m: &WorstCase, stream: u64| -> f64 {
        let mut rng = chain_rng(17, stream);
        if sgnht {
            let (h, a) = (0.01, 0.005);
            let s = DpSgnht::builder()
                .step_size(h)
                .diffusion(a)
                .clip_bound(c)
                .sampling_rate(q)
                .noise_multiplier(asked);
            let k = s.kernel(m).unwrap();
            let mut st = k.init(m, &[0.0], &mut rng).unwrap();
            let (p, xi) = (st.momentum()[0], st.thermostat());
            k.step(m, &mut st, &mut rng);
            (st.momentum()[0] - (1.0 - xi * h) * p) / (h / q * sigma * c)
        } else {
            let eta = 4.0;
            let s = DpSgld::builder()
                .step_size(eta)
                .clip_bound(c)
                .sampling_rate(q)
                .noise_multiplier(asked);
            let k = s.kernel(m).unwrap();
            let mut st = k.init(m, &[0.0], &mut rng).unwrap();
            k.step(m, &mut st, &mut rng);
            k.position(&st)[0] / (eta / (2.0 * q) * sigma * c)
        }
    };
    for sgnht in [false, true] {
        let name = if sgnht { "dp-sgnht" } else { "dp-sgld" };
        let run = |asked: f64| {
            let xs: Vec<f64> = (0..DRAWS as u64)
                .map(|i| step(sgnht, asked, &pair.0, i))
                .collect();
            let ys: Vec<f64> = (0..DRAWS as u64)
                .map(|i| step(sgnht, asked, &pair.1, DRAWS as u64 + i))
                .collect();
            audit(&xs, &ys, &unit_grid(), ALPHA, delta)
        };
        check(
            name,
            charged,
            &[("Fourier", fourier)],
            &run(sigma),
            &run(sigma / 4.0),
        );
    }
}

/// DP-Fast MH: one step's release, TunaMH's log ratio `Λ` plus `N(0, (σ·2a)²)`,
/// `a = ln(1 + L/λ)`, `L = n·c·|θ'|`, charged as `gaussian(σ).poisson_multiplicity(K/n)`
/// (σ = 1.5, λ = 0.05, c = 1, K = 5: a row appears Poisson(≤ 0.05) times). Worst case under
/// substitution: every row of `D` at `+R` (clipped to `+c|θ'|`: kept with probability
/// `λ/(λ + L)`, rarely since `λ ≪ L`, adding `+a`), the first row of `D'` at `−R` (always kept,
/// adding `−a`). Proposals with `λ + L ≥ K` are rejected by the kernel without reading the data;
/// their releases are set apart. The statistic is `S = (log_alpha + s²/2)/(2a)` (θ' is public):
/// each appearance of the changed row moves it by about `−1/2`. The charge is conservative
/// here by about 4 in distance: its components sit `2·(2a)` apart per appearance where this
/// pair moves `Λ` by about `a`; so a kernel with a quarter of the noise is still within it
/// (measured: bound ≈ 0), and the broken variant has an eighth (still charged at σ; measured
/// bound 0.85 against the charge 0.15).
#[test]
fn dp_fast_mh_steps_are_within_their_multiplicity_charge() {
    let (sigma, lambda, c, cap) = (1.5, 0.05, 1.0, 5.0);
    let delta = 0.1 / N as f64;
    let mean = cap / N as f64;
    let mut acc = CertifiedPld::new().upper_only(true);
    acc.compose(&PrivacyEvent::gaussian(sigma).poisson_multiplicity(mean))
        .unwrap();
    let charged = acc.epsilon(delta).unwrap();
    let pair = WorstCase::pair(R, 0.0, 1);
    let m_hi = (cap - lambda) / (N as f64 * c);
    let run = |used: f64| {
        let kernel = DpFastMh::builder()
            .noise_multiplier(used)
            .clip_bound(c)
            .lambda(lambda)
            .batch_cap(cap)
            .proposal_sd(0.8 * (cap - lambda) / (N as f64 * c))
            .kernel(&pair.0)
            .unwrap();
        audit_kernel(&kernel, &pair, 41, &unit_grid(), delta, |log_alpha, th| {
            let m = th.abs();
            if m >= m_hi || log_alpha.is_nan() {
                // rejected beyond the cap without reading the data: set apart (above every
                // threshold, on both data sets alike)
                return 1e9;
            }
            let a = (N as f64 * c * m / lambda).ln_1p();
            let s = used * 2.0 * a;
            (log_alpha + 0.5 * s * s) / (2.0 * a)
        })
    };
    check("dp-fast-mh", charged, &[], &run(sigma), &run(sigma / 8.0));
}

/// Audits one Gaussian release charged at noise multiplier `z` on a worst-case pair:
/// `release(on_d_prime, z_used, seed)` gives the released value and its sensitivity under `D`
/// (`false`) or `D'` (`true`). `S` is the release minus its noiseless value under `D`, over the
/// CHARGED noise's standard deviation; the broken variant adds half the noise (same charge).
fn audit_gaussian_release(
    name: &str,
    charged: f64,
    z: f64,
    release: impl Fn(bool, f64, u64) -> (f64, f64),
) {
    let centre = release(false, 1e-300, 0).0;
    let run = |z_used: f64| {
        let sample = |on_b: bool, base: u64| -> Vec<f64> {
            (0..DRAWS as u64)
                .map(|s| {
                    let (v, sens) = release(on_b, z_used, base + s);
                    (v - centre) / (sens * z)
                })
                .collect()
        };
        audit(
            &sample(false, 1),
            &sample(true, 10_000_000),
            &unit_grid(),
            ALPHA,
            0.1 / N as f64,
        )
    };
    check(name, charged, &[], &run(z), &run(z / 2.0));
}

/// The releases of the noise-aware method (`noise_aware::release_score`,
/// `release_information`, and a linear model's `release_sufficient`), audited as one Gaussian
/// release each on a worst-case pair.
///
/// Score: a logistic model with one covariate declared in [−1, 1] and no intercept, at the
/// public point θ = 0 (so p = ½ and the residual bound is ½): `D` holds a row (x = 1, y = 1),
/// `D'` the row (x = −1, y = 1); the score sum moves by exactly the sensitivity 2·½·1 = 1. The
/// information release of a one-covariate model is audited on the pair x = 1 vs x = 0 (the
/// information `¼x²` moves by ¼, the sensitivity is √2/4: the √2 of two rank-one terms is not
/// attained in one dimension, so the correct release's bound sits further below its charge).
/// The sufficient statistic `Σ y` of a Gaussian mean with the response declared in [−1, 1] is
/// audited on the pair y = 1 vs y = −1, where it moves by exactly its sensitivity 2.
/// `S` is the release minus its value under `D`, over the noise's standard deviation. The
/// broken variant adds half the noise (the same charge).
#[test]
fn noise_aware_releases_are_within_their_charge() {
    use dp_mcmc::noise_aware::{
        GlmData, GlmKind, release_information, release_score, release_sufficient,
    };
    use nalgebra::DMatrix;
    let z = 1.5; // μ = 1/(2z²): the charge below
    let data = |x_first: f64| {
        let mut x = vec![x_first];
        x.extend(std::iter::repeat_n(0.5, N - 1));
        let y = vec![1.0; N];
        GlmData::new(
            GlmKind::Logistic,
            x,
            y,
            vec![(-1.0, 1.0)],
            (0.0, 1.0),
            10.0,
            vec!["b".into()],
        )
        .unwrap()
    };
    let charged = pld_epsilon(1.0 / (2.0 * z * z), 0.1 / N as f64).unwrap();
    let shape = DMatrix::from_element(1, 1, 1.0);
    let mean_data = |y_first: f64| {
        let mut y = vec![y_first];
        y.extend(std::iter::repeat_n(0.25, N - 1));
        GlmData::new(
            GlmKind::Linear,
            vec![1.0; N],
            y,
            vec![(1.0, 1.0)],
            (-1.0, 1.0),
            10.0,
            vec!["mean".into(), "log_sigma".into()],
        )
        .unwrap()
    };
    for (name, d_row, d2_row) in [
        ("score", 1.0, -1.0),
        ("information", 1.0, 0.0),
        ("sufficient statistics", 1.0, -1.0),
    ] {
        let (a, b) = if name == "sufficient statistics" {
            (mean_data(d_row), mean_data(d2_row))
        } else {
            (data(d_row), data(d2_row))
        };
        let release = |on_b: bool, z_used: f64, seed: u64| -> (f64, f64) {
            let set = if on_b { &b } else { &a };
            let mut rng = chain_rng(seed, 0);
            match name {
                "score" => {
                    let r = release_score(set, &[0.0], &shape, z_used, &mut rng).unwrap();
                    (r.values[0], r.sensitivity)
                }
                "information" => {
                    let r = release_information(set, &[0.0], &shape, z_used, &mut rng).unwrap();
                    (r.values[0], r.sensitivity)
                }
                _ => {
                    // Σ y (XᵀX = n is public: no noise, no charge)
                    let r = release_sufficient(
                        set,
                        [f64::INFINITY, f64::INFINITY, z_used, z_used],
                        &mut rng,
                    )
                    .unwrap();
                    (r.xty.values[0], r.xty.sensitivity)
                }
            }
        };
        audit_gaussian_release(&format!("noise-aware {name}"), charged, z, release);
    }
}

/// A library model's releases (`noise_aware::release_clipped`: per-row gradients and
/// information clipped to declared bounds), audited as one Gaussian release each on a
/// worst-case pair. One parameter, row `j`'s log-likelihood `−½ s_j (θ − x_j)²` (gradient
/// `s_j (x_j − θ)`, information `s_j`), at θ = 0: for the score, `D` has a first row with
/// `x = R`, `D'` with `x = −R` (`R` far above the bound `C`, so the clipped gradients are `±C`
/// and the sum moves by exactly the sensitivity `2C`); for the information, `s = ±R` (clipped
/// to `±C_I`: a general model's information need not be positive, and the sum moves by `2C_I`).
#[test]
fn library_model_releases_are_within_their_charge() {
    use dp_mcmc::noise_aware::{RowBounds, release_clipped};
    struct Quadratic {
        x: Vec<f64>,
        s: Vec<f64>,
    }
    impl Model for Quadratic {
        fn dim(&self) -> usize {
            1
        }
        fn n_rows(&self) -> usize {
            self.x.len()
        }
        fn log_prior(&self, theta: &[f64]) -> f64 {
            -0.5 * theta[0] * theta[0]
        }
        fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
            grad[0] = -theta[0];
        }
        fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
            -0.5 * self.s[row] * (theta[0] - self.x[row]).powi(2)
        }
        fn has_gradient(&self) -> bool {
            true
        }
        fn grad_log_lik_row(
            &self,
            theta: &[f64],
            row: usize,
            grad: &mut [f64],
        ) -> dp_mcmc::Result<()> {
            grad[0] = self.s[row] * (self.x[row] - theta[0]);
            Ok(())
        }
    }
    const R: f64 = 1e6;
    let bounds = RowBounds {
        gradient: 2.0,
        information: 0.5,
    };
    let z = 1.5;
    let charged = pld_epsilon(1.0 / (2.0 * z * z), 0.1 / N as f64).unwrap();
    let set = |x_first: f64, s_first: f64| {
        let mut x = vec![x_first];
        x.extend(std::iter::repeat_n(0.3, N - 1));
        let mut s = vec![s_first];
        s.extend(std::iter::repeat_n(1.0, N - 1));
        Quadratic { x, s }
    };
    for (name, a, b) in [
        ("score", set(R, 1.0), set(-R, 1.0)),
        ("information", set(0.0, R), set(0.0, -R)),
    ] {
        let release = |on_b: bool, z_used: f64, seed: u64| -> (f64, f64) {
            let mut rng = chain_rng(seed, 0);
            let m = if on_b { &b } else { &a };
            let (info, score) =
                release_clipped(m, &[0.0], bounds, z_used, z_used, &mut rng).unwrap();
            let r = if name == "score" { score } else { info };
            (r.values[0], r.sensitivity)
        };
        audit_gaussian_release(&format!("library model {name}"), charged, z, release);
    }
}
