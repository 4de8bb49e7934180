//! Sharded grids: a deterministic 1/N of a grid's tasks per process (or cluster job), and the
//! merge of the shards' result tables into the table an unsharded run writes.
//!
//! Shard `I/N` (1-based) takes the tasks whose position in the grid's task list is
//! `≡ I − 1 (mod N)` (round robin). The grids list their tasks chain-major, so every shard gets
//! about 1/N of every configuration, the cheap and the expensive ones alike, rather than a
//! contiguous block of whole configurations. A task's id and seed do not depend on the shard
//! ([`Task::seed`](super::Task::seed) hashes the id), so a shard's rows are bit for bit the rows
//! an unsharded run writes for those tasks (except `wall_seconds`, a measured time).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Serialize;

use super::grid::Task;
use super::results::{RESULT_COLUMNS, ResultRow};
use crate::error::{Error, Result};

/// One of `count` deterministic parts of a grid (`index` is 1-based): see the module docs.
///
/// ```
/// use dp_mcmc::experiments::Shard;
/// # fn main() -> dp_mcmc::Result<()> {
/// let s: Shard = "2/3".parse()?;
/// assert_eq!((s.index(), s.count()), (2, 3));
/// assert_eq!(s.select(&[10, 11, 12, 13, 14]), vec![11, 14]); // positions 1 and 4
/// assert!("0/3".parse::<Shard>().is_err()); // 1-based
/// assert!("4/3".parse::<Shard>().is_err());
/// assert!("1-3".parse::<Shard>().is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// Shard `index` of `count` (`1 ≤ index ≤ count`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `shard` if `count` is 0 or `index` is outside
    /// `1..=count`.
    pub fn new(index: usize, count: usize) -> Result<Shard> {
        if count == 0 {
            return Err(Error::invalid(
                "shard",
                format!("{index}/{count}"),
                "the number of shards N in I/N must be at least 1",
            ));
        }
        if index == 0 || index > count {
            return Err(Error::invalid(
                "shard",
                format!("{index}/{count}"),
                format!("the shard index I in I/N is 1-based: use 1 to {count}"),
            ));
        }
        Ok(Shard { index, count })
    }

    /// The whole grid as one shard (`1/1`).
    pub fn all() -> Shard {
        Shard { index: 1, count: 1 }
    }

    /// The 1-based index I.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of shards N.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the task at 0-based `position` in the grid's task list belongs to this shard.
    pub fn contains(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// This shard's items of `tasks`, in their order.
    pub fn select<T: Clone>(&self, tasks: &[T]) -> Vec<T> {
        tasks
            .iter()
            .enumerate()
            .filter(|(i, _)| self.contains(*i))
            .map(|(_, t)| t.clone())
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = Error;

    /// Parses `I/N`, e.g. `2/8`.
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            Error::invalid(
                "shard",
                s,
                "write the shard as I/N with whole numbers 1 <= I <= N, e.g. 2/8",
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let i: usize = i.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        Shard::new(i, n)
    }
}

/// What [`merge_results`] wrote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MergeReport {
    /// The merged table.
    pub file: String,
    /// Rows written (= tasks of the grid).
    pub rows: usize,
    /// Rows taken from each input table, in the order of the inputs.
    pub rows_per_input: Vec<usize>,
}

/// The complete lines of a results table (header checked), each with its task id. A last
/// line cut off by an interrupted run is ignored, as [`read_results`](super::read_results)
/// does.
fn raw_rows(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::InvalidData(format!(
            "cannot read the shard table {}: {e}; did that shard run?",
            path.display()
        ))
    })?;
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    if lines.first() != Some(&RESULT_COLUMNS.join(",").as_str()) {
        return Err(Error::InvalidData(format!(
            "{} is not a dp-mcmc results file (unexpected header)",
            path.display()
        )));
    }
    let mut rows = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        match ResultRow::from_csv_line(line) {
            Ok(r) => rows.push((r.task, (*line).to_string())),
            Err(_) if i + 1 == lines.len() && !complete => {}
            Err(e) => return Err(e),
        }
    }
    Ok(rows)
}

