//! The only module that builds polars DataFrames from the crate's results.
pub mod accounting;
pub mod data;
pub mod diagnostics;
pub mod experiments;
mod io;
pub mod mechanisms;
pub mod samplers;

pub use io::{read_csv, write_csv};
