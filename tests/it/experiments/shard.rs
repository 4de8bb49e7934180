//! Sharded grids: `reproduce --shard I/N` runs a deterministic 1/N of the tasks and
//! `reproduce merge` combines the shards into the table an unsharded run writes, row for row
//! (the `wall_seconds` column, a measured time, excluded), in task order.
//!
//! The quick grid takes minutes in the dev profile, so the command line is tested here on the
//! `baseline` part (70 tasks, the cheapest grid of `reproduce`) and the library's shard and
//! merge on a small comparison grid. `scripts/workflow-check.sh` (run by `.ci/run`) runs the
//! whole quick grid sharded through the Snakemake workflow with the release binary and checks
//! every table against an unsharded run.

use std::path::{Path, PathBuf};

use dp_mcmc::experiments::{
    BaselineSpec, GridRunner, RESULT_COLUMNS, Shard, Task, merge_results, read_results,
};
use serde_json::Value;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dp-mcmc-shard-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The lines of a results table without the `wall_seconds` column (the last one: a measured
/// time, the only column that legitimately differs between two runs of a task).
fn without_wall_time(path: &Path) -> Vec<String> {
    assert_eq!(RESULT_COLUMNS.last(), Some(&"wall_seconds"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string())
        .collect()
}

fn cli(args: &[&str]) -> Value {
    let (code, out, err) = crate::common::run_cli(args);
    assert_eq!(code, 0, "dp-mcmc {}: {err}", args.join(" "));
    serde_json::from_str(out.trim()).unwrap()
}

#[test]
fn three_shards_merged_equal_the_unsharded_table() {
    let d = dir("lib");
    let tasks = crate::common::cheap_comparison(3);
    let runner = GridRunner {
        seed: 5,
        threads: Some(1), // one thread appends in task order: the merge's order
        progress: false,
        log_every: None,
        ..GridRunner::default()
    };
    let whole = d.join("whole.csv");
    assert_eq!(runner.run(&tasks, &whole).unwrap().completed, tasks.len());
    let mut parts = Vec::new();
    for i in 1..=3 {
        let shard = Shard::new(i, 3).unwrap();
        let path = d.join(format!("shard{i}.csv"));
        let r = GridRunner {
            threads: Some(2),
            ..runner.clone()
        }
        .run(&shard.select(&tasks), &path)
        .unwrap();
        assert_eq!(r.completed, 4, "12 tasks round robin over 3 shards");
        parts.push(path);
    }
    // Shard 2 holds the tasks at positions 1, 4, 7, 10.
    let ids: Vec<String> = read_results(&parts[1])
        .unwrap()
        .into_iter()
        .map(|r| r.task)
        .collect();
    for p in [1, 4, 7, 10] {
        assert!(ids.contains(&tasks[p].id()), "{p}");
    }
    let merged = d.join("merged.csv");
    // The inputs in any order give the same table.
    let report = merge_results(&tasks, &[&parts[2], &parts[0], &parts[1]], &merged).unwrap();
    assert_eq!(report.rows, 12);
    assert_eq!(without_wall_time(&merged), without_wall_time(&whole));

    // A missing shard, a shard given twice and a shard of another grid are errors.
    let e = merge_results(&tasks, &parts[..2], &merged).unwrap_err();
    assert!(e.to_string().contains("4 of the 12 tasks"), "{e}");
    let e = merge_results(
        &tasks,
        &[&parts[0], &parts[1], &parts[2], &parts[0]],
        &merged,
    )
    .unwrap_err();
    assert!(e.to_string().contains("in both"), "{e}");
    let e = merge_results(&tasks[..6], &parts, &merged).unwrap_err();
    assert!(e.to_string().contains("not in this grid"), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn cli_shards_and_merge_equal_the_unsharded_run() {
    let d = dir("cli");
    let out = |name: &str| d.join(name).display().to_string();
    // Run shard 1 with --quick and shard 2 twice (the second run finds it finished).
    let mut shard_dirs = Vec::new();
    for i in 1..=2 {
        let s = out(&format!("s{i}"));
        let shard = format!("{i}/2");
        let v = cli(&[
            "reproduce",
            "baseline",
            "--quick",
            "--shard",
            &shard,
            "--out",
            &s,
        ]);
        assert_eq!(v["shard"], shard.as_str());
        assert_eq!(v["parts"]["baseline"]["completed"], 35);
        shard_dirs.push(s);
    }
    let (code, _, err) = crate::common::run_cli(&[
        "reproduce",
        "baseline",
        "--quick",
        "--shard",
        "2/2",
        "--out",
        &shard_dirs[1],
    ]);
    assert_eq!(code, 0);
    assert!(
        err.contains("35 of 35 tasks of shard 2/2 were already finished")
            && err.contains("wall over 1 run(s)")
            && err.contains("--fresh"),
        "{err}"
    );
    // Each shard writes its own folder: tables, run records, manifest; no figures.
    let s1 = d.join("s1/quick");
    assert!(s1.join("baseline.csv").exists() && s1.join("shard.json").exists());
    assert!(s1.join("baseline.runs.json").exists() && !s1.join("figures").exists());

    // Merge refuses an incomplete set of shards.
    let (code, _, err) =
        crate::common::run_cli(&["reproduce", "merge", "--out", &out("m"), &shard_dirs[0]]);
    assert_eq!(code, 2);
    assert!(err.contains("shard 2/2 is missing"), "{err}");

    let v = cli(&[
        "reproduce",
        "merge",
        "--out",
        &out("m"),
        &shard_dirs[1],
        &shard_dirs[0],
    ]);
    assert_eq!(v["part"], "baseline");
    assert_eq!(v["quick"], true);
    assert_eq!(v["parts"]["baseline"]["completed"], 0);
    assert_eq!(
        v["merged"]["grids"]["baseline"]["rows_per_input"],
        serde_json::json!([35, 35])
    );
    let merged = d.join("m/quick/baseline.csv");
    let records: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("m/quick/baseline.runs.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        records["runs"].as_array().unwrap().len(),
        2,
        "one run per shard"
    );

    // The merged table is the unsharded one row for row, in task order. The unsharded run is
    // the committed full-grid table (the baseline grid is the same with and without --quick);
    // it was appended in order of completion (2 threads), so its rows are put in task order
    // first. Running it here again would double this test's time.
    let order: Vec<String> = BaselineSpec::full().tasks().iter().map(Task::id).collect();
    let lines = without_wall_time(&merged);
    let ids: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(ids, order);
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/results/baseline.csv");
    let mut unsharded = without_wall_time(&committed);
    let header = unsharded.remove(0);
    unsharded.sort_by_key(|l| order.iter().position(|id| l.starts_with(&format!("{id},"))));
    unsharded.insert(0, header);
    assert_eq!(lines, unsharded);
    std::fs::remove_dir_all(&d).unwrap();
}