/// Merges the result tables `inputs` (e.g. one per shard) of the grid `tasks` into `out`: every
/// task's line exactly as its input holds it, in the order of `tasks` (the order a one-thread
/// unsharded run appends them in; with more threads an unsharded run appends in order of
/// completion: same rows, other order). `out` is written whole (to a temporary file renamed
/// over it), replacing any previous table.
///
/// ```
/// use dp_mcmc::experiments::{BaselineSpec, GridRunner, Shard, merge_results, read_results};
/// use dp_mcmc::models::Experiment;
/// # fn main() -> dp_mcmc::Result<()> {
/// let tasks = BaselineSpec { experiments: vec![Experiment::EasyBanana2d], seeds: 3 }.tasks();
/// let dir = std::env::temp_dir().join(format!("dp-mcmc-merge-doc-{}", std::process::id()));
/// let run = GridRunner { progress: false, log_every: None, ..GridRunner::default() };
/// let mut parts = Vec::new();
/// for i in 1..=2 {
///     let shard = Shard::new(i, 2)?;
///     let path = dir.join(format!("shard{i}.csv"));
///     run.run(&shard.select(&tasks), &path)?;
///     parts.push(path);
/// }
/// let report = merge_results(&tasks, &parts, dir.join("merged.csv"))?;
/// assert_eq!((report.rows, report.rows_per_input.clone()), (3, vec![2, 1]));
/// let merged = read_results(dir.join("merged.csv"))?;
/// assert_eq!(merged[1].task, tasks[1].id()); // task order
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::InvalidData`] if an input is missing or not a results table, holds a task that is
/// not in `tasks`, a task is in two inputs (the same shard given twice), or a task is in none
/// (a shard has not finished: rerunning it resumes); I/O errors writing `out`.
pub fn merge_results(
    tasks: &[Task],
    inputs: &[impl AsRef<Path>],
    out: impl AsRef<Path>,
) -> Result<MergeReport> {
    let out = out.as_ref();
    let position: HashMap<String, usize> =
        tasks.iter().enumerate().map(|(i, t)| (t.id(), i)).collect();
    let mut lines: Vec<Option<(String, PathBuf)>> = vec![None; tasks.len()];
    let mut rows_per_input = Vec::with_capacity(inputs.len());
    for input in inputs {
        let input = input.as_ref();
        let rows = raw_rows(input)?;
        rows_per_input.push(rows.len());
        for (task, line) in rows {
            let &i = position.get(&task).ok_or_else(|| {
                Error::InvalidData(format!(
                    "{} holds the task `{task}`, which is not in this grid (a shard of another \
                     grid, --seed or --quick setting?)",
                    input.display()
                ))
            })?;
            if let Some((_, first)) = &lines[i] {
                return Err(Error::InvalidData(format!(
                    "the task `{task}` is in both {} and {}: give each shard's table once",
                    first.display(),
                    input.display()
                )));
            }
            lines[i] = Some((line, input.to_path_buf()));
        }
    }
    let missing: Vec<&Task> = tasks
        .iter()
        .zip(&lines)
        .filter(|(_, l)| l.is_none())
        .map(|(t, _)| t)
        .collect();
    if let Some(first) = missing.first() {
        return Err(Error::InvalidData(format!(
            "{} of the {} tasks of the grid are in none of the {} tables merged into {} (the \
             first: `{}`): finish every shard first (rerunning a shard's command resumes it)",
            missing.len(),
            tasks.len(),
            inputs.len(),
            out.display(),
            first.id()
        )));
    }
    let mut text = RESULT_COLUMNS.join(",");
    text.push('\n');
    for (line, _) in lines.iter().flatten() {
        text.push_str(line);
        text.push('\n');
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = out.with_extension("csv.merging");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, out)?;
    Ok(MergeReport {
        file: out.display().to_string(),
        rows: tasks.len(),
        rows_per_input,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_positions() {
        for n in 1..=5 {
            let shards: Vec<Shard> = (1..=n).map(|i| Shard::new(i, n).unwrap()).collect();
            for pos in 0..23 {
                assert_eq!(shards.iter().filter(|s| s.contains(pos)).count(), 1);
            }
        }
        let all: Vec<usize> = (0..7).collect();
        assert_eq!(Shard::all().select(&all), all);
        assert_eq!(Shard::new(3, 3).unwrap().to_string(), "3/3");
        for bad in [
            "", "1", "1/0", "0/1", "2/1", "-1/2", "a/2", "1/2/3", "1.5/2",
        ] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(
                matches!(e, Error::InvalidParameter { name: "shard", .. }),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            " 2 / 4 ".parse::<Shard>().unwrap(),
            Shard::new(2, 4).unwrap()
        );
    }
}
