//! Result rows of the experiment grids: one CSV line per finished task, appended as each task
//! finishes, read back to resume a grid (plain CSV, no polars: see `crate::frame::experiments`).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::error::{Error, Result};

/// What one task (one chain of one configuration, or one baseline draw) records: the per-chain
/// metrics of THESIS-NOTES §2 plus the wall time and the seed. `None` is an empty CSV field (the
/// thesis' NaN: e.g. MMD with `k ≤ 1`, or on the circle). Clip fractions and
/// `decisions_changed` are non-private diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResultRow {
    /// Unique task id (the resume key), e.g. `comparison/easy-2d/dp-hmc/eps=1/chain=3`.
    pub task: String,
    /// Grid: `comparison`, `clipping` or `baseline`.
    pub grid: String,
    /// Experiment key (`easy-2d`, …).
    pub experiment: String,
    /// Algorithm key (`dp-hmc`, …; `exact` for the baseline draws).
    pub algorithm: String,
    /// Privacy budget ε (`None` for the non-private runs).
    pub epsilon: Option<f64>,
    /// Clip bound of the clipping study.
    pub clip_bound: Option<f64>,
    /// Clip distance of the clipping study (`l2` or `abs-sum`).
    pub clip_distance: Option<String>,
    /// Parameter dimension d.
    pub dim: usize,
    /// Data rows n.
    pub n: usize,
    /// Chain (or baseline seed) index.
    pub chain: usize,
    /// The task's seed (derived from the grid seed and the task id).
    pub seed: u64,
    /// Iterations run (baseline: draws).
    pub iterations: usize,
    /// Acceptance rate.
    pub acceptance: Option<f64>,
    /// Fraction of clipped log-likelihood ratios.
    pub clip_fraction: Option<f64>,
    /// Fraction of clipped per-row gradients (DP HMC).
    pub grad_clip_fraction: Option<f64>,
    /// Accept/reject decisions clipping changed (clipping study).
    pub decisions_changed: Option<usize>,
    /// MMD vs the 1000-draw reference on the kept half.
    pub mmd: Option<f64>,
    /// Mean error of the kept half (circle: vs the true mean (0, 0)).
    pub mean_error: Option<f64>,
    /// Covariance error (Frobenius) of the kept half.
    pub cov_error: Option<f64>,
    /// Wall time of the task in seconds.
    pub wall_seconds: f64,
}

/// The CSV header, in [`ResultRow`] field order.
pub const RESULT_COLUMNS: [&str; 20] = [
    "task",
    "grid",
    "experiment",
    "algorithm",
    "epsilon",
    "clip_bound",
    "clip_distance",
    "dim",
    "n",
    "chain",
    "seed",
    "iterations",
    "acceptance",
    "clip_fraction",
    "grad_clip_fraction",
    "decisions_changed",
    "mmd",
    "mean_error",
    "cov_error",
    "wall_seconds",
];

/// A float as CSV: shortest round-trip form; `None` and non-finite values are empty.
fn opt_f64(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x}"),
        _ => String::new(),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

/// Refuses text that would break the unquoted CSV (ids and keys never contain these).
fn plain(field: &str) -> Result<&str> {
    if field.contains([',', '\n', '\r', '"']) {
        return Err(Error::InvalidData(format!(
            "the result field `{field}` contains a comma, quote or newline"
        )));
    }
    Ok(field)
}

