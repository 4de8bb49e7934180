//! What the regression models share: linear predictors `η = xᵀβ` over column-major covariates,
//! their changes under a proposal, parameter names, and declared (public) covariate bounds.

use crate::error::{Error, Result, num};
use crate::models::{ColumnData, Element, linear};

/// Rows per block in the ratio and gradient loops (stack buffers; no allocation).
pub(crate) const BLOCK: usize = 256;

/// `η_j = Σ_i β_i x_ji` for rows `start .. start + out.len()` (column by column, left to
/// right from 0; columns with `β_i = 0` skipped), four columns per sweep
/// ([`linear::rows`]).
pub(crate) fn eta_rows<T: Element>(x: &ColumnData<T>, beta: &[f64], start: usize, out: &mut [f64]) {
    let end = start + out.len();
    let terms = beta
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b != 0.0)
        .map(|(i, &b)| (b, &x.col(i)[start..end]));
    linear::rows(out, 0.0, terms);
}

/// `Δη_j = Σ_{i: β'_i ≠ β_i} (β'_i − β_i) x_ji` for rows `start .. start + out.len()`: only
/// the columns whose coefficient changed are read.
pub(crate) fn eta_delta<T: Element>(
    x: &ColumnData<T>,
    beta: &[f64],
    beta_new: &[f64],
    start: usize,
    out: &mut [f64],
) {
    let end = start + out.len();
    let terms = beta
        .iter()
        .zip(beta_new)
        .enumerate()
        .filter(|&(_, (&b, &b_new))| b != b_new)
        .map(|(i, (&b, &b_new))| (b_new - b, &x.col(i)[start..end]));
    linear::rows(out, 0.0, terms);
}

/// Row-major per-row gradients of a GLM block: `g_k[i] = f_k · x_{s+k, i}` for the first
/// `cols` coefficients, `block` holding `f.len()` rows of `d` values (`d ≥ cols`; the other
/// entries are left alone).
pub(crate) fn slopes_times_x<T: Element>(
    x: &ColumnData<T>,
    s: usize,
    f: &[f64],
    block: &mut [f64],
    d: usize,
    cols: usize,
) {
    let len = f.len();
    for i in 0..cols {
        for ((g, &fk), &xv) in block
            .chunks_exact_mut(d)
            .zip(f.iter())
            .zip(&x.col(i)[s..s + len])
        {
            g[i] = fk * xv.to_f64();
        }
    }
}

/// Column-major per-row gradients of a GLM chunk: on entry `f` (column 0 of the output) holds
/// the slopes `f_k`, `rest` the columns `1 .. cols` after it (each `f.len()` long); on exit
/// column `i` holds `f_k · x_{start+k, i}` for every `i < cols`.
pub(crate) fn slopes_times_x_cols<T: Element>(
    x: &ColumnData<T>,
    start: usize,
    f: &mut [f64],
    rest: &mut [f64],
    cols: usize,
) {
    let len = f.len();
    let end = start + len;
    for (i, col) in (1..cols).zip(rest.chunks_exact_mut(len)) {
        for ((g, &fk), &xv) in col.iter_mut().zip(f.iter()).zip(&x.col(i)[start..end]) {
            *g = fk * xv.to_f64();
        }
    }
    for (g, &xv) in f.iter_mut().zip(&x.col(0)[start..end]) {
        *g *= xv.to_f64();
    }
}

/// Parameter names: the given ones, or `theta_0 … theta_{p-1}` followed by `extra`.
pub(crate) fn param_names(names: Option<&[String]>, p: usize, extra: &[&str]) -> Vec<String> {
    match names {
        Some(n) => n.to_vec(),
        None => (0..p)
            .map(|i| format!("theta_{i}"))
            .chain(extra.iter().map(|e| e.to_string()))
            .collect(),
    }
}

/// `ln N(θ; 0, var·I)`: the isotropic normal prior of the regressions.
pub(crate) fn normal_log_prior(theta: &[f64], var: f64) -> f64 {
    let ss: f64 = theta.iter().map(|t| t * t).sum();
    -0.5 * theta.len() as f64 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * ss / var
}

