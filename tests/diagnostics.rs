//! Diagnostics against the ArviZ / numpy references in `../shared/ref/diagnostics/`, the
//! DataFrame summary, and the `diagnose` / `mmd` CLI subcommands.

use std::collections::BTreeMap;
use std::process::Command;

use dp_mcmc::diagnostics as dg;
use serde_json::Value;

const REF_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/ref/diagnostics");

fn refs() -> Value {
    let text = std::fs::read_to_string(format!("{REF_DIR}/refs.json")).expect("refs.json present");
    serde_json::from_str(&text).expect("refs.json is valid JSON")
}

/// Minimal CSV parser for the reference files (header + numbers), independent of polars.
fn read_csv(file: &str) -> (Vec<String>, Vec<Vec<f64>>) {
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
    let (header, rows) = read_csv(file);
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
                worst = worst.max(check(&format!("{set}/{param}/{key}"), f(&cs).unwrap(), &want[key], 1e-12));
                checked += 1;
            }
            for p in [0.05, 0.95] {
                let k = format!("ess_quantile_{p}");
                worst = worst.max(check(&k, dg::ess_quantile(&cs, p).unwrap(), &want[&k], 1e-12));
                let k = format!("mcse_quantile_{p}");
                worst = worst.max(check(&k, dg::mcse_quantile(&cs, p).unwrap(), &want[&k], 1e-12));
                checked += 2;
            }
            let s = dg::summarize(&cs).unwrap();
            let sm = &want["summary"];
            worst = worst.max(check("mean", Some(s.mean), &sm["mean"], 1e-12));
            worst = worst.max(check("sd", s.sd, &sm["sd"], 1e-12));
            worst = worst.max(check("summary ess_bulk", s.ess_bulk, &sm["ess_bulk"], 1e-12));
            worst = worst.max(check("summary ess_tail", s.ess_tail, &sm["ess_tail"], 1e-12));
            worst = worst.max(check("summary r_hat", s.rhat, &sm["r_hat"], 1e-12));
            worst = worst.max(check("summary mcse_mean", s.mcse_mean, &sm["mcse_mean"], 1e-12));
            let ac = dg::autocorr(&chains[0]).unwrap();
            for (lag, w) in want["autocorr_chain0_lags0to10"].as_array().unwrap().iter().enumerate() {
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
    let (hx, x) = read_csv(&format!("mmd_{name}_X.csv"));
    let (hy, y) = read_csv(&format!("mmd_{name}_Y.csv"));
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
        let mut cases: Vec<&Value> = spec["fixed_bandwidth"].as_object().unwrap().values().collect();
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
                worst = worst.max(check(&format!("{pair}/{key}"), Some(got), &want[key], 1e-12));
                checked += 1;
            }
        }
        // Deterministic bandwidth readings.
        let full = dg::pooled_median_distance(&x, &y, dim).unwrap();
        worst = worst.max(check("pooled median", Some(full), &spec["median_heuristic_full_pooled"], 1e-14));
        let idx = |k: &str| -> Vec<usize> {
            sub[k].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect()
        };
        let (ix, iy) = (idx("ix50"), idx("iy50"));
        let paired = dg::paired_median_distance(&x, &y, dim, &ix, &iy).unwrap();
        worst = worst.max(check("paired median", Some(paired), &sub["size50"]["paired_median"], 1e-14));
        let xs: Vec<f64> = ix.iter().flat_map(|&i| x[i * dim..(i + 1) * dim].to_vec()).collect();
        let ys: Vec<f64> = iy.iter().flat_map(|&j| y[j * dim..(j + 1) * dim].to_vec()).collect();
        let pooled50 = dg::pooled_median_distance(&xs, &ys, dim).unwrap();
        worst = worst.max(check("pooled-50 median", Some(pooled50), &sub["size50"]["pooled_pdist_median"], 1e-14));
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
        assert!((m - mu).abs() < 5.0 * se, "{pair}: mean {m} vs {mu} (se {se})");
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
    let e = dg::mmd(&x, &[0.0, f64::NAN, 1.0, 2.0], 2, 1.0).unwrap_err().to_string();
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
