//! Owned, validated numeric data sets: column-major ([`ColumnData`]) and row-major ([`RowData`]).
//!
//! Both are immutable, finite, non-empty and shared through an [`Arc`], so cloning a model that
//! holds them is cheap (parallel chains, notebook cells).

use std::sync::Arc;

use crate::error::{Error, Result};

/// `n × d` numbers stored column by column (one contiguous slice per coordinate).
///
/// The thesis models' likelihoods are sums over coordinates, so a sampler that changes one
/// coordinate touches one contiguous column: the hot loops stream through it.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnData {
    values: Arc<[f64]>,
    n_rows: usize,
    n_cols: usize,
}

impl ColumnData {
    /// Builds the data from one `Vec` per column (all of the same, non-zero length, finite).
    ///
    /// ```
    /// use dp_mcmc::models::ColumnData;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = ColumnData::from_columns(vec![vec![1.0, 2.0, 3.0], vec![0.5, 0.5, 0.5]])?;
    /// assert_eq!((data.n_rows(), data.n_cols()), (3, 2));
    /// assert_eq!(data.col(1), &[0.5, 0.5, 0.5]);
    /// // Columns of different lengths are rejected.
    /// assert!(ColumnData::from_columns(vec![vec![1.0, 2.0], vec![1.0]]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_columns(columns: Vec<Vec<f64>>) -> Result<Self> {
        let n_cols = columns.len();
        if n_cols == 0 {
            return Err(Error::InvalidData(
                "no columns: the data need at least one column".into(),
            ));
        }
        let n_rows = columns[0].len();
        if n_rows == 0 {
            return Err(Error::InvalidData(
                "no rows: the data need at least one row".into(),
            ));
        }
        let mut values = Vec::with_capacity(n_rows * n_cols);
        for (i, c) in columns.iter().enumerate() {
            if c.len() != n_rows {
                return Err(Error::InvalidData(format!(
                    "column {i} has {} rows but column 0 has {n_rows}; all columns need the same length",
                    c.len()
                )));
            }
            if let Some(j) = c.iter().position(|x| !x.is_finite()) {
                return Err(Error::InvalidData(format!(
                    "column {i} has a non-finite value ({}) at row {j}; remove or impute it",
                    c[j]
                )));
            }
            values.extend_from_slice(c);
        }
        Ok(Self {
            values: values.into(),
            n_rows,
            n_cols,
        })
    }

    /// Builds the data from row-major values (`values[j * n_cols + i]` is row `j`, column `i`).
    ///
    /// ```
    /// use dp_mcmc::models::ColumnData;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = ColumnData::from_row_major(&[1.0, 10.0, 2.0, 20.0], 2)?;
    /// assert_eq!(data.col(0), &[1.0, 2.0]);
    /// // 3 values do not fill rows of 2.
    /// assert!(ColumnData::from_row_major(&[1.0, 2.0, 3.0], 2).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_row_major(values: &[f64], n_cols: usize) -> Result<Self> {
        let n_rows = row_count(values.len(), n_cols)?;
        let columns = (0..n_cols)
            .map(|i| (0..n_rows).map(|j| values[j * n_cols + i]).collect())
            .collect();
        Self::from_columns(columns)
    }

    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns `d`.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Column `i` (length `n`). Panics if `i >= n_cols` (a caller bug, not user input).
    #[inline]
    pub fn col(&self, i: usize) -> &[f64] {
        &self.values[i * self.n_rows..(i + 1) * self.n_rows]
    }

    /// Value at row `j`, column `i`.
    #[inline]
    pub fn get(&self, j: usize, i: usize) -> f64 {
        self.values[i * self.n_rows + j]
    }

    /// Column sums `Σ_j x_ji` (the banana and Gaussian models' sufficient statistics).
    pub fn column_sums(&self) -> Vec<f64> {
        (0..self.n_cols).map(|i| self.col(i).iter().sum()).collect()
    }

    /// Column means `x̄_i`.
    pub fn column_means(&self) -> Vec<f64> {
        (0..self.n_cols)
            .map(|i| self.col(i).iter().sum::<f64>() / self.n_rows as f64)
            .collect()
    }

    /// The data as row-major values.
    pub fn to_row_major(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.n_rows * self.n_cols];
        for i in 0..self.n_cols {
            for (j, &x) in self.col(i).iter().enumerate() {
                out[j * self.n_cols + i] = x;
            }
        }
        out
    }
}

/// `n × p` numbers stored row by row: row `j` is one contiguous slice, handed to per-row
/// closures (see [`CustomModel`](crate::models::CustomModel)).
#[derive(Clone, Debug, PartialEq)]
pub struct RowData {
    values: Arc<[f64]>,
    n_rows: usize,
    n_cols: usize,
}

impl RowData {
    /// Builds the data from row-major values (`values[j * n_cols + i]`), finite and non-empty.
    ///
    /// ```
    /// use dp_mcmc::models::RowData;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = RowData::from_row_major(vec![1.0, 10.0, 2.0, 20.0], 2)?;
    /// assert_eq!(data.row(1), &[2.0, 20.0]);
    /// assert!(RowData::from_row_major(vec![1.0, f64::NAN], 2).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_row_major(values: Vec<f64>, n_cols: usize) -> Result<Self> {
        let n_rows = row_count(values.len(), n_cols)?;
        if let Some(k) = values.iter().position(|x| !x.is_finite()) {
            return Err(Error::InvalidData(format!(
                "row {}, column {} has a non-finite value ({}); remove or impute it",
                k / n_cols,
                k % n_cols,
                values[k]
            )));
        }
        Ok(Self {
            values: values.into(),
            n_rows,
            n_cols,
        })
    }

    /// Builds the data from one `Vec` per row (all of the same, non-zero length).
    ///
    /// ```
    /// use dp_mcmc::models::RowData;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = RowData::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
    /// assert_eq!((data.n_rows(), data.n_cols()), (2, 2));
    /// assert!(RowData::from_rows(&[vec![1.0, 2.0], vec![3.0]]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self> {
        let n_cols = rows.first().map_or(0, Vec::len);
        let mut values = Vec::with_capacity(rows.len() * n_cols);
        for (j, r) in rows.iter().enumerate() {
            if r.len() != n_cols {
                return Err(Error::InvalidData(format!(
                    "row {j} has {} values but row 0 has {n_cols}; all rows need the same length",
                    r.len()
                )));
            }
            values.extend_from_slice(r);
        }
        Self::from_row_major(values, n_cols)
    }

    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns `p`.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Row `j` (length `p`). Panics if `j >= n_rows` (a caller bug, not user input).
    #[inline]
    pub fn row(&self, j: usize) -> &[f64] {
        &self.values[j * self.n_cols..(j + 1) * self.n_cols]
    }

    /// All values, row-major.
    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }
}

impl From<&ColumnData> for RowData {
    fn from(c: &ColumnData) -> Self {
        Self {
            values: c.to_row_major().into(),
            n_rows: c.n_rows(),
            n_cols: c.n_cols(),
        }
    }
}

fn row_count(len: usize, n_cols: usize) -> Result<usize> {
    if n_cols == 0 {
        return Err(Error::invalid(
            "n_cols",
            n_cols,
            "must be at least 1 (one value per column and row)",
        ));
    }
    if len == 0 {
        return Err(Error::InvalidData(
            "no rows: the data need at least one row".into(),
        ));
    }
    if !len.is_multiple_of(n_cols) {
        return Err(Error::InvalidData(format!(
            "{len} values do not split into rows of {n_cols} columns"
        )));
    }
    Ok(len / n_cols)
}
