//! Threads inside one chain (`cargo bench --bench samplers -- threads`): the `big` section's
//! logistic regression (n = 1e7 rows, d = 20, generated with a fixed seed by
//! `common::logistic_data`; 1.6 GB of f64) and its DP penalty (full update) and DP HMC
//! settings, one chain whose data passes run on 1 or 2 threads (`Kernel::set_pass_threads`).
//! The configurations are interleaved and each reports the minimum over the repetitions (the
//! machine may be shared); results are bit-identical across thread counts (tested in
//! `samplers::tests`).

use std::hint::black_box;
use std::time::Instant;

use super::{BIG_D, BIG_N};
use dp_mcmc::models::Model;
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::Kernel;

const REPS: usize = 5;

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

/// The section: the big-data logistic regression of the `big` section (same data, same
/// sampler settings), one chain, its passes on 1 vs 2 threads.
pub fn run() {
    let t0 = Instant::now();
    let model = crate::common::logistic_data::<f64>(BIG_N, BIG_D, 1);
    let theta0: Vec<f64> = (0..BIG_D)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } / (BIG_D as f64).sqrt())
        .collect();
    println!(
        "== threads inside a chain: logistic regression, n = {BIG_N}, d = {BIG_D} (generated in \
         {:.1} s); one chain, min of {REPS} interleaved repetitions",
        t0.elapsed().as_secs_f64()
    );
    let pen = super::big_penalty().kernel(&model).expect("valid");
    report(
        "DP penalty (full update)",
        one_vs_two(&pen, &model, &theta0, 5),
    );
    let hmc = super::big_hmc().kernel(&model).expect("valid");
    report(
        "DP HMC (L = 3, fresh gradients)",
        one_vs_two(&hmc, &model, &theta0, 2),
    );
}
