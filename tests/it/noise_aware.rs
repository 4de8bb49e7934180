//! The noise-aware method (`dp_mcmc::noise_aware`): every release is calibrated to what the
//! ledger charges (sensitivity over substitution, Gaussian noise of the charged scale), the
//! ledger recomposes within the budget, unseeded runs draw from OS entropy, and the posterior
//! covers a known truth on simulated data (a quick subset of the simulation-based
//! calibration grid of docs/NOISE-AWARE.md).

use dp_mcmc::accounting::{Accountant, Pld};
use dp_mcmc::noise_aware::{
    GlmData, GlmKind, INDEFINITE_WARNING, NoiseAware, release_information, release_score,
    release_sufficient,
};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::RunSetters;
use nalgebra::DMatrix;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

/// `n` rows of a regression of `kind` with `p − 1` covariates uniform on [0, 1] (an
/// intercept first), coefficients `beta`, drawn with `seed`.
fn simulate(kind: GlmKind, n: usize, beta: &[f64], seed: u64) -> GlmData {
    let p = beta.len();
    let mut rng = chain_rng(seed, 0);
    let (mut x, mut y) = (Vec::with_capacity(n * p), Vec::with_capacity(n));
    for _ in 0..n {
        let mut row = vec![1.0];
        row.extend((1..p).map(|_| rng.random::<f64>()));
        let eta: f64 = row.iter().zip(beta).map(|(a, b)| a * b).sum();
        let u: f64 = rng.random();
        y.push(match kind {
            GlmKind::Logistic => f64::from(u < 1.0 / (1.0 + (-eta).exp())),
            GlmKind::Poisson => {
                // inversion of the Poisson CDF, capped at the declared 30
                let (mut k, mut pk) = (0.0, (-eta.exp()).exp());
                let mut cdf = pk;
                while u > cdf && k < 30.0 {
                    k += 1.0;
                    pk *= eta.exp() / k;
                    cdf += pk;
                }
                k
            }
            GlmKind::Linear => {
                let z: f64 = StandardNormal.sample(&mut rng);
                (eta + 0.5 * z).clamp(-5.0, 5.0)
            }
        });
        x.extend(row);
    }
    let mut bounds = vec![(1.0, 1.0)];
    bounds.extend(std::iter::repeat_n((0.0, 1.0), p - 1));
    let mut names: Vec<String> = (0..p).map(|i| format!("b{i}")).collect();
    if kind == GlmKind::Linear {
        names.push("log_sigma".into());
    }
    let y_bounds = match kind {
        GlmKind::Logistic => (0.0, 1.0),
        GlmKind::Poisson => (0.0, 30.0),
        GlmKind::Linear => (-5.0, 5.0),
    };
    GlmData::new(kind, x, y, bounds, y_bounds, 10.0, names).unwrap()
}

/// The exact (noise-free) statistic: a release with a vanishing noise multiplier.
fn exact(
    release: impl Fn(f64, &mut dp_mcmc::rng::ChainRng) -> dp_mcmc::noise_aware::Release,
) -> Vec<f64> {
    release(1e-300, &mut chain_rng(0, 0)).values
}

/// Calibration of both releases of every model: (release − exact statistic) / noise sd over
/// 400 seeded releases is standard normal (mean within 4 standard errors of 0, variance within
/// 4 standard errors of 1, for N = 400 × entries values), and the noise sd is exactly the
/// sensitivity times the noise multiplier.
#[test]
fn releases_add_the_noise_they_are_charged_for() {
    for kind in [GlmKind::Logistic, GlmKind::Poisson, GlmKind::Linear] {
        let data = simulate(kind, 500, &[0.2, -0.5, 1.0], 1);
        let d = data.dim();
        let theta: Vec<f64> = (0..d).map(|i| 0.1 * i as f64).collect();
        let shape = DMatrix::from_fn(d, d, |i, j| if i == j { 1.0 + i as f64 } else { 0.3 });
        let z = 1.7;
        for which in ["information", "score"] {
            let rel = |z: f64, rng: &mut dp_mcmc::rng::ChainRng| match which {
                "information" => release_information(&data, &theta, &shape, z, rng).unwrap(),
                _ => release_score(&data, &theta, &shape, z, rng).unwrap(),
            };
            let truth = exact(rel);
            let mut std = Vec::new();
            for s in 0..400 {
                let r = rel(z, &mut chain_rng(100 + s, 7));
                assert_eq!(r.noise_sd, r.sensitivity * z, "{kind:?} {which}");
                std.extend(
                    r.values
                        .iter()
                        .zip(&truth)
                        .map(|(a, b)| (a - b) / r.noise_sd),
                );
            }
            assert_standard_normal(&std, &format!("{kind:?} {which}"));
        }
    }
}

