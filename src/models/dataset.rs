//! Owned, validated numeric data sets: column-major ([`ColumnData`]) and row-major ([`RowData`]),
//! stored as `f64` (the default) or `f32` (the compact [`Layout`]).
//!
//! Both are immutable, finite, non-empty and shared through an [`Arc`], so cloning a model that
//! holds them is cheap (parallel chains, notebook cells).
//!
//! # The compact layout
//!
//! `ColumnData<f32>` and `RowData<f32>` ([`ColumnData::compact`], [`RowData::compact`], or a
//! model's `.compact()`) hold half the bytes per row. The values are rounded to the nearest
//! `f32` **once, when the data are stored**; every per-row term is then computed in `f64` from
//! those values and every sum accumulates in `f64`, so the arithmetic is the same as with `f64`
//! storage and only the data differ (by at most 2⁻²⁴ relative, ~6·10⁻⁸). The DP guarantee is
//! unaffected: the rounding is a fixed per-row map, so the rounded data set is the data set the
//! mechanism sees, and neighbouring data sets stay neighbours after rounding. How far results
//! move is measured in `docs/PERFORMANCE.md` ("Compact data layout").

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// A data set's values as it keeps them: shared, and on huge pages where that helps
/// ([`super::huge_pages`]).
fn stored<T>(values: Vec<T>) -> Arc<Vec<T>> {
    super::huge_pages::advise(&values);
    Arc::new(values)
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

/// How a data set stores its values: `f64` (default) or `f32` (half the bytes per row).
///
/// ```
/// use dp_mcmc::models::Layout;
/// assert_eq!(Layout::default(), Layout::F64);
/// assert_eq!(Layout::F32.bytes_per_value(), 4);
/// assert_eq!("f32".parse::<Layout>().unwrap(), Layout::F32);
/// assert!("f16".parse::<Layout>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `f64` storage: the data exactly as given.
    #[default]
    F64,
    /// `f32` storage, `f64` arithmetic: the data rounded to `f32` once, at load.
    F32,
}

impl Layout {
    /// Bytes per stored value (8 or 4).
    pub fn bytes_per_value(self) -> usize {
        match self {
            Layout::F64 => 8,
            Layout::F32 => 4,
        }
    }

    /// `"f64"` or `"f32"`.
    pub fn key(self) -> &'static str {
        match self {
            Layout::F64 => "f64",
            Layout::F32 => "f32",
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl std::str::FromStr for Layout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "f64" => Ok(Layout::F64),
            "f32" => Ok(Layout::F32),
            other => Err(Error::invalid("layout", other, "must be f64 or f32")),
        }
    }
}

/// A stored value type: `f64` or `f32` (sealed). Models read values through
/// [`to_f64`](Element::to_f64), so their hot loops are monomorphic per type and every term is
/// computed in `f64`.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + fmt::Debug + fmt::Display + 'static
{
    /// The layout storing this type.
    const LAYOUT: Layout;

    /// The value as `f64` (exact: every `f32` is an `f64`).
    fn to_f64(self) -> f64;

    /// `x` rounded to the nearest value of this type; `None` if that is not finite (an `f64`
    /// beyond `f32::MAX`).
    fn from_f64(x: f64) -> Option<Self>;

    /// Calls `f` with `row` as `f64` values (no copy for `f64`; a stack buffer for up to 64
    /// `f32` values, a reused per-thread buffer beyond).
    #[doc(hidden)]
    fn with_f64_row<R>(row: &[Self], f: impl FnOnce(&[f64]) -> R) -> R;

    /// `x` itself if this type is `f64` (`None` for `f32`).
    #[doc(hidden)]
    fn as_f64_slice(x: &[Self]) -> Option<&[f64]>;
}

impl Element for f64 {
    const LAYOUT: Layout = Layout::F64;

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }

    #[inline]
    fn from_f64(x: f64) -> Option<Self> {
        x.is_finite().then_some(x)
    }

    #[inline(always)]
    fn with_f64_row<R>(row: &[Self], f: impl FnOnce(&[f64]) -> R) -> R {
        f(row)
    }

    fn as_f64_slice(x: &[Self]) -> Option<&[f64]> {
        Some(x)
    }
}

impl Element for f32 {
    const LAYOUT: Layout = Layout::F32;

    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }

    #[inline]
    fn from_f64(x: f64) -> Option<Self> {
        let v = x as f32;
        v.is_finite().then_some(v)
    }

    #[inline]
    fn with_f64_row<R>(row: &[Self], f: impl FnOnce(&[f64]) -> R) -> R {
        const STACK: usize = 64;
        if row.len() <= STACK {
            let mut buf = [0.0; STACK];
            for (b, &x) in buf.iter_mut().zip(row) {
                *b = f64::from(x);
            }
            f(&buf[..row.len()])
        } else {
            thread_local! {
                static BUF: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
            }
            // Taken out of the cell while `f` runs, so a nested call finds it empty (and
            // allocates) instead of borrowing it twice.
            let mut buf = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
            buf.clear();
            buf.extend(row.iter().map(|&x| f64::from(x)));
            let r = f(&buf);
            BUF.with(|b| *b.borrow_mut() = buf);
            r
        }
    }

    fn as_f64_slice(_: &[Self]) -> Option<&[f64]> {
        None
    }
}

