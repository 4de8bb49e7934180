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

use polars::prelude::{Column, DataFrame};

/// The column called `name`, found by a linear scan of the names. `DataFrame::column` hashes
/// the name with the seed of the polars copy it runs in and caches the frame's schema (frames
/// wider than 4 columns): in evcxr each cell links its own copy, so a frame kept from an
/// earlier cell fails that lookup in a later one (`crate::display`, "Pitfalls"; measured with
/// polars 0.55: `df.column("visited")` fails in the next cell while `df.get_column_names()`
/// lists it). Every lookup of a user's frame by name goes through here.
pub(crate) fn column_named<'a>(df: &'a DataFrame, name: &str) -> Option<&'a Column> {
    df.columns().iter().find(|c| c.name().as_str() == name)
}
