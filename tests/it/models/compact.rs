//! The compact (`f32`) data layout: the stored data are the data rounded once, results stay
//! within bounds derived from that rounding, runs are reproducible, and data that do not fit
//! `f32` are typed errors.
//!
//! Tolerances: rounding to the nearest `f32` moves a value `x` by at most `U·|x|` with
//! `U = 2⁻²⁴` (half an ulp; subnormals do not occur in these data). Every model computes in
//! `f64` from the rounded values, so a quantity linear in the data moves by at most `U` times
//! the same quantity with `|x|`, plus `f64` rounding (~10⁻¹⁶ relative, far below).

use dp_mcmc::Error;
use dp_mcmc::models::{
    ColumnData, CustomModel, ExactPosterior, Experiment, Layout, LogisticModel, Model, RowData,
};
use dp_mcmc::samplers::DpPenalty;
use dp_mcmc::samplers::RunSetters;

/// Unit roundoff of rounding to `f32`: `|fl32(x) − x| ≤ U |x|`.
const U: f64 = 1.0 / (1u64 << 24) as f64;

#[test]
fn compact_data_are_the_data_rounded_once() {
    let m = Experiment::EasyBanana2d.model().unwrap();
    let data = m.as_banana().unwrap().data();
    let compact = data.compact().unwrap();
    assert_eq!(
        (compact.layout(), data.layout()),
        (Layout::F32, Layout::F64)
    );
    assert_eq!(compact.size_bytes() * 2, data.size_bytes());
    for i in 0..2 {
        for (&x, &c) in data.col(i).iter().zip(compact.col(i)) {
            assert_eq!(c, x as f32);
            assert!((f64::from(c) - x).abs() <= U * x.abs());
        }
    }
}

/// The exact posterior means of the rounded data stay within the rounding bound: the
/// posterior location `μ_i = s_i x̄_i` (shrinkage `s_i ≤ 1`) moves by at most
/// `U · mean_j |x_ji|` (plus `2n·ε₆₄·mean|x|` for the two `f64` sums).
#[test]
fn exact_posterior_means_move_by_at_most_the_rounding() {
    for exp in [Experiment::EasyBanana2d, Experiment::Gauss30d] {
        let m64 = exp.model().unwrap();
        let m32 = m64.clone().compact().unwrap();
        let data = m64.as_banana().unwrap().data();
        let (Some(ExactPosterior::Banana(p64)), Some(ExactPosterior::Banana(p32))) =
            (m64.exact_posterior(), m32.exact_posterior())
        else {
            panic!("{exp}: banana family");
        };
        let n = data.n_rows() as f64;
        let mut moved = false;
        for i in 0..exp.dim() {
            let mean_abs = data.col(i).iter().map(|x| x.abs()).sum::<f64>() / n;
            let tol = (U + 2.0 * n * f64::EPSILON) * mean_abs;
            let diff = (p64.z_mean()[i] - p32.z_mean()[i]).abs();
            assert!(diff <= tol, "{exp} coordinate {i}: {diff} > {tol}");
            moved |= diff > 0.0;
        }
        // The rounding is real: some mean moved (a no-op "compact" would fail here).
        assert!(moved, "{exp}: no posterior mean moved");
    }
}

/// Same seed, same settings: the chains' proposals and noise are the same, and an accept
/// decision can only change if the log acceptance statistic lies within its perturbation
/// (`≤ U Σ_j |r_j|`-sized, ~10⁻⁵ here) of the uniform's logarithm: probability ~10⁻⁵ per
/// step, so over these 600 + 100 steps the draws are identical (they do not depend on the
/// data otherwise).
#[test]
fn dp_penalty_draws_match_f64_with_the_same_seed() {
    for (exp, chains, iters, sd) in [
        (Experiment::EasyBanana2d, 2, 300, 0.008),
        (Experiment::Gauss30d, 1, 100, 0.002),
    ] {
        let m64 = exp.model().unwrap();
        let m32 = m64.clone().compact().unwrap();
        let sampler = DpPenalty::builder()
            .tau(0.1)
            .clip_bound(2.0)
            .proposal_sd(sd)
            .iterations(iters)
            .chains(chains)
            .starts(m64.start_points(chains))
            .seed(3);
        let (r64, r32) = (sampler.run(&m64).unwrap(), sampler.run(&m32).unwrap());
        for (c64, c32) in r64.chains.iter().zip(&r32.chains) {
            assert_eq!(c64.draws, c32.draws, "{exp}");
            // Both accepted and rejected steps occur (an all-reject chain would match trivially).
            let acc = c64.acceptance();
            assert!(acc > 0.02 && acc < 0.98, "{exp}: acceptance {acc}");
        }
    }
}

