//! The DP initial point and clip bounds on the rayon pool: an `auto` run on a generated
//! logistic regression (n rows, d = 20 covariates with an intercept, no declared bounds, so the
//! clip bounds are DP quantiles) on pools of 1 and 2 threads. Nearly all of the time is the
//! initial point's d + 1 gradient passes per step and the quantile passes (the run samples
//! only a few iterations). The draws must be identical on both pools.
//!
//! `cargo run --release --example init_threads [N]` (default N = 10 000 000: 1.6 GB of
//! covariates).

use std::time::Instant;

use dp_mcmc::auto::Auto;
use dp_mcmc::models::{ColumnData, LogisticModel};
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::SamplerKind;
use rand::RngExt;

fn main() -> dp_mcmc::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("N: a number of rows"))
        .unwrap_or(10_000_000);
    let d = 20;
    let mut rng = dp_mcmc::rng::chain_rng(1, 0);
    let beta: Vec<f64> = (0..d).map(|i| 0.5 - 0.05 * i as f64).collect();
    let mut columns = vec![vec![1.0; n]];
    columns.extend((1..d).map(|_| (0..n).map(|_| rng.random::<f64>()).collect::<Vec<f64>>()));
    let y: Vec<f64> = (0..n)
        .map(|j| {
            let eta: f64 = (0..d).map(|i| columns[i][j] * beta[i]).sum();
            f64::from(rng.random::<f64>() < 1.0 / (1.0 + (-eta).exp()))
        })
        .collect();
    let model = LogisticModel::new(ColumnData::from_columns(columns)?, &y, 10.0)?;
    let mut draws = Vec::new();
    for threads in [1, 2] {
        let t0 = Instant::now();
        let run = Auto::new(SamplerKind::DpPenalty)
            .epsilon(1.0)
            .delta(1e-6)
            .chains(1)
            .target_iterations(4)
            .seed(3)
            .threads(threads)
            .progress(false)
            .run(&model)?
            .run;
        println!(
            "n = {n}, d = {d}, {threads} thread(s): {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        draws.push(run.chains[0].draws.clone());
    }
    assert_eq!(draws[0], draws[1], "the draws depend on the thread count");
    println!("draws identical on 1 and 2 threads");
    Ok(())
}
