//! `auto` runs: one budget for initialisation, clip bounds, warm-up and sampling;
//! the ledger recomposes to the guarantee; adaptation reads only released values.

use dp_mcmc::accounting::gaussian_budget;
use dp_mcmc::accounting::{Accountant, Pld, PrivacyEvent, pld_delta};
use dp_mcmc::auto::{Auto, default_sampler};
use dp_mcmc::models::testing::IsotropicGaussian;
use dp_mcmc::models::{CustomModel, Model, RowData};
use dp_mcmc::rng::ChainRng;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::SamplerKind;
use dp_mcmc::samplers::run_chains;
use dp_mcmc::samplers::{Kernel, RunSettings, Start, StepInfo};

fn model() -> IsotropicGaussian {
    IsotropicGaussian::generate(4_000, 2, 7)
}

/// The ledger's parts, recomposed from their events by an independent accountant (the tight
/// Gaussian PLD, and the closed form δ(ε; μ) of Gaussian compositions), spend no more than the
/// requested (ε, δ); the total event is the composition of the parts; the ε shares add up to
/// the run's ε; the warm-up part holds the warm-up iterations of every chain.
#[test]
fn ledger_recomposes_to_at_most_the_budget() {
    let m = model();
    for (alg, per_chain) in [
        (SamplerKind::DpPenalty, false),
        (SamplerKind::DpPenalty, true),
        (SamplerKind::DpHmc, false),
    ] {
        let (eps, delta) = (1.5, 1e-6);
        let fit = Auto::new(alg)
            .epsilon(eps)
            .delta(delta)
            .chains(3)
            .seed(11)
            .per_chain_budget(per_chain)
            .target_iterations(60)
            .progress(false)
            .run(&m)
            .unwrap();
        let run = &fit.run;
        let p = run.privacy.as_ref().unwrap();
        let l = &p.ledger;
        let names: Vec<&str> = l.parts.iter().map(|x| x.part.as_str()).collect();
        assert_eq!(
            names,
            ["initialisation", "clip bound", "warm-up", "sampling"]
        );
        let share: f64 = l.parts.iter().map(|x| x.epsilon_share).sum();
        assert!(
            (share - p.epsilon).abs() < 1e-9 * eps,
            "{alg:?}: shares {share}"
        );
        let copies = if per_chain { 1 } else { 3 };
        assert_eq!(l.parts[2].releases, (copies * run.warmup) as u64);
        assert_eq!(
            l.parts[2].releases + l.parts[3].releases,
            (copies * run.iterations) as u64
        );
        // independent recomposition of the parts
        let all = PrivacyEvent::compose(l.parts.iter().map(|x| x.event.clone()).collect());
        let mut acc = Pld::new();
        acc.compose(&all).unwrap();
        assert!(acc.delta(eps).unwrap() <= delta, "{alg:?} overspends");
        let mu = all.gaussian_mu().unwrap();
        assert!(pld_delta(mu, eps).unwrap() <= delta);
        assert!(mu <= gaussian_budget(eps, delta).unwrap() * (1.0 + 1e-12));
        // one more sampling iteration per chain would not fit (up to the accountant's
        // pessimistic rounding, 1e-9 relative): the budget is used
        let extra = PrivacyEvent::compose(vec![
            all.clone(),
            l.releases
                .as_ref()
                .unwrap()
                .iteration
                .clone()
                .repeat(copies as u64),
        ]);
        let mut acc = Pld::new();
        acc.compose(&extra).unwrap();
        assert!(
            acc.delta(eps).unwrap() > delta * (1.0 - 1e-9),
            "{alg:?}: budget left unused: k = {}, δ(k+1) = {}, mu = {mu}, budget {}",
            run.iterations,
            acc.delta(eps).unwrap(),
            gaussian_budget(eps, delta).unwrap()
        );
        // the whole-run total is the parts (all chains)
        if !per_chain {
            assert!((l.total.as_ref().unwrap().gaussian_mu().unwrap() - mu).abs() < 1e-12 * mu);
        }
        let report = &fit.report;
        assert_eq!(report.iterations, run.iterations);
        assert_eq!(report.step_scales.len(), 3);
    }
}

/// DP Barker (no clip bound: its test fixes it) and the minibatch penalty (certified PLD)
/// charge their earlier releases too and stay within the budget.
#[test]
fn subsampled_auto_runs_stay_within_the_budget() {
    let m = IsotropicGaussian::generate(100_000, 2, 3);
    for alg in [SamplerKind::DpBarker, SamplerKind::MinibatchPenalty] {
        let fit = Auto::new(alg)
            .epsilon(1.0)
            .delta(1e-6)
            .chains(2)
            .seed(2)
            .progress(false)
            .run(&m)
            .unwrap();
        let run = &fit.run;
        let p = run.privacy.as_ref().unwrap();
        assert!(p.epsilon <= 1.0, "{alg:?}");
        let names: Vec<&str> = p.ledger.parts.iter().map(|x| x.part.as_str()).collect();
        let want: &[&str] = if alg == SamplerKind::DpBarker {
            &["initialisation", "warm-up", "sampling"]
        } else {
            &["initialisation", "clip bound", "warm-up", "sampling"]
        };
        assert_eq!(names, want, "{alg:?}");
        let share: f64 = p.ledger.parts.iter().map(|x| x.epsilon_share).sum();
        assert!((share - p.epsilon).abs() < 1e-9, "{alg:?}: {share}");
        assert!(run.iterations > 0);
    }
}

