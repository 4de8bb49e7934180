//! The thesis' tuned parameters (THESIS-NOTES §11, from the thesis code's `code/params/`), per
//! experiment and algorithm, as ready-to-run samplers: each sampler's table lives in its folder
//! ([`Sampler::tuned_for`]); this is the lookup by key.

use crate::error::{Error, Result};
use crate::models::Experiment;
use crate::samplers::{Sampler, SamplerKind};

/// The sampler the thesis ran for `kind` on `experiment`, with its tuned parameters
/// ([`Sampler::tuned_for`], each sampler's table in its own folder). Minibatch algorithms and
/// DP Barker were only tuned for the four banana experiments (easy/tempered, d = 2 and 10);
/// other combinations are an error.
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
    kind.build().tuned_for(experiment)
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
