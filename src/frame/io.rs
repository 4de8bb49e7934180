//! Files: writing result tables (CSV; parquet with the `cli` feature), reading any table
//! with a header row (CSV) or a parquet file (`cli` feature).

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
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))?
        .finish()?;
    check_unique_header(&df, path)?;
    Ok(df)
}

/// A header that names a column twice is an error (polars' reader would keep both, renaming
/// the second `NAME_duplicated_0`, and a fit would silently use the first).
fn check_unique_header(df: &DataFrame, path: &Path) -> Result<()> {
    let names: Vec<&str> = df.get_column_names().iter().map(|c| c.as_str()).collect();
    for name in &names {
        if let Some((base, k)) = name.rsplit_once("_duplicated_")
            && k.parse::<usize>().is_ok()
            && names.contains(&base)
        {
            return Err(Error::InvalidData(format!(
                "the header of `{}` names the column `{base}` more than once; give every \
                 column a unique name",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Read a data table by its extension: `.csv` ([`read_csv`]) or `.parquet` (only in builds
/// with the `cli` feature, which compiles polars' parquet support; notebooks leave it out).
///
/// ```
/// use dp_mcmc::frame::read_table;
/// let e = read_table("data.xlsx").unwrap_err();
/// assert!(e.to_string().contains(".csv"));
/// ```
pub fn read_table(path: impl AsRef<Path>) -> Result<DataFrame> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("csv") => read_csv(path),
        Some(e) if e.eq_ignore_ascii_case("parquet") => read_parquet(path),
        _ => Err(Error::invalid(
            "--data",
            path.display(),
            "give a .csv or .parquet file",
        )),
    }
}

#[cfg(feature = "cli")]
fn read_parquet(path: &Path) -> Result<DataFrame> {
    if !path.is_file() {
        return Err(Error::InvalidData(format!(
            "cannot read `{}`: no such file",
            path.display()
        )));
    }
    Ok(ParquetReader::new(std::fs::File::open(path)?).finish()?)
}

#[cfg(not(feature = "cli"))]
fn read_parquet(path: &Path) -> Result<DataFrame> {
    Err(Error::invalid(
        "--data",
        path.display(),
        "this build has no parquet support (it comes with the `cli` feature): use a .csv file",
    ))
}

/// Write `df` as parquet to `path` (creating parent folders); only with the `cli` feature.
#[cfg(feature = "cli")]
pub fn write_parquet(df: &mut DataFrame, path: impl AsRef<Path>) -> Result<()> {
    write_parquet_with_metadata(df, path, Vec::new())
}

/// [`write_parquet`] with file-level key-value metadata (e.g. a fit's provenance).
#[cfg(feature = "cli")]
pub fn write_parquet_with_metadata(
    df: &mut DataFrame,
    path: impl AsRef<Path>,
    metadata: Vec<(String, String)>,
) -> Result<()> {
    let path = path.as_ref();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let metadata = (!metadata.is_empty()).then(|| KeyValueMetadata::from_static(metadata));
    // Snappy: a fast codec (the default zstd level took most of `fit`'s output time)
    ParquetWriter::new(std::fs::File::create(path)?)
        .with_compression(ParquetCompression::Snappy)
        .with_key_value_metadata(metadata)
        .finish(df)?;
    Ok(())
}
