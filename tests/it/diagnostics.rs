//! Diagnostics against the ArviZ / numpy references in `tests/data/diagnostics/`, the
//! DataFrame summary, and the `diagnose` / `mmd` CLI subcommands.

use std::collections::BTreeMap;
#[cfg(feature = "cli")]
use std::process::Command;

use dp_mcmc::frame::diagnostics::{param_draws, read_sample_csv, summary};
use dp_mcmc::frame::read_csv;
use dp_mcmc::polars::prelude::*;

use dp_mcmc::diagnostics as dg;
use serde_json::Value;

const REF_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/diagnostics");

fn refs() -> Value {
    let text = std::fs::read_to_string(format!("{REF_DIR}/refs.json")).expect("refs.json present");
    serde_json::from_str(&text).expect("refs.json is valid JSON")
}

/// Minimal CSV parser for the reference files (header + numbers), independent of polars.
fn read_reference_csv(file: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(format!("{REF_DIR}/{file}")).expect("reference CSV");
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(|v| v.parse().expect("number")).collect())
        .collect();
    (header, rows)
}

/// Per parameter: one Vec of draws per chain (files are chain-major, draws in order).
fn draw_sets(file: &str) -> BTreeMap<String, Vec<Vec<f64>>> {
    let (header, rows) = read_reference_csv(file);
    let mut out = BTreeMap::new();
    for (p, name) in header.iter().enumerate().skip(2) {
        let mut chains: Vec<Vec<f64>> = Vec::new();
        for r in &rows {
            let c = r[0] as usize;
            if chains.len() <= c {
                chains.push(Vec::new());
            }
            chains[c].push(r[p]);
        }
        out.insert(name.clone(), chains);
    }
    out
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { (a - b).abs() / b.abs() }
}

/// Compare an optional value with a JSON number or null; returns the relative deviation.
fn check(what: &str, got: Option<f64>, want: &Value, tol: f64) -> f64 {
    match (got, want.as_f64()) {
        (None, None) => 0.0,
        (Some(g), Some(w)) => {
            let r = rel(g, w);
            if r > 1e-13 {
                println!("  {what}: rel {r:.2e}");
            }
            assert!(r <= tol, "{what}: got {g}, want {w} (rel {r:e})");
            r
        }
        (g, _) => panic!("{what}: got {g:?}, want {want}"),
    }
}

