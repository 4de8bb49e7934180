//! The thesis' tuned parameters (THESIS-NOTES §11, from the thesis code's `code/params/`), per
//! experiment and algorithm, as ready-to-run samplers.

use serde::{Deserialize, Serialize};

use super::sampler_kind::SamplerKind;
use crate::error::{Error, Result};
use crate::models::{Experiment, Model};
use crate::samplers::{
    DpBarker, DpHmc, DpPenalty, Hmc, MinibatchPenalty, PrivacySpent, ProposalKind, Run,
    RunSettings, Rwmh, StepSize,
};

/// A configured sampler of any kind (what the experiment registry and the CLI run).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Sampler {
    /// Random-walk MH.
    Rwmh(Rwmh),
    /// Non-private HMC.
    Hmc(Hmc),
    /// DP penalty (any proposal).
    DpPenalty(DpPenalty),
    /// DP HMC.
    DpHmc(DpHmc),
    /// Minibatch DP penalty.
    MinibatchPenalty(MinibatchPenalty),
    /// DP Barker.
    DpBarker(DpBarker),
}

/// Per-coordinate vector `[a, a, …]` of length `d` (the thesis' `np.ones(d)·a`).
fn vec_of(a: f64, d: usize) -> StepSize {
    StepSize::PerCoordinate(vec![a; d])
}