/// `∇ ln N(θ; 0, var·I) = −θ/var` into `grad`.
pub(crate) fn normal_grad_log_prior(theta: &[f64], var: f64, grad: &mut [f64]) {
    for (g, t) in grad.iter_mut().zip(theta) {
        *g = -t / var;
    }
}

/// `η` of one row.
#[inline]
pub(crate) fn eta<T: Element>(x: &ColumnData<T>, beta: &[f64], row: usize) -> f64 {
    beta.iter()
        .enumerate()
        .map(|(i, b)| b * x.get(row, i))
        .sum()
}

/// The response of a regression: the first row whose value is outside the model's support is
/// an error naming the row and the support (`y has the value … at row j; …`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResponseSupport {
    /// Logistic regression: every value 0 or 1.
    Binary,
    /// Poisson regression: counts, integers ≥ 0.
    Counts,
    /// Linear regression: finite values.
    Finite,
}

impl ResponseSupport {
    /// `Ok` when every value of `y` is in the support.
    pub(crate) fn check(self, y: &[f64]) -> Result<()> {
        let (ok, needs): (fn(f64) -> bool, &str) = match self {
            ResponseSupport::Binary => (
                |v| v == 0.0 || v == 1.0,
                "logistic regression needs every y in {0, 1}",
            ),
            ResponseSupport::Counts => (
                |v| v.is_finite() && v >= 0.0 && v.fract() == 0.0,
                "Poisson regression needs counts (integers ≥ 0)",
            ),
            ResponseSupport::Finite => (|v| v.is_finite(), "remove or impute it"),
        };
        match y.iter().position(|&v| !ok(v)) {
            Some(j) => Err(Error::InvalidData(format!(
                "y has the value {} at row {j}; {needs}",
                y[j]
            ))),
            None => Ok(()),
        }
    }
}

/// `names` checked to hold `expected` distinct, non-empty names.
pub(crate) fn check_names(names: Vec<String>, expected: usize) -> Result<Vec<String>> {
    if names.len() != expected {
        return Err(Error::invalid(
            "param_names",
            names.join(","),
            format!("the model has {expected} parameters: give one name per parameter"),
        ));
    }
    for (k, n) in names.iter().enumerate() {
        if n.is_empty() || names[..k].contains(n) {
            return Err(Error::invalid(
                "param_names",
                names.join(","),
                format!("name `{n}` is empty or repeated: give distinct, non-empty names"),
            ));
        }
    }
    Ok(names)
}

/// `bounds` checked to hold one finite `lo ≤ hi` per column of `x`, and every value of `x`
/// within its column's bounds (a declared bound the data break would void the privacy
/// guarantee built on it). `names` names the columns in errors.
pub(crate) fn check_bounds<T: Element>(
    x: &ColumnData<T>,
    bounds: &[(f64, f64)],
    names: &[String],
) -> Result<()> {
    if bounds.len() != x.n_cols() {
        return Err(Error::invalid(
            "bounds",
            bounds.len(),
            format!(
                "give one (lo, hi) per covariate column ({} columns)",
                x.n_cols()
            ),
        ));
    }
    for (i, &(lo, hi)) in bounds.iter().enumerate() {
        let name = names
            .get(i)
            .map_or_else(|| format!("column {i}"), |n| format!("`{n}`"));
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(Error::invalid(
                "bounds",
                format!("{}:{}", num(lo), num(hi)),
                format!("the bounds of {name} must be finite with lo ≤ hi"),
            ));
        }
        if let Some(j) = x
            .col(i)
            .iter()
            .position(|v| !(lo..=hi).contains(&v.to_f64()))
        {
            return Err(Error::InvalidData(format!(
                "{name} has the value {} at row {j}, outside its declared bounds [{}, {}]; \
                 widen the bounds or clamp the data to them",
                x.get(j, i),
                num(lo),
                num(hi)
            )));
        }
    }
    Ok(())
}

