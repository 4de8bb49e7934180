//! Writing result tables to disk (CSV).

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

/// Read a CSV file with a header row.
pub fn read_csv(path: impl AsRef<Path>) -> Result<DataFrame> {
    let path = path.as_ref();
    if !path.exists() {
        return Err(Error::InvalidData(format!(
            "no such file: {}",
            path.display()
        )));
    }
    Ok(CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.into()))?
        .finish()?)
}