impl ResultRow {
    /// One CSV line (no newline), fields in [`RESULT_COLUMNS`] order.
    ///
    /// ```
    /// use dp_mcmc::experiments::ResultRow;
    /// let row = ResultRow::empty("t/1", "baseline", "easy-2d", "exact");
    /// let line = row.to_csv_line().unwrap();
    /// assert_eq!(ResultRow::from_csv_line(&line).unwrap(), row);
    /// assert!(ResultRow::from_csv_line("a,b").is_err()); // too few fields
    /// ```
    pub fn to_csv_line(&self) -> Result<String> {
        let fields = [
            plain(&self.task)?.to_string(),
            plain(&self.grid)?.to_string(),
            plain(&self.experiment)?.to_string(),
            plain(&self.algorithm)?.to_string(),
            opt_f64(self.epsilon),
            opt_f64(self.clip_bound),
            match &self.clip_distance {
                Some(d) => plain(d)?.to_string(),
                None => String::new(),
            },
            self.dim.to_string(),
            self.n.to_string(),
            self.chain.to_string(),
            self.seed.to_string(),
            self.iterations.to_string(),
            opt_f64(self.acceptance),
            opt_f64(self.clip_fraction),
            opt_f64(self.grad_clip_fraction),
            opt(self.decisions_changed),
            opt_f64(self.mmd),
            opt_f64(self.mean_error),
            opt_f64(self.cov_error),
            opt_f64(Some(self.wall_seconds)),
        ];
        Ok(fields.join(","))
    }

    /// Parses a line written by [`to_csv_line`](Self::to_csv_line).
    pub fn from_csv_line(line: &str) -> Result<ResultRow> {
        let f: Vec<&str> = line.trim_end_matches(['\r', '\n']).split(',').collect();
        if f.len() != RESULT_COLUMNS.len() {
            return Err(Error::InvalidData(format!(
                "a result line has {} fields, expected {}: `{line}`",
                f.len(),
                RESULT_COLUMNS.len()
            )));
        }
        let bad = |name: &str, v: &str| {
            Error::InvalidData(format!("result column `{name}`: cannot parse `{v}`"))
        };
        let of = |i: usize| -> Result<Option<f64>> {
            if f[i].is_empty() {
                Ok(None)
            } else {
                f[i].parse::<f64>()
                    .map(Some)
                    .map_err(|_| bad(RESULT_COLUMNS[i], f[i]))
            }
        };
        let us = |i: usize| -> Result<usize> {
            f[i].parse::<usize>()
                .map_err(|_| bad(RESULT_COLUMNS[i], f[i]))
        };
        Ok(ResultRow {
            task: f[0].to_string(),
            grid: f[1].to_string(),
            experiment: f[2].to_string(),
            algorithm: f[3].to_string(),
            epsilon: of(4)?,
            clip_bound: of(5)?,
            clip_distance: (!f[6].is_empty()).then(|| f[6].to_string()),
            dim: us(7)?,
            n: us(8)?,
            chain: us(9)?,
            seed: f[10].parse().map_err(|_| bad("seed", f[10]))?,
            iterations: us(11)?,
            acceptance: of(12)?,
            clip_fraction: of(13)?,
            grad_clip_fraction: of(14)?,
            decisions_changed: if f[15].is_empty() {
                None
            } else {
                Some(us(15)?)
            },
            mmd: of(16)?,
            mean_error: of(17)?,
            cov_error: of(18)?,
            wall_seconds: of(19)?.unwrap_or(f64::NAN),
        })
    }

    /// A row with only the identifying fields set (everything else empty / zero).
    pub fn empty(task: &str, grid: &str, experiment: &str, algorithm: &str) -> ResultRow {
        ResultRow {
            task: task.into(),
            grid: grid.into(),
            experiment: experiment.into(),
            algorithm: algorithm.into(),
            epsilon: None,
            clip_bound: None,
            clip_distance: None,
            dim: 0,
            n: 0,
            chain: 0,
            seed: 0,
            iterations: 0,
            acceptance: None,
            clip_fraction: None,
            grad_clip_fraction: None,
            decisions_changed: None,
            mmd: None,
            mean_error: None,
            cov_error: None,
            wall_seconds: 0.0,
        }
    }
}