#[test]
fn compact_runs_are_reproducible() {
    let m = Experiment::HardGauss2d.model().unwrap().compact().unwrap();
    let run = || {
        DpPenalty::builder()
            .tau(0.1)
            .clip_bound(2.0)
            .proposal_sd(0.005)
            .iterations(200)
            .chains(3)
            .starts(m.start_points(3))
            .seed(11)
            .run(&m)
            .unwrap()
    };
    let (a, b) = (run(), run());
    for (ca, cb) in a.chains.iter().zip(&b.chains) {
        assert_eq!(ca.draws, cb.draws);
        // Debug strings: the records hold NaN fields (NaN != NaN under PartialEq).
        assert_eq!(format!("{:?}", ca.stats), format!("{:?}", cb.stats));
    }
}

/// Logistic regression: `ℓ` has slope `|y − σ(η)| ≤ 1` in `η`, so a row's log-likelihood moves
/// by at most `|Δη| ≤ U Σ_i |θ_i x_ji|`.
#[test]
fn logistic_log_likelihoods_move_by_at_most_the_rounding() {
    let n = 2000;
    let x1: Vec<f64> = (0..n)
        .map(|j| ((j * 37) % 101) as f64 / 7.3 - 6.0)
        .collect();
    let y: Vec<f64> = (0..n).map(|j| ((j * 7 + j / 3) % 2) as f64).collect();
    let x = ColumnData::from_columns(vec![vec![1.0; n], x1.clone()]).unwrap();
    let m64 = LogisticModel::new(x, &y, 10.0).unwrap();
    let m32 = m64.compact().unwrap();
    let theta = [0.3, -0.71];
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    m64.log_lik_rows(&theta, 0, &mut a);
    m32.log_lik_rows(&theta, 0, &mut b);
    let mut moved = 0;
    for j in 0..n {
        let tol = U * (theta[0].abs() + (theta[1] * x1[j]).abs()) + 1e-14;
        assert!((a[j] - b[j]).abs() <= tol, "row {j}");
        moved += usize::from(a[j] != b[j]);
    }
    assert!(moved > n / 2, "only {moved} rows moved");
    // The gradient passes agree with the row-by-row gradient of the compact model.
    let mut cols = vec![0.0; 2 * n];
    m32.grad_log_lik_cols(&theta, 0, &mut cols).unwrap();
    let mut g = [0.0; 2];
    m32.grad_log_lik_row(&theta, 17, &mut g).unwrap();
    assert_eq!((cols[17], cols[n + 17]), (g[0], g[1]));
}

/// Custom models hand their closures `f64` rows converted exactly from the stored `f32`
/// values, also past the 64-value stack buffer (a reused per-thread buffer).
#[test]
fn custom_models_see_the_rounded_rows_as_f64() {
    for p in [3, 70] {
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|j| (0..p).map(|i| 0.1 * (i + j) as f64).collect())
            .collect();
        let data = RowData::from_rows(&rows).unwrap();
        let model = CustomModel::new(data, 1, |t, row| row.iter().map(|x| x * t[0]).sum())
            .unwrap()
            .with_gradient(|_, row, g| g[0] = row.iter().sum())
            .compact()
            .unwrap();
        assert_eq!(model.layout(), Layout::F32);
        for (j, r) in rows.iter().enumerate() {
            let want: f64 = r.iter().map(|&x| f64::from(x as f32)).sum();
            assert_eq!(model.log_lik_row(&[1.0], j), want, "p = {p}, row {j}");
            let mut g = [0.0];
            model.grad_log_lik_row(&[1.0], j, &mut g).unwrap();
            assert_eq!(g[0], want);
        }
    }
}

