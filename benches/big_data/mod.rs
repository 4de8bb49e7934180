//! Big data in one chain (`cargo bench --bench samplers -- big-data`): logistic regression
//! with n = 1e7 rows and d = 20 (an intercept and 19 standard normal covariates, generated
//! with a fixed seed; 1.6 GB of f64), DP penalty (full update) and DP HMC, one chain whose
//! data passes run on 1 or 2 threads (`Kernel::set_pass_threads`). The configurations are
//! interleaved and each reports the minimum over the repetitions (the machine may be shared);
//! results are bit-identical across thread counts (tested in `samplers::tests`).

use std::hint::black_box;
use std::time::Instant;

use dp_mcmc::models::{ColumnData, LogisticModel, Model};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::{DpHmc, DpPenalty, Kernel};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

const N: usize = 10_000_000;
const D: usize = 20;
const REPS: usize = 5;

/// Whether the bench's arguments ask for this section (`-- big-data`).
pub fn selected() -> bool {
    std::env::args().skip(1).any(|a| a == "big-data")
}

/// Logistic regression data: intercept + 19 N(0, 1) covariates, `y ~ Bernoulli(σ(xᵀβ))`
/// with `β_i = 0.1`.
fn model() -> (LogisticModel, Vec<f64>) {
    let mut rng = chain_rng(2026, 0);
    let beta = vec![0.1; D];
    let mut cols = vec![vec![1.0; N]];
    for _ in 1..D {
        cols.push((0..N).map(|_| StandardNormal.sample(&mut rng)).collect());
    }
    let y: Vec<f64> = (0..N)
        .map(|j| {
            let eta: f64 = cols.iter().zip(&beta).map(|(c, b)| c[j] * b).sum();
            let p = 1.0 / (1.0 + (-eta).exp());
            f64::from(u8::from(rng.random::<f64>() < p))
        })
        .collect();
    let x = ColumnData::from_columns(cols).expect("finite data");
    (LogisticModel::new(x, &y, 100.0).expect("valid model"), beta)
}

/// Per-iteration times (seconds) of `kernel` with its passes on 1 and on 2 threads:
/// interleaved repetitions of `iters` steps, the minimum of each.
fn one_vs_two<K: Kernel, M: Model>(
    kernel: &K,
    model: &M,
    theta0: &[f64],
    iters: usize,
) -> [f64; 2] {
    let mut best = [f64::INFINITY; 2];
    let pools = [1, 2].map(|t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .expect("thread pool")
    });
    let mut chains: Vec<_> = pools
        .iter()
        .enumerate()
        .map(|(i, pool)| {
            pool.install(|| {
                let mut rng = chain_rng(1, 0);
                let mut state = kernel
                    .init(model, theta0, &mut rng)
                    .expect("valid settings");
                kernel.set_pass_threads(&mut state, i + 1);
                kernel.step(model, &mut state, &mut rng); // warm-up
                (state, rng)
            })
        })
        .collect();
    for _ in 0..REPS {
        for (i, pool) in pools.iter().enumerate() {
            let (state, rng) = &mut chains[i];
            let t = pool.install(|| {
                let t0 = Instant::now();
                for _ in 0..iters {
                    black_box(kernel.step(model, state, rng));
                }
                t0.elapsed().as_secs_f64() / iters as f64
            });
            best[i] = best[i].min(t);
        }
    }
    best
}

pub fn report(name: &str, [one, two]: [f64; 2]) {
    println!(
        "{name:<34} {:>10.0} µs/iter (1 thread) {:>10.0} µs/iter (2 threads)   {:.2}x",
        one * 1e6,
        two * 1e6,
        one / two
    );
}

/// The big-data section.
pub fn run() {
    let t0 = Instant::now();
    let (model, beta) = model();
    println!(
        "== logistic regression, n = {N}, d = {D} (generated in {:.1} s); one chain, \
         min of {REPS} interleaved repetitions",
        t0.elapsed().as_secs_f64()
    );
    let pen = DpPenalty::builder()
        .tau(0.1)
        .clip_bound(2.0)
        .proposal_sd(5e-4)
        .kernel(&model)
        .expect("valid");
    report(
        "DP penalty (full update)",
        one_vs_two(&pen, &model, &beta, 5),
    );
    let hmc = DpHmc::builder()
        .tau_l(0.1)
        .tau_g(0.4)
        .leapfrog_steps(3)
        .step_size(1e-4)
        .clip_bound(2.0)
        .grad_clip_bound(1.0)
        .kernel(&model)
        .expect("valid");
    report(
        "DP HMC (L = 3, fresh gradients)",
        one_vs_two(&hmc, &model, &beta, 2),
    );
}