/// Sensitivity: substituting any one row by another the declared bounds allow (the box's
/// vertices and random rows, every response value at its ends) moves each exact statistic by
/// at most the sensitivity the noise is calibrated to.
#[test]
fn substituting_a_row_moves_each_statistic_by_at_most_its_sensitivity() {
    let mut rng = chain_rng(9, 0);
    for kind in [GlmKind::Logistic, GlmKind::Poisson, GlmKind::Linear] {
        let data = simulate(kind, 50, &[0.2, -0.5, 1.0], 2);
        let d = data.dim();
        for trial in 0..60 {
            let theta: Vec<f64> = (0..d).map(|_| rng.random_range(-1.5..1.5)).collect();
            let shape = DMatrix::from_fn(d, d, |_, _| rng.random_range(-1.0..1.0));
            // a neighbour: row 0 replaced by a vertex (even trials) or a random row
            let (x, mut y) = row_zero_replaced(&data, trial % 2 == 0, &mut rng);
            y[0] = match kind {
                GlmKind::Logistic => f64::from(rng.random_range(0..2u8)),
                GlmKind::Poisson => [0.0, 30.0][rng.random_range(0..2usize)],
                GlmKind::Linear => [-5.0, 5.0][rng.random_range(0..2usize)],
            };
            let names = data.param_names().to_vec();
            let bounds = vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0)];
            let y_b = match kind {
                GlmKind::Logistic => (0.0, 1.0),
                GlmKind::Poisson => (0.0, 30.0),
                GlmKind::Linear => (-5.0, 5.0),
            };
            let other = GlmData::new(kind, x, y, bounds, y_b, 10.0, names).unwrap();
            for which in ["information", "score"] {
                let rel = |data: &GlmData, z: f64, rng: &mut dp_mcmc::rng::ChainRng| match which {
                    "information" => release_information(data, &theta, &shape, z, rng).unwrap(),
                    _ => release_score(data, &theta, &shape, z, rng).unwrap(),
                };
                let a = rel(&data, 1e-300, &mut chain_rng(0, 0));
                let b = rel(&other, 1e-300, &mut chain_rng(0, 0));
                let moved: f64 = a
                    .values
                    .iter()
                    .zip(&b.values)
                    .map(|(u, v)| (u - v).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(
                    moved <= a.sensitivity * (1.0 + 1e-9),
                    "{kind:?} {which}: {moved} > {}",
                    a.sensitivity
                );
            }
        }
    }
}

