//! Hot loops for log-likelihood ratios that are linear in the row: `r_j = C + Σ_i w_i x_ji`
//! (banana and Gaussian models). Only columns with `w_i ≠ 0` are passed in, so a
//! one-coordinate update streams through one or two columns; no allocation. Generic over the
//! stored type (`f64` or `f32`): each value is read as `f64`, so the `f64` loops are unchanged.

use crate::models::{Element, LINEAR_RATIO_MAX_TERMS, LinearRatio};

/// `out[k] = constant + Σ_(w, col) w · col[k]` (each `col` has `out.len()` values), summed
/// left to right: `((constant + w₀x₀) + w₁x₁) + …`.
///
/// Up to four columns are added in one sweep over `out`, which keeps the same order of
/// additions as one sweep per column (so the values are identical) with a quarter of the
/// loads and stores of `out`: the pass then streams the columns at memory speed.
pub(crate) fn rows<'a, T: Element>(
    out: &mut [f64],
    constant: f64,
    mut terms: impl Iterator<Item = (f64, &'a [T])>,
) {
    out.fill(constant);
    let n = out.len();
    loop {
        let mut group: [(f64, &[T]); 4] = [(0.0, &[]); 4];
        let mut k = 0;
        while k < 4 {
            match terms.next() {
                Some((w, col)) => {
                    group[k] = (w, &col[..n]);
                    k += 1;
                }
                None => break,
            }
        }
        match &group[..k] {
            [] => return,
            [(w0, x0)] => {
                for (o, x0) in out.iter_mut().zip(*x0) {
                    *o += w0 * x0.to_f64();
                }
            }
            [(w0, x0), (w1, x1)] => {
                for ((o, x0), x1) in out.iter_mut().zip(*x0).zip(*x1) {
                    *o = *o + w0 * x0.to_f64() + w1 * x1.to_f64();
                }
            }
            [(w0, x0), (w1, x1), (w2, x2)] => {
                for (((o, x0), x1), x2) in out.iter_mut().zip(*x0).zip(*x1).zip(*x2) {
                    *o = *o + w0 * x0.to_f64() + w1 * x1.to_f64() + w2 * x2.to_f64();
                }
            }
            [(w0, x0), (w1, x1), (w2, x2), (w3, x3), ..] => {
                for ((((o, x0), x1), x2), x3) in out.iter_mut().zip(*x0).zip(*x1).zip(*x2).zip(*x3)
                {
                    *o = *o
                        + w0 * x0.to_f64()
                        + w1 * x1.to_f64()
                        + w2 * x2.to_f64()
                        + w3 * x3.to_f64();
                }
            }
        }
        if k < 4 {
            return;
        }
    }
}

/// The [`LinearRatio`] of the ratios [`rows`] writes for `constant` and `terms` (the columns
/// whole); `None` where a column is not stored as `f64` or there are more than
/// [`LINEAR_RATIO_MAX_TERMS`] terms.
pub(crate) fn linear_ratio<'a, T: Element>(
    constant: f64,
    terms: impl Iterator<Item = (f64, &'a [T])>,
) -> Option<LinearRatio<'a>> {
    let mut out = LinearRatio {
        constant,
        terms: [(0.0, &[]); LINEAR_RATIO_MAX_TERMS],
        len: 0,
    };
    for (w, col) in terms {
        *out.terms.get_mut(out.len)? = (w, T::as_f64_slice(col)?);
        out.len += 1;
    }
    Some(out)
}

/// `out_i[k] = t_i · (x_i[k] − μ_i)` for every column `i` (`out` column-major, `len` rows per
/// column; `terms` yields `(t_i, μ_i, x_i)` with `x_i` the column's `len` values): the
/// per-row gradients of a diagonal Gaussian likelihood.
///
/// Four columns are written in one sweep over the rows, so four data streams are in flight at
/// once (one column at a time leaves the memory system one stream to prefetch: a pass over
/// 10 columns takes a quarter longer); each value is computed exactly as one sweep per column
/// computes it.
pub(crate) fn centred_cols<'a, T: Element>(
    out: &mut [f64],
    len: usize,
    terms: impl Iterator<Item = (f64, f64, &'a [T])>,
) {
    let mut cols = out.chunks_exact_mut(len);
    let mut terms = terms.fuse(); // after the first `None`, every `next` is `None`
    loop {
        let mut next_col = || cols.next().expect("one output column per term");
        match std::array::from_fn::<_, 4, _>(|_| terms.next()) {
            [Some(t0), Some(t1), Some(t2), Some(t3)] => {
                centred_sweep(std::array::from_fn(|_| next_col()), [t0, t1, t2, t3], len);
            }
            [Some(t0), Some(t1), Some(t2), None] => {
                return centred_sweep(std::array::from_fn(|_| next_col()), [t0, t1, t2], len);
            }
            [Some(t0), Some(t1), None, None] => {
                return centred_sweep(std::array::from_fn(|_| next_col()), [t0, t1], len);
            }
            [Some(t0), None, None, None] => return centred_sweep([next_col()], [t0], len),
            _ => return,
        }
    }
}

/// `out[c][k] = t_c · (x_c[k] − μ_c)` for `C` columns in one sweep over the `len` rows.
#[inline(always)]
fn centred_sweep<T: Element, const C: usize>(
    out: [&mut [f64]; C],
    terms: [(f64, f64, &[T]); C],
    len: usize,
) {
    let mut out = out.map(|o| &mut o[..len]);
    let terms = terms.map(|(t, m, x)| (t, m, &x[..len]));
    for k in 0..len {
        for (o, &(t, m, x)) in out.iter_mut().zip(&terms) {
            o[k] = t * (x[k].to_f64() - m);
        }
    }
}

