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

/// The nalgebra version this crate was built with.
pub use nalgebra;
/// The plotly version this crate was built with.
#[cfg(feature = "plot")]
pub use plotly;
/// The polars version this crate was built with (pinned): use it in notebooks.
pub use polars;
