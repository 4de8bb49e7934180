//! Timing helper shared by the bench binaries (`mod common;` in each).

use std::time::Instant;

/// Median over `reps` repetitions of the mean time (seconds) of `iters` calls of `f`.
pub fn time(reps: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_secs_f64() / iters as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[reps / 2]
}

/// The big-data benchmarks' logistic regression: `n` rows, `d` coefficients (an intercept
/// column of ones, then `d − 1` standard-normal covariates, column `i` from
/// `chain_rng(seed, i)`), outcomes `y_j ~ Bernoulli(σ(x_jᵀθ*))` with
/// `θ*_i = (−1)^i / √d` (stream `d` of the seed), stored as `T` (`f64` or `f32`).
///
/// Built in place: the covariates are generated directly into the model's column-major
/// buffer of `T` and `η` a block of rows at a time, so loading holds one copy of the
/// covariates and the `n` outcomes as `f64` (8 bytes per row, freed before any chain runs).
#[allow(dead_code)] // each bench binary compiles `common`; not all use this
pub fn logistic_data<T: dp_mcmc::models::Element>(
    n: usize,
    d: usize,
    seed: u64,
) -> dp_mcmc::models::LogisticModel<T> {
    use dp_mcmc::models::{ColumnData, LogisticModel};
    use dp_mcmc::rng::chain_rng;
    use rand::RngExt;
    use rand_distr::StandardNormal;

    let one = T::from_f64(1.0).expect("1 is finite");
    let mut x: Vec<T> = Vec::with_capacity(n * d);
    x.resize(n, one);
    for i in 1..d {
        let mut rng = chain_rng(seed, i as u64);
        x.extend((0..n).map(|_| {
            T::from_f64(rng.sample::<f64, _>(StandardNormal)).expect("normals are finite")
        }));
    }
    let theta: Vec<f64> = (0..d)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } / (d as f64).sqrt())
        .collect();
    let mut rng = chain_rng(seed, d as u64);
    let mut y = Vec::with_capacity(n);
    let mut eta = [0.0; 1024];
    for s in (0..n).step_by(eta.len()) {
        let len = eta.len().min(n - s);
        let eta = &mut eta[..len];
        eta.fill(0.0);
        for (i, &t) in theta.iter().enumerate() {
            for (e, v) in eta.iter_mut().zip(&x[i * n + s..i * n + s + len]) {
                *e += t * v.to_f64();
            }
        }
        y.extend(eta.iter().map(|&e| {
            let p = 1.0 / (1.0 + (-e).exp());
            f64::from(u8::from(rng.random::<f64>() < p))
        }));
    }
    let x = ColumnData::from_column_major(x, d).expect("finite, non-empty");
    LogisticModel::new(x, &y, 100.0).expect("valid model")
}