#[test]
fn data_that_do_not_fit_f32_are_typed_errors() {
    let is_data_err = |e: Error, needle: &str| {
        let msg = e.to_string();
        assert!(matches!(e, Error::InvalidData(_)), "{msg}");
        assert!(msg.contains(needle), "{msg}");
    };
    let c = ColumnData::from_columns(vec![vec![1.0, 2.0], vec![0.5, 4e38]]).unwrap();
    is_data_err(c.compact().unwrap_err(), "row 1, column 1");
    let r = RowData::from_rows(&[vec![1.0, -1e39]]).unwrap();
    is_data_err(r.compact().unwrap_err(), "row 0, column 1");
    let circle = dp_mcmc::models::CircleModel::new(&[3.0, 2.0e19], 1e-5).unwrap();
    is_data_err(circle.compact().unwrap_err(), "row 1");
    // A declared public bound the rounded data break (0.1 rounds up to 0.100000001…).
    let x = ColumnData::from_columns(vec![vec![0.1, -0.5]]).unwrap();
    let bounded = LogisticModel::new(x, &[0.0, 1.0], 10.0)
        .unwrap()
        .with_public_feature_bounds(&[(-1.0, 0.1)])
        .unwrap();
    is_data_err(bounded.compact().unwrap_err(), "row 0");
    // Non-finite or ragged f32 data.
    is_data_err(
        ColumnData::from_column_major(vec![1.0f32, f32::INFINITY], 1).unwrap_err(),
        "row 1",
    );
    assert!(ColumnData::from_column_major(vec![1.0f32; 3], 2).is_err());
    assert!(ColumnData::from_column_major(Vec::<f32>::new(), 1).is_err());
    // An f32 model cannot be stored as f64 again; the layout name is checked.
    let m = Experiment::Circle.model().unwrap().compact().unwrap();
    assert!(matches!(
        m.with_layout(Layout::F64),
        Err(Error::InvalidParameter { name: "layout", .. })
    ));
    assert!(matches!(
        "f16".parse::<Layout>(),
        Err(Error::InvalidParameter { name: "layout", .. })
    ));
}

/// The measurement behind docs/PERFORMANCE.md ("Compact data layout"): how far the exact
/// posterior means and DP penalty runs (the thesis' tuned settings, ε = 4 and δ = 0.1/n per chain, 4 chains,
/// seed 1) move on easy-2d and gauss-30d. Run with
/// `cargo test --test it models::compact -- --ignored --nocapture`.
#[test]
#[ignore = "measurement for the docs (about 2 minutes in the dev profile)"]
fn measure_the_layout_effect() {
    use dp_mcmc::experiments::{SamplerKind, tuned};
    for exp in [Experiment::EasyBanana2d, Experiment::Gauss30d] {
        let m64 = exp.model().unwrap();
        let m32 = m64.clone().compact().unwrap();
        let (e64, e32) = (m64.reference_mean(), m32.reference_mean());
        let sd = m64.reference_std().unwrap();
        let exact = (0..exp.dim())
            .map(|i| (e64[i] - e32[i]).abs() / sd[i])
            .fold(0.0, f64::max);
        let sampler = tuned(exp, SamplerKind::DpPenalty)
            .unwrap()
            .epsilon(4.0)
            .delta(0.1 / exp.n() as f64)
            .per_chain_budget(true)
            .chains(4)
            .starts(m64.start_points(4))
            .seed(1);
        let (r64, r32) = (sampler.run(&m64).unwrap(), sampler.run(&m32).unwrap());
        let same = r64
            .chains
            .iter()
            .zip(&r32.chains)
            .filter(|(a, b)| a.draws == b.draws)
            .count();
        let d = exp.dim();
        let mean = |r: &dp_mcmc::samplers::Run| -> Vec<f64> {
            let mut m = vec![0.0; d];
            let mut k = 0.0;
            for c in &r.chains {
                for row in c.kept_half(d).chunks_exact(d) {
                    m.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                    k += 1.0;
                }
            }
            m.iter().map(|a| a / k).collect()
        };
        let (s64, s32) = (mean(&r64), mean(&r32));
        let run = (0..d)
            .map(|i| (s64[i] - s32[i]).abs() / sd[i])
            .fold(0.0, f64::max);
        println!(
            "{exp}: exact posterior mean max |Δ|/sd = {exact:.2e}; DP penalty ({} iterations x 4 \
             chains): {same}/4 chains with identical draws, sample mean max |Δ|/sd = {run:.2e}",
            r64.chains[0].len()
        );
    }
}
