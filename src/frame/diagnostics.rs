//! DataFrames of diagnostics: the per-parameter `summary` table of a wide draws frame, and
//! the CSV readers the CLI uses (long-format draws; samples for MMD).
//!
//! A draws frame has a `chain` column (any integer type), a `draw` column (any integer
//! type), optionally a boolean `warmup` column (rows with `warmup = true` are left out), and
//! one column per parameter. **Parameter columns** are all other numeric (integer or float)
//! columns, cast to f64; string, boolean and other non-numeric columns are ignored.

use std::path::Path;

use polars::prelude::*;

use super::read_csv;
use crate::diagnostics::{ParamSummary, summarize};
use crate::error::{Error, Result};

/// Names of the columns with a special meaning in a draws frame.
const CHAIN: &str = "chain";
const DRAW: &str = "draw";
const WARMUP: &str = "warmup";

/// One parameter's draws, one `Vec` per chain (chains in ascending id, draws in ascending
/// `draw` order).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDraws {
    /// Column name.
    pub name: String,
    /// Draws per chain, all of the same length.
    pub chains: Vec<Vec<f64>>,
}

impl ParamDraws {
    /// The chains as slices, the layout of [`crate::diagnostics`].
    pub fn as_slices(&self) -> Vec<&[f64]> {
        self.chains.iter().map(|c| c.as_slice()).collect()
    }
}

fn missing(col: &str) -> Error {
    Error::InvalidData(format!(
        "the draws table has no `{col}` column; it needs columns `chain`, `draw` and one per parameter"
    ))
}

fn integer_column(df: &DataFrame, name: &str) -> Result<Vec<i64>> {
    let col = super::column_named(df, name).ok_or_else(|| missing(name))?;
    if !col.dtype().is_integer() {
        return Err(Error::InvalidData(format!(
            "column `{name}` has type {}; it must hold integers",
            col.dtype()
        )));
    }
    let ca = col.cast(&DataType::Int64)?;
    ca.i64()?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.ok_or_else(|| {
                Error::InvalidData(format!("column `{name}` is empty (null) in row {i}"))
            })
        })
        .collect()
}

/// Split a wide draws frame into per-parameter chains (see the module docs for the layout).
///
/// Errors name the problem: a missing `chain`/`draw` column, no parameter column, no draws
/// left after removing warm-up, a repeated (chain, draw) pair, chains of different lengths,
/// nulls, or non-finite values.
///
/// ```
/// use dp_mcmc::frame::diagnostics::param_draws;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("chain" => [0u32, 0, 1, 1], "draw" => [0u32, 1, 0, 1], "mu" => [0.1, 0.2, 0.3, 0.4])?;
/// let p = param_draws(&df)?;
/// assert_eq!(p[0].name, "mu");
/// assert_eq!(p[0].chains, vec![vec![0.1, 0.2], vec![0.3, 0.4]]);
/// let bad = df!("draw" => [0u32], "mu" => [0.1])?;
/// assert!(param_draws(&bad).is_err()); // no `chain` column
/// # Ok(()) }
/// ```
pub fn param_draws(draws: &DataFrame) -> Result<Vec<ParamDraws>> {
    let chain = integer_column(draws, CHAIN)?;
    let draw = integer_column(draws, DRAW)?;
    let keep: Vec<bool> = match super::column_named(draws, WARMUP) {
        Some(w) if w.dtype() == &DataType::Boolean => {
            w.bool()?.iter().map(|v| !v.unwrap_or(false)).collect()
        }
        _ => vec![true; draws.height()],
    };
    let mut rows: Vec<usize> = (0..draws.height()).filter(|&i| keep[i]).collect();
    if rows.is_empty() {
        return Err(Error::InvalidData(
            "the draws table has no (post-warm-up) rows".into(),
        ));
    }
    rows.sort_by_key(|&i| (chain[i], draw[i]));
    if let Some(w) = rows
        .windows(2)
        .find(|w| (chain[w[0]], draw[w[0]]) == (chain[w[1]], draw[w[1]]))
    {
        return Err(Error::InvalidData(format!(
            "chain {} has draw {} twice; each (chain, draw) pair must be unique",
            chain[w[0]], draw[w[0]]
        )));
    }
    // Group consecutive rows of the same chain.
    let mut groups: Vec<(i64, Vec<usize>)> = Vec::new();
    for &i in &rows {
        match groups.last_mut() {
            Some((c, g)) if *c == chain[i] => g.push(i),
            _ => groups.push((chain[i], vec![i])),
        }
    }
    let n0 = groups[0].1.len();
    if let Some((c, g)) = groups.iter().find(|(_, g)| g.len() != n0) {
        return Err(Error::InvalidData(format!(
            "chain {c} has {} draws but chain {} has {n0}; all chains need the same number of draws",
            g.len(),
            groups[0].0
        )));
    }
    let mut out = Vec::new();
    for col in draws.columns() {
        let name = col.name().as_str();
        if [CHAIN, DRAW, WARMUP].contains(&name) || !col.dtype().is_primitive_numeric() {
            continue;
        }
        let values = col.cast(&DataType::Float64)?;
        let values: Vec<Option<f64>> = values.f64()?.iter().collect();
        let mut chains = Vec::with_capacity(groups.len());
        for (c, g) in &groups {
            let mut v = Vec::with_capacity(g.len());
            for &i in g {
                match values[i] {
                    Some(x) if x.is_finite() => v.push(x),
                    other => {
                        return Err(Error::InvalidData(format!(
                            "column `{name}`, chain {c}, draw {} is {}; draws must be finite numbers",
                            draw[i],
                            other.map_or("null".to_string(), |x| x.to_string())
                        )));
                    }
                }
            }
            chains.push(v);
        }
        out.push(ParamDraws {
            name: name.to_string(),
            chains,
        });
    }
    if out.is_empty() {
        return Err(Error::InvalidData(
            "the draws table has no numeric parameter column besides `chain` and `draw`".into(),
        ));
    }
    Ok(out)
}

