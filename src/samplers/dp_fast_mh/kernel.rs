//! The DP-Fast MH kernel (Zhang & Zhang, ICML 2023): TunaMH's Poisson-minibatch MH test
//! (Zhang, Cooper & De Sa 2020) with Gaussian noise and the penalty correction on its log ratio.
//!
//! Per step, with a random-walk proposal `θ'`, `M = ‖θ' − θ‖` and per-row bound
//! `B = T·c·M` on the tempered log-likelihood ratio (each row's ratio is clipped to `±c·M`),
//! `L = n·B`: a proposal with `λ + L ≥ K` (the public batch cap) is rejected without looking at
//! the data (a symmetric truncation of the proposal: the chain stays exact); otherwise
//! `N ~ Poisson(λ + L)` rows are drawn uniformly with replacement and each is kept with
//! probability `(λ + L·u_old)/(λ + L)`, `u_old = (1 − r/(cM))/2 ∈ [0, 1]` for its clipped ratio
//! `r`; the kept rows sum to `Λ = Σ ln((λ + L·u_new)/(λ + L·u_old))`, `u_new = 1 − u_old`, each
//! term in `±a`, `a = ln(1 + L/λ)`. The release is `Λ + ξ`, `ξ ~ N(0, s²)`, `s = σ·2a`, and the
//! step accepts iff `ln U < ln p(θ') − ln p(θ) + Λ + ξ − s²/2` (the penalty method's
//! correction, which keeps TunaMH's exactness). Only the accept decision leaves the kernel;
//! neither the number of kept rows (data-dependent) nor that of draws (the charge hides it)
//! is reported; `StepInfo::rows` is the expected batch `λ + L`.
//!
//! A seeded PRNG reproduces research runs; it is not a secure source for a real DP release.

use rand::RngExt;
use rand_distr::{Distribution, Poisson, StandardNormal};

use crate::error::{Result, check};
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::kernel::{Kernel, StepInfo, metropolis};
use crate::samplers::proposal::{ProposalKind, distance};
use crate::samplers::walk_state::WalkState;

/// DP-Fast MH settings (build with [`DpFastMh`](super::DpFastMh)).
#[derive(Clone, Debug)]
pub struct DpFastMhKernel {
    /// Noise multiplier σ relative to one draw's substitute sensitivity `2a`.
    pub(crate) noise_multiplier: f64,
    /// Clip bound c per unit distance of the per-row log-likelihood ratio.
    pub(crate) clip_bound: f64,
    /// TunaMH's λ (the batch size's floor in expectation).
    pub(crate) lambda: f64,
    /// The cap K on the expected batch size `λ + L`.
    pub(crate) batch_cap: f64,
    /// Proposal standard deviations.
    pub(crate) proposal_sd: Vec<f64>,
}

/// Per-chain state of DP-Fast MH.
#[derive(Clone, Debug)]
pub struct DpFastMhState {
    rw: WalkState,
    rows: Vec<usize>,
    ratios: Vec<f64>,
}

/// What the data contribute to one step, before the noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MinibatchTest {
    /// TunaMH's log ratio `Λ` over the kept draws.
    pub log_ratio: f64,
    /// Half the substitute sensitivity of one draw: `a = ln(1 + L/λ)`.
    pub half_sensitivity: f64,
    /// Draws whose ratio was clipped (**not private**).
    pub clipped: u64,
}

impl DpFastMhKernel {
    /// `L = n·T·c·M`, the bound on the total ratio of a proposal at distance `m`.
    pub(crate) fn total_bound(&self, n: f64, t: f64, m: f64) -> f64 {
        n * t * self.clip_bound * m
    }

