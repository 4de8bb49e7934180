//! Integration tests of the models: gradients vs finite differences, fast chunk overrides vs
//! row-by-row evaluation, exact posteriors vs closed forms and the shared references, presets,
//! data conversion and error cases.

mod compact;

use dp_mcmc::models::*;
use dp_mcmc::rng::chain_rng;
use rand::RngExt;
use serde_json::Value;

const REFS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/diagnostics/refs.json"
);

fn refs() -> Value {
    let text = std::fs::read_to_string(REFS).expect("tests/data/diagnostics/refs.json is present");
    serde_json::from_str(&text).expect("refs.json is valid JSON")
}

fn vecf(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// `|a − b| ≤ tol · max(1, |b|)` elementwise, with a message naming `what`.
fn assert_close(what: &str, a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let worst = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0_f64, f64::max);
    if what.starts_with('~') || !what.contains("row") {
        eprintln!("{what}: max diff {worst:.2e}");
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * y.abs().max(1.0),
            "{what}[{i}]: {x} vs {y} (diff {:e}, tol {tol:e})",
            (x - y).abs()
        );
    }
}

/// Relative closeness `|a − b| ≤ tol · |b|` (prints the largest relative difference).
fn assert_rel(what: &str, a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let worst = a
        .iter()
        .zip(b)
        .map(|(x, y)| ((x - y) / y).abs())
        .fold(0.0_f64, f64::max);
    eprintln!("{what}: max rel diff {worst:.2e}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * y.abs(),
            "{what}[{i}]: {x} vs {y} (rel diff {:e}, tol {tol:e})",
            ((x - y) / y).abs()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Test models

fn banana(d: usize, a: f64, n: usize) -> BananaModel {
    let mut p = BananaParams::thesis(d, a);
    p.b = 0.7;
    p.m = -0.2;
    let mut theta = vec![0.0; d];
    theta[1] = 3.0;
    let data = p.generate(&theta, n, 11).unwrap();
    BananaModel::new(data, p.with_tempering(0.3)).unwrap()
}

fn gaussian(d: usize, n: usize) -> GaussianModel {
    let cov = block_correlated_cov(d, 0.999).unwrap();
    let mut theta = vec![0.0; d];
    theta[1] = 3.0;
    GaussianModel::new(generate_gaussian(&theta, &cov, n, 5).unwrap(), cov, 100.0).unwrap()
}

/// A dense (non block-diagonal) covariance, so every coordinate couples to every other.
fn gaussian_dense(n: usize) -> GaussianModel {
    let cov = dp_mcmc::nalgebra::DMatrix::from_row_slice(
        3,
        3,
        &[2.0, 0.5, 0.3, 0.5, 1.0, -0.2, 0.3, -0.2, 1.5],
    );
    let data = generate_gaussian(&[1.0, -1.0, 0.5], &cov, n, 9).unwrap();
    GaussianModel::new(data, cov, 10.0).unwrap()
}

fn circle(n: usize) -> CircleModel {
    CircleModel::new(&CircleModel::generate_radii(n, 3).unwrap(), 1e-3).unwrap()
}

fn logistic(n: usize) -> LogisticModel {
    let mut rng = chain_rng(21, 0);
    let p = 3;
    let mut cols = vec![vec![1.0; n]];
    for _ in 1..p {
        cols.push((0..n).map(|_| rng.random::<f64>() * 4.0 - 2.0).collect());
    }
    let y: Vec<f64> = (0..n)
        .map(|j| {
            let eta = 0.5 - cols[1][j] + 0.8 * cols[2][j];
            if rng.random::<f64>() < 1.0 / (1.0 + (-eta).exp()) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    LogisticModel::new(ColumnData::from_columns(cols).unwrap(), &y, 10.0).unwrap()
}

fn custom(n: usize) -> CustomModel {
    // y ~ N(θ₀ + θ₁ x, e^{θ₂})
    let mut rng = chain_rng(4, 0);
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|_| {
            let x = rng.random::<f64>() * 2.0;
            vec![x, 1.0 + 2.0 * x + rng.random::<f64>() - 0.5]
        })
        .collect();
    CustomModel::new(RowData::from_rows(&rows).unwrap(), 3, |t, r| {
        let e = r[1] - t[0] - t[1] * r[0];
        -0.5 * t[2] - 0.5 * e * e * (-t[2]).exp()
    })
    .unwrap()
    .with_gradient(|t, r, g| {
        let e = r[1] - t[0] - t[1] * r[0];
        let w = (-t[2]).exp();
        g[0] = e * w;
        g[1] = e * w * r[0];
        g[2] = -0.5 + 0.5 * e * e * w;
    })
    .with_prior(
        |t| -0.25 * t.iter().map(|x| x.powi(4)).sum::<f64>(),
        |t, g| {
            for (gi, x) in g.iter_mut().zip(t) {
                *gi = -x.powi(3);
            }
        },
    )
}

/// Every test model with a parameter point in its interesting region.
fn all_models() -> Vec<(&'static str, Box<dyn Model>, Vec<f64>)> {
    vec![
        ("banana-2d", Box::new(banana(2, 20.0, 700)), vec![0.3, 2.5]),
        (
            "banana-5d",
            Box::new(banana(5, 20.0, 700)),
            vec![-0.2, 2.8, 0.1, -0.3, 0.4],
        ),
        (
            "banana-hard",
            Box::new(banana(2, 350.0, 700)),
            vec![0.05, 2.9],
        ),
        ("gauss-2d", Box::new(gaussian(2, 700)), vec![0.1, 2.9]),
        (
            "gauss-4d",
            Box::new(gaussian(4, 700)),
            vec![0.1, 2.9, -0.2, 0.3],
        ),
        (
            "gauss-dense",
            Box::new(gaussian_dense(700)),
            vec![0.8, -1.2, 0.4],
        ),
        ("circle", Box::new(circle(700)), vec![1.5, -2.0]),
        ("logistic", Box::new(logistic(700)), vec![0.4, -0.9, 0.7]),
        ("custom", Box::new(custom(700)), vec![0.9, 2.1, -1.5]),
        (
            "experiment-easy-2d",
            Box::new(
                Experiment::EasyBanana2d
                    .model_from_data(
                        BananaParams::thesis(2, 20.0)
                            .generate(&[0.0, 3.0], 500, 1)
                            .unwrap(),
                    )
                    .unwrap(),
            ),
            vec![0.2, 2.7],
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Gradients vs central finite differences

/// Central difference of `f` at `theta` in coordinate `i` with step `h·max(1, |θ_i|)`.
fn fd(f: &dyn Fn(&[f64]) -> f64, theta: &[f64], i: usize) -> f64 {
    let h = 1e-6 * theta[i].abs().max(1.0);
    let (mut p, mut m) = (theta.to_vec(), theta.to_vec());
    p[i] += h;
    m[i] -= h;
    (f(&p) - f(&m)) / (p[i] - m[i])
}

// Tolerance: central differences with h = 1e-6 have truncation error ~h²·f''' and round-off
// ~1e-16·|f|/h; for these models and points both are below 1e-7 relative. A wrong gradient
// formula is off by O(1).
const FD_TOL: f64 = 1e-5;

#[test]
fn gradients_match_finite_differences() {
    for (name, m, theta) in all_models() {
        let d = m.dim();
        assert!(m.has_gradient(), "{name} has a gradient");
        let mut g = vec![0.0; d];
        for row in [0, 1, 17, m.n_rows() - 1] {
            m.grad_log_lik_row(&theta, row, &mut g).unwrap();
            let f = |t: &[f64]| m.log_lik_row(t, row);
            let num: Vec<f64> = (0..d).map(|i| fd(&f, &theta, i)).collect();
            assert_close(&format!("{name} grad row {row}"), &g, &num, FD_TOL);
        }
        m.grad_log_prior(&theta, &mut g);
        let f = |t: &[f64]| m.log_prior(t);
        let num: Vec<f64> = (0..d).map(|i| fd(&f, &theta, i)).collect();
        assert_close(&format!("{name} grad prior"), &g, &num, FD_TOL);
    }
}

// ---------------------------------------------------------------------------------------------
// Fast chunk overrides vs the row-by-row definitions

/// Tolerance of the fast overrides: 1e-12 relative to the size of the log-likelihood terms
/// (the closed-form ratio avoids the cancellation of two evaluations, so it differs from the
/// difference of two row evaluations by a few ulps of the terms).
const FAST_TOL: f64 = 1e-12;

fn check_overrides(name: &str, m: &dyn Model, theta: &[f64], theta_new: &[f64]) {
    let n = m.n_rows();
    let d = m.dim();
    // A chunk that starts inside the data and is not a multiple of any block size.
    let (start, len) = (37, n - 37 - 5);
    let scale = |j: usize| {
        1.0_f64
            .max(m.log_lik_row(theta, j).abs())
            .max(m.log_lik_row(theta_new, j).abs())
    };

    let mut out = vec![f64::NAN; len];
    m.log_lik_ratio_rows(theta, theta_new, start, &mut out);
    for (k, &r) in out.iter().enumerate() {
        let j = start + k;
        let want = m.log_lik_row(theta_new, j) - m.log_lik_row(theta, j);
        assert!(
            (r - want).abs() <= FAST_TOL * scale(j),
            "{name}: ratio row {j}: {r} vs {want} (θ = {theta:?}, θ' = {theta_new:?})"
        );
    }

    let rows: Vec<usize> = (0..300).map(|k| (k * 7919 + 3) % n).collect();
    let mut out = vec![f64::NAN; rows.len()];
    m.log_lik_ratio_indexed(theta, theta_new, &rows, &mut out);
    for (&r, &j) in out.iter().zip(&rows) {
        let want = m.log_lik_row(theta_new, j) - m.log_lik_row(theta, j);
        assert!(
            (r - want).abs() <= FAST_TOL * scale(j),
            "{name}: indexed ratio row {j}: {r} vs {want}"
        );
    }

    let mut out = vec![f64::NAN; len];
    m.log_lik_rows(theta_new, start, &mut out);
    for (k, &v) in out.iter().enumerate() {
        let want = m.log_lik_row(theta_new, start + k);
        assert!(
            (v - want).abs() <= FAST_TOL * want.abs().max(1.0),
            "{name}: log_lik_rows row {}: {v} vs {want}",
            start + k
        );
    }

    let mut out = vec![f64::NAN; len * d];
    m.grad_log_lik_rows(theta_new, start, &mut out).unwrap();
    let mut g = vec![0.0; d];
    for (k, chunk) in out.chunks_exact(d).enumerate() {
        m.grad_log_lik_row(theta_new, start + k, &mut g).unwrap();
        assert_close(
            &format!("{name}: grad_log_lik_rows row {}", start + k),
            chunk,
            &g,
            FAST_TOL,
        );
    }

    if m.has_column_gradients() {
        let mut cols = vec![f64::NAN; len * d];
        m.grad_log_lik_cols(theta_new, start, &mut cols).unwrap();
        for (k, chunk) in out.chunks_exact(d).enumerate() {
            let col_k: Vec<f64> = (0..d).map(|i| cols[i * len + k]).collect();
            assert_close(
                &format!("{name}: grad_log_lik_cols row {}", start + k),
                &col_k,
                chunk,
                FAST_TOL,
            );
        }
        assert!(
            m.grad_log_lik_cols(theta_new, start, &mut cols[..d + 1])
                .is_err()
                || d == 1
        );
    }

    if m.has_gradient_sum() {
        let (mut want, mut scale) = (vec![0.0; d], vec![0.0; d]);
        for j in 0..n {
            m.grad_log_lik_row(theta_new, j, &mut g).unwrap();
            for ((w, s), x) in want.iter_mut().zip(scale.iter_mut()).zip(&g) {
                *w += x;
                *s += x.abs();
            }
        }
        let mut sum = vec![f64::NAN; d];
        m.grad_log_lik_sum(theta_new, &mut sum).unwrap();
        for ((s, w), sc) in sum.iter().zip(&want).zip(&scale) {
            assert!(
                (s - w).abs() <= FAST_TOL * sc.max(1.0),
                "{name}: grad_log_lik_sum {s} vs row sum {w}"
            );
        }
        assert!(m.grad_log_lik_sum(theta_new, &mut sum[..d - 1]).is_err());
    }
}

#[test]
fn fast_overrides_equal_row_by_row() {
    for (name, m, theta) in all_models() {
        let d = m.dim();
        // Full change.
        let full: Vec<f64> = theta
            .iter()
            .enumerate()
            .map(|(i, t)| t + 0.01 * (i as f64 + 1.0))
            .collect();
        check_overrides(name, m.as_ref(), &theta, &full);
        // One coordinate at a time (θ₁ also moves the banana's second mean).
        for i in 0..d {
            let mut one = theta.clone();
            one[i] -= 0.013;
            check_overrides(&format!("{name} coord {i}"), m.as_ref(), &theta, &one);
        }
        // No change: every ratio is exactly 0.
        let mut out = vec![1.0; 10];
        m.log_lik_ratio_rows(&theta, &theta, 0, &mut out);
        assert!(out.iter().all(|&r| r == 0.0), "{name}: θ' = θ gives 0");
    }
}

#[test]
fn thesis_models_have_direct_ratios() {
    assert!(banana(2, 20.0, 10).has_direct_ratio());
    assert!(gaussian(2, 10).has_direct_ratio());
    assert!(circle(10).has_direct_ratio());
    assert!(!logistic(10).has_direct_ratio());
    assert!(!custom(10).has_direct_ratio());
}

// ---------------------------------------------------------------------------------------------
// Exact posteriors

/// Sample mean and (ddof 1) covariance of draws.
fn moments(draws: &[Vec<f64>]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = draws.len() as f64;
    let d = draws[0].len();
    let mean: Vec<f64> = (0..d)
        .map(|i| draws.iter().map(|x| x[i]).sum::<f64>() / n)
        .collect();
    let cov = (0..d)
        .map(|i| {
            (0..d)
                .map(|k| {
                    draws
                        .iter()
                        .map(|x| (x[i] - mean[i]) * (x[k] - mean[k]))
                        .sum::<f64>()
                        / (n - 1.0)
                })
                .collect()
        })
        .collect();
    (mean, cov)
}

/// Checks the sample mean and variances of `draws` against the exact values within `Z` Monte-
/// Carlo standard errors: SE(mean_i) = sd_i/√N and SE(var_i) = sqrt((m4_i − var_i²)/N) with
/// the fourth central moment estimated from the draws (the banana's θ₂ is not Gaussian).
/// Z = 5: a two-sided normal tail of 5.7e-7 per comparison.
const Z: f64 = 5.0;

fn check_moments(what: &str, draws: &[Vec<f64>], mean: &[f64], var: &[f64]) {
    let n = draws.len() as f64;
    let (m, c) = moments(draws);
    for i in 0..mean.len() {
        let se_mean = (var[i] / n).sqrt();
        assert!(
            (m[i] - mean[i]).abs() <= Z * se_mean,
            "{what}: mean[{i}] {} vs {} (se {se_mean:e})",
            m[i],
            mean[i]
        );
        let m4 = draws.iter().map(|x| (x[i] - m[i]).powi(4)).sum::<f64>() / n;
        let se_var = ((m4 - c[i][i] * c[i][i]) / n).sqrt();
        assert!(
            (c[i][i] - var[i]).abs() <= Z * se_var,
            "{what}: var[{i}] {} vs {} (se {se_var:e})",
            c[i][i],
            var[i]
        );
    }
}

#[test]
fn banana_posterior_sampler_matches_closed_form() {
    // Worked example of tests/data/diagnostics/README.md §4 (strongly curved: corr −0.71).
    let p = BananaParams::thesis(2, 20.0);
    let post = BananaPosterior::from_sufficient(&p, &[0.1, 3.2], 1000).unwrap();
    let draws = post.sample(200_000, &mut chain_rng(1, 0));
    check_moments(
        "banana worked example",
        &draws,
        &post.mean(),
        &post.variance(),
    );
    // Cov(θ₁, θ₂): SE from the sample of products.
    let (m, c) = moments(&draws);
    let prods: Vec<f64> = draws
        .iter()
        .map(|x| (x[0] - m[0]) * (x[1] - m[1]))
        .collect();
    let sd_prod =
        (prods.iter().map(|p| (p - c[0][1]).powi(2)).sum::<f64>() / prods.len() as f64).sqrt();
    let se = sd_prod / (prods.len() as f64).sqrt();
    assert!(
        (c[0][1] - post.cov12()).abs() <= Z * se,
        "cov12 {} vs {} (se {se:e})",
        c[0][1],
        post.cov12()
    );
    // d = 10, tempered (the θ_{i≥3} block too).
    let model = banana(10, 20.0, 2000);
    let post = model.posterior();
    let draws = post.sample(100_000, &mut chain_rng(2, 0));
    check_moments(
        "banana 10-d tempered",
        &draws,
        &post.mean(),
        &post.variance(),
    );
}

#[test]
fn gaussian_posterior_sampler_matches_closed_form() {
    let model = gaussian(4, 1000);
    let post = model.posterior().unwrap();
    let draws = post.sample(100_000, &mut chain_rng(3, 0));
    let var: Vec<f64> = (0..4).map(|i| post.covariance()[(i, i)]).collect();
    check_moments("gauss 4-d", &draws, post.mean(), &var);
    // Correlation within the first block: the sample correlation of N = 1e5 draws has SE
    // (1 − ρ²)/√N ≈ 6e-6 at ρ ≈ 0.999.
    let (_, c) = moments(&draws);
    let rho = c[0][1] / (c[0][0] * c[1][1]).sqrt();
    let cv = post.covariance();
    let rho_true = cv[(0, 1)] / (cv[(0, 0)] * cv[(1, 1)]).sqrt();
    let se = (1.0 - rho_true * rho_true) / (draws.len() as f64).sqrt();
    assert!((rho - rho_true).abs() <= Z * se, "corr {rho} vs {rho_true}");
    assert!(
        c[0][2].abs() < Z * (c[0][0] * c[2][2] / 1e5).sqrt(),
        "cross-block cov"
    );
}

/// Thesis code (THESIS-NOTES §16): s_i = (T n τ_i + τ₀)^{-1/2}, data
/// independent. Exact to 1e-12 relative.
#[test]
fn banana_posterior_stds_match_spec_10_3() {
    let table: [(Experiment, f64, f64, Option<f64>); 6] = [
        (
            Experiment::EasyBanana2d,
            0.0141421342095176,
            0.004999999937500002,
            None,
        ),
        (
            Experiment::EasyBanana10d,
            0.009999999500000037,
            0.003535533883835651,
            Some(0.0022360679719096196),
        ),
        (
            Experiment::Gauss30d,
            0.009999999500000037,
            0.003535533883835651,
            Some(0.0022360679719096196),
        ),
        (
            Experiment::TemperedBanana2d,
            0.14141994204496,
            0.049999937500117185,
            None,
        ),
        (
            Experiment::TemperedBanana10d,
            0.14141994204496,
            0.049999937500117185,
            Some(0.031622760790307354),
        ),
        (
            Experiment::HardBanana2d,
            0.011547004613992232,
            0.00408248287061794,
            None,
        ),
    ];
    for (e, s1, s2, s3) in table {
        let p = e.banana_params().unwrap();
        // Any x̄ gives the same s_i.
        let xbar: Vec<f64> = (0..e.dim()).map(|i| 0.1 * i as f64).collect();
        let post = BananaPosterior::from_sufficient(&p, &xbar, e.n()).unwrap();
        let s = post.z_std();
        let mut want = vec![s1, s2];
        want.extend(std::iter::repeat_n(s3.unwrap_or(0.0), e.dim() - 2));
        assert_rel(e.key(), &s, &want, 1e-12);
    }
}

/// Thesis code (THESIS-NOTES §16): correlated Gauss, Σ₀ = 100 I, n = 2e5: posterior covariance and
/// S = Σ₀(Σ₀ + Σ/n)⁻¹ (the posterior mean is S x̄, so x̄ = e₁ gives S's first column).
#[test]
fn correlated_gauss_closed_form_matches_spec_10_3() {
    let cov = block_correlated_cov(2, 0.999).unwrap();
    let post = GaussianPosterior::from_sufficient(&[1.0, 0.0], 200_000, &cov, 100.0, 1.0).unwrap();
    let c = post.covariance();
    assert_rel(
        "cov",
        &[c[(0, 0)], c[(0, 1)], c[(1, 0)], c[(1, 1)]],
        &[
            4.999999500499799e-06,
            4.994999500500049e-06,
            4.994999500500049e-06,
            4.999999500499799e-06,
        ],
        1e-12,
    );
    assert_rel(
        "S first column",
        post.mean(),
        &[0.9999999500000049, -4.99499950050005e-08],
        1e-12,
    );
}

/// tests/data/diagnostics/refs.json → gauss_model (mpmath, 60 digits). Its README reports a
/// naive float64 formula within 2.2e-13 absolute (mean) and 5.8e-14 relative (cov); the
/// formula S = σ₀²(σ₀² I + Σ/n)⁻¹ used here measures ≤ 4.5e-16 absolute and ≤ 2e-16 relative,
/// so we test at 1e-13.
#[test]
fn correlated_gauss_matches_refs_json() {
    let r = refs();
    let g = &r["gauss_model"];
    let cov = block_correlated_cov(2, 0.999).unwrap();
    let xbar = vecf(&g["data_summary"]["xbar"]);
    let n = g["n"].as_u64().unwrap() as usize;
    for (key, prior_var) in [
        (
            "prior_var_100_as_in_thesis_table_and_true_posterior_code",
            100.0,
        ),
        (
            "prior_var_10000_as_in_thesis_code_log_prior_scale_100",
            10000.0,
        ),
    ] {
        let want = &g["posterior"][key];
        let post = GaussianPosterior::from_sufficient(&xbar, n, &cov, prior_var, 1.0).unwrap();
        let got_mean = post.mean();
        for (a, b) in got_mean.iter().zip(vecf(&want["posterior_mean"])) {
            eprintln!("{key} mean: abs diff {:.2e}", (a - b).abs());
            assert!((a - b).abs() < 1e-13, "{key} mean {a} vs {b}");
        }
        let c = post.covariance();
        let wc = &want["posterior_cov"];
        let wflat: Vec<f64> = wc.as_array().unwrap().iter().flat_map(vecf).collect();
        assert_rel(
            &format!("{key} cov"),
            &[c[(0, 0)], c[(0, 1)], c[(1, 0)], c[(1, 1)]],
            &wflat,
            1e-13,
        );
        assert_rel(
            &format!("{key} sd"),
            &post.std(),
            &vecf(&want["posterior_sd"]),
            1e-13,
        );
    }
    let w = &g["worked_example"];
    let post =
        GaussianPosterior::from_sufficient(&vecf(&w["inputs"]["xbar"]), 200_000, &cov, 100.0, 1.0)
            .unwrap();
    for (a, b) in post.mean().iter().zip(vecf(&w["posterior_mean"])) {
        assert!((a - b).abs() < 1e-13, "worked example mean {a} vs {b}");
    }
}

fn check_banana_ref(what: &str, post: &BananaPosterior, v: &Value, tol: f64) {
    assert_close(
        &format!("{what} mu_z"),
        post.z_mean(),
        &vecf(&v["mu_z"]),
        tol,
    );
    let var_z: Vec<f64> = post.z_std().iter().map(|s| s * s).collect();
    assert_rel(
        &format!("{what} Sigma_z"),
        &var_z,
        &vecf(&v["Sigma_z_diag"]),
        tol,
    );
    assert_close(
        &format!("{what} mean"),
        &post.mean(),
        &vecf(&v["theta_mean"]),
        tol,
    );
    assert_rel(
        &format!("{what} var"),
        &post.variance(),
        &vecf(&v["theta_var"]),
        tol,
    );
    let c12 = v["theta_cov_12"].as_f64().unwrap();
    assert_rel(&format!("{what} cov12"), &[post.cov12()], &[c12], tol);
}

/// tests/data/diagnostics/refs.json → banana (Theorem 13 closed forms from the stored x̄).
/// Tolerance 1e-13 relative, as the README suggests for the posterior formulas (measured:
/// ≤ 2.2e-16 relative for μ, s², E θ, Var θ, Cov; ≤ 4.6e-14 absolute for log densities ~10).
#[test]
fn banana_matches_refs_json() {
    let r = refs();
    let b = &r["banana"];
    let w = &b["worked_example"];
    let p = BananaParams::thesis(2, 20.0);
    let post = BananaPosterior::from_sufficient(&p, &vecf(&w["inputs"]["xbar"]), 1000).unwrap();
    check_banana_ref("worked example", &post, w, 1e-13);
    for (pt, want) in [
        ([0.1, 3.0], 3.1138779468571913),
        ([0.0, 3.2], 2.8638829468571916),
        ([-0.2, 2.5], -1.1364620531428087),
    ] {
        let got = post.log_density(&pt).unwrap();
        eprintln!("log p{pt:?}: diff {:.2e}", (got - want).abs());
        assert!(
            (got - want).abs() < 1e-13 * want.abs().max(1.0),
            "log p{pt:?}: {got} vs {want}"
        );
    }
    for (key, e) in [
        ("flat_banana_2d", Experiment::EasyBanana2d),
        ("flat_banana_10d", Experiment::EasyBanana10d),
        ("tempered_banana_2d", Experiment::TemperedBanana2d),
        ("tempered_banana_10d", Experiment::TemperedBanana10d),
        ("high_dim_gauss_30d", Experiment::Gauss30d),
        ("narrow_banana_2d", Experiment::HardBanana2d),
    ] {
        let v = &b["thesis_configs"][key];
        assert_eq!(v["d"].as_u64().unwrap() as usize, e.dim(), "{key} d");
        assert_eq!(v["n"].as_u64().unwrap() as usize, e.n(), "{key} n");
        assert_eq!(v["T"].as_f64().unwrap(), e.tempering(), "{key} T");
        assert_eq!(v["a"].as_f64().unwrap(), e.a(), "{key} a");
        assert_eq!(vecf(&v["sigma_sq"]), e.banana_params().unwrap().lik_vars);
        assert_eq!(vecf(&v["theta_true"]), e.true_theta().unwrap());
        let post =
            BananaPosterior::from_sufficient(&e.banana_params().unwrap(), &vecf(&v["xbar"]), e.n())
                .unwrap();
        check_banana_ref(key, &post, v, 1e-13);
        let lp = v["logpdf_normalised_at_theta_true"].as_f64().unwrap();
        let got = post.log_density(&e.true_theta().unwrap()).unwrap();
        eprintln!("{key} log p(θ_true): diff {:.2e}", (got - lp).abs());
        assert!(
            (got - lp).abs() < 1e-13 * lp.abs().max(1.0),
            "{key} log p: {got} vs {lp}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Presets

#[test]
fn experiment_keys_and_table_5_1() {
    assert_eq!(Experiment::ALL.len(), 8);
    let keys: Vec<&str> = Experiment::ALL.iter().map(|e| e.key()).collect();
    assert_eq!(
        keys,
        [
            "easy-2d",
            "easy-10d",
            "tempered-2d",
            "tempered-10d",
            "gauss-30d",
            "hard-2d",
            "hard-gauss-2d",
            "circle"
        ]
    );
    for e in Experiment::ALL {
        assert_eq!(e.key().parse::<Experiment>().unwrap(), e);
        assert_eq!(e.to_string(), e.key());
    }
    let json = serde_json::to_string(&Experiment::ALL).unwrap();
    assert!(json.starts_with(r#"["easy-2d","easy-10d""#), "{json}");
    let back: Vec<Experiment> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, Experiment::ALL);
    assert!(serde_json::from_str::<Experiment>(r#""easy-3d""#).is_err());
    let err = "banana".parse::<Experiment>().unwrap_err().to_string();
    for k in keys {
        assert!(err.contains(k), "error lists {k}: {err}");
    }
    // Table 5.1 (THESIS-NOTES §10): d, n, n0, a, σ0².
    let table = [
        (2, 100_000, None, 20.0, Some(1000.0)),
        (10, 200_000, None, 20.0, Some(1000.0)),
        (2, 100_000, Some(1000), 20.0, Some(1000.0)),
        (10, 200_000, Some(1000), 20.0, Some(1000.0)),
        (30, 200_000, None, 0.0, Some(1000.0)),
        (2, 150_000, None, 350.0, Some(1000.0)),
        (2, 200_000, None, 0.0, Some(100.0)),
        (2, 100_000, None, 1e-5, None),
    ];
    for (e, (d, n, n0, a, s0)) in Experiment::ALL.into_iter().zip(table) {
        assert_eq!(
            (e.dim(), e.n(), e.n0(), e.a(), e.prior_var()),
            (d, n, n0, a, s0)
        );
    }
    assert_eq!(Experiment::TemperedBanana10d.tempering(), 0.005);
    assert_eq!(Experiment::Circle.true_theta(), None);
    assert_eq!(Experiment::Circle.start_center(), vec![0.0, 1.0]);
}

#[test]
fn experiment_models_data_and_start_points() {
    for e in Experiment::ALL {
        let t0 = std::time::Instant::now();
        let m = e.model().unwrap();
        let gen_time = t0.elapsed();
        eprintln!("{}: data + model in {gen_time:?} (debug build)", e.key());
        assert_eq!(
            (m.dim(), m.n_rows(), m.tempering()),
            (e.dim(), e.n(), e.tempering())
        );
        assert_eq!(m.experiment(), e);
        // Same seed, same data; other seed, other data.
        let again = e.model().unwrap();
        assert_eq!(
            m.log_lik_row(&e.start_center(), 5),
            again.log_lik_row(&e.start_center(), 5)
        );
        let other = e.model_with_seed(1).unwrap();
        assert_ne!(
            m.log_lik_row(&e.start_center(), 5),
            other.log_lik_row(&e.start_center(), 5)
        );

        let starts = m.start_points(20);
        assert_eq!(starts.len(), 20);
        assert_eq!(starts[4], m.start_point(4));
        let nu = m.start_spread();
        match m.reference_std() {
            None => {
                assert_eq!(e, Experiment::Circle);
                assert_eq!(nu, 1.0);
                assert_eq!(m.reference_mean(), vec![0.0, 0.0]);
                assert!(m.default_reference_sample().is_none());
            }
            Some(sd) => {
                // ν is the mean of 1000-draw sample stds: within 10 % of the exact mean std
                // (the relative SE of a 1000-draw sd is ≈ 2.2 %, and the mean over coordinates
                // is at least as precise; 10 % is > 4 SE).
                let exact = sd.iter().sum::<f64>() / sd.len() as f64;
                assert!(
                    (nu / exact - 1.0).abs() < 0.1,
                    "{}: ν {nu} vs {exact}",
                    e.key()
                );
                let reference = m.default_reference_sample().unwrap();
                assert_eq!(reference.len(), REFERENCE_DRAWS);
                assert_eq!(mean_sample_std(&reference), nu);
                // The data's posterior mean is near the true θ (within 6 posterior sds: the
                // data mean scatters by ~1 posterior sd around it, plus the banana's
                // −a s₁² shift of E θ₂ which is < 0.5 sd here... except tempered: see below).
                let mean = m.reference_mean();
                let truth = e.true_theta().unwrap();
                for i in 0..e.dim() {
                    let tol = 6.0 * sd[i] + if i == 1 { e.a() * sd[0] * sd[0] } else { 0.0 };
                    assert!(
                        (mean[i] - truth[i]).abs() < tol,
                        "{}: posterior mean[{i}] {} vs true {}",
                        e.key(),
                        mean[i],
                        truth[i]
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Logistic regression and custom models

#[test]
fn logistic_lipschitz_bound_holds() {
    let m = logistic(500);
    let l = m.lipschitz_bound();
    let theta = [0.4, -0.9, 0.7];
    let theta_new = [1.4, -2.9, 0.2];
    let dist = theta
        .iter()
        .zip(&theta_new)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt();
    let mut r = vec![0.0; 500];
    m.log_lik_ratio_rows(&theta, &theta_new, 0, &mut r);
    let max_r = r.iter().fold(0.0_f64, |a, &x| a.max(x.abs()));
    assert!(max_r <= l * dist, "max |r| {max_r} <= L Δ {}", l * dist);
    // The bound is attained up to the logistic slope: it is the max row norm.
    assert!(l > 1.0 && l <= (1.0 + 4.0 + 4.0_f64).sqrt());
    let mut g = [0.0; 3];
    for j in 0..500 {
        m.grad_log_lik_row(&theta, j, &mut g).unwrap();
        assert!(g.iter().map(|x| x * x).sum::<f64>().sqrt() <= l);
    }
}

#[test]
fn custom_model_without_gradient_reports_it() {
    let m = CustomModel::new(
        RowData::from_row_major(vec![1.0, 2.0], 1).unwrap(),
        1,
        |t, r| -(r[0] - t[0]).powi(2),
    )
    .unwrap();
    assert!(!m.has_gradient());
    let err = m.grad_log_lik_row(&[0.0], 0, &mut [0.0]).unwrap_err();
    assert!(err.to_string().contains("with_gradient"), "{err}");
    assert_eq!(m.param_names(), ["theta_0"]);
    assert_eq!(m.log_prior(&[3.0]), 0.0);
}

// ---------------------------------------------------------------------------------------------
// DataFrame / CSV conversion

#[test]
fn data_from_frame_and_csv() {
    use dp_mcmc::frame::data::*;
    use dp_mcmc::polars::prelude::*;
    let df = df!(
        "x" => [1.0, 2.0, 3.0],
        "n" => [1i32, 0, 1],
        "flag" => [true, false, true],
        "s" => ["a", "b", "c"],
        "gap" => [Some(1.0), None, Some(3.0)],
        "bad" => [1.0, f64::INFINITY, 0.0]
    )
    .unwrap();
    let rows = row_data(&df, &["x", "n", "flag"]).unwrap();
    assert_eq!(rows.row(1), &[2.0, 0.0, 0.0]);
    let cols = column_data(&df, &["n", "x"]).unwrap();
    assert_eq!(cols.col(1), &[1.0, 2.0, 3.0]);
    let e = row_data(&df, &["x", "gap"]).unwrap_err().to_string();
    assert!(
        e.contains("`gap`") && e.contains("null") && e.contains("row 1"),
        "{e}"
    );
    let e = row_data(&df, &["bad"]).unwrap_err().to_string();
    assert!(
        e.contains("`bad`") && e.contains("row 1") && e.contains("inf"),
        "{e}"
    );
    let e = row_data(&df, &["s"]).unwrap_err().to_string();
    assert!(e.contains("`s`") && e.contains("numeric"), "{e}");
    let e = row_data(&df, &["nope"]).unwrap_err().to_string();
    assert!(e.contains("`nope`") && e.contains("x"), "{e}");
    let empty = df.head(Some(0));
    assert!(row_data(&empty, &["x"]).is_err());

    let dir = std::env::temp_dir().join(format!("dp-mcmc-models-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("data.csv");
    std::fs::write(&path, "x,y,label\n0.5,1.5,a\n-1,2,b\n3,,c\n").unwrap();
    let rows = row_data_from_csv(&path, &["x", "y"]);
    let e = rows.unwrap_err().to_string();
    assert!(e.contains("`y`") && e.contains("row 2"), "{e}");
    std::fs::write(&path, "x,y\n0.5,1.5\n-1,2\n").unwrap();
    let rows = row_data_from_csv(&path, &[]).unwrap();
    assert_eq!(rows.as_slice(), &[0.5, 1.5, -1.0, 2.0]);
    let cols = column_data_from_csv(&path, &["y"]).unwrap();
    assert_eq!(cols.col(0), &[1.5, 2.0]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(row_data_from_csv(dir.join("missing.csv"), &[]).is_err());
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn bad_input_is_an_error_naming_the_problem() {
    let msg = |r: dp_mcmc::Result<()>| r.unwrap_err().to_string();
    let ok2 = || {
        BananaParams::thesis(2, 20.0)
            .generate(&[0.0, 3.0], 10, 1)
            .unwrap()
    };

    // Data.
    assert!(msg(ColumnData::<f64>::from_columns(vec![]).map(|_| ())).contains("no columns"));
    assert!(msg(ColumnData::<f64>::from_columns(vec![vec![]]).map(|_| ())).contains("no rows"));
    let e = msg(ColumnData::from_columns(vec![vec![1.0, f64::NAN]]).map(|_| ()));
    assert!(e.contains("non-finite") && e.contains("row 1"), "{e}");
    let e = msg(RowData::from_row_major(vec![1.0, f64::INFINITY], 1).map(|_| ()));
    assert!(e.contains("row 1"), "{e}");
    assert!(RowData::<f64>::from_row_major(vec![], 1).is_err());

    // Banana.
    let e = msg(BananaModel::new(ok2(), BananaParams::thesis(3, 20.0)).map(|_| ()));
    assert!(
        e.contains("data columns") && e.contains("expected 3"),
        "{e}"
    );
    for (t, _) in [(0.0, ()), (1.5, ()), (f64::NAN, ()), (-0.1, ())] {
        let e = msg(
            BananaModel::new(ok2(), BananaParams::thesis(2, 20.0).with_tempering(t)).map(|_| ()),
        );
        assert!(e.contains("tempering") && e.contains("(0, 1]"), "{e}");
    }
    let mut p = BananaParams::thesis(2, 20.0);
    p.lik_vars[1] = 0.0;
    assert!(msg(p.validate()).contains("lik_vars"));
    let mut p = BananaParams::thesis(2, 20.0);
    p.prior_var = -1.0;
    assert!(msg(p.validate()).contains("prior_var"));
    assert!(msg(BananaParams::thesis(2, f64::INFINITY).validate()).contains("`a`"));
    let mut p = BananaParams::thesis(2, 1.0);
    p.b = f64::NAN;
    assert!(msg(p.validate()).contains("`b`"));
    assert!(msg(BananaParams::thesis(1, 1.0).validate()).contains("d >= 2"));
    assert!(
        BananaParams::thesis(2, 1.0)
            .generate(&[0.0, f64::NAN], 5, 1)
            .is_err()
    );
    assert!(
        BananaParams::thesis(2, 1.0)
            .generate(&[0.0, 1.0], 0, 1)
            .is_err()
    );

    // Gaussian.
    let cov = block_correlated_cov(2, 0.999).unwrap();
    let data3 = BananaParams::thesis(3, 0.0)
        .generate(&[0.0; 3], 10, 1)
        .unwrap();
    let e = msg(GaussianModel::new(data3, cov.clone(), 100.0).map(|_| ()));
    assert!(e.contains("cov rows"), "{e}");
    let not_pd = dp_mcmc::nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
    let e = msg(GaussianModel::new(ok2(), not_pd, 100.0).map(|_| ()));
    assert!(e.contains("positive definite"), "{e}");
    let asym = dp_mcmc::nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.4, 1.0]);
    assert!(msg(GaussianModel::new(ok2(), asym, 100.0).map(|_| ())).contains("symmetric"));
    assert!(msg(GaussianModel::new(ok2(), cov.clone(), 0.0).map(|_| ())).contains("prior_var"));
    assert!(block_correlated_cov(2, 1.0).is_err());

    // Circle.
    assert!(msg(CircleModel::new(&[1.0], 0.0).map(|_| ())).contains("`a`"));
    assert!(msg(CircleModel::new(&[1.0], f64::NAN).map(|_| ())).contains("`a`"));
    assert!(msg(CircleModel::new(&[1.0, f64::NAN], 1.0).map(|_| ())).contains("radii"));

    // Logistic.
    let x = ColumnData::from_columns(vec![vec![1.0, 2.0]]).unwrap();
    assert!(msg(LogisticModel::new(x.clone(), &[1.0], 1.0).map(|_| ())).contains("`y`"));
    assert!(msg(LogisticModel::new(x.clone(), &[1.0, 0.5], 1.0).map(|_| ())).contains("{0, 1}"));
    assert!(msg(LogisticModel::new(x, &[1.0, 0.0], f64::NAN).map(|_| ())).contains("prior_var"));

    // Gradient buffers of the wrong length.
    let m = banana(2, 20.0, 10);
    assert!(m.grad_log_lik_row(&[0.0, 3.0], 0, &mut [0.0; 3]).is_err());
    assert!(m.grad_log_lik_rows(&[0.0, 3.0], 0, &mut [0.0; 3]).is_err());
}

#[test]
fn models_are_send_sync_and_cheap_to_clone() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<BananaModel>();
    assert_traits::<GaussianModel>();
    assert_traits::<CircleModel>();
    assert_traits::<LogisticModel>();
    assert_traits::<CustomModel>();
    assert_traits::<ExperimentModel>();
    assert_traits::<ExactPosterior>();
    assert_traits::<ColumnData>();
    assert_traits::<RowData>();
    fn assert_model<T: Model>() {}
    assert_model::<ExperimentModel>();
    let _shared: std::sync::Arc<dyn Model> = std::sync::Arc::new(custom(3));
    // Cloning shares the data: an n = 2e5 × 30 clone is instant.
    let m = Experiment::Gauss30d.model().unwrap();
    let t = std::time::Instant::now();
    let clones: Vec<ExperimentModel> = (0..1000).map(|_| m.clone()).collect();
    assert!(
        t.elapsed().as_millis() < 500,
        "1000 clones took {:?}",
        t.elapsed()
    );
    assert_eq!(clones[999].n_rows(), 200_000);
}

/// The point of the fast overrides: a one-coordinate update on the 30-d model streams through
/// one column instead of evaluating all 30 coordinates twice per row. The margin is large
/// (≈ 60 column reads vs 1), so "at least 5× faster than row by row" holds even in debug builds.
#[test]
fn one_coordinate_ratio_is_much_faster_than_row_by_row() {
    let p = BananaParams::thesis(30, 0.0);
    let mut theta = vec![0.0; 30];
    theta[1] = 3.0;
    let m = BananaModel::new(p.generate(&theta, 20_000, 1).unwrap(), p).unwrap();
    let mut theta_new = theta.clone();
    theta_new[7] += 0.01;
    let mut out = vec![0.0; m.n_rows()];
    let time = |f: &mut dyn FnMut()| {
        let t = std::time::Instant::now();
        for _ in 0..5 {
            f();
        }
        t.elapsed().as_secs_f64() / 5.0
    };
    let fast = time(&mut || m.log_lik_ratio_rows(&theta, &theta_new, 0, &mut out));
    let slow = time(&mut || {
        for (j, o) in out.iter_mut().enumerate() {
            *o = m.log_lik_row(&theta_new, j) - m.log_lik_row(&theta, j);
        }
    });
    eprintln!(
        "one-coordinate ratio, d = 30: fast {:.2} ns/row, row by row {:.2} ns/row",
        fast * 1e9 / 20_000.0,
        slow * 1e9 / 20_000.0
    );
    assert!(
        fast * 5.0 < slow,
        "fast {fast:e} s vs row by row {slow:e} s"
    );
}
