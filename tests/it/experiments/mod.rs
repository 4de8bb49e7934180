//! The experiment grids: resume, thread-count independence, a quick grid, time limit, and the
//! Chapter 6 figures built from real grid results.

#[cfg(feature = "cli")]
mod shard;

use std::path::PathBuf;
use std::time::Duration;

use dp_mcmc::experiments::{
    BaselineSpec, ClippingSpec, ComparisonSpec, GridRunner, ResultRow, SamplerKind, Task, TaskKind,
    read_results,
};
use dp_mcmc::frame::experiments::{medians_frame, results_frame};
use dp_mcmc::models::Experiment;
use dp_mcmc::plots::experiments as figs;
use serde_json::Value;

fn temp_csv(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dp-mcmc-exp-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    p
}

fn runner(threads: usize) -> GridRunner {
    GridRunner {
        seed: 7,
        threads: Some(threads),
        progress: false,
        log_every: None,
        ..GridRunner::default()
    }
}

/// Rows without the wall time, sorted by task id.
fn comparable(rows: Vec<ResultRow>) -> Vec<ResultRow> {
    let mut rows: Vec<ResultRow> = rows
        .into_iter()
        .map(|mut r| {
            r.wall_seconds = 0.0;
            r
        })
        .collect();
    rows.sort_by(|a, b| a.task.cmp(&b.task));
    rows
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let tasks = crate::common::cheap_comparison(2);
    let (one, two) = (temp_csv("one.csv"), temp_csv("two.csv"));
    let r1 = runner(1).run(&tasks, &one).unwrap();
    let r2 = runner(2).run(&tasks, &two).unwrap();
    assert_eq!((r1.completed, r2.completed), (tasks.len(), tasks.len()));
    assert!(
        r1.failed.is_empty() && r2.failed.is_empty(),
        "{:?}",
        r1.failed
    );
    let (a, b) = (
        comparable(read_results(&one).unwrap()),
        comparable(read_results(&two).unwrap()),
    );
    assert_eq!(a, b);
    // The metrics were recorded (k = 56 ≥ 2 for DP penalty: MMD defined).
    let dpps = a.iter().find(|r| r.algorithm == "dp-penalty").unwrap();
    assert_eq!(dpps.iterations, 56); // easy-2d dpps ε = 1 (tests/data/thesis)
    assert!(dpps.mmd.unwrap() > 0.0 && dpps.acceptance.is_some());
    // A different grid seed changes the chains.
    let other = temp_csv("other.csv");
    GridRunner {
        seed: 8,
        ..runner(2)
    }
    .run(&tasks, &other)
    .unwrap();
    assert_ne!(comparable(read_results(&other).unwrap()), a);
}

#[test]
fn a_rerun_skips_finished_tasks_and_redoes_missing_ones() {
    let tasks = BaselineSpec {
        experiments: vec![Experiment::EasyBanana2d, Experiment::HardGauss2d],
        seeds: 3,
    }
    .tasks();
    let path = temp_csv("resume.csv");
    let first = runner(2).run(&tasks, &path).unwrap();
    assert_eq!((first.completed, first.skipped), (6, 0));
    let again = runner(2).run(&tasks, &path).unwrap();
    assert_eq!((again.completed, again.skipped), (0, 6));
    // Drop two finished rows (and cut the last line, as an interrupted write would).
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let removed: Vec<String> = lines
        .drain(2..4)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    let mut cut = lines.join("\n");
    cut.push_str("\nbaseline/cut-off-line");
    std::fs::write(&path, cut).unwrap();
    let resumed = runner(1).run(&tasks, &path).unwrap();
    assert_eq!((resumed.completed, resumed.skipped), (2, 4));
    let rows = read_results(&path).unwrap();
    assert_eq!(rows.len(), 6);
    for id in removed {
        assert!(rows.iter().any(|r| r.task == id), "{id} was redone");
    }
    // Baseline MMDs are small (posterior vs posterior; thesis ≈ 0.015–0.025, THESIS-NOTES §17;
    // 0.06 leaves room for seed-to-seed spread of a 1000-vs-1000 estimate).
    assert!(rows.iter().all(|r| r.mmd.unwrap() < 0.06), "{rows:?}");
}

#[test]
fn a_zero_time_limit_runs_nothing_and_writes_nothing() {
    let path = temp_csv("timeout.csv");
    let tasks = crate::common::cheap_comparison(2);
    let r = GridRunner {
        max_time: Some(Duration::ZERO),
        ..runner(2)
    }
    .run(&tasks, &path)
    .unwrap();
    assert_eq!((r.completed, r.interrupted), (0, tasks.len()));
    assert!(read_results(&path).unwrap().is_empty());
}

