//! The thesis' tuned parameters (THESIS-NOTES §11, from the thesis code's `code/params/`), per
//! experiment and algorithm, as ready-to-run samplers.

use crate::error::{Error, Result};
use crate::models::Experiment;
use crate::samplers::{
    DpBarker, DpHmc, DpPenalty, Hmc, MinibatchPenalty, ProposalKind, Rwmh, Sampler, SamplerKind,
    StepSize,
};

/// Per-coordinate vector `[a, a, …]` of length `d` (the thesis' `np.ones(d)·a`).
fn vec_of(a: f64, d: usize) -> StepSize {
    StepSize::PerCoordinate(vec![a; d])
}

/// The sampler the thesis ran for `kind` on `experiment`, with its tuned parameters.
/// Minibatch algorithms and DP Barker were only tuned for the four banana experiments
/// (easy/tempered, d = 2 and 10); other combinations are an error.
///
/// ```
/// use dp_mcmc::experiments::tuned;
/// use dp_mcmc::models::Experiment;
/// use dp_mcmc::samplers::{DpPenalty, SamplerKind};
/// let s = tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty).unwrap();
/// let p = s.as_any().downcast_ref::<DpPenalty>().unwrap();
/// assert!(p.tau == 0.1 && p.clip_bound == 2.0);
/// assert!(tuned(Experiment::Circle, SamplerKind::DpBarker).is_err());
/// ```
pub fn tuned(experiment: Experiment, kind: SamplerKind) -> Result<Box<dyn Sampler>> {
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
            Box::new(DpPenalty::builder().tau(tau).proposal_sd(sd).clip_bound(b))
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
            Box::new(
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
            Box::new(
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
            Box::new(
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
            Box::new(DpBarker::builder().proposal_sd(vec_of(s, d)).batch_size(b))
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
                _ => downcast::<DpPenalty>(tuned(experiment, SamplerKind::DpPenalty)?)?
                    .proposal_sd
                    .clone(),
            };
            Box::new(Rwmh::builder().proposal_sd(sd).iterations(3000))
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
                _ => {
                    let p = downcast::<DpHmc>(tuned(experiment, SamplerKind::DpHmc)?)?;
                    Hmc::builder()
                        .step_size(p.step_size)
                        .leapfrog_steps(p.leapfrog_steps)
                        .mass(p.mass.clone().unwrap_or_else(|| vec![1.0; d]))
                }
            };
            Box::new(h.iterations(500))
        }
        _ => return Err(unavailable()),
    })
}

/// [`tuned`] as its concrete type, to change its own settings:
///
/// ```
/// use dp_mcmc::experiments::tuned_as;
/// use dp_mcmc::models::Experiment;
/// use dp_mcmc::samplers::{DpHmc, DpPenalty, SamplerKind};
/// let p: DpPenalty = tuned_as(Experiment::EasyBanana2d, SamplerKind::DpPenalty).unwrap();
/// assert_eq!(p.clip_bound, 2.0);
/// // the wrong type is an error
/// assert!(tuned_as::<DpHmc>(Experiment::EasyBanana2d, SamplerKind::DpPenalty).is_err());
/// ```
pub fn tuned_as<T: Clone + 'static>(experiment: Experiment, kind: SamplerKind) -> Result<T> {
    downcast(tuned(experiment, kind)?)
}

/// The concrete sampler of a tuned one (the thesis table builds each kind from one type).
fn downcast<T: Clone + 'static>(s: Box<dyn Sampler>) -> Result<T> {
    s.as_any()
        .downcast_ref::<T>()
        .cloned()
        .ok_or_else(|| Error::Model(format!("{} is not the expected sampler type", s.key())))
}
