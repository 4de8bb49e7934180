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
