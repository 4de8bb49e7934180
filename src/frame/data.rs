//! Model data from polars DataFrames and CSV files: selected numeric columns become
//! [`RowData`] (for [`CustomModel`](crate::models::CustomModel)) or [`ColumnData`] (for the
//! built-in models).
//!
//! ```
//! use dp_mcmc::frame::data::row_data;
//! use dp_mcmc::models::{CustomModel, Model};
//! use dp_mcmc::polars::prelude::*;
//! # fn main() -> dp_mcmc::Result<()> {
//! let df = df!("x" => [0.0, 1.0, 2.0], "y" => [1.1, 2.9, 5.2], "id" => ["a", "b", "c"])?;
//! let data = row_data(&df, &["x", "y"])?;
//! let model = CustomModel::new(data, 2, |t, row| -0.5 * (row[1] - t[0] - t[1] * row[0]).powi(2))?;
//! assert_eq!(model.n_rows(), 3);
//! // Non-numeric columns are rejected by name.
//! assert!(row_data(&df, &["x", "id"]).unwrap_err().to_string().contains("`id`"));
//! // The compact layout: the data rounded to f32 once (half the bytes per row), f64 arithmetic.
//! let compact = model.compact()?;
//! assert_eq!(compact.layout(), dp_mcmc::models::Layout::F32);
//! # Ok(()) }
//! ```
//!
//! The readers return `f64` data; a model's `.compact()` (or [`RowData::compact`],
//! [`ColumnData::compact`]) stores them as `f32` (see [`crate::models::Layout`]).

use std::path::Path;

use polars::prelude::*;

use super::read_csv;
use crate::error::{Error, Result};
use crate::models::{ColumnData, LogisticModel, RowData};

/// The selected columns of `df` as `f64` vectors (all columns if `columns` is empty).
///
/// Every column must be numeric (integers, floats or booleans, cast to `f64`); a null, NaN or
/// infinite value is an error naming its column and row.
///
/// ```
/// use dp_mcmc::frame::data::numeric_columns;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("a" => [1i64, 2], "b" => [Some(0.5), None])?;
/// assert_eq!(numeric_columns(&df, &["a"])?, vec![vec![1.0, 2.0]]);
/// let err = numeric_columns(&df, &[]).unwrap_err().to_string();
/// assert!(err.contains("`b`") && err.contains("row 1"));
/// # Ok(()) }
/// ```
pub fn numeric_columns(df: &DataFrame, columns: &[&str]) -> Result<Vec<Vec<f64>>> {
    let names: Vec<String> = if columns.is_empty() {
        df.get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        columns.iter().map(|s| s.to_string()).collect()
    };
    if names.is_empty() {
        return Err(Error::InvalidData("the DataFrame has no columns".into()));
    }
    if df.height() == 0 {
        return Err(Error::InvalidData(
            "the DataFrame has no rows: the data need at least one row".into(),
        ));
    }
    names.iter().map(|name| numeric_column(df, name)).collect()
}

fn numeric_column(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let col = super::column_named(df, name).ok_or_else(|| {
        let have: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        Error::InvalidData(format!(
            "no column `{name}`; the DataFrame has {}",
            have.join(", ")
        ))
    })?;
    let dtype = col.dtype();
    if !(dtype.is_primitive_numeric() || matches!(dtype, DataType::Boolean)) {
        return Err(Error::InvalidData(format!(
            "column `{name}` has type {dtype}; model data must be numeric (cast or encode it first)"
        )));
    }
    let cast = col.cast(&DataType::Float64)?;
    let ca = cast.f64()?;
    let mut out = Vec::with_capacity(ca.len());
    for (j, v) in ca.iter().enumerate() {
        match v {
            None => {
                return Err(Error::InvalidData(format!(
                    "column `{name}` has a null at row {j}; drop or impute missing values first"
                )));
            }
            Some(x) if !x.is_finite() => {
                return Err(Error::InvalidData(format!(
                    "column `{name}` has a non-finite value ({x}) at row {j}; remove or impute it"
                )));
            }
            Some(x) => out.push(x),
        }
    }
    Ok(out)
}

/// The selected columns as row-major [`RowData`] (all columns if `columns` is empty).
pub fn row_data(df: &DataFrame, columns: &[&str]) -> Result<RowData> {
    let cols = numeric_columns(df, columns)?;
    let (n, p) = (cols[0].len(), cols.len());
    let mut values = vec![0.0; n * p];
    for (i, c) in cols.iter().enumerate() {
        for (j, &x) in c.iter().enumerate() {
            values[j * p + i] = x;
        }
    }
    RowData::from_row_major(values, p)
}

/// The selected columns as column-major [`ColumnData`] (all columns if `columns` is empty).
///
/// ```
/// use dp_mcmc::frame::data::column_data;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("x1" => [0.1, -0.2], "x2" => [3.0, 2.9])?;
/// let data = column_data(&df, &["x1", "x2"])?;
/// assert_eq!(data.col(1), &[3.0, 2.9]);
/// assert!(column_data(&df, &["x3"]).is_err());
/// # Ok(()) }
/// ```
pub fn column_data(df: &DataFrame, columns: &[&str]) -> Result<ColumnData> {
    ColumnData::from_columns(numeric_columns(df, columns)?)
}

/// [`row_data`] of a CSV file (header row required).
///
/// ```
/// use dp_mcmc::frame::data::row_data_from_csv;
/// assert!(row_data_from_csv("/no/such/file.csv", &["x"]).is_err());
/// ```
pub fn row_data_from_csv(path: impl AsRef<Path>, columns: &[&str]) -> Result<RowData> {
    row_data(&read_csv(path)?, columns)
}

/// [`column_data`] of a CSV file (header row required).
pub fn column_data_from_csv(path: impl AsRef<Path>, columns: &[&str]) -> Result<ColumnData> {
    column_data(&read_csv(path)?, columns)
}

/// A [`LogisticModel`] from a DataFrame: covariates `features` (plus a leading column of ones
/// if `intercept`), binary outcome `target` (0/1 or boolean), prior `N(0, prior_var · I)`.
///
/// ```
/// use dp_mcmc::frame::data::logistic_model;
/// use dp_mcmc::models::Model;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("age" => [0.3, -1.2, 0.8], "smoker" => [true, false, true])?;
/// let model = logistic_model(&df, &["age"], "smoker", 10.0, true)?;
/// assert_eq!(model.dim(), 2); // intercept and age
/// let err = logistic_model(&df, &["age"], "age", 10.0, true).unwrap_err();
/// assert!(err.to_string().contains("`age`")); // age is not a 0/1 outcome
/// # Ok(()) }
/// ```
pub fn logistic_model(
    df: &DataFrame,
    features: &[&str],
    target: &str,
    prior_var: f64,
    intercept: bool,
) -> Result<LogisticModel> {
    if features.is_empty() && !intercept {
        return Err(Error::invalid(
            "features",
            "[]",
            "name at least one covariate column or set `intercept`",
        ));
    }
    let mut cols = Vec::with_capacity(features.len() + 1);
    if intercept {
        cols.push(vec![1.0; df.height()]);
    }
    if !features.is_empty() {
        cols.extend(numeric_columns(df, features)?);
    }
    let y = numeric_column(df, target)?;
    if let Some(j) = y.iter().position(|&v| v != 0.0 && v != 1.0) {
        return Err(Error::InvalidData(format!(
            "target column `{target}` has the value {} at row {j}; logistic regression needs 0/1 outcomes",
            y[j]
        )));
    }
    LogisticModel::new(ColumnData::from_columns(cols)?, &y, prior_var)
}
