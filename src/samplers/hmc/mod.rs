//! HMC: the non-private baseline's builder. Its kernel ([`HmcKernel`]), shared with DP HMC
//! (which adds [`HmcNoise`]), is one level up (`samplers/hamiltonian.rs`).

pub use super::hamiltonian::{HmcKernel, HmcNoise};

use crate::samplers::Gradient;

use serde::{Deserialize, Serialize};

use super::driver::finish;
use super::proposal::ClipDistance;
use super::run::Run;
use super::sampler::SamplerEntry;
use super::sampler::{Sampler, field_setters, sampler_basics};
use super::settings::RunSetters;
use super::settings::{RunSettings, clipped_baseline_setters, hmc_setters, run_setters};
use crate::error::Result;
use crate::models::{Experiment, Model};

/// HMC (non-private baseline), optionally with clipped per-row ratios in ΔH. Uses gradient
/// re-use (exact gradients, so this is ordinary HMC) as the thesis' clipping study does.
///
/// ```
/// use dp_mcmc::samplers::RunSetters;
/// # fn main() -> dp_mcmc::Result<()> {
/// use dp_mcmc::samplers::Hmc;
/// # use dp_mcmc::models::testing::IsotropicGaussian;
/// let model = IsotropicGaussian::new(vec![0.1, -0.3, 0.7], 1)?;
/// let run = Hmc::builder().step_size(0.2).leapfrog_steps(5).iterations(100).start(vec![0.0]).run(&model)?;
/// assert!(run.acceptance()[0] > 0.5);
/// assert!(Hmc::builder().step_size(0.0).iterations(1).start(vec![0.0]).run(&model).is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hmc {
    /// Leapfrog steps L.
    pub leapfrog_steps: usize,
    /// Step size η.
    pub step_size: f64,
    /// Diagonal mass matrix (`None`: identity).
    pub mass: Option<Vec<f64>>,
    /// Ratio clip bound per unit distance (`None`: exact HMC).
    pub clip_bound: Option<f64>,
    /// Distance scaling the clip bound.
    pub clip_distance: ClipDistance,
    /// Run settings.
    pub run: RunSettings,
}

impl Default for Hmc {
    fn default() -> Self {
        Hmc {
            leapfrog_steps: 15,
            step_size: 0.001,
            mass: None,
            clip_bound: None,
            clip_distance: ClipDistance::L2,
            run: RunSettings::default(),
        }
    }
}

run_setters!(Hmc);
hmc_setters!(Hmc);
clipped_baseline_setters!(Hmc);

impl Hmc {
    /// Defaults: L = 15, η = 0.001, identity mass, no clipping.
    pub fn builder() -> Self {
        Self::default()
    }
    /// The validated kernel for `model`.
    pub fn kernel<M: Model + ?Sized>(&self, model: &M) -> Result<HmcKernel> {
        let mass = self.mass.clone().unwrap_or_else(|| vec![1.0; model.dim()]);
        Ok(HmcKernel::new(
            self.leapfrog_steps,
            self.step_size,
            mass,
            self.clip_bound,
            None,
            Gradient::Reuse,
        )?
        .with_clip_distance(self.clip_distance))
    }
    /// Run the chains.
    pub fn run<M: Model + ?Sized>(&self, model: &M) -> Result<Run> {
        finish(&self.kernel(model)?, model, &self.run, self, None)
    }
}

/// The registry's non-private HMC.
pub(crate) const ENTRY: SamplerEntry = SamplerEntry {
    key: "hmc",
    label: "HMC",
    aliases: &[],
    private: false,
    build: || Box::new(Hmc::builder()),
};

impl Sampler for Hmc {
    sampler_basics!("hmc", baseline);
    field_setters!(set_clip_bound(f64) => Some(clip_bound), set_clip_distance(ClipDistance) => clip_distance);

    /// The clipping study's integrator (THESIS-NOTES §12) for the flat bananas; elsewhere DP
    /// HMC's tuned one; 500 iterations.
    fn tuned_for(&self, experiment: Experiment) -> Result<Box<dyn Sampler>> {
        let h = match experiment {
            Experiment::EasyBanana2d => Hmc::builder()
                .step_size(0.001)
                .leapfrog_steps(15)
                .mass(vec![1.0, 0.5]),
            Experiment::EasyBanana10d => {
                let mut m = vec![1.0, 0.5];
                m.extend([0.4; 8]);
                Hmc::builder().step_size(0.001).leapfrog_steps(15).mass(m)
            }
            _ => {
                let (l, eta) = super::thesis_tables::integrator(experiment);
                Hmc::builder()
                    .step_size(eta)
                    .leapfrog_steps(l)
                    .mass(vec![1.0; experiment.dim()])
            }
        };
        Ok(Box::new(h.iterations(500)))
    }
}