/// A linear model's releases (`release_sufficient`: the pilot `svec(XᵀX)`, `svec(B XᵀX B)`
/// whitened by it, `Xᵀy`, `yᵀy` in the public frame): each noisy entry's standardised noise is
/// N(0, 1) over 400 seeded releases (the tolerances of the test above; the whitened release
/// against its exact value at its own `B`), each noise sd is its sensitivity times its noise
/// multiplier, the intercept's `n` is released exactly (public), and substituting row 0 by
/// any row the bounds allow (box vertices with the response at ±5, or random rows) moves each
/// exact statistic by at most its sensitivity (the whitened one at one fixed public `B`, as
/// the release is conditioned on the pilot).
#[test]
fn sufficient_statistics_are_calibrated_and_bounded() {
    use dp_mcmc::noise_aware::{SufficientRelease, release_whitened_xtx};
    let data = simulate(GlmKind::Linear, 500, &[0.2, -0.5, 1.0], 1);
    let parts = |r: &SufficientRelease| {
        let w = r.xtx_whitened.as_ref().unwrap();
        [
            (r.xtx.values.clone(), r.xtx.noise_sd, r.xtx.sensitivity),
            (w.values.clone(), w.noise_sd, w.sensitivity),
            (r.xty.values.clone(), r.xty.noise_sd, r.xty.sensitivity),
            (r.yty.values.clone(), r.yty.noise_sd, r.yty.sensitivity),
        ]
    };
    let whitening = |r: &SufficientRelease| DMatrix::from_row_slice(3, 3, &r.xtx_whitening);
    let tiny = [1e-300; 4];
    let exact = release_sufficient(&data, tiny, &mut chain_rng(0, 0)).unwrap();
    let truth = parts(&exact);
    let z = [1.7, 1.2, 0.9, 2.3];
    let mut std = Vec::new();
    for s in 0..400 {
        let r = release_sufficient(&data, z, &mut chain_rng(100 + s, 7)).unwrap();
        assert!(
            !r.xtx_noisy[0] && r.xtx.values[0] == 500.0,
            "n is public and exact"
        );
        let at_own_b = release_whitened_xtx(&data, &whitening(&r), 1e-300, &mut chain_rng(0, 0))
            .unwrap()
            .values;
        for (i, ((values, sd, sens), (exact, _, _))) in parts(&r).iter().zip(&truth).enumerate() {
            assert_eq!(*sd, sens * z[i]);
            let exact = if i == 1 { &at_own_b } else { exact };
            for (k, (v, t)) in values.iter().zip(exact).enumerate() {
                if i == 0 && !r.xtx_noisy[k] {
                    assert_eq!(v, t);
                } else {
                    std.push((v - t) / sd);
                }
            }
        }
    }
    assert_standard_normal(&std, "sufficient statistics");

    // neighbours: the data set with row 0 replaced by one row the bounds allow, then by
    // another (box vertices with the response at ±5 in even trials, random rows in odd ones)
    let b = whitening(&exact);
    let mut rng = chain_rng(11, 0);
    let mut largest = [0.0f64; 4];
    let mut neighbour = |vertex: bool| {
        let (x, mut y) = row_zero_replaced(&data, vertex, &mut rng);
        y[0] = if vertex {
            [-5.0, 5.0][rng.random_range(0..2usize)]
        } else {
            rng.random_range(-5.0..=5.0)
        };
        let other = GlmData::new(
            GlmKind::Linear,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0)],
            (-5.0, 5.0),
            10.0,
            data.param_names().to_vec(),
        )
        .unwrap();
        let mut p = parts(&release_sufficient(&other, tiny, &mut chain_rng(0, 0)).unwrap());
        let w = release_whitened_xtx(&other, &b, 1e-300, &mut chain_rng(0, 0)).unwrap();
        p[1] = (w.values, w.noise_sd, w.sensitivity);
        p
    };
    for trial in 0..400 {
        let (a, b) = (neighbour(trial % 2 == 0), neighbour(trial % 2 == 0));
        for (i, ((values, _, _), (exact, _, sens))) in a.iter().zip(&b).enumerate() {
            let d: f64 = values
                .iter()
                .zip(exact)
                .map(|(u, v)| (u - v).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(d <= sens * (1.0 + 1e-9), "release {i}: {d} > {sens}");
            largest[i] = largest[i].max(d);
        }
    }
    // and no bound is loose by much (substitutions come within 25 % of each; the whitened
    // one's `√2 max‖Bx‖²` needs two rows with orthogonal `Bx` of the largest norm, which an
    // intercept's shared coordinate rules out: within 50 %)
    for (i, (_, _, sens)) in truth.iter().enumerate() {
        let tight = if i == 1 { 0.5 } else { 0.75 };
        assert!(
            largest[i] > tight * sens,
            "release {i}: {} vs {sens}",
            largest[i]
        );
    }
}

