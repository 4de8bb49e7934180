//! The DP-SGLD kernel (Wang, Fienberg & Smola 2015; Li, Chen, Wang & Carin 2019): one Langevin
//! step from a Poisson-subsampled, clipped gradient sum, every iterate released.
//!
//! Per step: a Poisson batch `S` (each row with probability `q`), `G = Σ_{j∈S} clip_C(∇ℓ_j(θ))`,
//! and `θ' = θ + (η/2)(∇ln p(θ) + (T/q)·G) + s·ξ`, `ξ ~ N(0, I)`, with
//! `s = max(√η, (η/2)(T/q)·σ·C)`: the Langevin noise `N(0, ηI)`, raised where needed so that,
//! read as noise on `G`, its standard deviation is at least `σ·C`. `θ'` is then a
//! post-processing of `G + N(0, (s·2q/(ηT))²I)`, a Poisson-subsampled Gaussian release with
//! noise multiplier `s·2q/(ηTC) ≥ σ` relative to the per-row bound `C` (half that relative to
//! the substitute sensitivity `2C`; docs/ACCOUNTING.md, "Stochastic-gradient samplers").
//!
//! A seeded PRNG reproduces research runs; it is not a secure source for a real DP release.

use rand_distr::{Distribution, StandardNormal};

use crate::error::Result;
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::kernel::{Kernel, StepInfo};
use crate::samplers::poisson_batch::GradientDrift;
use crate::samplers::stochastic_gradient::check_gradients;

/// DP-SGLD settings (build with [`DpSgld`](super::DpSgld)).
#[derive(Clone, Debug)]
pub struct DpSgldKernel {
    /// Step size η.
    pub(crate) step_size: f64,
    /// Per-row gradient clip bound C (L2).
    pub(crate) clip_bound: f64,
    /// Poisson sampling rate q.
    pub(crate) rate: f64,
    /// The noise multiplier charged per release (σ, at least the Langevin noise's at T = 1).
    pub(crate) charged: f64,
}

/// Per-chain state of DP-SGLD.
#[derive(Clone, Debug)]
pub struct DpSgldState {
    theta: Vec<f64>,
    next: Vec<f64>,
    drift: GradientDrift,
}

impl DpSgldKernel {
    /// The standard deviation of the noise added to `θ` in one step at tempering `t`: the
    /// Langevin `√η`, or more where the charge needs it.
    pub fn noise_sd(&self, t: f64) -> f64 {
        let coef = 0.5 * self.step_size * t / self.rate;
        self.step_size
            .sqrt()
            .max(coef * self.charged * self.clip_bound)
    }
}

impl Kernel for DpSgldKernel {
    type State = DpSgldState;

    fn name(&self) -> &'static str {
        "dp-sgld"
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        check_gradients(self.name(), model)
    }

    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        _rng: &mut ChainRng,
    ) -> Result<Self::State> {
        crate::error::check::len("start point", theta0.len(), model.dim())?;
        Ok(DpSgldState {
            theta: theta0.to_vec(),
            next: theta0.to_vec(),
            drift: GradientDrift::new(model, self.rate),
        })
    }

    fn step<M: Model + ?Sized>(
        &self,
        model: &M,
        s: &mut Self::State,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let info = s.drift.compute(model, &s.theta, self.clip_bound, rng);
        let t = model.tempering();
        let coef = 0.5 * self.step_size * t / self.rate;
        let sd = self.noise_sd(t);
        let drift = s.drift.prior.iter().zip(&s.drift.sum);
        for ((x, &th), (&p, &g)) in s.next.iter_mut().zip(&s.theta).zip(drift) {
            let xi: f64 = StandardNormal.sample(rng);
            *x = th + 0.5 * self.step_size * p + coef * g + sd * xi;
        }
        let moved = !info.failed && s.next.iter().all(|x| x.is_finite());
        if moved {
            std::mem::swap(&mut s.theta, &mut s.next);
        }
        info.step_info(moved)
    }

    fn position<'a>(&self, s: &'a Self::State) -> &'a [f64] {
        &s.theta
    }

    /// No accept decision to adapt to; the step size sets the injected noise the charge counts.
    fn adapts_step(&self) -> bool {
        false
    }
}
