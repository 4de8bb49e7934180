//! # dp-mcmc
//!
//! Differentially private Bayesian inference with MCMC, after Räisä (2021), *Differentially
//! Private Markov Chain Monte Carlo*: DP penalty (with one-component updates and guided walk),
//! minibatch DP penalty, DP Barker and DP HMC as values of one registry
//! ([`samplers::SamplerKind`], [`samplers::Sampler`]), their privacy accountants (zCDP, RDP,
//! subsampled RDP, the tight Gaussian PLD bound, the Fourier accountant, the certified PLD
//! accountant [`accounting::CertifiedPld`] with interval answers, Algorithm 2), the thesis'
//! models and diagnostics, and the mechanisms of the intro-to-DP and Hellinger papers.
//!
//! Beyond the thesis, private inference from public information alone: [`auto`] (every setting
//! of a DP-MCMC run derived under DP and charged to one ledger) and [`noise_aware`] (a few
//! shaped private releases, then the posterior given what was released, sampled to
//! convergence), both behind `dp-mcmc fit` for a table of one's own.
//!
//! A first run:
//!
//! ```
//! use dp_mcmc::{DpPenalty, RunSetters};
//! # use dp_mcmc::models::testing::IsotropicGaussian;
//! # let model = IsotropicGaussian::new((0..1000).map(|i| (i % 7) as f64 / 7.0).collect(), 1)?;
//! let run = DpPenalty::builder().tau(0.5).proposal_sd(0.05)
//!     .epsilon(4.0).delta(1e-5).chains(2).seed(1).start(vec![0.5])
//!     .run(&model)?;
//! assert!(run.privacy.as_ref().unwrap().epsilon <= 4.0);
//! // an invalid setting is a typed error naming it
//! assert!(DpPenalty::builder().tau(-1.0).epsilon(1.0).delta(1e-5).start(vec![0.5]).run(&model).is_err());
//! # Ok::<(), dp_mcmc::Error>(())
//! ```
//!
//! Layering: computation (`accounting`, `models`, `samplers`, `diagnostics`, `mechanisms`)
//! never touches polars or plotly; `auto` and `noise_aware` sit above `samplers`; [`frame`]
//! turns results into DataFrames; `plots` (feature `plot`) makes plotly figures. See
//! `docs/ARCHITECTURE.md`.
#![warn(missing_docs)]

pub mod accounting;
pub mod auto;
pub mod diagnostics;
pub mod display;
pub mod error;
pub mod experiments;
pub mod fit;
pub mod frame;
pub mod mechanisms;
pub mod models;
pub mod noise;
pub mod noise_aware;
#[cfg(feature = "plot")]
pub mod plots;
pub mod prelude;
mod progress;
pub mod rng;
pub mod samplers;

pub use error::{Error, Result};

// The names a first analysis needs, at the root (`use dp_mcmc::{DpPenalty, RunSetters};`); the
// modules hold the rest, and `prelude` is the notebook's glob.
pub use accounting::{Accountant, AccountantKind, CertifiedPld, PrivacyEvent};
pub use auto::{Auto, AutoRun};
pub use diagnostics::{ess_bulk, rhat};
pub use models::{CustomModel, Experiment, Model};
pub use noise_aware::NoiseAware;
pub use samplers::{
    Budget, DpBarker, DpFastMh, DpHmc, DpPenalty, DpSgld, DpSgnht, Hmc, IterationBudget,
    MinibatchPenalty, Run, RunSetters, Rwmh, Sampler, SamplerKind,
};

/// The nalgebra version this crate was built with.
pub use nalgebra;
/// The plotly version this crate was built with.
#[cfg(feature = "plot")]
pub use plotly;
/// The polars version this crate was built with (pinned): use it in notebooks.
pub use polars;
