//! The only module that builds polars DataFrames from the crate's results.
pub mod accounting;
pub mod data;
pub mod diagnostics;
pub mod experiments;
pub mod figure_6_1;
pub mod fit_data;
pub mod fit_output;
mod io;
pub mod mechanisms;
pub mod samplers;

#[cfg(feature = "cli")]
pub use io::write_parquet;
pub use io::{read_csv, read_table, write_csv};