    /// TunaMH's minibatch test on draws whose raw (untempered) log-likelihood ratios are
    /// `ratios`, for a proposal at distance `m` with total bound `l`: the kept draws' log
    /// ratio, using one uniform per draw from `rng`.
    pub(crate) fn minibatch_test(
        &self,
        ratios: &[f64],
        m: f64,
        l: f64,
        rng: &mut ChainRng,
    ) -> MinibatchTest {
        let bound = self.clip_bound * m;
        let lam = self.lambda;
        let (mut log_ratio, mut clipped) = (0.0, 0u64);
        for &r in ratios {
            // a non-finite ratio counts as 0 (no evidence either way), an infinite one is clipped
            let c = if r.is_nan() {
                0.0
            } else {
                r.clamp(-bound, bound)
            };
            clipped += u64::from(r.abs() > bound);
            let u_old = if bound > 0.0 {
                (0.5 * (1.0 - c / bound)).clamp(0.0, 1.0)
            } else {
                0.5
            };
            let keep = (lam + l * u_old) / (lam + l);
            if rng.random::<f64>() < keep {
                log_ratio += ((lam + l * (1.0 - u_old)) / (lam + l * u_old)).ln();
            }
        }
        MinibatchTest {
            log_ratio,
            half_sensitivity: (l / lam).ln_1p(),
            clipped,
        }
    }
}

/// The settings' checks (σ, c, λ > 0; `K > λ`; the proposal sds are checked where they are
/// resolved, `StepSize::resolve`).
pub(crate) fn check_fast_mh(
    noise_multiplier: f64,
    clip_bound: f64,
    lambda: f64,
    batch_cap: f64,
) -> Result<()> {
    check::positive("noise_multiplier", noise_multiplier)?;
    check::positive("clip_bound", clip_bound)?;
    check::positive("lambda", lambda)?;
    check::positive("batch_cap", batch_cap)?;
    if batch_cap <= lambda {
        return Err(crate::Error::invalid(
            "batch_cap",
            batch_cap,
            format!("must exceed lambda ({lambda}): the expected batch is λ + L"),
        ));
    }
    Ok(())
}

impl Kernel for DpFastMhKernel {
    type State = DpFastMhState;

