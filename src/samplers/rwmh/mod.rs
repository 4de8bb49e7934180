//! Random-walk Metropolis-Hastings (non-private baseline): the builder and the kernel
//! ([`RwmhKernel`]).

mod kernel;

pub use kernel::RwmhKernel;

use serde::{Deserialize, Serialize};

use super::driver::finish;
use super::proposal::{ClipDistance, StepSize};
use super::run::Run;
use super::sampler::SamplerEntry;
use super::sampler::{Sampler, field_setters, per_coordinate, sampler_basics};
use super::settings::RunSetters;
use super::settings::{RunSettings, clipped_baseline_setters, run_setters};
use crate::error::Result;
use crate::models::{Experiment, Model};

/// Random-walk MH (non-private baseline), optionally with clipped per-row ratios.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::Rwmh;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new(vec![0.1, -0.3, 0.7], 1)?;
/// let run = Rwmh::builder().proposal_sd(0.5).iterations(200).start(vec![0.0]).run(&model)?;
/// assert_eq!(run.chains[0].len(), 200);
/// assert!(Rwmh::builder().start(vec![0.0]).run(&model).is_err()); // no iteration count
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rwmh {
    /// Proposal standard deviation(s).
    pub proposal_sd: StepSize,
    /// Per-row ratio clip bound per unit distance (`None`: exact MH).
    pub clip_bound: Option<f64>,
    /// Distance scaling the clip bound.
    pub clip_distance: ClipDistance,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for Rwmh {
    fn default() -> Self {
        Rwmh {
            proposal_sd: StepSize::Scalar(0.01),
            clip_bound: None,
            clip_distance: ClipDistance::L2,
            run: RunSettings::default(),
        }
    }
}

run_setters!(Rwmh);
clipped_baseline_setters!(Rwmh);

impl Rwmh {
    /// Defaults: proposal sd 0.01, no clipping, 4 chains.
    pub fn builder() -> Self {
        Self::default()
    }
    /// Proposal standard deviation(s).
    #[must_use]
    pub fn proposal_sd(mut self, sd: impl Into<StepSize>) -> Self {
        self.proposal_sd = sd.into();
        self
    }
    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<RwmhKernel> {
        let sd = self.proposal_sd.resolve("proposal_sd", model.dim())?;
        RwmhKernel::new(sd, self.clip_bound, self.clip_distance)
    }
    /// Run the chains.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        finish(&self.kernel(model)?, model, &self.run, self, None)
    }
}

/// The registry's random-walk MH.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "rwmh",
    label: "RWMH",
    aliases: &[],
    private: false,
    build: || Box::new(Rwmh::builder()),
};

impl Sampler for Rwmh {
    sampler_basics!("rwmh", baseline);
    field_setters!(set_clip_bound(f64) => Some(clip_bound), set_clip_distance(ClipDistance) => clip_distance, set_proposal_sd(StepSize) => proposal_sd);

    /// The clipping study's steps (THESIS-NOTES §12) for the flat bananas; elsewhere the DP
    /// penalty's tuned step; 3000 iterations.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let sd = match experiment {
            Experiment::EasyBanana2d => per_coordinate(0.01, 2),
            Experiment::EasyBanana10d => {
                let mut v = vec![0.015, 0.015];
                v.extend([0.002; 8]);
                StepSize::PerCoordinate(v)
            }
            _ => super::thesis_tables::penalty_full(experiment).1,
        };
        Ok(Box::new(Rwmh::builder().proposal_sd(sd).iterations(3000)))
    }
}
