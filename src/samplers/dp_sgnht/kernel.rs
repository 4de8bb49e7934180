//! The DP-SGNHT kernel (Ding et al. 2014's stochastic-gradient Nosé–Hoover thermostat, made
//! private as in Li, Chen, Wang & Carin 2019): momentum `p`, thermostat `ξ`, a
//! Poisson-subsampled clipped gradient sum per step, every iterate released.
//!
//! Per step, with `ĝ = ∇ln p(θ) + (T/q)·G` and `G = Σ_{j∈S} clip_C(∇ℓ_j(θ))` on a Poisson batch
//! `S`: `p' = p − ξ·h·p + h·ĝ + s·ζ`, `θ' = θ + h·p'`, `ξ' = ξ + h(‖p'‖²/d − 1)`, with
//! `ζ ~ N(0, I)` and `s = max(√(2Ah), h(T/q)·σ·C)`: the thermostat's injected noise, raised
//! where needed so that, read as noise on `G`, its standard deviation is at least `σ·C`. `p'`
//! is a post-processing of `G + N(0, (s·q/(hT))²I)` and of earlier releases; `θ'` and `ξ'` are
//! post-processing of `p'`. Each step is a Poisson-subsampled Gaussian release with noise
//! multiplier `s·q/(hTC) ≥ σ` (docs/ACCOUNTING.md, "Stochastic-gradient samplers").
//!
//! A seeded PRNG reproduces research runs; it is not a secure source for a real DP release.

use rand_distr::{Distribution, StandardNormal};

use crate::error::Result;
use crate::models::Model;
use crate::rng::ChainRng;
use crate::samplers::kernel::{Kernel, StepInfo};
use crate::samplers::poisson_batch::GradientDrift;
use crate::samplers::stochastic_gradient::check_gradients;

/// DP-SGNHT settings (build with [`DpSgnht`](super::DpSgnht)).
#[derive(Clone, Debug)]
pub struct DpSgnhtKernel {
    /// Step size h.
    pub(crate) step_size: f64,
    /// Diffusion A (the injected noise is `N(0, 2AhI)`; the thermostat starts at `ξ = A`).
    pub(crate) diffusion: f64,
    /// Per-row gradient clip bound C (L2).
    pub(crate) clip_bound: f64,
    /// Poisson sampling rate q.
    pub(crate) rate: f64,
    /// The noise multiplier charged per release.
    pub(crate) charged: f64,
}

/// Per-chain state of DP-SGNHT.
#[derive(Clone, Debug)]
pub struct DpSgnhtState {
    theta: Vec<f64>,
    momentum: Vec<f64>,
    next_momentum: Vec<f64>,
    thermostat: f64,
    drift: GradientDrift,
}

impl DpSgnhtState {
    /// The momentum.
    pub fn momentum(&self) -> &[f64] {
        &self.momentum
    }
    /// The thermostat ξ.
    pub fn thermostat(&self) -> f64 {
        self.thermostat
    }
}

impl DpSgnhtKernel {
    /// The standard deviation of the noise added to the momentum in one step at tempering `t`.
    pub fn noise_sd(&self, t: f64) -> f64 {
        let h = self.step_size;
        (2.0 * self.diffusion * h)
            .sqrt()
            .max(h * t / self.rate * self.charged * self.clip_bound)
    }
}

impl Kernel for DpSgnhtKernel {
    type State = DpSgnhtState;

    fn name(&self) -> &'static str {
        "dp-sgnht"
    }

    fn validate<M: Model + ?Sized>(&self, model: &M) -> Result<()> {
        check_gradients(self.name(), model)
    }

    /// The momentum starts from `N(0, I)` (public randomness), the thermostat at `A`.
    fn init<M: Model + ?Sized>(
        &self,
        model: &M,
        theta0: &[f64],
        rng: &mut ChainRng,
    ) -> Result<Self::State> {
        let d = model.dim();
        crate::error::check::len("start point", theta0.len(), d)?;
        let momentum: Vec<f64> = (0..d).map(|_| StandardNormal.sample(rng)).collect();
        Ok(DpSgnhtState {
            theta: theta0.to_vec(),
            next_momentum: momentum.clone(),
            momentum,
            thermostat: self.diffusion,
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
        let h = self.step_size;
        let coef = h * t / self.rate;
        let sd = self.noise_sd(t);
        let friction = 1.0 - s.thermostat * h;
        let moves = s.next_momentum.iter_mut().zip(&s.momentum);
        for ((x, &p), (&pr, &g)) in moves.zip(s.drift.prior.iter().zip(&s.drift.sum)) {
            let zeta: f64 = StandardNormal.sample(rng);
            *x = friction * p + h * pr + coef * g + sd * zeta;
        }
        let d = s.theta.len() as f64;
        let sq: f64 = s.next_momentum.iter().map(|x| x * x).sum();
        let thermostat = s.thermostat + h * (sq / d - 1.0);
        let moved = !info.failed
            && thermostat.is_finite()
            && s.theta
                .iter()
                .zip(&s.next_momentum)
                .all(|(th, p)| (th + h * p).is_finite());
        if moved {
            std::mem::swap(&mut s.momentum, &mut s.next_momentum);
            for (th, p) in s.theta.iter_mut().zip(&s.momentum) {
                *th += h * p;
            }
            s.thermostat = thermostat;
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
