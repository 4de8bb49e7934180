//! CSV files: writing result tables, reading any table with a header row.

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

/// Write `df` as CSV to `path` (creating parent folders). Only `.csv` is supported: this crate
/// is built without polars' parquet feature to keep notebook compile times low.
pub fn write_csv(df: &mut DataFrame, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some("csv") | None => {}
        Some(ext) => {
            return Err(Error::invalid(
                "out",
                path.display(),
                format!("cannot write .{ext}: use a .csv path (parquet is not built in)"),
            ));
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::File::create(path)?;
    CsvWriter::new(&mut file).finish(df)?;
    Ok(())
}

/// Read a CSV file with a header row (the one CSV reader of the crate: model data, draws
/// and samples for the diagnostics). Column types are inferred from every row, so a column
/// whose first rows look like integers still reads as floats.
///
/// ```
/// use dp_mcmc::frame::read_csv;
/// let e = read_csv("no/such/draws.csv").unwrap_err();
/// assert!(e.to_string().contains("no such file"));
/// ```
pub fn read_csv(path: impl AsRef<Path>) -> Result<DataFrame> {
    let path = path.as_ref();
    if !path.is_file() {
        return Err(Error::InvalidData(format!(
            "cannot read `{}`: no such file",
            path.display()
        )));
    }
    Ok(CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))?
        .finish()?)
}