impl Sampler {
    /// The sampler the thesis ran for `kind` on `experiment`, with its tuned parameters.
    /// Minibatch algorithms and DP Barker were only tuned for the four banana experiments
    /// (easy/tempered, d = 2 and 10); other combinations are an error.
    ///
    /// ```
    /// use dp_mcmc::experiments::{Sampler, SamplerKind};
    /// use dp_mcmc::models::Experiment;
    /// let s = Sampler::tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty).unwrap();
    /// assert!(matches!(s, Sampler::DpPenalty(ref p) if p.tau == 0.1 && p.clip_bound == 2.0));
    /// assert!(Sampler::tuned(Experiment::Circle, SamplerKind::DpBarker).is_err());
    /// ```
    pub fn tuned(experiment: Experiment, kind: SamplerKind) -> Result<Sampler> {
        use Experiment::*;
        let d = experiment.dim();
        let unavailable = || {
            Error::invalid(
                "algorithm",
                kind.key(),
                format!(
                    "the thesis did not tune {} for {}; use easy-2d, easy-10d, tempered-2d or tempered-10d",
                    kind.key(),
                    experiment.key()
                ),
            )
        };
        Ok(match kind {
            SamplerKind::DpPenalty => {
                let (tau, s, b) = match experiment {
                    EasyBanana2d => (0.1, 0.008, 2.0),
                    EasyBanana10d => (0.1, 0.0015, 2.0),
                    TemperedBanana2d => (0.2, 0.035, 5.0),
                    TemperedBanana10d => (0.18, 0.02, 3.0),
                    HardBanana2d => (0.20, 0.0015, 5.5),
                    Gauss30d => (0.06, 0.00084, 3.0),
                    HardGauss2d => (0.07, 0.00015, 50.0),
                    Circle => (4.0, 0.2, 0.002),
                };
                let sd = if experiment == Gauss30d {
                    StepSize::Scalar(s)
                } else {
                    vec_of(s, d)
                };
                Sampler::DpPenalty(DpPenalty::builder().tau(tau).proposal_sd(sd).clip_bound(b))
            }
            SamplerKind::DpPenaltyOcu | SamplerKind::DpPenaltyGwmh => {
                let (tau, s, b) = match experiment {
                    EasyBanana2d => (0.1, 0.008, 1.8),
                    EasyBanana10d => (0.10, 0.0015, 3.0),
                    TemperedBanana2d => (0.2, 0.04, 3.5),
                    TemperedBanana10d => (0.10, 0.04, 3.0),
                    HardBanana2d => (0.1, 0.0015, 8.5),
                    Gauss30d => (0.2, 0.00084, 3.0),
                    HardGauss2d => (0.1, 0.0002, 45.0),
                    Circle => (4.0, 0.3, 0.002),
                };
                let proposal = if kind == SamplerKind::DpPenaltyOcu {
                    ProposalKind::OneComponent
                } else {
                    ProposalKind::GuidedWalk
                };
                Sampler::DpPenalty(
                    DpPenalty::builder()
                        .tau(tau)
                        .proposal_sd(vec_of(s, d))
                        .clip_bound(b)
                        .proposal(proposal),
                )
            }
            SamplerKind::DpHmc => {
                let (tau_l, tau_g, l, eta, b_l, b_g) = match experiment {
                    EasyBanana2d => (0.1, 0.4, 10, 0.0005, 2.0, 1.0),
                    EasyBanana10d => (0.05, 0.2, 10, 0.00015, 2.5, 3.0),
                    TemperedBanana2d => (0.2, 0.6, 10, 0.01, 2.5, 2.0),
                    TemperedBanana10d => (0.08, 0.20, 10, 0.015, 2.5, 3.5),
                    HardBanana2d => (0.15, 0.25, 5, 0.00045, 5.0, 2.8),
                    Gauss30d => (0.05, 0.10, 5, 0.00025, 2.5, 6.0),
                    HardGauss2d => (0.05, 0.20, 8, 0.00007, 30.0, 29.0),
                    Circle => (0.6, 1.9, 40, 0.07, 0.001, 0.0015),
                };
                Sampler::DpHmc(
                    DpHmc::builder()
                        .tau_l(tau_l)
                        .tau_g(tau_g)
                        .leapfrog_steps(l)
                        .step_size(eta)
                        .mass(vec![1.0; d])
                        .clip_bound(b_l)
                        .grad_clip_bound(b_g),
                )
            }
            SamplerKind::MinibatchPenalty | SamplerKind::MinibatchPenaltyGwmh => {
                let gw = kind == SamplerKind::MinibatchPenaltyGwmh;
                let (tau, s, b, bs) = match (experiment, gw) {
                    (EasyBanana2d, _) => (0.7, 0.0010, 1.0, 1000),
                    (EasyBanana10d, false) => (0.6, 0.0001, 3.0, 1000),
                    (EasyBanana10d, true) => (0.5, 0.00032, 2.0, 1000),
                    (TemperedBanana2d, false) => (1.5, 0.025, 4.0, 1000),
                    (TemperedBanana2d, true) => (2.0, 0.04, 4.0, 1000),
                    (TemperedBanana10d, false) => (0.7, 0.02, 2.0, 1200),
                    (TemperedBanana10d, true) => (0.8, 0.028, 2.0, 1200),
                    _ => return Err(unavailable()),
                };
                let proposal = if gw {
                    ProposalKind::GuidedWalk
                } else {
                    ProposalKind::Full
                };
                Sampler::MinibatchPenalty(
                    MinibatchPenalty::builder()
                        .tau(tau)
                        .proposal_sd(vec_of(s, d))
                        .clip_bound(b)
                        .batch_size(bs)
                        .proposal(proposal),
                )
            }
            SamplerKind::DpBarker => {
                let (s, b) = match experiment {
                    EasyBanana2d => (0.0008, 1300),
                    EasyBanana10d => (0.0008, 2600),
                    TemperedBanana2d => (0.12, 1300),
                    TemperedBanana10d => (0.04, 2600),
                    _ => return Err(unavailable()),
                };
                Sampler::DpBarker(DpBarker::builder().proposal_sd(vec_of(s, d)).batch_size(b))
            }
            SamplerKind::Rwmh => {
                // Clipping study (THESIS-NOTES §12) for the flat bananas; elsewhere DP penalty's
                // step.
                let sd = match experiment {
                    EasyBanana2d => vec_of(0.01, 2),
                    EasyBanana10d => {
                        let mut v = vec![0.015, 0.015];
                        v.extend([0.002; 8]);
                        StepSize::PerCoordinate(v)
                    }
                    _ => match Sampler::tuned(experiment, SamplerKind::DpPenalty)? {
                        Sampler::DpPenalty(p) => p.proposal_sd,
                        _ => unreachable!("tuned(DpPenalty) is a DpPenalty"),
                    },
                };
                Sampler::Rwmh(Rwmh::builder().proposal_sd(sd).iterations(3000))
            }
            SamplerKind::Hmc => {
                let h = match experiment {
                    EasyBanana2d => Hmc::builder()
                        .step_size(0.001)
                        .leapfrog_steps(15)
                        .mass(vec![1.0, 0.5]),
                    EasyBanana10d => {
                        let mut m = vec![1.0, 0.5];
                        m.extend([0.4; 8]);
                        Hmc::builder().step_size(0.001).leapfrog_steps(15).mass(m)
                    }
                    _ => match Sampler::tuned(experiment, SamplerKind::DpHmc)? {
                        Sampler::DpHmc(p) => Hmc::builder()
                            .step_size(p.step_size)
                            .leapfrog_steps(p.leapfrog_steps)
                            .mass(p.mass.unwrap_or_else(|| vec![1.0; d])),
                        _ => unreachable!("tuned(DpHmc) is a DpHmc"),
                    },
                };
                Sampler::Hmc(h.iterations(500))
            }
        })
    }

