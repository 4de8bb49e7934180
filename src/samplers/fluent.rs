//! [`RunSetters`] on a boxed [`Sampler`] (any sampler as a value), as on the samplers' own
//! builders: `tuned(exp, kind)?.epsilon(4.0).delta(1e-6).chains(4).seed(1)`.
//!
//! Each setter writes one field of [`RunSettings`] (see [`Sampler::run_settings_mut`]); `run()`
//! validates them all, so a bad value is a typed error there, not a panic here.
//!
//! ```
//! use dp_mcmc::prelude::*;
//! use dp_mcmc::experiments::tuned;
//! # fn main() -> dp_mcmc::Result<()> {
//! let model = Experiment::EasyBanana2d.model()?;
//! let s = tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty)?
//!     .epsilon(4.0)
//!     .delta(0.1 / model.n_rows() as f64)
//!     .per_chain_budget(true)
//!     .chains(4)
//!     .seed(1)
//!     .progress(false)
//!     .starts(model.start_points(4));
//! let mut by_hand = tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty)?;
//! let r = by_hand.run_settings_mut();
//! r.budget = dp_mcmc::samplers::Budget::Privacy { epsilon: 4.0, delta: 0.1 / model.n_rows() as f64 };
//! r.per_chain_budget = true;
//! r.chains = 4;
//! r.seed = 1;
//! r.progress = false;
//! r.start = dp_mcmc::samplers::Start::PerChain(model.start_points(4));
//! assert_eq!(s.run_settings(), by_hand.run_settings());
//! let b = s.budget(model.n_rows())?.expect("DP penalty is private");
//! assert!(b.iterations > 0 && b.spent.per_chain && b.spent.epsilon == 4.0);
//! // A bad value is reported when the sampler runs (here: δ must be below 1).
//! assert!(s.clone().delta(2.0).budget(model.n_rows()).is_err());
//! # Ok(()) }
//! ```

use super::sampler::Sampler;
use super::settings::{RunSetters, RunSettings};

impl RunSetters for Box<dyn Sampler> {
    fn run_mut(&mut self) -> &mut RunSettings {
        self.as_mut().run_settings_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::{Budget, SamplerKind, Start};
    use std::time::Duration;

    #[test]
    fn every_setter_writes_its_field_for_every_kind() {
        for kind in [SamplerKind::Rwmh, SamplerKind::Hmc, SamplerKind::DpPenalty] {
            {
                let s = kind
                    .build()
                    .chains(3)
                    .seed(9)
                    .iterations(11)
                    .epsilon(0.5)
                    .delta(1e-7)
                    .per_chain_budget(true)
                    .max_time(Duration::from_secs(2))
                    .progress(true)
                    .threads(1)
                    .secure_rng(true)
                    .thin(2)
                    .start(vec![0.1, 0.2]);
                let r = s.run_settings();
                assert_eq!((r.chains, r.seed), (3, 9));
                // the privacy budget set last replaces the fixed count
                assert_eq!(
                    r.budget,
                    Budget::Privacy {
                        epsilon: 0.5,
                        delta: 1e-7
                    }
                );
                let fixed = s.clone().iterations(11);
                assert_eq!(fixed.run_settings().budget, Budget::Iterations(11));
                assert!(r.per_chain_budget && r.progress && r.secure_rng);
                assert_eq!(r.max_time, Some(Duration::from_secs(2)));
                assert_eq!((r.threads, r.thin), (Some(1), 2));
                assert_eq!(r.start, Start::Point(vec![0.1, 0.2]));
            }
        }
        for kind in [
            SamplerKind::DpHmc,
            SamplerKind::MinibatchPenalty,
            SamplerKind::DpBarker,
        ] {
            let s = kind.build().starts(vec![vec![0.0, 0.0]; 2]);
            assert_eq!(
                s.run_settings().start,
                Start::PerChain(vec![vec![0.0, 0.0]; 2])
            );
        }
    }
}
