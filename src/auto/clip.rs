//! A DP clip bound: a quantile of the per-row gradient norms at a point, found by a binary
//! search whose every step releases one noisy count.
//!
//! The candidates are the public grid `2^(k/4)`, `k = −160 … 160` (quarter octaves from about
//! 1e-12 to 1e12). Each step releases `#{j : ‖∇ ln p(x_j | θ)‖ ≤ c} + N(0, z²)`: changing one
//! row moves the count by at most 1 (sensitivity 1 under substitution), so each step is the
//! Gaussian mechanism with noise multiplier `z`, and the [`QUERIES`] steps compose to `μ =
//! QUERIES/(2z²)`. The search is adaptive (each candidate depends on the previous noisy
//! answers), which adaptive composition covers. The answer is the smallest candidate whose
//! noisy count reaches `q·n` (`n`, the number of rows, is public in this library's neighbouring
//! relation: substitution).

use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::models::Model;
use crate::rng::ChainRng;

/// Noisy counts released by one quantile search (`⌈log₂ 321⌉`).
pub const QUERIES: u32 = 9;

/// Lowest and highest exponent `k` of the candidates `2^(k/4)`.
const K_MIN: i32 = -160;
const K_MAX: i32 = 160;

/// The per-row gradient norms `‖∇_θ ln p(x_j | θ)‖₂` of every row (not private: only
/// [`dp_quantile`] may release anything computed from them).
pub(crate) fn gradient_norms<M: Model + ?Sized>(model: &M, theta: &[f64]) -> Result<Vec<f64>> {
    if !model.has_gradient() {
        return Err(Error::Model(
            "a DP clip bound needs per-row gradients; implement `grad_log_lik_row` (and \
             `has_gradient`) or declare a public bound (`Model::public_lipschitz`)"
                .into(),
        ));
    }
    let d = model.dim();
    let n = model.n_rows();
    const CHUNK: usize = 1024;
    // fixed chunks on the rayon pool, concatenated in order: the same for every thread count
    let parts: Vec<Vec<f64>> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map_init(
            || vec![0.0; CHUNK * d],
            |buf, c| -> Result<Vec<f64>> {
                let start = c * CHUNK;
                let len = CHUNK.min(n - start);
                let rows = &mut buf[..len * d];
                model.grad_log_lik_rows(theta, start, rows)?;
                Ok(rows
                    .chunks_exact(d)
                    .map(|g| {
                        let s: f64 = g.iter().map(|x| x * x).sum();
                        // a non-finite gradient counts as the largest norm
                        if s.is_finite() {
                            s.sqrt()
                        } else {
                            f64::INFINITY
                        }
                    })
                    .collect())
            },
        )
        .collect::<Result<_>>()?;
    let norms = parts.concat();
    Ok(norms)
}

/// Per row, the smallest gradient norm at the `2d` points `center ± radius_i·e_i` (not
/// private): the norm the row typically has where the chain goes, near `center` but never at
/// one point only. At a stationary point of every row (e.g. the centre of a ring-shaped
/// posterior) the gradients vanish, and a bound from them alone would clip every move; a
/// larger statistic (the largest norm around) raises the bound, and the noise, on every
/// other model.
pub(crate) fn neighbourhood_norms<M: Model + ?Sized>(
    model: &M,
    center: &[f64],
    radius: &[f64],
) -> Result<Vec<f64>> {
    let mut norms = vec![f64::INFINITY; model.n_rows()];
    let mut point = center.to_vec();
    for (i, &r) in radius.iter().enumerate() {
        for sign in [-1.0, 1.0] {
            point[i] = center[i] + sign * r;
            for (m, x) in norms.iter_mut().zip(gradient_norms(model, &point)?) {
                *m = m.min(x);
            }
        }
        point[i] = center[i];
    }
    Ok(norms)
}

/// The DP `q`-quantile of the per-row gradient norms at `theta`, with noise multiplier `z` on
/// each of the [`QUERIES`] counts. Returns a candidate `2^(k/4)`.
///
/// # Errors
/// `q` outside (0, 1), `z` not positive, a model without gradients.
pub(crate) fn dp_quantile<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    q: f64,
    z: f64,
    rng: &mut ChainRng,
) -> Result<f64> {
    dp_quantile_of(gradient_norms(model, theta)?, q, z, rng)
}

/// The DP `q`-quantile of per-row values `norms` (one per row, e.g. the Frobenius norms of
/// per-row Hessians): the same search as [`dp_quantile`], the same cost.
///
/// # Errors
/// `q` outside (0, 1), `z` not positive.
pub(crate) fn dp_quantile_of(
    mut norms: Vec<f64>,
    q: f64,
    z: f64,
    rng: &mut ChainRng,
) -> Result<f64> {
    if !(q > 0.0 && q < 1.0) {
        return Err(Error::invalid(
            "clip_quantile",
            q,
            "must be strictly between 0 and 1 (e.g. 0.9)",
        ));
    }
    let z = crate::error::check::positive("noise multiplier", z)?;
    norms.sort_unstable_by(f64::total_cmp);
    let target = q * norms.len() as f64;
    let count_at_most = |c: f64| norms.partition_point(|&x| x <= c) as f64;
    // smallest k with noisy count(2^(k/4)) ≥ target, by bisection on [K_MIN, K_MAX]
    let (mut lo, mut hi) = (K_MIN, K_MAX);
    for _ in 0..QUERIES {
        if lo >= hi {
            // converged early: fewer releases than charged (the charge is data-independent)
            break;
        }
        let mid = lo + (hi - lo) / 2;
        let xi: f64 = StandardNormal.sample(rng);
        let noisy = count_at_most(candidate(mid)) + z * xi;
        if noisy >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(candidate(lo))
}

fn candidate(k: i32) -> f64 {
    2f64.powf(f64::from(k) / 4.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testing::IsotropicGaussian;

    /// 10 000 rows of `N(0, 1)` data, 1-d Gaussian mean model at θ = 0: the per-row gradient
    /// is `x_j`, so the norms are `|x_j|` and the 0.9-quantile is about 1.645. With a tiny
    /// noise the DP quantile must be the grid point just above it (quarter octaves: within a
    /// factor 2^(1/4)); with noise of multiplier 100 (counts off by ~100 of 10 000, i.e. the
    /// quantile level off by ~0.01) still within a factor 1.3.
    #[test]
    fn finds_the_quantile_on_the_grid() {
        use rand_distr::Distribution;
        let mut rng = crate::rng::chain_rng(5, 0);
        let xs: Vec<f64> = (0..10_000)
            .map(|_| StandardNormal.sample(&mut rng))
            .collect();
        let model = IsotropicGaussian::new(xs, 1).unwrap();
        let mut sorted: Vec<f64> = gradient_norms(&model, &[0.0]).unwrap();
        sorted.sort_by(f64::total_cmp);
        let exact = sorted[9_000];
        for (z, tol) in [(1e-6, 2f64.powf(0.25)), (100.0, 1.3)] {
            let got =
                dp_quantile(&model, &[0.0], 0.9, z, &mut crate::rng::chain_rng(1, 1)).unwrap();
            assert!(
                got >= exact / tol && got <= exact * tol,
                "z {z}: {got} vs {exact}"
            );
        }
        assert!(dp_quantile(&model, &[0.0], 1.0, 1.0, &mut rng).is_err());
        assert!(dp_quantile(&model, &[0.0], 0.9, 0.0, &mut rng).is_err());
    }
}
