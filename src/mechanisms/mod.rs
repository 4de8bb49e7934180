//! Classic DP mechanisms: randomized response, Laplace, exponential, private online learning,
//! and the Hellinger-distance exponential mechanism for Bayesian posteriors.
//!
//! Sources: J. T. Cho, *Introduction to Differential Privacy*, lecture slides, CIS 700-003,
//! University of Pennsylvania, March 2017 (randomized response, Laplace and exponential
//! mechanisms, randomized weighted majority); and M. Bun, G. P. Farina, M. Gaboardi and J. Liu,
//! *Tailoring Differentially Private Bayesian Inference to Distance Between Distributions*
//! (extended abstract).
//!
//! Every random function takes `&mut impl rand::Rng` at the lowest level; experiment-level
//! functions take a `seed: u64` and derive their streams with [`crate::rng::chain_rng`]. A seeded
//! PRNG reproduces research results; it is not a secure source for a real DP release.
//!
//! Tables: [`crate::frame::mechanisms`] turns the results into polars DataFrames, and
//! `crate::plots::mechanisms` (feature `plot`) draws them.

pub mod exponential;
pub mod hellinger;
pub mod laplace;
pub mod online_learning;
pub mod randomized_response;

pub use exponential::ExponentialMechanism;
pub use laplace::LaplaceMechanism;
pub use online_learning::{OnlineRun, RandomizedWeightedMajority};
pub use randomized_response::RandomizedResponse;
