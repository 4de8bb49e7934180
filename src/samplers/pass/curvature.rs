//! The clipped-curvature pass: each row's Hessian `H_j = ∂g_j/∂θ` of its log-likelihood, by
//! forward differences of the per-row gradients (`d + 1` gradient evaluations per row,
//! symmetrised; the O(h) error is far below the noise of a DP release), its Frobenius norm,
//! and the sum of the rows' Hessians clipped to `‖H_j‖_F ≤ C_H` (one row substituted moves the
//! sum by at most `2C_H`; a row whose Hessian is not finite contributes 0). Used by the DP
//! initial point (`auto::init`) and the noise-aware path of a library model
//! (`noise_aware::model_path`).
//!
//! The rows are cut into groups fixed by `n` alone, each summed sequentially on a rayon
//! thread, and the groups' results are added in group order: the same bits for every thread
//! count.

use nalgebra::DMatrix;
use rayon::prelude::*;

use super::clip_factor;
use crate::error::Result;
use crate::models::Model;

/// Rows per chunk of the curvature pass.
const CHUNK: usize = 256;

/// Chunks per group of the pass.
const GROUP_CHUNKS: usize = 16;

/// Relative forward-difference step of coordinate `i`: `h_i = STEP · max(|θ_i|, 1)`.
const STEP: f64 = 1e-6;

/// Per-row gradients and Hessians of a chunk.
struct Curvature {
    d: usize,
    g: Vec<f64>,
    plus: Vec<f64>,
    cols: Vec<f64>,
    /// `len × d × d`, row-major per row.
    h: Vec<f64>,
    shifted: Vec<f64>,
}

impl Curvature {
    fn new(d: usize) -> Self {
        Curvature {
            d,
            g: vec![0.0; CHUNK * d],
            plus: vec![0.0; CHUNK * d],
            cols: vec![0.0; CHUNK * d],
            h: vec![0.0; CHUNK * d * d],
            shifted: vec![0.0; d],
        }
    }

    /// Gradients and symmetrised Hessians of rows `start .. start + len` at `theta`.
    fn chunk<M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        start: usize,
        len: usize,
    ) -> Result<()> {
        let d = self.d;
        gradients(
            model,
            theta,
            start,
            &mut self.g[..len * d],
            &mut self.cols[..len * d],
        )?;
        self.shifted.copy_from_slice(theta);
        for (i, &t) in theta.iter().enumerate() {
            let e = STEP * t.abs().max(1.0);
            self.shifted[i] = t + e;
            gradients(
                model,
                &self.shifted,
                start,
                &mut self.plus[..len * d],
                &mut self.cols[..len * d],
            )?;
            self.shifted[i] = t;
            for k in 0..len {
                for a in 0..d {
                    self.h[k * d * d + a * d + i] = (self.plus[k * d + a] - self.g[k * d + a]) / e;
                }
            }
        }
        for k in 0..len {
            let h = &mut self.h[k * d * d..(k + 1) * d * d];
            for a in 0..d {
                for b in a + 1..d {
                    let m = 0.5 * (h[a * d + b] + h[b * d + a]);
                    h[a * d + b] = m;
                    h[b * d + a] = m;
                }
            }
        }
        Ok(())
    }

    fn hessian(&self, k: usize) -> &[f64] {
        &self.h[k * self.d * self.d..(k + 1) * self.d * self.d]
    }
}

/// `f(curvature of one chunk, its length, the group's output)` over every chunk, group by
/// group on the rayon pool; the groups' outputs in group order.
///
/// # Errors
/// The model's error of the first failing group (in group order).
fn by_group<M, F>(model: &M, theta: &[f64], f: F) -> Result<Vec<Vec<f64>>>
where
    M: Model + ?Sized,
    F: Fn(&Curvature, usize, &mut Vec<f64>) + Sync,
{
    let d = theta.len();
    let n = model.n_rows();
    let rows_per_group = CHUNK * GROUP_CHUNKS;
    (0..n.div_ceil(rows_per_group))
        .into_par_iter()
        .map_init(
            || Curvature::new(d),
            |cur, g| {
                let mut out = Vec::new();
                let end = ((g + 1) * rows_per_group).min(n);
                let mut start = g * rows_per_group;
                while start < end {
                    let len = CHUNK.min(end - start);
                    cur.chunk(model, theta, start, len)?;
                    f(cur, len, &mut out);
                    start += len;
                }
                Ok(out)
            },
        )
        .collect()
}