/// Every ArviZ reference of every draw set. Tolerance 1e-12 relative: the README reports an
/// independent port agreeing to 1.3e-15; what remains is summation-order rounding.
#[test]
fn draw_sets_match_arviz() {
    let refs = refs();
    type F = fn(&[&[f64]]) -> dp_mcmc::Result<Option<f64>>;
    let fns: [(&str, F); 15] = [
        ("rhat_rank", dg::rhat),
        ("rhat_split", dg::rhat_split),
        ("rhat_folded", dg::rhat_folded),
        ("rhat_z_scale", dg::rhat_z_scale),
        ("rhat_identity", dg::rhat_identity),
        ("ess_bulk", dg::ess_bulk),
        ("ess_tail", dg::ess_tail),
        ("ess_mean", dg::ess_mean),
        ("ess_median", dg::ess_median),
        ("ess_z_scale", dg::ess_z_scale),
        ("ess_folded", dg::ess_folded),
        ("ess_identity", dg::ess_identity),
        ("mcse_mean", dg::mcse_mean),
        ("mcse_sd", dg::mcse_sd),
        ("mcse_median", dg::mcse_median),
    ];
    let mut checked = 0;
    for (set, spec) in refs["draw_sets"].as_object().expect("draw_sets") {
        let draws = draw_sets(spec["file"].as_str().expect("file"));
        let mut worst = 0.0f64;
        for (param, want) in spec["params"].as_object().expect("params") {
            let chains = &draws[param];
            assert_eq!(chains.len() as u64, spec["n_chain"].as_u64().unwrap());
            let cs: Vec<&[f64]> = chains.iter().map(|c| c.as_slice()).collect();
            for (key, f) in fns {
                worst = worst.max(check(
                    &format!("{set}/{param}/{key}"),
                    f(&cs).unwrap(),
                    &want[key],
                    1e-12,
                ));
                checked += 1;
            }
            for p in [0.05, 0.95] {
                let k = format!("ess_quantile_{p}");
                worst = worst.max(check(
                    &k,
                    dg::ess_quantile(&cs, p).unwrap(),
                    &want[&k],
                    1e-12,
                ));
                let k = format!("mcse_quantile_{p}");
                worst = worst.max(check(
                    &k,
                    dg::mcse_quantile(&cs, p).unwrap(),
                    &want[&k],
                    1e-12,
                ));
                checked += 2;
            }
            let s = dg::summarize(&cs).unwrap();
            let sm = &want["summary"];
            worst = worst.max(check("mean", Some(s.mean), &sm["mean"], 1e-12));
            worst = worst.max(check("sd", s.sd, &sm["sd"], 1e-12));
            worst = worst.max(check(
                "summary ess_bulk",
                s.ess_bulk,
                &sm["ess_bulk"],
                1e-12,
            ));
            worst = worst.max(check(
                "summary ess_tail",
                s.ess_tail,
                &sm["ess_tail"],
                1e-12,
            ));
            worst = worst.max(check("summary r_hat", s.rhat, &sm["r_hat"], 1e-12));
            worst = worst.max(check(
                "summary mcse_mean",
                s.mcse_mean,
                &sm["mcse_mean"],
                1e-12,
            ));
            let ac = dg::autocorr(&chains[0]).unwrap();
            for (lag, w) in want["autocorr_chain0_lags0to10"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
            {
                // Autocorrelations near 0: compare absolutely (they are ratios of O(1) sums).
                let d = (ac[lag] - w.as_f64().unwrap()).abs();
                assert!(d < 1e-13, "{set}/{param} autocorr lag {lag}: {d:e}");
            }
            checked += 17;
        }
        println!("{set}: max relative deviation {worst:.2e}");
    }
    assert!(checked > 300, "only {checked} reference values compared");
}

fn mmd_pair(name: &str) -> (Vec<f64>, Vec<f64>, usize) {
    let (hx, x) = read_reference_csv(&format!("mmd_{name}_X.csv"));
    let (hy, y) = read_reference_csv(&format!("mmd_{name}_Y.csv"));
    assert_eq!(hx.len(), hy.len());
    (x.concat(), y.concat(), hx.len())
}

/// MMD at fixed bandwidths and at the stored deterministic bandwidths. Tolerance 1e-12
/// relative on MMD² (the references' own loop cross-check agrees to 2.2e-16 absolute).
#[test]
fn mmd_matches_references() {
    let refs = refs();
    let mut checked = 0;
    for (pair, spec) in refs["mmd"].as_object().unwrap() {
        let (x, y, dim) = mmd_pair(pair);
        assert_eq!(dim as u64, spec["dim"].as_u64().unwrap());
        let sub = &spec["subsample_heuristic_fixed_indices"];
        let mut cases: Vec<&Value> = spec["fixed_bandwidth"]
            .as_object()
            .unwrap()
            .values()
            .collect();
        cases.push(&spec["at_full_pooled_median"]);
        cases.push(&sub["mmd_at_size50_pooled_pdist_median"]);
        cases.push(&sub["mmd_at_size500_paired_median"]);
        let mut worst = 0.0f64;
        for want in cases {
            let r = dg::mmd(&x, &y, dim, want["sigma"].as_f64().unwrap()).unwrap();
            for (key, got) in [
                ("mmd2_biased", r.mmd2_biased),
                ("mmd2_unbiased", r.mmd2_unbiased),
                ("mmd_biased_sqrt", r.biased_sqrt()),
                ("mmd_thesis_sqrt_abs_unbiased", r.thesis()),
                ("sum_kxx_incl_diag", r.sum_kxx),
                ("sum_kyy_incl_diag", r.sum_kyy),
                ("sum_kxy", r.sum_kxy),
            ] {
                worst = worst.max(check(
                    &format!("{pair}/{key}"),
                    Some(got),
                    &want[key],
                    1e-12,
                ));
                checked += 1;
            }
        }
        // Deterministic bandwidth readings.
        let full = dg::pooled_median_distance(&x, &y, dim).unwrap();
        worst = worst.max(check(
            "pooled median",
            Some(full),
            &spec["median_heuristic_full_pooled"],
            1e-14,
        ));
        let idx = |k: &str| -> Vec<usize> {
            sub[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect()
        };
        let (ix, iy) = (idx("ix50"), idx("iy50"));
        let paired = dg::paired_median_distance(&x, &y, dim, &ix, &iy).unwrap();
        worst = worst.max(check(
            "paired median",
            Some(paired),
            &sub["size50"]["paired_median"],
            1e-14,
        ));
        let xs: Vec<f64> = ix
            .iter()
            .flat_map(|&i| x[i * dim..(i + 1) * dim].to_vec())
            .collect();
        let ys: Vec<f64> = iy
            .iter()
            .flat_map(|&j| y[j * dim..(j + 1) * dim].to_vec())
            .collect();
        let pooled50 = dg::pooled_median_distance(&xs, &ys, dim).unwrap();
        worst = worst.max(check(
            "pooled-50 median",
            Some(pooled50),
            &sub["size50"]["pooled_pdist_median"],
            1e-14,
        ));
        checked += 3;
        println!("{pair}: max relative deviation {worst:.2e}");
    }
    assert_eq!(checked, 2 * (6 * 7 + 3));
}

/// The seeded thesis bandwidth against the distribution of numpy's paired-500 median over
/// 2000 repetitions (refs: mean, sd). With 400 seeds the mean has standard error
/// sd/20 ≈ 0.0028 (gauss2d_shift); we allow 5 standard errors (two-sided p ≈ 6e-7), and the
/// sd of our 400 values within 25 % of the reference sd (χ² with 399 df: p < 1e-6 outside).
#[test]
fn thesis_bandwidth_has_the_reference_distribution() {
    let refs = refs();
    for (pair, spec) in refs["mmd"].as_object().unwrap() {
        let (x, y, dim) = mmd_pair(pair);
        let want = &spec["random_heuristic_distribution"]["paired500_median"];
        let (mu, sd) = (want["mean"].as_f64().unwrap(), want["sd"].as_f64().unwrap());
        let reps = 400;
        let v: Vec<f64> = (0..reps)
            .map(|s| dg::thesis_bandwidth(&x, &y, dim, s).unwrap())
            .collect();
        let m = v.iter().sum::<f64>() / reps as f64;
        let s = (v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (reps as f64 - 1.0)).sqrt();
        let se = sd / (reps as f64).sqrt();
        assert!(
            (m - mu).abs() < 5.0 * se,
            "{pair}: mean {m} vs {mu} (se {se})"
        );
        assert!((s / sd - 1.0).abs() < 0.25, "{pair}: sd {s} vs {sd}");
        // Reproducible: the same seed gives the same bandwidth and MMD.
        let a = dg::mmd_thesis(&x, &y, dim, 3).unwrap();
        let b = dg::mmd_thesis(&x, &y, dim, 3).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.bandwidth, v[3]);
    }
}

/// Identical samples: the biased MMD² is 0 up to rounding; the U-statistic has the closed
/// form 2S/(m²(m−1)) − 2/m (S = off-diagonal kernel sum), slightly negative.
#[test]
fn mmd_of_identical_samples_is_zero() {
    let (x, _, dim) = mmd_pair("gauss2d_shift");
    let r = dg::mmd(&x, &x, dim, 1.0).unwrap();
    assert!(r.mmd2_biased.abs() < 1e-15, "{}", r.mmd2_biased);
    // U-statistic with X = Y: 2·S/(m(m−1)) − 2·(S + m)/m² = 2·S/(m²(m−1)) − 2/m, S = off-diagonal sum.
    let m = (x.len() / dim) as f64;
    let s = r.sum_kxx - m;
    let want = 2.0 * s / (m * m * (m - 1.0)) - 2.0 / m;
    assert!((r.mmd2_unbiased - want).abs() < 1e-15);
}

#[test]
fn mmd_rejects_bad_input() {
    let x = [0.0, 1.0, 2.0, 3.0];
    let e = dg::mmd(&x, &[0.0, f64::NAN, 1.0, 2.0], 2, 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("non-finite"), "{e}");
    assert!(dg::mmd(&x, &x, 0, 1.0).is_err());
    assert!(dg::mmd(&x, &x, 2, f64::NAN).is_err());
    assert!(dg::mmd(&x[..2], &x, 2, 1.0).is_err()); // one row
    assert!(dg::mmd(&x, &x[..3], 2, 1.0).is_err());
}

/// Closed forms: the sample covariance of a 2×2 design, mean error against the truth.
#[test]
fn moments_closed_forms() {
    let x = [1.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, -1.0]; // cov = diag(2/3, 2/3)
    let c = dg::sample_cov(&x, 2).unwrap();
    assert!((c[(0, 0)] - 2.0 / 3.0).abs() < 1e-15 && c[(0, 1)].abs() < 1e-15);
    let y = [0.0, 0.0, 2.0, 0.0, 0.0, 2.0]; // cov [[4/3, -2/3], [-2/3, 4/3]]
    let want = ((4.0f64 / 3.0 - 2.0 / 3.0).powi(2) * 2.0 + (2.0f64 / 3.0).powi(2) * 2.0).sqrt();
    assert!((dg::cov_error(&x, &y, 2).unwrap() - want).abs() < 1e-15);
    assert!((dg::mean_error(&x, &y, 2).unwrap() - (2.0f64 / 3.0) * 2f64.sqrt()).abs() < 1e-15);
}

/// The DataFrame summary of a reference file agrees with the references; rows follow the
/// column order, and `warmup = true` rows are left out.
#[test]
fn frame_summary_matches_references() {
    let refs = refs();
    let spec = &refs["draw_sets"]["badmix"];
    let df = read_csv(format!("{REF_DIR}/draws_badmix.csv")).unwrap();
    let s = summary(&df).unwrap();
    let names: Vec<&str> = s
        .column("param")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .flatten()
        .collect();
    assert_eq!(names, ["shifted", "scaled", "trend", "sticky"]);
    for (i, name) in names.iter().enumerate() {
        let want = &spec["params"][name]["summary"];
        let get = |c: &str| s.column(c).unwrap().f64().unwrap().get(i);
        check("frame mean", get("mean"), &want["mean"], 1e-12);
        check("frame sd", get("sd"), &want["sd"], 1e-12);
        check("frame ess_bulk", get("ess_bulk"), &want["ess_bulk"], 1e-12);
        check("frame ess_tail", get("ess_tail"), &want["ess_tail"], 1e-12);
        check("frame rhat", get("rhat"), &want["r_hat"], 1e-12);
        check(
            "frame mcse_mean",
            get("mcse_mean"),
            &want["mcse_mean"],
            1e-12,
        );
        assert!(get("q05").unwrap() < get("q95").unwrap());
    }
    // Warm-up rows (here: a wild first half) are excluded before anything is computed.
    let onechain = read_csv(format!("{REF_DIR}/draws_edge_onechain.csv")).unwrap();
    let x: Vec<f64> = onechain
        .column("x")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .flatten()
        .collect();
    let n = x.len() as u32;
    let with_warmup = df!(
        "chain" => vec![0u32; 2 * n as usize],
        "draw" => (0..2 * n).collect::<Vec<_>>(),
        "warmup" => (0..2 * n).map(|i| i < n).collect::<Vec<_>>(),
        "x" => x.iter().map(|v| v * 100.0 + 7.0).chain(x.iter().copied()).collect::<Vec<_>>(),
        "label" => vec!["ignored"; 2 * n as usize],
    )
    .unwrap();
    let a = summary(&with_warmup).unwrap();
    let b = summary(&onechain).unwrap();
    assert_eq!(a.width(), 9);
    for c in [
        "mean",
        "sd",
        "ess_bulk",
        "ess_tail",
        "mcse_mean",
        "q05",
        "q95",
    ] {
        assert_eq!(
            a.column(c).unwrap().f64().unwrap().get(0),
            b.column(c).unwrap().f64().unwrap().get(0),
            "{c}"
        );
    }
    assert_eq!(a.column("rhat").unwrap().null_count(), 1); // one chain: R-hat is null
}

#[test]
fn frame_rejects_malformed_draws() {
    let err = |df: DataFrame| param_draws(&df).unwrap_err().to_string();
    let e =
        err(df!("chain" => [0u32, 0, 1], "draw" => [0u32, 1, 0], "x" => [1.0, 2.0, 3.0]).unwrap());
    assert!(e.contains("chain 1 has 1 draws but chain 0 has 2"), "{e}");
    let e = err(df!("chain" => [0u32, 0], "draw" => [1u32, 1], "x" => [1.0, 2.0]).unwrap());
    assert!(e.contains("draw 1 twice"), "{e}");
    let e = err(df!("chain" => [0u32, 0], "draw" => [0u32, 1], "x" => [1.0, f64::NAN]).unwrap());
    assert!(e.contains("column `x`, chain 0, draw 1 is NaN"), "{e}");
    let e = err(df!("chain" => ["a", "b"], "draw" => [0u32, 1], "x" => [1.0, 2.0]).unwrap());
    assert!(e.contains("`chain`") && e.contains("integers"), "{e}");
    let e = err(df!("chain" => [0u32], "draw" => [0u32]).unwrap());
    assert!(e.contains("no numeric parameter column"), "{e}");
    let e = err(df!("chain" => [0u32], "x" => [0.0]).unwrap());
    assert!(e.contains("no `draw` column"), "{e}");
    let e =
        err(df!("chain" => [0u32], "draw" => [0u32], "warmup" => [true], "x" => [0.0]).unwrap());
    assert!(e.contains("no (post-warm-up) rows"), "{e}");
    // Rows in any order: sorted by (chain, draw).
    let p = param_draws(
        &df!("chain" => [1i64, 0, 1, 0], "draw" => [1i64, 1, 0, 0], "x" => [4.0, 2.0, 3.0, 1.0])
            .unwrap(),
    )
    .unwrap();
    assert_eq!(p[0].chains, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
}

#[test]
fn sample_csv_reader() {
    let (x, dim) = read_sample_csv(format!("{REF_DIR}/mmd_gauss2d_shift_X.csv")).unwrap();
    assert_eq!((x.len(), dim), (400, 2));
    let (_, rows) = read_reference_csv("mmd_gauss2d_shift_X.csv");
    assert_eq!(&x[..2], rows[0].as_slice());
}

// ---------------------------------------------------------------------------------------
// CLI

#[cfg(feature = "cli")]
fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dp-mcmc"))
        .args(args)
        .output()
        .expect("the dp-mcmc binary runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[cfg(feature = "cli")]
fn cli_json(args: &[&str]) -> Value {
    let (ok, stdout, stderr) = cli(args);
    assert!(ok, "dp-mcmc {args:?} failed: {stderr}");
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    serde_json::from_str(&stdout).expect("stdout is JSON")
}

#[cfg(feature = "cli")]
fn cli_error(args: &[&str], needle: &str) {
    let (ok, stdout, stderr) = cli(args);
    assert!(!ok, "dp-mcmc {args:?} should fail, printed {stdout}");
    assert_eq!(stderr.trim().lines().count(), 1, "one-line error: {stderr}");
    assert!(
        stderr.contains(needle),
        "error {stderr:?} should mention {needle:?}"
    );
}

#[cfg(feature = "cli")]
fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("dp-mcmc-diag-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[cfg(feature = "cli")]
#[test]
fn cli_diagnose_matches_references() {
    let refs = refs();
    for set in ["ar1_multi", "edge_onechain", "edge_odd"] {
        let spec = &refs["draw_sets"][set];
        let file = format!("{REF_DIR}/{}", spec["file"].as_str().unwrap());
        let out = cli_json(&["diagnose", "--draws", &file]);
        let params = spec["params"].as_object().unwrap();
        assert_eq!(out.as_object().unwrap().len(), params.len());
        for (p, want) in params {
            let got = &out[p];
            assert_eq!(got.as_object().unwrap().len(), 4, "{got}");
            for (key, ref_key) in [
                ("rhat", "rhat_rank"),
                ("ess_bulk", "ess_bulk"),
                ("ess_tail", "ess_tail"),
                ("mcse_mean", "mcse_mean"),
            ] {
                assert!(
                    got[key].is_null() == want[ref_key].is_null(),
                    "{set}/{p}/{key}"
                );
                check(
                    &format!("cli {set}/{p}/{key}"),
                    got[key].as_f64(),
                    &want[ref_key],
                    1e-12,
                );
            }
        }
    }
    assert!(
        cli_json(&[
            "diagnose",
            "--draws",
            &format!("{REF_DIR}/draws_edge_onechain.csv")
        ])["x"]["rhat"]
            .is_null()
    );
}

#[cfg(feature = "cli")]
fn json_f64(v: f64) -> Value {
    Value::from(v)
}

#[cfg(feature = "cli")]
#[test]
fn cli_mmd_fixed_and_thesis_bandwidth() {
    let refs = refs();
    let x = format!("{REF_DIR}/mmd_gauss2d_shift_X.csv");
    let y = format!("{REF_DIR}/mmd_gauss2d_shift_Y.csv");
    let out = cli_json(&["mmd", "--x", &x, "--y", &y, "--bandwidth", "0.5"]);
    let want = &refs["mmd"]["gauss2d_shift"]["fixed_bandwidth"]["0.5"];
    check(
        "cli biased",
        out["mmd2_biased"].as_f64(),
        &want["mmd2_biased"],
        1e-12,
    );
    check(
        "cli unbiased",
        out["mmd2_unbiased"].as_f64(),
        &want["mmd2_unbiased"],
        1e-12,
    );
    assert_eq!(out["bandwidth"].as_f64(), Some(0.5));
    assert!(out.get("mmd_thesis").is_none());

    let a = cli_json(&["mmd", "--x", &x, "--y", &y, "--seed", "5"]);
    let (xs, dim) = read_sample_csv(&x).unwrap();
    let (ys, _) = read_sample_csv(&y).unwrap();
    let lib = dg::mmd_thesis(&xs, &ys, dim, 5).unwrap();
    // serde_json parses floats to within 1 ulp (no `float_roundtrip` feature): compare at 1e-15.
    check(
        "cli bandwidth",
        a["bandwidth"].as_f64(),
        &json_f64(lib.bandwidth),
        1e-15,
    );
    let thesis = json_f64(lib.mmd2_unbiased.abs().sqrt());
    check("cli mmd_thesis", a["mmd_thesis"].as_f64(), &thesis, 1e-15);
    check(
        "cli unbiased",
        a["mmd2_unbiased"].as_f64(),
        &json_f64(lib.mmd2_unbiased),
        1e-15,
    );
    // Default seed 0.
    let d = cli_json(&["mmd", "--x", &x, "--y", &y]);
    check(
        "cli default seed",
        d["bandwidth"].as_f64(),
        &json_f64(dg::thesis_bandwidth(&xs, &ys, dim, 0).unwrap()),
        1e-15,
    );
}

#[cfg(feature = "cli")]
#[test]
fn cli_errors_are_one_line() {
    let x = format!("{REF_DIR}/mmd_gauss2d_shift_X.csv");
    let y1 = format!("{REF_DIR}/mmd_gauss1d_same_Y.csv");
    cli_error(&["diagnose", "--draws", "/no/such/draws.csv"], "--draws");
    cli_error(&["mmd", "--x", &x, "--y", "/no/such.csv"], "--y");
    cli_error(
        &["mmd", "--x", &x, "--y", &y1],
        "--x has 2 numeric columns but --y has 1",
    );
    cli_error(
        &["mmd", "--x", &x, "--y", &x, "--bandwidth", "-1"],
        "bandwidth",
    );
    let nan = temp_file("nan.csv", "a,b\n1.0,2.0\nNaN,3.0\n");
    cli_error(
        &["mmd", "--x", &nan, "--y", &nan, "--bandwidth", "1"],
        "row 1",
    );
    let no_chain = temp_file("nochain.csv", "draw,x\n0,1.0\n1,2.0\n");
    cli_error(&["diagnose", "--draws", &no_chain], "no `chain` column");
    let gap = temp_file("gap.csv", "chain,draw,x\n0,0,1.0\n0,1,\n");
    cli_error(
        &["diagnose", "--draws", &gap],
        "column `x`, chain 0, draw 1 is null",
    );
    for f in [nan, no_chain, gap] {
        let _ = std::fs::remove_file(f);
    }
}

/// The thesis' sizes: 3000 chain rows against 1000 reference draws in dimension 10, both
/// N(0, I). Under equal distributions the U-statistic has mean 0 and sd O(1/n) (≈ 1e-3
/// here at the median bandwidth), so |MMD²_u| < 0.01 holds with a wide margin.
#[test]
fn mmd_at_thesis_sizes() {
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = dp_mcmc::rng::chain_rng(11, 0);
    let mut draw = |n: usize| -> Vec<f64> {
        (0..n * 10)
            .map(|_| StandardNormal.sample(&mut rng))
            .collect()
    };
    let (x, y) = (draw(3000), draw(1000));
    let t = std::time::Instant::now();
    let r = dg::mmd_thesis(&x, &y, 10, 0).unwrap();
    println!("mmd 3000x1000 d=10: {:?}", t.elapsed());
    assert!(r.mmd2_unbiased.abs() < 0.01, "{r:?}");
    assert!(r.mmd2_biased > r.mmd2_unbiased);
    // Median distance of two independent N(0, I_10) points ≈ sqrt(2·10) ≈ 4.4.
    assert!((r.bandwidth - 20f64.sqrt()).abs() < 0.5, "{}", r.bandwidth);
}

/// `sample_metrics` of the kept half (the thesis' burn-in rule) = the three metrics, composed
/// by hand here.
#[test]
fn sample_metrics_of_the_kept_half_are_the_three_metrics() {
    let (x, y, dim) = mmd_pair("gauss2d_shift");
    // Treat X's 200 rows as a chain of k = 199 iterations: kept rows 100..=199.
    assert_eq!(dg::burn_in_range(199), 100..200);
    let kept = dg::kept_half(&x, dim).unwrap();
    assert_eq!(kept, &x[100 * dim..]);
    let m = dg::sample_metrics(kept, &y, dim, 9).unwrap();
    assert_eq!(
        m.mmd,
        Some(dg::mmd_thesis(kept, &y, dim, 9).unwrap().thesis())
    );
    assert_eq!(m.mean_error, dg::mean_error(kept, &y, dim).unwrap());
    assert_eq!(m.cov_error, dg::cov_error(kept, &y, dim).unwrap());
    assert!(dg::sample_metrics(kept, &y[..3], dim, 9).is_err());
    // A zero heuristic bandwidth (constant samples) leaves the MMD undefined, not an error.
    let flat = vec![1.0; 20];
    assert_eq!(dg::sample_metrics(&flat, &flat, 2, 9).unwrap().mmd, None);
}

/// q05 / q95 are numpy's default (type 7) quantiles of all draws. Reference: the textbook
/// formula x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]), h = (N−1)p, evaluated in plain Python on
/// `draws_ar1_multi.csv` column `rho09` (N = 4000).
#[test]
fn summary_quantiles_are_type7() {
    let draws = draw_sets("draws_ar1_multi.csv");
    let cs: Vec<&[f64]> = draws["rho09"].iter().map(|c| c.as_slice()).collect();
    let s = dg::summarize(&cs).unwrap();
    assert!((s.q05 - -2.0063522646190424).abs() < 1e-14, "{}", s.q05);
    assert!((s.q95 - 4.146045987272379).abs() < 1e-14, "{}", s.q95);
}