/// The rows of `data` (an intercept and two covariates in [0, 1]) with row 0's covariates
/// replaced by a vertex of the box (`vertex`) or a random point in it; the response as it was.
fn row_zero_replaced(
    data: &GlmData,
    vertex: bool,
    rng: &mut dp_mcmc::rng::ChainRng,
) -> (Vec<f64>, Vec<f64>) {
    let (mut x, y) = data.rows();
    for xc in x.iter_mut().take(3).skip(1) {
        *xc = if vertex {
            f64::from(rng.random_range(0..2u8))
        } else {
            rng.random()
        };
    }
    (x, y.to_vec())
}

/// `values` (standardised noise) look like N(0, 1): mean within 4 standard errors of 0,
/// variance within 4 standard errors of 1.
fn assert_standard_normal(values: &[f64], what: &str) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    assert!(mean.abs() < 4.0 / n.sqrt(), "{what}: mean {mean}");
    assert!(
        (var - 1.0).abs() < 4.0 * (2.0 / n).sqrt(),
        "{what}: var {var}"
    );
}

/// The ledger: eight Gaussian releases whose composition, recomputed with the tight Gaussian
/// accountant, stays within (ε, δ); each part's noise multiplier is the one its release used;
/// the shares add up to ε. Unseeded runs draw from OS entropy (two runs differ).
#[test]
fn ledger_recomposes_within_the_budget_and_noise_is_secure_by_default() {
    let data = simulate(GlmKind::Logistic, 3000, &[0.3, -0.8, 0.6], 3);
    for eps in [0.5, 1.0, 4.0] {
        let fit = NoiseAware::new()
            .epsilon(eps)
            .delta(1e-6)
            .seed(5)
            .run(&data)
            .unwrap();
        let privacy = fit.run.privacy.as_ref().unwrap();
        assert!(privacy.epsilon <= eps);
        let mut acc = Pld::new();
        acc.compose(privacy.ledger.total.as_ref().unwrap()).unwrap();
        assert!(acc.epsilon(1e-6).unwrap() <= eps * (1.0 + 1e-9));
        assert_eq!(privacy.ledger.parts.len(), 2 * fit.report.rounds.len());
        assert!(fit.report.rounds.len() >= 4);
        let shares: f64 = privacy.ledger.parts.iter().map(|p| p.epsilon_share).sum();
        assert!((shares - privacy.epsilon).abs() < 1e-9 * eps);
        for (k, r) in fit.report.rounds.iter().enumerate() {
            let z = |i: usize| match &privacy.ledger.parts[i].event {
                dp_mcmc::accounting::PrivacyEvent::Gaussian { noise_multiplier } => {
                    *noise_multiplier
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(z(2 * k), r.info_noise_multiplier);
            assert_eq!(z(2 * k + 1), r.score_noise_multiplier);
            assert_eq!(
                r.info_noise_sd,
                r.info_sensitivity * r.info_noise_multiplier
            );
            assert_eq!(
                r.score_noise_sd,
                r.score_sensitivity * r.score_noise_multiplier
            );
        }
    }
    // a linear model: one release of each sufficient statistic (XᵀX, Xᵀy, yᵀy)
    let lin = simulate(GlmKind::Linear, 3000, &[0.3, -0.8, 0.6], 3);
    let fit = NoiseAware::new()
        .epsilon(1.0)
        .delta(1e-6)
        .seed(5)
        .run(&lin)
        .unwrap();
    let privacy = fit.run.privacy.as_ref().unwrap();
    assert_eq!(privacy.ledger.parts.len(), 4);
    let mut acc = Pld::new();
    acc.compose(privacy.ledger.total.as_ref().unwrap()).unwrap();
    assert!(acc.epsilon(1e-6).unwrap() <= 1.0 + 1e-9);
    let released = fit.report.sufficient.as_ref().unwrap();
    let rel = [
        &released.xtx,
        released.xtx_whitened.as_ref().unwrap(),
        &released.xty,
        &released.yty,
    ];
    for (i, part) in privacy.ledger.parts.iter().enumerate() {
        let z = released.noise_multipliers[i].unwrap();
        match &part.event {
            dp_mcmc::accounting::PrivacyEvent::Gaussian { noise_multiplier } => {
                assert_eq!(*noise_multiplier, z)
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rel[i].noise_sd, rel[i].sensitivity * z);
    }
    let a = NoiseAware::new()
        .epsilon(1.0)
        .delta(1e-6)
        .run(&data)
        .unwrap();
    let b = NoiseAware::new()
        .epsilon(1.0)
        .delta(1e-6)
        .run(&data)
        .unwrap();
    assert_eq!(a.run.rng.as_str(), "secure");
    assert_ne!(
        a.report.rounds[0].score_release,
        b.report.rounds[0].score_release
    );
    // seeded: reproducible
    let c = NoiseAware::new()
        .epsilon(1.0)
        .delta(1e-6)
        .seed(2)
        .run(&data)
        .unwrap();
    let e = NoiseAware::new()
        .epsilon(1.0)
        .delta(1e-6)
        .seed(2)
        .run(&data)
        .unwrap();
    assert_eq!(c.run.chains[0].draws, e.run.chains[0].draws);
}

/// A quick subset of the simulation-based calibration: logistic and linear regression, n =
/// 5 000, two covariates, ε = 2, θ from the N(0, 0.5²) part of the prior (linear: σ = 0.5), 40
/// data sets × 3 (linear: 4) parameters = 120 (160) intervals. The 90 % intervals must cover
/// the generating θ in 80-98 % of cases (the binomial standard deviation at 0.9 is 2.7 %, so
/// ±3.7 sd around 90 %; a method that ignores the DP noise covers about 50 % here) and the 50 %
/// intervals in 35-65 %.
#[test]
fn intervals_cover_the_generating_parameters() {
    for kind in [GlmKind::Logistic, GlmKind::Linear] {
        let mut rng = chain_rng(77, 0);
        let (mut in90, mut in50, mut total) = (0, 0, 0);
        let d = if kind == GlmKind::Linear { 4 } else { 3 };
        for rep in 0..40u64 {
            let beta: Vec<f64> = (0..3)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    0.5 * z
                })
                .collect();
            let data = simulate(kind, 5000, &beta, 1000 + rep);
            let fit = NoiseAware::new()
                .epsilon(2.0)
                .delta(1e-6)
                .seed(rep)
                .run(&data)
                .unwrap();
            // the linear model's last parameter is ln σ (σ = 0.5 in `simulate`)
            let truth: Vec<f64> = beta
                .iter()
                .copied()
                .chain((kind == GlmKind::Linear).then(|| 0.5f64.ln()))
                .collect();
            for (i, b) in truth.iter().enumerate() {
                let mut v: Vec<f64> = fit
                    .run
                    .chains
                    .iter()
                    .flat_map(|c| c.draws.iter().skip(i).step_by(d).copied())
                    .collect();
                v.sort_by(f64::total_cmp);
                let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
                in90 += usize::from(q(0.05) <= *b && *b <= q(0.95));
                in50 += usize::from(q(0.25) <= *b && *b <= q(0.75));
                total += 1;
            }
        }
        let (c90, c50) = (in90 as f64 / total as f64, in50 as f64 / total as f64);
        assert!(
            (0.80..=0.98).contains(&c90),
            "{kind:?}: 90 % coverage {c90}"
        );
        assert!(
            (0.35..=0.65).contains(&c50),
            "{kind:?}: 50 % coverage {c50}"
        );
    }
}

/// The report says how far the releases determine the information: nothing of its noise
/// distribution is indefinite at a generous budget, most of it at a tiny one (where the weakest
/// directions are the prior's and `fit` warns), and in both cases the chains move and
/// converge.
#[test]
fn indefinite_share_reports_how_far_the_releases_determine_the_information() {
    let data = simulate(GlmKind::Logistic, 2000, &[0.2, -0.5, 0.4, 0.3, -0.2], 8);
    let fit = |eps: f64| {
        NoiseAware::new()
            .epsilon(eps)
            .delta(1e-6)
            .seed(2)
            .run(&data)
            .unwrap()
    };
    let generous = fit(20.0);
    assert_eq!(generous.report.indefinite_share, Some(0.0));
    let tiny = fit(0.1);
    let share = tiny.report.indefinite_share.unwrap();
    assert!(
        share > INDEFINITE_WARNING,
        "indefinite share {share} at ε = 0.1"
    );
    for f in [&generous, &tiny] {
        assert!(
            f.report.acceptance.iter().all(|&a| a > 0.05),
            "{:?}",
            f.report.acceptance
        );
        assert!(f.report.max_rhat <= 1.01, "R-hat {}", f.report.max_rhat);
    }
}

/// A library model with per-row gradients (`IsotropicGaussian`: rows `x_j ~ N(θ, I)`, a
/// Gaussian prior, so the Laplace likelihood is exact): at declared row bounds that bind on
/// almost no row, the noise-aware intervals cover the generating θ (40 data sets × 2
/// parameters, ε = 1); the ledger stays within the budget; missing or invalid bounds are typed
/// errors naming the setting.
#[test]
fn library_models_cover_the_generating_parameters() {
    use dp_mcmc::models::testing::IsotropicGaussian;
    let (mut in90, mut in50, mut total) = (0, 0, 0);
    let mut rng = chain_rng(78, 0);
    for rep in 0..40u64 {
        let theta: Vec<f64> = (0..2)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                z
            })
            .collect();
        let rows: Vec<f64> = (0..3000 * 2)
            .map(|i| {
                let z: f64 = StandardNormal.sample(&mut rng);
                theta[i % 2] + z
            })
            .collect();
        let model = IsotropicGaussian::new(rows, 2).unwrap();
        // ‖x_j − θ‖ > 5 has probability e^{−12.5} per row; each row's information is I (‖I‖_F = √2)
        let fit = NoiseAware::new()
            .epsilon(1.0)
            .delta(1e-6)
            .seed(rep)
            .row_bounds(5.0, 1.5)
            .run_model(&model)
            .unwrap();
        assert!(fit.report.max_rhat <= 1.01, "{}", fit.report.max_rhat);
        let privacy = fit.run.privacy.as_ref().unwrap();
        assert!(privacy.epsilon <= 1.0 && privacy.delta <= 1e-6);
        assert_eq!(privacy.ledger.parts.len(), 8);
        for (i, t) in theta.iter().enumerate() {
            let mut v: Vec<f64> = fit
                .run
                .chains
                .iter()
                .flat_map(|c| c.draws.iter().skip(i).step_by(2).copied())
                .collect();
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
            in90 += usize::from(q(0.05) <= *t && *t <= q(0.95));
            in50 += usize::from(q(0.25) <= *t && *t <= q(0.75));
            total += 1;
        }
    }
    let (c90, c50) = (in90 as f64 / total as f64, in50 as f64 / total as f64);
    // 80 intervals: binomial sd of a 90 % coverage 3.4 %, of a 50 % one 5.6 %
    assert!((0.80..=0.98).contains(&c90), "90 % coverage {c90}");
    assert!((0.33..=0.67).contains(&c50), "50 % coverage {c50}");
    let model = IsotropicGaussian::generate(100, 2, 1);
    let base = NoiseAware::new().epsilon(1.0).delta(1e-6);
    let err = base.clone().run_model(&model).unwrap_err();
    assert!(err.to_string().contains("row_bounds"), "{err}");
    let err = base.row_bounds(-1.0, 1.0).run_model(&model).unwrap_err();
    assert!(err.to_string().contains("gradient"), "{err}");
}