    /// The run settings (chains, seed, budget, start points, ...), to change in place; the
    /// fluent setters (`.epsilon(e)`, `.chains(c)`, `.seed(s)`, …) are usually shorter.
    pub fn run_settings_mut(&mut self) -> &mut RunSettings {
        match self {
            Sampler::Rwmh(s) => &mut s.run,
            Sampler::Hmc(s) => &mut s.run,
            Sampler::DpPenalty(s) => &mut s.run,
            Sampler::DpHmc(s) => &mut s.run,
            Sampler::MinibatchPenalty(s) => &mut s.run,
            Sampler::DpBarker(s) => &mut s.run,
        }
    }

    /// Override the noise scale τ (DP penalty and minibatch penalty; DP HMC's τ_l).
    pub fn set_tau(&mut self, tau: f64) -> Result<()> {
        match self {
            Sampler::DpPenalty(s) => s.tau = tau,
            Sampler::MinibatchPenalty(s) => s.tau = tau,
            Sampler::DpHmc(s) => s.tau_l = tau,
            _ => {
                return Err(Error::invalid(
                    "tau",
                    tau,
                    "this algorithm has no noise scale τ",
                ));
            }
        }
        Ok(())
    }

    /// Override the (log-likelihood-ratio) clip bound.
    pub fn set_clip_bound(&mut self, b: f64) -> Result<()> {
        match self {
            Sampler::Rwmh(s) => s.clip_bound = Some(b),
            Sampler::Hmc(s) => s.clip_bound = Some(b),
            Sampler::DpPenalty(s) => s.clip_bound = b,
            Sampler::DpHmc(s) => s.clip_bound = b,
            Sampler::MinibatchPenalty(s) => s.clip_bound = b,
            Sampler::DpBarker(_) => {
                return Err(Error::invalid(
                    "clip_bound",
                    b,
                    "DP Barker's clip bound is fixed at 0.99·√b/(nT)",
                ));
            }
        }
        Ok(())
    }

    /// Override the proposal standard deviation (random-walk samplers).
    pub fn set_proposal_sd(&mut self, sd: StepSize) -> Result<()> {
        match self {
            Sampler::Rwmh(s) => s.proposal_sd = sd,
            Sampler::DpPenalty(s) => s.proposal_sd = sd,
            Sampler::MinibatchPenalty(s) => s.proposal_sd = sd,
            Sampler::DpBarker(s) => s.proposal_sd = sd,
            _ => {
                return Err(Error::invalid(
                    "proposal_sd",
                    format!("{sd:?}"),
                    "HMC samplers have no proposal sd; set the step size",
                ));
            }
        }
        Ok(())
    }

    /// Override the batch size (subsampled samplers).
    pub fn set_batch_size(&mut self, b: usize) -> Result<()> {
        match self {
            Sampler::MinibatchPenalty(s) => s.batch_size = b,
            Sampler::DpBarker(s) => s.batch_size = b,
            _ => {
                return Err(Error::invalid(
                    "batch_size",
                    b,
                    "only minibatch DP penalty and DP Barker use batches",
                ));
            }
        }
        Ok(())
    }

    /// Iterations per chain (and the privacy spent) for a model with `n_rows` rows; `None`
    /// for the non-private samplers.
    pub fn budget(&self, n_rows: usize) -> Result<Option<(usize, PrivacySpent)>> {
        Ok(Some(match self {
            Sampler::Rwmh(_) | Sampler::Hmc(_) => return Ok(None),
            Sampler::DpPenalty(s) => s.budget(n_rows)?,
            Sampler::DpHmc(s) => s.budget(n_rows)?,
            Sampler::MinibatchPenalty(s) => s.budget(n_rows)?,
            Sampler::DpBarker(s) => s.budget(n_rows)?,
        }))
    }

    /// Run the sampler on `model`.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        match self {
            Sampler::Rwmh(s) => s.run(model),
            Sampler::Hmc(s) => s.run(model),
            Sampler::DpPenalty(s) => s.run(model),
            Sampler::DpHmc(s) => s.run(model),
            Sampler::MinibatchPenalty(s) => s.run(model),
            Sampler::DpBarker(s) => s.run(model),
        }
    }
}