/// A model without gradients and without a public bound cannot get a clip bound privately:
/// a typed error that says what to declare. DP Barker needs none and runs from the public
/// start.
#[test]
fn no_gradients_no_public_bound_is_an_error_except_for_barker() {
    let rows: Vec<Vec<f64>> = (0..50_000).map(|i| vec![(i % 10) as f64 / 10.0]).collect();
    let m = CustomModel::new(RowData::from_rows(&rows).unwrap(), 1, |t, r| {
        -0.5 * (r[0] - t[0]).powi(2)
    })
    .unwrap();
    let err = Auto::new(SamplerKind::DpPenalty)
        .epsilon(1.0)
        .delta(1e-5)
        .progress(false)
        .run(&m)
        .unwrap_err()
        .to_string();
    assert!(err.contains("public") && err.contains("bound"), "{err}");
    let fit = Auto::new(SamplerKind::DpBarker)
        .epsilon(1.0)
        .delta(1e-5)
        .chains(1)
        .progress(false)
        .run(&m)
        .unwrap();
    let run = &fit.run;
    assert!(&fit.report.initial_point.is_none());
    assert_eq!(run.privacy.clone().unwrap().ledger.parts.len(), 2); // warm-up, sampling
}

/// A kernel whose step statistics carry values that are not released (`log_alpha`,
/// `clipped`, `batch_var`, computed from a `secret`), while its released accept decisions and
/// states do not depend on the secret. Warm-up adaptation may read only the released values,
/// so two runs differing only in the secret must adapt identically.
struct SecretKernel {
    secret: f64,
}

struct SecretState {
    theta: Vec<f64>,
    scale: f64,
}

impl Kernel for SecretKernel {
    type State = SecretState;
    fn name(&self) -> &'static str {
        "secret"
    }
    fn validate<M: Model + ?Sized>(&self, _model: &M) -> dp_mcmc::Result<()> {
        Ok(())
    }
    fn init<M: Model + ?Sized>(
        &self,
        _model: &M,
        theta0: &[f64],
        _rng: &mut ChainRng,
    ) -> dp_mcmc::Result<SecretState> {
        Ok(SecretState {
            theta: theta0.to_vec(),
            scale: 1.0,
        })
    }
    fn step<M: Model + ?Sized>(
        &self,
        _model: &M,
        s: &mut SecretState,
        rng: &mut ChainRng,
    ) -> StepInfo {
        use rand::RngExt;
        let u: f64 = rng.random();
        // accept with probability 1/(1 + scale²): released decision, secret-free
        let accepted = u < 1.0 / (1.0 + s.scale * s.scale);
        if accepted {
            s.theta[0] += s.scale * (u - 0.25);
        }
        StepInfo {
            accepted,
            log_alpha: self.secret * u,
            clipped: (self.secret * 1e3) as u64,
            rows: 1000,
            batch_var: self.secret,
            ..StepInfo::default()
        }
    }
    fn position<'a>(&self, s: &'a SecretState) -> &'a [f64] {
        &s.theta
    }
    fn set_step_scale(&self, s: &mut SecretState, scale: f64) {
        s.scale = scale;
    }
}

#[test]
fn adaptation_reads_only_released_values() {
    let m = model();
    let settings = RunSettings {
        chains: 2,
        seed: 4,
        start: Start::Point(vec![0.0, 0.0]),
        progress: false,
        warmup: 300,
        ..RunSettings::default()
    };
    let a = run_chains(&SecretKernel { secret: 0.1 }, &m, &settings, 400).unwrap();
    let b = run_chains(&SecretKernel { secret: 0.9 }, &m, &settings, 400).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert_ne!(x.stats[0].batch_var, y.stats[0].batch_var); // the secret differs
        assert_eq!(
            x.step_scale, y.step_scale,
            "adaptation read an unreleased value"
        );
        assert_eq!(x.draws, y.draws);
        assert_eq!(x.warmup, 300);
        // it adapted: acceptance p = 1/(1+s²) toward 0.25 means s → √3
        assert!((x.step_scale - 3f64.sqrt()).abs() < 0.5, "{}", x.step_scale);
    }
}