/// Per-parameter summary of a wide draws frame: columns `param`, `mean`, `sd`, `q05`, `q95`,
/// `ess_bulk`, `ess_tail`, `rhat`, `mcse_mean` (ArviZ names and definitions; null where
/// undefined, e.g. `rhat` of a single chain). Rows follow the column order of `draws`.
///
/// ```
/// use dp_mcmc::frame::diagnostics::summary;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let x: Vec<f64> = (0..20).map(|i| ((i * 7) % 20) as f64).collect();
/// let df = df!(
///     "chain" => vec![0u32; 10].into_iter().chain(vec![1u32; 10]).collect::<Vec<_>>(),
///     "draw" => (0..20u32).map(|i| i % 10).collect::<Vec<_>>(),
///     "theta_0" => x,
/// )?;
/// let s = summary(&df)?;
/// assert_eq!(s.height(), 1);
/// assert_eq!(s.column("mean")?.f64()?.get(0), Some(9.5));
/// assert!(summary(&df.drop("draw")?).is_err()); // no `draw` column
/// # Ok(()) }
/// ```
pub fn summary(draws: &DataFrame) -> Result<DataFrame> {
    let params = param_draws(draws)?;
    let rows: Vec<(String, ParamSummary)> = params
        .iter()
        .map(|p| Ok((p.name.clone(), summarize(&p.as_slices())?)))
        .collect::<Result<_>>()?;
    summary_frame(&rows)
}

/// A summary table from already computed rows (the layout of [`summary`]).
///
/// ```
/// use dp_mcmc::diagnostics::summarize;
/// use dp_mcmc::frame::diagnostics::summary_frame;
/// # fn main() -> dp_mcmc::Result<()> {
/// let row = summarize(&[&[0.1, 0.4, -0.2, 0.3]])?;
/// let df = summary_frame(&[("a".to_string(), row)])?;
/// assert_eq!(df.width(), 9);
/// assert!(summarize(&[]).is_err());
/// # Ok(()) }
/// ```
pub fn summary_frame(rows: &[(String, ParamSummary)]) -> Result<DataFrame> {
    let col = |name: &str, f: &dyn Fn(&ParamSummary) -> Option<f64>| {
        Column::new(
            name.into(),
            rows.iter().map(|(_, s)| f(s)).collect::<Vec<_>>(),
        )
    };
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    Ok(DataFrame::new(
        rows.len(),
        vec![
            Column::new("param".into(), names),
            col("mean", &|s| Some(s.mean)),
            col("sd", &|s| s.sd),
            col("q05", &|s| Some(s.q05)),
            col("q95", &|s| Some(s.q95)),
            col("ess_bulk", &|s| s.ess_bulk),
            col("ess_tail", &|s| s.ess_tail),
            col("rhat", &|s| s.rhat),
            col("mcse_mean", &|s| s.mcse_mean),
        ],
    )?)
}

/// A sample for MMD and the moment errors: every numeric column of `df` is a coordinate
/// (non-numeric columns are ignored). Returns the row-major values and the dimension.
///
/// ```
/// use dp_mcmc::frame::diagnostics::sample_from_frame;
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("x1" => [1.0, 2.0], "x2" => [3.0, 4.0])?;
/// assert_eq!(sample_from_frame(&df)?, (vec![1.0, 3.0, 2.0, 4.0], 2));
/// let text = df!("label" => ["a", "b"])?;
/// assert!(sample_from_frame(&text).is_err()); // no numeric column
/// # Ok(()) }
/// ```
pub fn sample_from_frame(df: &DataFrame) -> Result<(Vec<f64>, usize)> {
    let cols: Vec<(String, Vec<Option<f64>>)> = df
        .columns()
        .iter()
        .filter(|c| c.dtype().is_primitive_numeric())
        .map(|c| {
            let v = c.cast(&DataType::Float64)?;
            Ok((c.name().to_string(), v.f64()?.iter().collect()))
        })
        .collect::<Result<_>>()?;
    if cols.is_empty() {
        return Err(Error::InvalidData(
            "the sample has no numeric column".into(),
        ));
    }
    let (n, dim) = (df.height(), cols.len());
    let mut out = Vec::with_capacity(n * dim);
    for i in 0..n {
        for (name, v) in &cols {
            match v[i] {
                Some(x) if x.is_finite() => out.push(x),
                other => {
                    return Err(Error::InvalidData(format!(
                        "column `{name}`, row {i} is {}; samples must be finite numbers",
                        other.map_or("null".to_string(), |x| x.to_string())
                    )));
                }
            }
        }
    }
    Ok((out, dim))
}

/// Read a sample CSV (header row, one numeric column per coordinate) for MMD.
///
/// ```
/// use dp_mcmc::frame::diagnostics::read_sample_csv;
/// assert!(read_sample_csv("no/such/sample.csv").is_err());
/// ```
pub fn read_sample_csv(path: impl AsRef<Path>) -> Result<(Vec<f64>, usize)> {
    sample_from_frame(&read_csv(path)?)
}