/// `values` rounded to `U`: an error naming the row and column of the first value that does
/// not fit (`index` maps a position in `values` to `(row, column)`).
fn convert<T: Element, U: Element>(
    values: &[T],
    index: impl Fn(usize) -> (usize, usize),
) -> Result<Vec<U>> {
    let mut out = Vec::with_capacity(values.len());
    for (k, &x) in values.iter().enumerate() {
        match U::from_f64(x.to_f64()) {
            Some(v) => out.push(v),
            None => {
                let (j, i) = index(k);
                return Err(Error::InvalidData(format!(
                    "row {j}, column {i} has the value {x}, beyond the {} range (±{:e}); \
                     rescale the column or keep the default f64 layout",
                    U::LAYOUT,
                    f32::MAX
                )));
            }
        }
    }
    Ok(out)
}

/// `n × d` numbers stored column by column (one contiguous slice per coordinate), as `f64`
/// (`ColumnData`, the default) or `f32` (`ColumnData<f32>`, see [`compact`](Self::compact)).
///
/// The thesis models' likelihoods are sums over coordinates, so a sampler that changes one
/// coordinate touches one contiguous column: the hot loops stream through it.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnData<T: Element = f64> {
    // `Arc<Vec<_>>`, not `Arc<[_]>`: wrapping a `Vec` moves it, so building a large data set
    // never holds two copies.
    values: Arc<Vec<T>>,
    n_rows: usize,
    n_cols: usize,
}

impl<T: Element> ColumnData<T> {
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
    pub fn from_columns(columns: Vec<Vec<T>>) -> Result<Self> {
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
        for (i, c) in columns.iter().enumerate() {
            if c.len() != n_rows {
                return Err(Error::InvalidData(format!(
                    "column {i} has {} rows but column 0 has {n_rows}; all columns need the same length",
                    c.len()
                )));
            }
            check_column(c, i)?;
        }
        // Each column is dropped once copied: about one copy of the data is alive at a time.
        let mut values = Vec::with_capacity(n_rows * n_cols);
        for c in columns {
            values.extend_from_slice(&c);
        }
        Ok(Self {
            values: stored(values),
            n_rows,
            n_cols,
        })
    }