/// Row-major per-row gradients of rows `start .. start + len` into `out`, through the model's
/// column-major fast path when it has one (`cols` is scratch of the same size).
fn gradients<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    start: usize,
    out: &mut [f64],
    cols: &mut [f64],
) -> Result<()> {
    let d = theta.len();
    if !model.has_column_gradients() {
        return model.grad_log_lik_rows(theta, start, out);
    }
    let len = out.len() / d;
    model.grad_log_lik_cols(theta, start, cols)?;
    for i in 0..d {
        for k in 0..len {
            out[k * d + i] = cols[i * len + k];
        }
    }
    Ok(())
}

/// `‖v‖₂` with a non-finite value counted as infinite.
fn norm(v: &[f64]) -> f64 {
    let s: f64 = v.iter().map(|x| x * x).sum();
    if s.is_finite() {
        s.sqrt()
    } else {
        f64::INFINITY
    }
}

/// The Frobenius norm of every row's Hessian at `theta`, in row order (a non-finite Hessian's
/// is `+∞`).
///
/// # Errors
/// The model's gradient error.
pub(crate) fn hessian_norms<M: Model + ?Sized>(model: &M, theta: &[f64]) -> Result<Vec<f64>> {
    Ok(by_group(model, theta, |cur, len, out: &mut Vec<f64>| {
        out.extend((0..len).map(|k| norm(cur.hessian(k))));
    })?
    .concat())
}

/// `Σ_j clip_{C_H}(H_j(θ))`, symmetric (`C_H = clip`, Frobenius clipping; a row whose Hessian
/// is not finite contributes 0): the same bits for every thread count.
///
/// # Errors
/// The model's gradient error.
pub(crate) fn clipped_hessian_sum<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    clip: f64,
) -> Result<DMatrix<f64>> {
    let d = theta.len();
    let parts = by_group(model, theta, |cur, len, part: &mut Vec<f64>| {
        part.resize(d * d, 0.0);
        for k in 0..len {
            let hk = cur.hessian(k);
            let ch = clip_factor(norm(hk), clip);
            if ch == 0.0 {
                // a non-finite row counts as zero (0 × ∞ would be NaN)
                continue;
            }
            for a in 0..d {
                for b in a..d {
                    part[a * d + b] += ch * hk[a * d + b];
                }
            }
        }
    })?;
    // the groups' sums in group order: the same for every thread count
    let mut h = DMatrix::<f64>::zeros(d, d);
    for part in &parts {
        for a in 0..d {
            for b in a..d {
                h[(a, b)] += part[a * d + b];
            }
        }
    }
    for a in 0..d {
        for b in a + 1..d {
            h[(b, a)] = h[(a, b)];
        }
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testing::IsotropicGaussian;

    /// Each row of the isotropic Gaussian has Hessian `−I` (Frobenius norm `√d`): the sum is
    /// `−n·I` unclipped and `−n·(C/√d)·I` clipped at `C < √d`, up to the forward
    /// differences' rounding; the norms are `√d`; and the sums are the same bits on one
    /// thread and on four (groups fixed by `n`, added in group order). A row's Hessian is off
    /// by the forward difference's rounding, about `ε·|g|/h ≈ 1e-9` (`h = 1e-6`), so the sum of
    /// 10 000 rows is within 1e-2 of `−n·I`; a wrong clip would be off by thousands.
    #[test]
    fn sums_clip_each_row_and_do_not_depend_on_the_threads() {
        let (n, d) = (10_000, 3);
        let model = IsotropicGaussian::generate(n, d, 4);
        let theta = [0.3, -1.2, 2.0];
        let norms = hessian_norms(&model, &theta).unwrap();
        assert_eq!(norms.len(), n);
        assert!(
            norms.iter().all(|v| (v - 3f64.sqrt()).abs() < 1e-6),
            "{}",
            norms[0]
        );
        for (clip, scale) in [(10.0, 1.0), (1.0, 1.0 / 3f64.sqrt())] {
            let h = clipped_hessian_sum(&model, &theta, clip).unwrap();
            for a in 0..d {
                for b in 0..d {
                    let want = if a == b { -(n as f64) * scale } else { 0.0 };
                    assert!((h[(a, b)] - want).abs() < 1e-2, "{a},{b}: {}", h[(a, b)]);
                    assert_eq!(h[(a, b)], h[(b, a)]);
                }
            }
        }
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| clipped_hessian_sum(&model, &theta, 1.5).unwrap())
        };
        assert_eq!(on(1), on(4));
    }
}
