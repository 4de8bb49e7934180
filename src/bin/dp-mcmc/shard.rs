//! `reproduce --shard I/N` and `reproduce merge`: the shard manifest (`shard.json`, written
//! beside a shard's tables), the run records (`<grid>.runs.json`, beside every grid table: the
//! wall time of the runs that computed its rows), and the merge of shard folders.

use std::path::{Path, PathBuf};

use dp_mcmc::experiments::{GridReport, Shard, merge_results};
use dp_mcmc::{Error, Result};
use serde_json::{Value, json};

/// File name of a shard's manifest, in the folder of its tables.
pub const MANIFEST: &str = "shard.json";

/// Where a grid table's run records live: `<table stem>.runs.json` beside it.
pub fn runs_path(table: &Path) -> PathBuf {
    table.with_extension("runs.json")
}

/// The run records of a table (`[]` if it has none).
pub fn read_runs(table: &Path) -> Result<Vec<Value>> {
    let path = runs_path(table);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        Error::InvalidData(format!(
            "{} is not a run record ({e}); delete it (it only records times)",
            path.display()
        ))
    })?;
    Ok(v.get("runs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Replaces the run records of `table` with `runs`.
pub fn write_runs(table: &Path, grid: &str, runs: &[Value]) -> Result<()> {
    let doc = json!({
        "grid": grid,
        "note": "wall time of each run that computed rows of this table (the rows' own \
                 wall_seconds are task times); written by dp-mcmc reproduce",
        "runs": runs,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| Error::InvalidData(e.to_string()))?;
    std::fs::write(runs_path(table), text + "\n")?;
    Ok(())
}

/// Appends this run to the table's records if it computed any row.
pub fn record_run(
    table: &Path,
    grid: &str,
    report: &GridReport,
    threads: Option<usize>,
    shard: Option<Shard>,
) -> Result<()> {
    if report.completed == 0 {
        return Ok(());
    }
    let mut runs = read_runs(table)?;
    let finished = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    runs.push(json!({
        "tasks_run": report.completed,
        "wall_seconds": report.wall_seconds,
        "task_seconds": report.task_seconds,
        "threads": threads.unwrap_or_else(rayon::current_num_threads),
        "shard": shard.map(|s| s.to_string()),
        "finished_unix": finished,
    }));
    write_runs(table, grid, &runs)
}

/// One line on the recorded recomputation time of a table: the sum of its runs' wall times.
pub fn recorded_wall(table: &Path) -> Result<Option<String>> {
    let runs = read_runs(table)?;
    if runs.is_empty() {
        return Ok(None);
    }
    let wall: f64 = runs
        .iter()
        .filter_map(|r| r.get("wall_seconds").and_then(Value::as_f64))
        .sum();
    let sharded = runs
        .iter()
        .any(|r| r.get("shard").is_some_and(|s| !s.is_null()));
    Ok(Some(format!(
        "{wall:.0} s wall over {} run(s){} (recorded in {})",
        runs.len(),
        if sharded {
            ", shards that may have run at the same time"
        } else {
            ""
        },
        runs_path(table).display()
    )))
}

/// What a shard run writes beside its tables.
pub fn write_manifest(dir: &Path, settings: &Value, shard: Shard, grids: &Value) -> Result<()> {
    let mut doc = settings.clone();
    if let Value::Object(m) = &mut doc {
        m.insert("shard".into(), json!(shard.to_string()));
        m.insert("grids".into(), grids.clone());
    }
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(&doc).map_err(|e| Error::InvalidData(e.to_string()))?;
    std::fs::write(dir.join(MANIFEST), text + "\n")?;
    Ok(())
}

/// A shard folder read back: where its tables are, its manifest's settings, and its shard.
pub struct ShardDir {
    /// Folder of the shard's tables (the shard run's `--out`, or its `quick/` subfolder).
    pub tables: PathBuf,
    /// `part`, `quick`, `seed`, `thesis_compatible` of the shard run.
    pub settings: Value,
    /// Which shard it is.
    pub shard: Shard,
}

/// Reads the manifest of the shard run whose `--out` was `dir` (its tables are in `dir`, or
/// in `dir/quick` for a `--quick` run; `quick` looks only there).
pub fn read_shard_dir(dir: &Path, quick: bool) -> Result<ShardDir> {
    let candidates = if quick {
        vec![dir.join("quick")]
    } else {
        vec![dir.to_path_buf(), dir.join("quick")]
    };
    let Some(tables) = candidates.into_iter().find(|d| d.join(MANIFEST).exists()) else {
        return Err(Error::InvalidData(format!(
            "no {MANIFEST} in {} (nor in its quick/ subfolder): pass the --out folders of \
             `dp-mcmc reproduce <part> --shard I/N` runs",
            dir.display()
        )));
    };
    let path = tables.join(MANIFEST);
    let text = std::fs::read_to_string(&path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        Error::InvalidData(format!("{}: not a shard manifest ({e})", path.display()))
    })?;
    let shard: Shard = v
        .get("shard")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::InvalidData(format!("{}: no `shard` entry", path.display())))?
        .parse()?;
    let settings = json!({
        "part": v.get("part").cloned().unwrap_or(Value::Null),
        "quick": v.get("quick").cloned().unwrap_or(Value::Null),
        "seed": v.get("seed").cloned().unwrap_or(Value::Null),
        "thesis_compatible": v.get("thesis_compatible").cloned().unwrap_or(Value::Null),
    });
    Ok(ShardDir {
        tables,
        settings,
        shard,
    })
}

/// Checks that `dirs` are the shards 1..N of one run (same settings, each shard once).
pub fn check_complete_set(dirs: &[ShardDir]) -> Result<()> {
    let Some(first) = dirs.first() else {
        return Err(Error::invalid(
            "SHARD_DIRS",
            "(none)",
            "give the --out folders of every shard run: reproduce merge --out DIR SHARD_DIR...",
        ));
    };
    let n = first.shard.count();
    for d in dirs {
        if d.settings != first.settings || d.shard.count() != n {
            return Err(Error::InvalidData(format!(
                "the shards in {} ({}, {}) and {} ({}, {}) come from different runs: merge the \
                 shards of one run (same part, --quick, --seed, --thesis-compatible and N)",
                first.tables.display(),
                first.shard,
                first.settings,
                d.tables.display(),
                d.shard,
                d.settings
            )));
        }
    }
    for i in 1..=n {
        let with_i: Vec<&ShardDir> = dirs.iter().filter(|d| d.shard.index() == i).collect();
        match with_i.len() {
            1 => {}
            0 => {
                return Err(Error::InvalidData(format!(
                    "shard {i}/{n} is missing from the folders given to merge: run it and \
                     pass its --out folder too"
                )));
            }
            _ => {
                return Err(Error::InvalidData(format!(
                    "shard {i}/{n} is given twice ({} and {})",
                    with_i[0].tables.display(),
                    with_i[1].tables.display()
                )));
            }
        }
    }
    Ok(())
}

/// Merges the grid `name` (tasks `tasks`) of the shard folders into `out`, with their run
/// records; the JSON summary of the merge.
pub fn merge_grid(
    name: &str,
    tasks: &[dp_mcmc::experiments::Task],
    dirs: &[ShardDir],
    out: &Path,
) -> Result<Value> {
    let inputs: Vec<PathBuf> = dirs
        .iter()
        .map(|d| d.tables.join(format!("{name}.csv")))
        .collect();
    let report = merge_results(tasks, &inputs, out)?;
    let mut runs = Vec::new();
    for input in &inputs {
        runs.extend(read_runs(input)?);
    }
    write_runs(out, name, &runs)?;
    Ok(json!(report))
}