/// The chains sample in the whitened coordinates of the DP initial point and the run reports
/// draws in the model's own: with a large budget (ε = 50, where the DP noise is far below the
/// posterior's width), the post-warm-up draws of 4 000 rows of N(θ, I) in 2-d have the exact
/// posterior's mean (within 0.5 posterior sd: 2 chains × 1 000 kept draws of a random walk
/// keep an MCSE well below that) and its sd (within a factor 1.5). Without the
/// reparametrisation the same run samples `θ` directly; the default sampler is the DP penalty
/// except for a model with neither gradients nor a public bound (DP Barker).
#[test]
fn reparametrised_draws_are_in_the_model_coordinates() {
    let model = model();
    let (mean, var) = model.posterior();
    let sd = var.sqrt();
    for reparametrise in [true, false] {
        let fit = Auto::new(default_sampler(&model))
            .epsilon(50.0)
            .delta(1e-6)
            .chains(2)
            .seed(4)
            .progress(false)
            .reparametrise(reparametrise)
            .run(&model)
            .unwrap();
        let run = &fit.run;
        let report = &fit.report;
        assert_eq!(report.algorithm, SamplerKind::DpPenalty);
        assert_eq!(report.reparametrised, reparametrise);
        // the report is shown beside the run's
        let text = fit.to_string();
        assert!(text.starts_with("auto dp-penalty: "), "{text}");
        assert_eq!(text.contains("whitened"), reparametrise);
        assert!(text.contains(&run.to_string()));
        for i in 0..2 {
            let kept: Vec<f64> = run
                .chains
                .iter()
                .flat_map(|c| c.draws.chunks_exact(2).skip(c.warmup).map(|x| x[i]))
                .collect();
            let m = kept.iter().sum::<f64>() / kept.len() as f64;
            let s = (kept.iter().map(|x| (x - m).powi(2)).sum::<f64>() / kept.len() as f64).sqrt();
            assert!(
                (m - mean[i]).abs() < 0.5 * sd,
                "{reparametrise} {i}: {m} vs {}",
                mean[i]
            );
            assert!(
                s > sd / 1.5 && s < sd * 1.5,
                "{reparametrise} {i}: sd {s} vs {sd}"
            );
        }
    }
}

/// An `auto` run draws its noise from OS entropy unless a seed is given: two default runs
/// differ and say `"secure"`; a seeded run is reproducible and says `"seeded"`. (Before, every
/// auto run was seeded, with seed 0 by default: anyone could regenerate its noise.)
#[test]
fn auto_runs_are_secure_unless_seeded() {
    let m = IsotropicGaussian::generate(3_000, 2, 5);
    let go = |seed: Option<u64>| {
        let mut a = Auto::new(SamplerKind::DpPenalty)
            .epsilon(2.0)
            .delta(1e-6)
            .chains(2)
            .target_iterations(100)
            .progress(false);
        if let Some(s) = seed {
            a = a.seed(s);
        }
        a.run(&m).unwrap()
    };
    let (a, b) = (go(None), go(None));
    assert_eq!(a.run.rng.as_str(), "secure");
    assert_ne!(a.run.chains[0].draws, b.run.chains[0].draws);
    let ip = |r: &dp_mcmc::auto::AutoRun| r.report.initial_point.clone().unwrap().point;
    assert_ne!(
        ip(&a),
        ip(&b),
        "the DP initial point's noise must not repeat"
    );
    let (c, d) = (go(Some(3)), go(Some(3)));
    assert_eq!(c.run.rng.as_str(), "seeded");
    assert_eq!(c.run.chains[0].draws, d.run.chains[0].draws);
}

/// One row with a non-finite per-row Hessian (a Poisson covariate of 1e9: e^{1e9·θ} overflows
/// as soon as θ moves) is bounded like any other row; before, `0 × ∞ = NaN` made the released
/// Hessian sum NaN and one row decided that the run failed.
#[test]
fn one_row_with_a_non_finite_hessian_does_not_abort_the_initial_point() {
    use dp_mcmc::models::{ColumnData, PoissonRegression};
    let n = 2_000;
    let mut x1: Vec<f64> = (0..n).map(|j| (j % 10) as f64 / 10.0).collect();
    x1[7] = 1e9;
    let y: Vec<f64> = (0..n).map(|j| (j % 4) as f64).collect();
    let x = ColumnData::from_columns(vec![vec![1.0; n], x1]).unwrap();
    let model = PoissonRegression::new(x, &y, 10.0).unwrap();
    let fit = Auto::new(SamplerKind::DpPenalty)
        .epsilon(4.0)
        .delta(1e-6)
        .chains(1)
        .seed(1)
        .target_iterations(50)
        .progress(false)
        .run(&model)
        .unwrap();
    let p = fit.report.initial_point.unwrap();
    assert!(p.point.iter().all(|v| v.is_finite()), "{:?}", p.point);
}
