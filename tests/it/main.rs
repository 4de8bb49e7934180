//! The integration tests, one crate: a module per part of `src/` (plus `robustness`, the odd-input
//! sweep over every public builder). The conformance (`tests/conformance.rs`: the accountants
//! against independent reference vectors), calibration and audit suites are crates of their
//! own. Modules that run the `dp-mcmc` binary are compiled with the `cli` feature only.
//!
//! `cargo test --test it samplers::` runs one module's tests.

#[path = "../budget_queries/mod.rs"]
mod budget_queries;
mod common;

mod accounting;
mod auto;
#[cfg(feature = "cli")]
mod cli;
mod diagnostics;
mod display;
mod experiments;
#[cfg(feature = "cli")]
mod fit;
mod mechanisms;
mod models;
mod noise;
mod noise_aware;
mod robustness;
mod samplers;