/// `sqrt(Σ_i max(lo_i², hi_i²))`, rounded up: an upper bound on `‖x‖` for every `x` in the box.
pub(crate) fn box_norm(bounds: &[(f64, f64)]) -> f64 {
    let s: f64 = bounds.iter().map(|&(lo, hi)| (lo * lo).max(hi * hi)).sum();
    // Each square and addition rounds by at most half an ulp, the square root by half an ulp
    // more: a relative slack of (d + 2)·ε covers them all (pessimistic rounding).
    let l = s.sqrt();
    l * (1.0 + (bounds.len() as f64 + 2.0) * f64::EPSILON)
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::models::Model;

    /// `n` rows of two deterministic covariates of different scales for the models' tests:
    /// `x1` in [−1, 1], `x2` in [0, 2].
    pub(crate) fn covariates(n: usize) -> (Vec<f64>, Vec<f64>) {
        let x1 = (0..n)
            .map(|j| ((j * 37) % 101) as f64 / 50.0 - 1.0)
            .collect();
        let x2 = (0..n).map(|j| ((j * 13) % 7) as f64 / 3.0).collect();
        (x1, x2)
    }

    /// Checks every fast path of `m` against its row-by-row log-likelihood at `theta` and
    /// `theta_new` (which should differ in every coordinate): log-likelihood rows, ratio rows
    /// (also for a one-coordinate change), and the three gradient layouts against central
    /// finite differences (step 1e-6: truncation error ~1e-12·|f'''|, rounding ~1e-10·|f|,
    /// so 1e-6 relative to the gradient's scale is a safe tolerance).
    pub(crate) fn check_model(m: &impl Model, theta: &[f64], theta_new: &[f64]) {
        let (n, d) = (m.n_rows(), m.dim());
        let start = 5;
        let len = n - start - 3; // more than one block, not from row 0, not to the end
        let mut out = vec![0.0; len];
        m.log_lik_rows(theta, start, &mut out);
        for (k, &o) in out.iter().enumerate() {
            assert!(
                (o - m.log_lik_row(theta, start + k)).abs() < 1e-12,
                "log_lik_rows row {k}"
            );
        }
        let mut one = theta.to_vec();
        one[d - 1] = theta_new[d - 1];
        for new in [theta_new, &one[..]] {
            m.log_lik_ratio_rows(theta, new, start, &mut out);
            for (k, &o) in out.iter().enumerate() {
                let want = m.log_lik_row(new, start + k) - m.log_lik_row(theta, start + k);
                assert!(
                    (o - want).abs() < 1e-11 * (1.0 + want.abs()),
                    "ratio row {k}: {o} vs {want}"
                );
            }
        }
        let mut rows = vec![0.0; len * d];
        m.grad_log_lik_rows(theta, start, &mut rows).unwrap();
        let mut cols = vec![0.0; len * d];
        assert!(m.has_column_gradients());
        m.grad_log_lik_cols(theta, start, &mut cols).unwrap();
        let mut g = vec![0.0; d];
        let h = 1e-6;
        for k in 0..len {
            let j = start + k;
            m.grad_log_lik_row(theta, j, &mut g).unwrap();
            for i in 0..d {
                assert!((rows[k * d + i] - g[i]).abs() < 1e-12, "grad rows {k},{i}");
                assert!(
                    (cols[i * len + k] - g[i]).abs() < 1e-12,
                    "grad cols {k},{i}"
                );
                if k % 37 == 0 {
                    let (mut up, mut dn) = (theta.to_vec(), theta.to_vec());
                    up[i] += h;
                    dn[i] -= h;
                    let fd = (m.log_lik_row(&up, j) - m.log_lik_row(&dn, j)) / (2.0 * h);
                    assert!(
                        (fd - g[i]).abs() < 1e-6 * (1.0 + g[i].abs()),
                        "fd {k},{i}: {fd} vs {}",
                        g[i]
                    );
                }
            }
        }
        assert!(
            m.grad_log_lik_cols(theta, start, &mut vec![0.0; d + 1][..])
                .is_err()
                || d == 1
        );
    }
}
