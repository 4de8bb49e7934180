//! The affine reparametrisation of an `auto` run: the chains sample `φ` with `θ = m + Lφ`, where
//! `m` is the DP initial point and `L L^T` the inverse curvature its last Newton step released.
//!
//! Both are released values, so choosing the parametrisation is post-processing; every DP kernel
//! clips its per-row terms in whatever parametrisation it is given (ratios at `b‖φ − φ'‖`,
//! gradients at `b` in `φ`-space), so its guarantee holds unchanged. What changes is utility: in
//! `φ` the posterior is close to `N(0, I)`, so
//!
//! - a random walk moves along the posterior's long axes (a diagonal proposal in `θ` must size
//!   every step to the shortest axis when parameters are correlated, e.g. an intercept with
//!   covariates that are not centred);
//! - the clip bound is tight: a per-row log-likelihood changes by `|x_j·L(φ − φ')|`, at most
//!   `‖L^T x_j‖·‖φ − φ'‖`, and `‖L^T x_j‖` is small in the directions the data pin down, so the
//!   DP quantile of the per-row gradient norms in `φ` is far below `‖x_j‖` times the posterior
//!   width in `θ`, and the noise of every test shrinks with it.
//!
//! Draws are mapped back to `θ` before the run is returned.

use std::cell::RefCell;

use nalgebra::DMatrix;

use crate::error::{Error, Result};
use crate::models::Model;
use crate::samplers::Run;

/// `θ = m + Lφ` with `L` lower triangular (row-major `d × d`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AffineMap {
    center: Vec<f64>,
    factor: Vec<f64>,
    /// `‖L‖₂`, rounded up.
    norm: f64,
}

impl AffineMap {
    /// The map from the centre `m` and a symmetric positive definite covariance (row-major).
    ///
    /// # Errors
    /// A covariance that is not finite and positive definite.
    pub(crate) fn new(center: Vec<f64>, covariance: &[f64]) -> Result<Self> {
        let d = center.len();
        let cov = DMatrix::from_row_slice(d, d, covariance);
        let bad = || {
            Error::Model(
                "the DP initial point's curvature is not positive definite; the run cannot be \
                 reparametrised (set `reparametrise(false)`)"
                    .into(),
            )
        };
        if cov.iter().any(|x| !x.is_finite()) {
            return Err(bad());
        }
        let largest = cov.clone().symmetric_eigen().eigenvalues.max();
        let chol = cov.cholesky().ok_or_else(bad)?;
        let l = chol.l();
        let factor: Vec<f64> = (0..d)
            .flat_map(|i| (0..d).map(move |j| (i, j)))
            .map(|(i, j)| l[(i, j)])
            .collect();
        // ‖L‖₂ = √λ_max(LLᵀ); the eigenvalue's relative error is far below 1e-9, and the
        // Frobenius norm is an upper bound whatever the round-off
        let frobenius = factor.iter().map(|x| x * x).sum::<f64>().sqrt();
        let norm = (largest.max(0.0).sqrt() * (1.0 + 1e-9)).min(frobenius * (1.0 + 1e-12));
        if !(norm.is_finite() && norm > 0.0) {
            return Err(bad());
        }
        Ok(AffineMap {
            center,
            factor,
            norm,
        })
    }

    fn dim(&self) -> usize {
        self.center.len()
    }

    /// `θ = m + Lφ` into `theta`.
    pub(crate) fn to_theta(&self, phi: &[f64], theta: &mut [f64]) {
        let d = self.dim();
        for (i, t) in theta.iter_mut().enumerate() {
            let row = &self.factor[i * d..i * d + i + 1];
            *t = self.center[i] + row.iter().zip(phi).map(|(l, p)| l * p).sum::<f64>();
        }
    }

    /// `Lᵀg` (a gradient in `θ` to one in `φ`) into `out`.
    fn pull_back(&self, g: &[f64], out: &mut [f64]) {
        let d = self.dim();
        for (j, o) in out.iter_mut().enumerate() {
            *o = (j..d).map(|i| self.factor[i * d + j] * g[i]).sum();
        }
    }