    fn name(&self) -> &'static str {
        "dp-fast-mh"
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        check::len("proposal_sd", self.proposal_sd.len(), model.dim())
    }

    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<Self::State> {
        // a batch beyond 2K + 64 draws is rare (Poisson tail); past it the buffers grow once
        let cap = (2.0 * self.batch_cap).min(1e7) as usize + 64;
        Ok(DpFastMhState {
            rw: WalkState::new(
                model,
                theta0,
                ProposalKind::Full,
                self.proposal_sd.clone(),
                rng,
            )?,
            rows: Vec::with_capacity(cap),
            ratios: Vec::with_capacity(cap),
        })
    }

    fn step<M: Model + ?Sized>(
        &self,
        model: &M,
        s: &mut Self::State,
        rng: &mut ChainRng,
    ) -> StepInfo {
        s.rw.propose(rng);
        let n_rows = model.n_rows();
        let m = distance(&s.rw.theta, &s.rw.proposal_buf);
        let l = self.total_bound(n_rows as f64, model.tempering(), m);
        let lp_new = model.log_prior(&s.rw.proposal_buf);
        let within_cap = self.lambda + l < self.batch_cap; // false for a NaN distance
        if !within_cap || !lp_new.is_finite() {
            // beyond the batch cap (or outside the prior's support): rejected, data untouched
            s.rw.walk.feedback(false);
            return StepInfo {
                nonfinite: lp_new.is_nan() || lp_new == f64::INFINITY,
                ..StepInfo::default()
            };
        }
        let draws = Poisson::new(self.lambda + l).map_or(0.0, |p| p.sample(rng)) as usize;
        s.rows.clear();
        s.rows
            .extend((0..draws).map(|_| rng.random_range(0..n_rows)));
        s.ratios.clear();
        s.ratios.resize(draws, 0.0);
        model.log_lik_ratio_indexed(&s.rw.theta, &s.rw.proposal_buf, &s.rows, &mut s.ratios);
        let test = self.minibatch_test(&s.ratios, m, l, rng);
        let sd = self.noise_multiplier * 2.0 * test.half_sensitivity;
        let xi: f64 = StandardNormal.sample(rng);
        let log_alpha = lp_new - s.rw.log_prior + test.log_ratio + sd * xi - 0.5 * sd * sd;
        let log_u = rng.random::<f64>().ln();
        let (accepted, nonfinite) = metropolis(log_u, log_alpha);
        if accepted {
            s.rw.accept(lp_new);
        }
        s.rw.walk.feedback(accepted);
        StepInfo {
            accepted,
            log_alpha,
            clipped: test.clipped,
            // the expected batch (public); the realised count is left out of the released
            // statistics, the charge does not cover it
            rows: (self.lambda + l).round() as u64,
            nonfinite,
            ..StepInfo::default()
        }
    }

    fn position<'a>(&self, s: &'a Self::State) -> &'a [f64] {
        &s.rw.theta
    }

    fn set_step_scale(&self, s: &mut Self::State, scale: f64) {
        s.rw.walk.set_scale(scale);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::chain_rng;

    fn kernel() -> DpFastMhKernel {
        DpFastMhKernel {
            noise_multiplier: 1.5,
            clip_bound: 2.0,
            lambda: 30.0,
            batch_cap: 400.0,
            proposal_sd: vec![0.05],
        }
    }

    /// The released statistic against its charge: every kept draw's term lies in `±a`,
    /// `a = ln(1 + L/λ)` (the half sensitivity the noise `σ·2a` is scaled to), a draw at `+cM`
    /// is kept with probability `λ/(λ + L)` and adds exactly `+a`, one at `−cM` is always kept
    /// and adds `−a`; so substituting one appearance moves `Λ` by at most `2a`, the unit of
    /// `PrivacyEvent::poisson_multiplicity`'s noise multiplier.
    #[test]
    fn each_draw_moves_the_statistic_by_at_most_its_charged_sensitivity() {
        let k = kernel();
        let (m, l) = (0.5, 150.0);
        let a = (l / k.lambda).ln_1p();
        let mut rng = chain_rng(3, 0);
        // single draws across the clip range and beyond (clipped), NaN (counted as 0)
        for r in [
            -5.0,
            -1.0,
            -0.3,
            0.0,
            0.2,
            0.9,
            1.0,
            7.0,
            f64::NAN,
            f64::INFINITY,
        ] {
            for _ in 0..200 {
                let t = k.minibatch_test(&[r], m, l, &mut rng);
                assert!(
                    t.log_ratio.abs() <= a * (1.0 + 1e-12),
                    "{r}: {}",
                    t.log_ratio
                );
                assert_eq!(t.half_sensitivity, a);
            }
        }
        // the extremes: +cM adds +a w.p. λ/(λ+L), −cM adds −a always
        let (mut kept, draws) = (0u32, 20_000);
        for _ in 0..draws {
            let t = k.minibatch_test(&[1.0], m, l, &mut rng);
            if t.log_ratio != 0.0 {
                assert!((t.log_ratio - a).abs() < 1e-12);
                kept += 1;
            }
            let t = k.minibatch_test(&[-1.0], m, l, &mut rng);
            assert!((t.log_ratio + a).abs() < 1e-12);
        }
        // binomial(20000, 1/6): sd 52.7; 5 sd
        let want = draws as f64 * k.lambda / (k.lambda + l);
        assert!(
            (kept as f64 - want).abs() < 5.0 * 52.7,
            "kept {kept}, want {want}"
        );
    }

    /// A proposal whose expected batch reaches the cap is rejected without reading the data
    /// (so every step that reads rows has multiplicity mean `(λ + L)/n < K/n`, the charge's).
    #[test]
    fn proposals_beyond_the_cap_read_no_data() {
        struct Untouchable;
        impl Model for Untouchable {
            fn dim(&self) -> usize {
                1
            }
            fn n_rows(&self) -> usize {
                1000
            }
            fn log_prior(&self, _: &[f64]) -> f64 {
                0.0
            }
            fn grad_log_prior(&self, _: &[f64], g: &mut [f64]) {
                g[0] = 0.0;
            }
            fn log_lik_row(&self, _: &[f64], _: usize) -> f64 {
                panic!("read a row")
            }
        }
        // K = 400 with L = 1000·2·M: every proposal with M ≥ 0.185 must skip the data
        let k = DpFastMhKernel {
            proposal_sd: vec![5000.0],
            ..kernel()
        };
        let mut rng = chain_rng(4, 0);
        let mut s = k.init(&Untouchable, &[0.0], &mut rng).unwrap();
        let mut far = 0;
        for _ in 0..200 {
            let before = s.rw.theta[0];
            let info = k.step(&Untouchable, &mut s, &mut rng);
            assert!(!info.accepted && s.rw.theta[0] == before);
            far += 1;
        }
        assert_eq!(far, 200);
    }
}