    /// Builds the data from column-major values (`values[i * n_rows + j]` is row `j`, column
    /// `i`), finite and non-empty, without copying them (for large data sets built in place).
    ///
    /// ```
    /// use dp_mcmc::models::ColumnData;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = ColumnData::from_column_major(vec![1.0f32, 2.0, 10.0, 20.0], 2)?;
    /// assert_eq!(data.col(1), &[10.0, 20.0]);
    /// assert_eq!(data.get(1, 0), 2.0); // read as f64
    /// assert!(ColumnData::from_column_major(vec![1.0f32, f32::NAN], 1).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_column_major(values: Vec<T>, n_cols: usize) -> Result<Self> {
        let n_rows = row_count(values.len(), n_cols)?;
        for (i, c) in values.chunks_exact(n_rows).enumerate() {
            check_column(c, i)?;
        }
        Ok(Self {
            values: stored(values),
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
    pub fn from_row_major(values: &[T], n_cols: usize) -> Result<Self> {
        let n_rows = row_count(values.len(), n_cols)?;
        let columns = (0..n_cols)
            .map(|i| (0..n_rows).map(|j| values[j * n_cols + i]).collect())
            .collect();
        Self::from_columns(columns)
    }

    /// The same data in the compact layout: every value rounded to the nearest `f32` (half the
    /// bytes; models read them back as `f64`). An error names the row and column of a value
    /// beyond the `f32` range (|x| > 3.4·10³⁸).
    ///
    /// ```
    /// use dp_mcmc::models::{ColumnData, Layout};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = ColumnData::from_columns(vec![vec![0.1, 2.0]])?;
    /// let compact = data.compact()?;
    /// assert_eq!(compact.layout(), Layout::F32);
    /// assert_eq!(compact.get(0, 0), 0.1f32 as f64); // rounded once, read as f64
    /// assert_eq!(compact.size_bytes(), data.size_bytes() / 2);
    /// let err = ColumnData::from_columns(vec![vec![1.0, 1e300]])?.compact().unwrap_err();
    /// assert!(err.to_string().contains("row 1, column 0"));
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<ColumnData<f32>> {
        let n = self.n_rows;
        let values = convert(&self.values, |k| (k % n, k / n))?;
        Ok(ColumnData {
            values: stored(values),
            n_rows: self.n_rows,
            n_cols: self.n_cols,
        })
    }

    /// How the values are stored.
    pub fn layout(&self) -> Layout {
        T::LAYOUT
    }

    /// Bytes of stored values (`n · d · 4` or `8`).
    pub fn size_bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<T>()
    }

    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns `d`.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Column `i` (length `n`), as stored. Panics if `i >= n_cols` (a caller bug, not user
    /// input).
    #[inline]
    pub fn col(&self, i: usize) -> &[T] {
        &self.values[i * self.n_rows..(i + 1) * self.n_rows]
    }

    /// Value at row `j`, column `i`, as `f64`.
    #[inline]
    pub fn get(&self, j: usize, i: usize) -> f64 {
        self.values[i * self.n_rows + j].to_f64()
    }

    /// Column sums `Σ_j x_ji` in `f64` (the banana and Gaussian models' sufficient statistics).
    pub fn column_sums(&self) -> Vec<f64> {
        (0..self.n_cols)
            .map(|i| self.col(i).iter().map(|x| x.to_f64()).sum())
            .collect()
    }

    /// Column means `x̄_i`.
    pub fn column_means(&self) -> Vec<f64> {
        (0..self.n_cols)
            .map(|i| self.col(i).iter().map(|x| x.to_f64()).sum::<f64>() / self.n_rows as f64)
            .collect()
    }

    /// The data as row-major values.
    pub fn to_row_major(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.n_rows * self.n_cols);
        for j in 0..self.n_rows {
            out.extend((0..self.n_cols).map(|i| self.values[i * self.n_rows + j]));
        }
        out
    }
}

/// `n × p` numbers stored row by row: row `j` is one contiguous slice, handed to per-row
/// closures (see [`CustomModel`](crate::models::CustomModel)); `f64` (the default) or `f32`
/// (`RowData<f32>`, see [`compact`](Self::compact)).
#[derive(Clone, Debug, PartialEq)]
pub struct RowData<T: Element = f64> {
    values: Arc<Vec<T>>,
    n_rows: usize,
    n_cols: usize,
}

impl<T: Element> RowData<T> {
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
    pub fn from_row_major(values: Vec<T>, n_cols: usize) -> Result<Self> {
        let n_rows = row_count(values.len(), n_cols)?;
        if let Some(k) = values.iter().position(|x| !x.to_f64().is_finite()) {
            return Err(Error::InvalidData(format!(
                "row {}, column {} has a non-finite value ({}); remove or impute it",
                k / n_cols,
                k % n_cols,
                values[k]
            )));
        }
        Ok(Self {
            values: stored(values),
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
    pub fn from_rows(rows: &[Vec<T>]) -> Result<Self> {
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

    /// The same data in the compact layout: every value rounded to the nearest `f32` (see
    /// [`ColumnData::compact`]); closures still receive `f64` rows.
    ///
    /// ```
    /// use dp_mcmc::models::{Layout, RowData};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let data = RowData::from_rows(&[vec![0.1, 2.0]])?.compact()?;
    /// assert_eq!((data.layout(), data.row(0)), (Layout::F32, &[0.1f32, 2.0][..]));
    /// let err = RowData::from_rows(&[vec![1.0], vec![-1e40]])?.compact().unwrap_err();
    /// assert!(err.to_string().contains("row 1, column 0"));
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<RowData<f32>> {
        let p = self.n_cols;
        let values = convert(&self.values, |k| (k / p, k % p))?;
        Ok(RowData {
            values: stored(values),
            n_rows: self.n_rows,
            n_cols: self.n_cols,
        })
    }

    /// How the values are stored.
    pub fn layout(&self) -> Layout {
        T::LAYOUT
    }

    /// Bytes of stored values (`n · p · 4` or `8`).
    pub fn size_bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<T>()
    }

    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns `p`.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Row `j` (length `p`), as stored. Panics if `j >= n_rows` (a caller bug, not user input).
    #[inline]
    pub fn row(&self, j: usize) -> &[T] {
        &self.values[j * self.n_cols..(j + 1) * self.n_cols]
    }

    /// All values, row-major.
    pub fn as_slice(&self) -> &[T] {
        &self.values
    }
}

impl<T: Element> From<&ColumnData<T>> for RowData<T> {
    fn from(c: &ColumnData<T>) -> Self {
        Self {
            values: stored(c.to_row_major()),
            n_rows: c.n_rows(),
            n_cols: c.n_cols(),
        }
    }
}

/// Every value of column `i` must be finite.
fn check_column<T: Element>(c: &[T], i: usize) -> Result<()> {
    match c.iter().position(|x| !x.to_f64().is_finite()) {
        None => Ok(()),
        Some(j) => Err(Error::InvalidData(format!(
            "column {i} has a non-finite value ({}) at row {j}; remove or impute it",
            c[j]
        ))),
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