    /// Map every position of a run (draws and chain starts) from `φ` to `θ`.
    pub(crate) fn map_run(&self, run: &mut Run) {
        let d = self.dim();
        let mut theta = vec![0.0; d];
        for chain in &mut run.chains {
            for x in chain
                .draws
                .chunks_exact_mut(d)
                .chain(std::iter::once(&mut chain.start[..]))
            {
                self.to_theta(x, &mut theta);
                x.copy_from_slice(&theta);
            }
        }
    }
}

thread_local! {
    /// Scratch for the mapped parameters and gradients (taken and put back, so a nested call
    /// allocates instead of failing).
    static SCRATCH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` with a scratch buffer of at least `len` values.
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f64]) -> R) -> R {
    let mut buf = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    let r = f(&mut buf[..len]);
    SCRATCH.with(|s| *s.borrow_mut() = buf);
    r
}

/// A model seen through an [`AffineMap`]: the same likelihood and prior as functions of `φ`
/// (the constant Jacobian drops out).
pub(crate) struct Reparametrised<'a, M: Model + ?Sized> {
    pub(crate) inner: &'a M,
    pub(crate) map: &'a AffineMap,
}

impl<M: Model + ?Sized> Reparametrised<'_, M> {
    fn theta<R>(&self, phi: &[f64], f: impl FnOnce(&[f64]) -> R) -> R {
        let d = phi.len();
        with_scratch(d, |t| {
            self.map.to_theta(phi, t);
            f(t)
        })
    }

    fn thetas<R>(&self, a: &[f64], b: &[f64], f: impl FnOnce(&[f64], &[f64]) -> R) -> R {
        let d = a.len();
        with_scratch(2 * d, |t| {
            let (ta, tb) = t.split_at_mut(d);
            self.map.to_theta(a, ta);
            self.map.to_theta(b, tb);
            f(ta, tb)
        })
    }

    /// Per-row gradients (row-major, `out.len() / d` rows) in `φ`.
    fn grad_rows_phi(&self, phi: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        let d = phi.len();
        with_scratch(d + out.len() + d, |buf| {
            let (theta, rest) = buf.split_at_mut(d);
            let (g, tmp) = rest.split_at_mut(out.len());
            self.map.to_theta(phi, theta);
            if self.inner.has_column_gradients() {
                // column-major: `g[a·len + k]` is coordinate `a` of row `k`
                let len = out.len() / d;
                self.inner.grad_log_lik_cols(theta, start, g)?;
                for (k, o) in out.chunks_exact_mut(d).enumerate() {
                    for (a, t) in tmp.iter_mut().enumerate() {
                        *t = g[a * len + k];
                    }
                    self.map.pull_back(tmp, o);
                }
            } else {
                self.inner.grad_log_lik_rows(theta, start, g)?;
                for (o, gr) in out.chunks_exact_mut(d).zip(g.chunks_exact(d)) {
                    tmp.copy_from_slice(gr);
                    self.map.pull_back(tmp, o);
                }
            }
            Ok(())
        })
    }
}

impl<M: Model + ?Sized> Model for Reparametrised<'_, M> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn n_rows(&self) -> usize {
        self.inner.n_rows()
    }
    fn param_names(&self) -> Vec<String> {
        self.inner.param_names()
    }
    fn tempering(&self) -> f64 {
        self.inner.tempering()
    }
    /// `|ℓ(m + Lφ') − ℓ(m + Lφ)| ≤ b‖L(φ' − φ)‖ ≤ b‖L‖₂‖φ' − φ‖`, and `‖Lᵀg‖ ≤ ‖L‖₂‖g‖`.
    fn public_lipschitz(&self) -> Option<f64> {
        self.inner.public_lipschitz().map(|b| b * self.map.norm)
    }
    fn log_prior(&self, phi: &[f64]) -> f64 {
        self.theta(phi, |t| self.inner.log_prior(t))
    }
    fn grad_log_prior(&self, phi: &[f64], grad: &mut [f64]) {
        let d = phi.len();
        with_scratch(2 * d, |buf| {
            let (theta, g) = buf.split_at_mut(d);
            self.map.to_theta(phi, theta);
            self.inner.grad_log_prior(theta, g);
            self.map.pull_back(g, grad);
        });
    }
    fn log_lik_row(&self, phi: &[f64], row: usize) -> f64 {
        self.theta(phi, |t| self.inner.log_lik_row(t, row))
    }
    fn has_gradient(&self) -> bool {
        self.inner.has_gradient()
    }
    fn grad_log_lik_row(&self, phi: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
        let d = phi.len();
        with_scratch(2 * d, |buf| {
            let (theta, g) = buf.split_at_mut(d);
            self.map.to_theta(phi, theta);
            self.inner.grad_log_lik_row(theta, row, g)?;
            self.map.pull_back(g, grad);
            Ok(())
        })
    }
    fn has_direct_ratio(&self) -> bool {
        self.inner.has_direct_ratio()
    }
    fn layout(&self) -> crate::models::Layout {
        self.inner.layout()
    }
    fn log_lik_rows(&self, phi: &[f64], start: usize, out: &mut [f64]) {
        self.theta(phi, |t| self.inner.log_lik_rows(t, start, out));
    }
    fn log_lik_ratio_rows(&self, phi: &[f64], phi_new: &[f64], start: usize, out: &mut [f64]) {
        self.thetas(phi, phi_new, |a, b| {
            self.inner.log_lik_ratio_rows(a, b, start, out)
        });
    }
    fn log_lik_ratio_indexed(&self, phi: &[f64], phi_new: &[f64], rows: &[usize], out: &mut [f64]) {
        self.thetas(phi, phi_new, |a, b| {
            self.inner.log_lik_ratio_indexed(a, b, rows, out)
        });
    }
    fn grad_log_lik_rows(&self, phi: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
        self.grad_rows_phi(phi, start, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testing::IsotropicGaussian;

    /// The reparametrised model is the same function: ratios, gradients (by the chain rule,
    /// checked against finite differences in `φ`) and the public bound's scaling.
    #[test]
    fn same_likelihood_in_new_coordinates() {
        let model = IsotropicGaussian::generate(50, 2, 3);
        let map = AffineMap::new(vec![0.5, -1.0], &[4.0, 1.0, 1.0, 2.0]).unwrap();
        let rep = Reparametrised {
            inner: &model,
            map: &map,
        };
        let (phi, phi2) = ([0.3, -0.7], [0.1, 0.4]);
        let mut t = [0.0; 2];
        map.to_theta(&phi, &mut t);
        // L = [[2, 0], [0.5, √1.75]]
        assert!((t[0] - (0.5 + 0.6)).abs() < 1e-12);
        assert!((t[1] - (-1.0 + 0.15 - 0.7 * 1.75f64.sqrt())).abs() < 1e-12);
        assert!((rep.log_lik_row(&phi, 3) - model.log_lik_row(&t, 3)).abs() < 1e-12);
        let mut r = [0.0; 5];
        rep.log_lik_ratio_rows(&phi, &phi2, 10, &mut r);
        let expect = rep.log_lik_row(&phi2, 12) - rep.log_lik_row(&phi, 12);
        assert!((r[2] - expect).abs() < 1e-10);
        let mut g = [0.0; 2];
        rep.grad_log_lik_row(&phi, 7, &mut g).unwrap();
        for i in 0..2 {
            let mut p = phi;
            p[i] += 1e-6;
            let fd = (rep.log_lik_row(&p, 7) - rep.log_lik_row(&phi, 7)) / 1e-6;
            assert!((g[i] - fd).abs() < 1e-4, "{i}: {} vs {fd}", g[i]);
        }
        let mut rows = [0.0; 6];
        rep.grad_log_lik_rows(&phi, 7, &mut rows).unwrap();
        assert_eq!(&rows[..2], &g);
        // ‖L‖₂² is the covariance's largest eigenvalue, 3 + √2
        assert!((map.norm - (3.0 + 2f64.sqrt()).sqrt()).abs() < 1e-8);
        assert!(AffineMap::new(vec![0.0; 2], &[1.0, 2.0, 2.0, 1.0]).is_err());
        assert!(AffineMap::new(vec![0.0; 2], &[f64::NAN, 0.0, 0.0, 1.0]).is_err());
    }
}