/// Reads every complete row of a results file (a missing file has none). A last line cut
/// off by an interrupted run is ignored (its task reruns); any other bad line is an error.
///
/// ```
/// use dp_mcmc::experiments::read_results;
/// assert!(read_results("/nonexistent/results.csv").unwrap().is_empty());
/// ```
pub fn read_results(path: impl AsRef<Path>) -> Result<Vec<ResultRow>> {
    let path = path.as_ref();
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path)?;
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut rows = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            if *line != RESULT_COLUMNS.join(",") {
                return Err(Error::InvalidData(format!(
                    "{} is not a dp-mcmc results file (unexpected header); move it away or pick another --out",
                    path.display()
                )));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        match ResultRow::from_csv_line(line) {
            Ok(r) => rows.push(r),
            Err(_) if i + 1 == lines.len() && !complete => {}
            Err(e) => return Err(e),
        }
    }
    Ok(rows)
}

/// Task ids already in a results file.
pub fn finished_tasks(path: impl AsRef<Path>) -> Result<HashSet<String>> {
    Ok(read_results(path)?.into_iter().map(|r| r.task).collect())
}

/// An append-only results file shared by the worker threads: each [`append`](Self::append)
/// writes one whole line and flushes, so an interrupted run loses at most the running tasks.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    file: Mutex<File>,
}

impl ResultsFile {
    /// Opens (creating folders, the file and its header if needed) `path` for appending.
    /// A last line cut off by an interrupted run is removed first.
    ///
    /// ```
    /// use dp_mcmc::experiments::ResultsFile;
    /// assert!(ResultsFile::open("/proc/no/such/dir/results.csv").is_err());
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<ResultsFile> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        if text.is_empty() {
            writeln!(file, "{}", RESULT_COLUMNS.join(","))?;
        } else if !text.ends_with('\n') {
            // Drop the partial last line (`append` mode always writes at the end).
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64)?;
            file.seek(SeekFrom::End(0))?;
            if keep == 0 {
                writeln!(file, "{}", RESULT_COLUMNS.join(","))?;
            }
        }
        file.flush()?;
        Ok(ResultsFile {
            path,
            file: Mutex::new(file),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one row and flushes.
    pub fn append(&self, row: &ResultRow) -> Result<()> {
        let line = row.to_csv_line()?;
        let mut f = self
            .file
            .lock()
            .map_err(|_| Error::InvalidData("a worker panicked while writing results".into()))?;
        writeln!(f, "{line}")?;
        f.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(task: &str) -> ResultRow {
        let mut r = ResultRow::empty(task, "comparison", "easy-2d", "dp-hmc");
        r.epsilon = Some(0.75);
        r.mmd = Some(0.1234567890123);
        r.decisions_changed = Some(3);
        r.wall_seconds = 1.5;
        r
    }

    #[test]
    fn rows_round_trip_exactly() {
        let r = row("a");
        assert_eq!(
            ResultRow::from_csv_line(&r.to_csv_line().unwrap()).unwrap(),
            r
        );
        let mut bad = row("a,b");
        assert!(bad.to_csv_line().is_err());
        bad.task = "ok".into();
        bad.mmd = Some(f64::NAN);
        let back = ResultRow::from_csv_line(&bad.to_csv_line().unwrap()).unwrap();
        assert_eq!(back.mmd, None, "NaN is written as an empty field");
    }

    #[test]
    fn file_appends_and_drops_a_cut_line() {
        let dir = std::env::temp_dir().join(format!("dp-mcmc-results-{}", std::process::id()));
        let path = dir.join("r.csv");
        let _ = std::fs::remove_file(&path);
        {
            let f = ResultsFile::open(&path).unwrap();
            f.append(&row("one")).unwrap();
            f.append(&row("two")).unwrap();
        }
        // Simulate an interrupted write.
        let mut raw = OpenOptions::new().append(true).open(&path).unwrap();
        write!(raw, "three,comparison,easy").unwrap();
        drop(raw);
        assert_eq!(read_results(&path).unwrap().len(), 2);
        {
            let f = ResultsFile::open(&path).unwrap();
            f.append(&row("three")).unwrap();
        }
        let done = finished_tasks(&path).unwrap();
        assert_eq!(done.len(), 3);
        assert!(done.contains("three"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
