//! The only module that builds polars DataFrames from the crate's results.
pub mod accounting;
pub mod data;
pub mod diagnostics;
pub mod mechanisms;
pub mod samplers;