/// `out[k] = constant + Σ_(w, col) w · col[rows[k]]` (full columns, gathered at `rows`).
pub(crate) fn indexed<'a, T: Element>(
    out: &mut [f64],
    rows: &[usize],
    constant: f64,
    mut terms: impl Iterator<Item = (f64, &'a [T])>,
) {
    match terms.next() {
        None => out.fill(constant),
        Some((w, col)) => {
            for (o, &j) in out.iter_mut().zip(rows) {
                *o = w * col[j].to_f64() + constant;
            }
            for (w, col) in terms {
                for (o, &j) in out.iter_mut().zip(rows) {
                    *o += w * col[j].to_f64();
                }
            }
        }
    }
}

/// A model whose per-row log-likelihood ratio is linear in its data columns (the banana and
/// Gaussian models): `r_j = Σ_k (w_k x_jk + c0_k)` over the columns whose coefficient moves, so
/// the ratio of every row, of a gathered minibatch and the pass's [`LinearRatio`] all come from
/// [`ratio_coef`](Self::ratio_coef) by the functions below.
pub(crate) trait ColumnRatio<T: Element> {
    /// Columns of the data (one per coordinate).
    fn ratio_columns(&self) -> usize;
    /// Column `k` of the data.
    fn ratio_column(&self, k: usize) -> &[T];
    /// `(w_k, c0_k)` of column `k`'s term `w_k x_k + c0_k`; `None` when it does not move.
    fn ratio_coef(&self, theta: &[f64], theta_new: &[f64], k: usize) -> Option<(f64, f64)>;

    /// The row-independent part of the ratio: `Σ c0_k` over the moving columns, in column
    /// order.
    #[inline]
    fn ratio_constant(&self, theta: &[f64], theta_new: &[f64]) -> f64 {
        (0..self.ratio_columns())
            .filter_map(|k| self.ratio_coef(theta, theta_new, k))
            .map(|(_, c0)| c0)
            .sum()
    }
}

/// `Model::log_lik_ratio_rows` of a [`ColumnRatio`] model: the rows `start..start + out.len()`.
#[inline]
pub(crate) fn ratio_rows<T: Element, M: ColumnRatio<T> + ?Sized>(
    model: &M,
    theta: &[f64],
    theta_new: &[f64],
    start: usize,
    out: &mut [f64],
) {
    let end = start + out.len();
    let constant = model.ratio_constant(theta, theta_new);
    let terms = (0..model.ratio_columns()).filter_map(|k| {
        model
            .ratio_coef(theta, theta_new, k)
            .map(|(w, _)| (w, &model.ratio_column(k)[start..end]))
    });
    rows(out, constant, terms);
}

/// `Model::linear_ratio` of a [`ColumnRatio`] model (`None` for points of the wrong length).
#[inline]
pub(crate) fn model_linear_ratio<'a, T: Element, M: ColumnRatio<T> + ?Sized>(
    model: &'a M,
    theta: &[f64],
    theta_new: &[f64],
) -> Option<LinearRatio<'a>> {
    let d = model.ratio_columns();
    if theta.len() != d || theta_new.len() != d {
        return None;
    }
    let terms = (0..d).filter_map(|k| {
        model
            .ratio_coef(theta, theta_new, k)
            .map(|(w, _)| (w, model.ratio_column(k)))
    });
    linear_ratio(model.ratio_constant(theta, theta_new), terms)
}

/// `Model::log_lik_ratio_indexed` of a [`ColumnRatio`] model: the rows in `rows`.
#[inline]
pub(crate) fn ratio_indexed<T: Element, M: ColumnRatio<T> + ?Sized>(
    model: &M,
    theta: &[f64],
    theta_new: &[f64],
    rows: &[usize],
    out: &mut [f64],
) {
    let constant = model.ratio_constant(theta, theta_new);
    let terms = (0..model.ratio_columns()).filter_map(|k| {
        model
            .ratio_coef(theta, theta_new, k)
            .map(|(w, _)| (w, model.ratio_column(k)))
    });
    indexed(out, rows, constant, terms);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns written four (three, two) at a time are the same bits as one column at a time,
    /// for every column count and for `f64` and `f32` data.
    #[test]
    fn centred_columns_match_one_column_at_a_time() {
        let len = 37;
        for d in 1..=10 {
            let data: Vec<Vec<f64>> = (0..d)
                .map(|i| {
                    (0..len)
                        .map(|k| ((i * len + k) as f64 * 0.37).sin() * 3.0)
                        .collect()
                })
                .collect();
            let coef: Vec<(f64, f64)> = (0..d)
                .map(|i| (1.0 + i as f64 / 3.0, 0.1 * i as f64))
                .collect();
            let want: Vec<f64> = (0..d)
                .flat_map(|i| data[i].iter().copied())
                .enumerate()
                .map(|(j, x)| {
                    let (t, m) = coef[j / len];
                    t * (x - m)
                })
                .collect();
            let mut got = vec![f64::NAN; d * len];
            let terms = coef
                .iter()
                .zip(&data)
                .map(|(&(t, m), x)| (t, m, x.as_slice()));
            centred_cols(&mut got, len, terms);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "d = {d}"
            );
            let narrow: Vec<Vec<f32>> = data
                .iter()
                .map(|c| c.iter().map(|&x| x as f32).collect())
                .collect();
            let terms = coef
                .iter()
                .zip(&narrow)
                .map(|(&(t, m), x)| (t, m, x.as_slice()));
            centred_cols(&mut got, len, terms);
            let want32 = (0..d * len).map(|j| {
                let (t, m) = coef[j / len];
                t * (f64::from(narrow[j / len][j % len]) - m)
            });
            assert!(
                got.iter()
                    .zip(want32)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "f32, d = {d}"
            );
        }
    }
}