/// Answers do not depend on units: an affine change of covariates' units with their declared
/// bounds changed alike (a covariate on [0, 1] recoded as calendar years 1997-2002, another
/// as 0.01 times itself minus 3) and, for the linear models, of the response (300 + 40 y),
/// changes the posterior only by the same affine map of the coefficients. The internal
/// coordinates of the declared bounds are the same either way, so with the same seed the
/// draws agree to rounding; the tolerance (10⁻⁶ of a posterior sd) leaves room for that
/// alone. (A map with a negative slope mirrors an internal coordinate, and with it which
/// realisation of the noise that coordinate gets: the same answer in distribution.)
#[test]
fn an_affine_change_of_units_changes_the_posterior_by_the_same_map() {
    use dp_mcmc::noise_aware::Prior;
    let kinds = [
        (GlmKind::Logistic, 3),
        (GlmKind::Poisson, 3),
        (GlmKind::Linear, 3),
        (GlmKind::Linear, 1), // a Gaussian mean: no covariate
    ];
    for (kind, p) in kinds {
        let base = simulate(kind, 3000, &[0.2, -0.5, 1.0][..p], 8);
        let (x, y) = base.rows();
        // x1 → 1997 + 5 x1, x2 → 0.01 x2 − 3; a linear response y → 300 + 40 y
        let (a, b) = ([0.0, 1997.0, -3.0], [1.0, 5.0, 0.01]);
        let linear = kind == GlmKind::Linear;
        let (ya, yb) = if linear { (300.0, 40.0) } else { (0.0, 1.0) };
        let x2: Vec<f64> = x
            .chunks_exact(p)
            .flat_map(|r| (0..p).map(move |i| a[i] + b[i] * r[i]))
            .collect();
        let y2: Vec<f64> = y.iter().map(|v| ya + yb * v).collect();
        let mut bounds = vec![(1.0, 1.0)];
        bounds.extend([(1997.0, 2002.0), (-3.0, -2.99)].into_iter().take(p - 1));
        let y_bounds = match kind {
            GlmKind::Logistic => (0.0, 1.0),
            GlmKind::Poisson => (0.0, 30.0),
            GlmKind::Linear => (ya - 5.0 * yb, ya + 5.0 * yb),
        };
        let names = base.param_names().to_vec();
        let recoded = GlmData::new(kind, x2, y2, bounds, y_bounds, 10.0, names).unwrap();
        let fit = |d: GlmData| {
            let d = d.with_prior(Prior::default()).unwrap();
            NoiseAware::new()
                .epsilon(2.0)
                .delta(1e-6)
                .seed(3)
                .run(&d)
                .unwrap()
        };
        let (one, two) = (fit(base.clone()), fit(recoded));
        let d = base.dim();
        // the first fit's draws in the recoded units
        let map = |t: &[f64]| -> Vec<f64> {
            let mut out = vec![0.0; d];
            out[0] = yb * (t[0] - (1..p).map(|i| a[i] * t[i] / b[i]).sum::<f64>()) + ya;
            for i in 1..p {
                out[i] = yb * t[i] / b[i];
            }
            if linear {
                out[p] = t[p] + yb.ln();
            }
            out
        };
        let mapped: Vec<f64> = one.run.chains[0]
            .draws
            .chunks_exact(d)
            .flat_map(map)
            .collect();
        let other = &two.run.chains[0].draws;
        assert_eq!(mapped.len(), other.len(), "{kind:?}");
        for i in 0..d {
            let col = |v: &[f64]| -> Vec<f64> { v.iter().skip(i).step_by(d).copied().collect() };
            let (u, w) = (col(&mapped), col(other));
            let sd = {
                let m = w.iter().sum::<f64>() / w.len() as f64;
                (w.iter().map(|v| (v - m).powi(2)).sum::<f64>() / w.len() as f64).sqrt()
            };
            let worst = u
                .iter()
                .zip(&w)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            assert!(
                worst <= 1e-6 * sd,
                "{kind:?} p = {p}, parameter {i}: {worst} vs sd {sd}"
            );
        }
    }
}
