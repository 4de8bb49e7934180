//! Small dense linear algebra of the noise-aware model: `svec` (a symmetric matrix as a vector
//! with the same Euclidean norm as its Frobenius norm) and functions of symmetric matrices.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use rand_distr::{Distribution, StandardNormal};

use crate::rng::ChainRng;

/// `svec(S)`: the upper triangle row by row, off-diagonal entries times `√2`.
pub(crate) fn svec(s: &DMatrix<f64>) -> Vec<f64> {
    let d = s.nrows();
    let mut out = Vec::with_capacity(d * (d + 1) / 2);
    for a in 0..d {
        for b in a..d {
            let v = 0.5 * (s[(a, b)] + s[(b, a)]);
            out.push(if a == b {
                v
            } else {
                v * std::f64::consts::SQRT_2
            });
        }
    }
    out
}

/// The inverse of [`svec`].
pub(crate) fn unsvec(v: &[f64], d: usize) -> DMatrix<f64> {
    let mut s = DMatrix::zeros(d, d);
    let mut k = 0;
    for a in 0..d {
        for b in a..d {
            let x = if a == b {
                v[k]
            } else {
                v[k] / std::f64::consts::SQRT_2
            };
            s[(a, b)] = x;
            s[(b, a)] = x;
            k += 1;
        }
    }
    s
}

/// Which function of a symmetric positive definite matrix.
#[derive(Clone, Copy)]
pub(crate) enum SymFn {
    Sqrt,
    InvSqrt,
}

/// `f(S)` through the eigendecomposition (eigenvalues floored at `1e-300`).
pub(crate) fn sym_fn(s: &DMatrix<f64>, f: SymFn) -> DMatrix<f64> {
    let sym = (s + s.transpose()) * 0.5;
    let eig = sym.symmetric_eigen();
    let lam = eig.eigenvalues.map(|l| {
        let l = l.max(1e-300);
        match f {
            SymFn::Sqrt => l.sqrt(),
            SymFn::InvSqrt => 1.0 / l.sqrt(),
        }
    });
    let out = &eig.eigenvectors * DMatrix::from_diagonal(&lam) * eig.eigenvectors.transpose();
    (&out + out.transpose()) * 0.5
}

/// `S` (symmetrised) with its eigenvalues below `floor` raised to it.
pub(crate) fn floor_eigenvalues(s: &DMatrix<f64>, floor: f64) -> DMatrix<f64> {
    let eig = ((s + s.transpose()) * 0.5).symmetric_eigen();
    let lam = eig.eigenvalues.map(|l| l.max(floor));
    &eig.eigenvectors * DMatrix::from_diagonal(&lam) * eig.eigenvectors.transpose()
}

/// One draw of `N(P⁻¹b, P⁻¹)` for a precision `P` (symmetrised) and `b`; `None` if `P` is not
/// positive definite.
pub(crate) fn draw_from_precision(
    prec: &DMatrix<f64>,
    b: &DVector<f64>,
    rng: &mut ChainRng,
) -> Option<DVector<f64>> {
    let (chol, mean) = precision_factor(prec, b)?;
    draw_from_factor(&chol, &mean, rng)
}

/// The Cholesky factor of the precision `prec` and the mean `prec⁻¹ b` of the Gaussian
/// [`draw_from_precision`] draws from (kept by a chain while its state does not change).
pub(crate) fn precision_factor(
    prec: &DMatrix<f64>,
    b: &DVector<f64>,
) -> Option<(Cholesky<f64, Dyn>, DVector<f64>)> {
    let chol: Cholesky<f64, Dyn> = Cholesky::new((prec + prec.transpose()) * 0.5)?;
    let mean = chol.solve(b);
    Some((chol, mean))
}

/// One draw of `N(mean, P⁻¹)` from the Cholesky factor of `P` ([`precision_factor`]).
pub(crate) fn draw_from_factor(
    chol: &Cholesky<f64, Dyn>,
    mean: &DVector<f64>,
    rng: &mut ChainRng,
) -> Option<DVector<f64>> {
    let n = mean.len();
    let z = DVector::from_iterator(n, (0..n).map(|_| StandardNormal.sample(rng)));
    let dev = chol.l().transpose().solve_upper_triangular(&z)?;
    Some(mean + dev)
}

/// The `p × p` matrix of the linear map `svec(H) ↦ svec(B H Bᵀ)` (`p = d(d+1)/2`).
pub(crate) fn congruence(b: &DMatrix<f64>) -> DMatrix<f64> {
    let d = b.nrows();
    let p = d * (d + 1) / 2;
    let mut m = DMatrix::zeros(p, p);
    let mut e = vec![0.0; p];
    for k in 0..p {
        e[k] = 1.0;
        let h = unsvec(&e, d);
        let col = svec(&(b * h * b.transpose()));
        for (r, v) in col.into_iter().enumerate() {
            m[(r, k)] = v;
        }
        e[k] = 0.0;
    }
    m
}

/// The error of a posterior step that a release's noise made impossible (a matrix that is not
/// positive definite, a conditional without mass): not a bug, the budget is too small for the
/// model, and the message says so.
pub(crate) fn too_noisy(posterior: &'static str, step: &str) -> crate::error::Error {
    crate::error::Error::Numerical {
        what: posterior,
        reason: format!(
            "{step} failed: the releases are too noisy for this model at this budget (raise \
             --epsilon or narrow the declared bounds)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svec_keeps_the_frobenius_norm_and_inverts() {
        let s = DMatrix::from_row_slice(3, 3, &[2.0, 1.0, -0.5, 1.0, 3.0, 0.25, -0.5, 0.25, 1.0]);
        let v = svec(&s);
        let n: f64 = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((n - s.norm()).abs() < 1e-12);
        assert!((unsvec(&v, 3) - &s).norm() < 1e-12);
        let r = sym_fn(&s, SymFn::Sqrt);
        assert!((&r * &r - &s).norm() < 1e-10);
        let b = DMatrix::from_row_slice(3, 3, &[1.0, 0.5, 0.0, 0.0, 2.0, 0.1, 0.3, 0.0, 1.0]);
        let c = congruence(&b);
        let want = svec(&(&b * &s * b.transpose()));
        let got = &c * nalgebra::DVector::from_vec(v);
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12));
    }
}