#[test]
fn quick_grids_run_and_make_the_figures() {
    // The cheap part of the quick comparison grid (chain 0, ε = 1, no DP HMC/circle: those
    // are the slow ones in a debug build), the quick clipping grid's RWMH at two bounds, and
    // the baselines of the two flat bananas.
    let comparison: Vec<Task> = ComparisonSpec::quick()
        .tasks()
        .into_iter()
        .filter(|t| {
            t.chain == 0
                && t.experiment != Experiment::Circle
                && matches!(t.kind, TaskKind::Comparison { algorithm, epsilon }
                    if epsilon == 1.0 && algorithm != SamplerKind::DpHmc)
        })
        .collect();
    assert!(comparison.len() >= 10);
    let clipping: Vec<Task> = ClippingSpec {
        bounds: vec![0.5, 1000.0],
        chains: 1,
        algorithms: vec![SamplerKind::Rwmh],
        ..ClippingSpec::quick()
    }
    .tasks();
    let baseline = BaselineSpec {
        experiments: vec![
            Experiment::EasyBanana2d,
            Experiment::TemperedBanana2d,
            Experiment::HardBanana2d,
        ],
        seeds: 2,
    }
    .tasks();
    let (pc, pk, pb) = (
        temp_csv("quick-comparison.csv"),
        temp_csv("quick-clipping.csv"),
        temp_csv("quick-baseline.csv"),
    );
    for (tasks, path) in [(&comparison, &pc), (&clipping, &pk), (&baseline, &pb)] {
        let r = runner(2).run(tasks, path).unwrap();
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        assert_eq!(r.completed, tasks.len());
    }
    let rows = read_results(&pc).unwrap();
    let cmp = results_frame(&rows).unwrap();
    let base = results_frame(&read_results(&pb).unwrap()).unwrap();
    let clip_rows = read_results(&pk).unwrap();
    let clip = results_frame(&clip_rows).unwrap();
    assert_eq!(medians_frame(&rows).unwrap().height(), comparison.len());
    // Clipping at 0.5 clips a sizeable fraction, at 1000 nothing (THESIS-NOTES §17: up to ≈ 0.45).
    let frac = |b: f64| {
        clip_rows
            .iter()
            .find(|r| r.clip_bound == Some(b))
            .and_then(|r| r.clip_fraction)
            .unwrap()
    };
    assert!(frac(0.5) > 0.1 && frac(1000.0) == 0.0);

    let check = |plot: dp_mcmc::plotly::Plot, baselines: usize| {
        let json: Value = serde_json::from_str(&plot.to_json()).unwrap();
        let layout = &json["layout"];
        assert!(!layout["title"]["text"].as_str().unwrap().is_empty());
        for trace in json["data"].as_array().unwrap() {
            let suffix = |a: &str, axis: &str| {
                let id = trace[a].as_str().unwrap_or(axis).to_string();
                format!("{axis}axis{}", &id[1..])
            };
            for (a, axis) in [("xaxis", "x"), ("yaxis", "y")] {
                let key = suffix(a, axis);
                assert!(
                    layout[&key]["title"]["text"]
                        .as_str()
                        .is_some_and(|t| !t.is_empty()),
                    "{key} has no title"
                );
            }
            assert!(trace["name"].as_str().is_some());
        }
        assert_eq!(layout["showlegend"], Value::Bool(true));
        // one dashed line per panel with baselines (their median over seeds), each inside a
        // grey band (their range) on the same axis
        let shapes = layout["shapes"].as_array().cloned().unwrap_or_default();
        let dashed: Vec<&Value> = shapes
            .iter()
            .filter(|s| s["line"]["dash"] == "dash")
            .collect();
        let bands: Vec<&Value> = shapes.iter().filter(|s| s["type"] == "rect").collect();
        assert_eq!(dashed.len(), baselines, "dashed baseline lines");
        assert_eq!(bands.len(), baselines, "baseline bands");
        for line in &dashed {
            let y = line["y0"].as_f64().unwrap();
            assert!(
                bands.iter().any(|b| b["yref"] == line["yref"]
                    && b["y0"].as_f64().unwrap() <= y
                    && y <= b["y1"].as_f64().unwrap()),
                "a median baseline outside its band"
            );
        }
    };
    // Fig 6.3: easy-2d and tempered-2d panels, 2 baselines each: one median line per panel.
    check(figs::figure_6_3(&cmp, &base).unwrap(), 2);
    // Fig 6.4: only hard-2d has baselines here (hard-gauss-2d's were not computed).
    check(figs::figure_6_4(&cmp, &base).unwrap(), 1);
    check(figs::figure_6_5(&cmp).unwrap(), 0);
    check(figs::figure_6_6(&cmp).unwrap(), 0);
    // Fig 6.2: d = 2 only; its baselines drawn in both rows.
    check(figs::figure_6_2(&clip, &base).unwrap(), 2);
    // No DP HMC and no circle rows: these figures report missing data as an error.
    assert!(figs::figure_6_8(&cmp).is_err());
    assert!(figs::figure_6_7(&cmp).is_err());
}
