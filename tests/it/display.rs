//! The notebook cells that use the display API (a bare `run`, `Chart::try_new`, the fluent
//! tuned `Sampler`, `quick_mode`), written here as the notebooks write them, so that every
//! cell the notebooks run compiles and runs in `cargo test` (the notebooks themselves run only
//! under evcxr, in `scripts/notebooks.sh`).

use dp_mcmc::prelude::*;

/// `notebooks/quickstart.ipynb`, cells "a private posterior for a model of your own": the
/// noise-aware run, its ε and δ, and a bare `run` as the last expression (evcxr calls
/// `evcxr_display`). The notebook's first posterior must be a converged one (R-hat ≤ 1.01, bulk
/// ESS ≥ 400) near the non-private 0.700 ± 0.022 of these rows: a reader's first DP posterior
/// is never a failure shown as a result.
#[test]
fn quickstart_run_cells() -> dp_mcmc::Result<()> {
    let quick: bool = quick_mode();
    assert_eq!(quick, std::env::var("DP_MCMC_QUICK").as_deref() != Ok("0"));
    let model: CustomModel = {
        let rows: Vec<Vec<f64>> = (0..2000)
            .map(|i| vec![0.7 + ((i * 7919) % 2001) as f64 / 1000.0 - 1.0])
            .collect();
        CustomModel::new(
            RowData::from_rows(&rows)?,
            1,
            |theta: &[f64], row: &[f64]| -0.5 * (row[0] - theta[0]).powi(2),
        )?
        .with_gradient(|theta: &[f64], row: &[f64], g: &mut [f64]| g[0] = row[0] - theta[0])
        .with_gaussian_prior(100.0)?
        .with_param_names(&["mu"])?
    };
    let run: Run = dp_mcmc::NoiseAware::new()
        .row_bounds(3.0, 1.5)
        .epsilon(2.0)
        .delta(1e-5)
        .chains(4)
        .seed(1)
        .run_model(&model)?
        .run;
    println!(
        "ε = {} and δ = {} cover every release; {} draws per chain",
        run.epsilon().unwrap_or(f64::NAN),
        run.delta().unwrap_or(f64::NAN),
        run.iterations
    );
    assert_eq!((run.epsilon(), run.delta()), (Some(2.0), Some(1e-5)));
    let _shown: DataFrame = run.chain_summary()?;
    // The next cell: a bare `run`.
    run.evcxr_display();
    let report = run.to_string();
    assert!(report.contains(
        "privacy: ε = 2.0, δ = 1e-5 (ADP accountant, whole release: all chains together)"
    ));
    let html = run.to_html();
    assert!(html.contains("<table") && html.contains("rhat") && html.contains("ess_bulk"));
    // converged, and where the data put it: the DP sd is at most twice the non-private 0.022
    // (it was 0.024), the mean within 3 such sds of 0.700 (seeded, so one fixed draw)
    let summary = run.summary()?;
    let value = |c: &str| summary.column(c).unwrap().f64().unwrap().get(0).unwrap();
    assert!(
        value("rhat") <= 1.01 && value("ess_bulk") >= 400.0,
        "{summary}"
    );
    assert!((value("mean") - 0.7005).abs() < 3.0 * 0.0224 && value("sd") < 2.0 * 0.0224);
    Ok(())
}

/// `notebooks/algorithm-comparison.ipynb`: the figure cells (`Chart::try_new` of a figure
/// function; here on frames without rows, the case the placeholder exists for) and the
/// "looking at one chain" cell with the fluent tuned sampler (fewer iterations here).
#[test]
fn algorithm_comparison_cells() -> dp_mcmc::Result<()> {
    use dp_mcmc::experiments::{SamplerKind, tuned};
    use dp_mcmc::models::Model;
    use dp_mcmc::plots::experiments as figs;
    let results = DataFrame::empty();
    let baselines = DataFrame::empty();
    for chart in [
        Chart::try_new(figs::figure_6_3(&results, &baselines)),
        Chart::try_new(figs::figure_6_4(&results, &baselines)),
        Chart::try_new(figs::figure_6_5(&results)),
        Chart::try_new(figs::figure_6_6(&results)),
        Chart::try_new(figs::figure_6_7(&results)),
        Chart::try_new(figs::figure_6_8(&results)),
    ] {
        assert!(chart.error().is_some());
        assert!(chart.notebook_html().contains("No figure:"));
        chart.evcxr_display();
    }

    let model = Experiment::EasyBanana2d.model()?;
    let s = tuned(Experiment::EasyBanana2d, SamplerKind::DpPenalty)?
        .epsilon(4.0)
        .delta(0.1 / model.n_rows() as f64)
        .per_chain_budget(true)
        .chains(4)
        .seed(1)
        .progress(false)
        .starts(model.start_points(4));
    let dp_mcmc::samplers::IterationBudget {
        iterations, spent, ..
    } = s.budget(model.n_rows())?.expect("a DP sampler");
    // The notebook's markdown quotes this count (ε = 4, δ = 0.1/n, per chain).
    assert_eq!(iterations, 702);
    assert!(spent.per_chain);
    // A short run instead of the budget's 702 iterations (a fixed count replaces ε and δ).
    let run = s.iterations(30).run(&model)?;
    assert_eq!((run.chains.len(), run.iterations, run.seed), (4, 30, 1));
    let chart = Chart::try_new(dp_mcmc::plots::trace(&run));
    assert!(chart.error().is_none());
    assert!(chart.to_json().contains("theta_1"));
    Ok(())
}
