//! Hot loops for log-likelihood ratios that are linear in the row: `r_j = C + Σ_i w_i x_ji`
//! (banana and Gaussian models). Only columns with `w_i ≠ 0` are passed in, so a
//! one-coordinate update streams through one or two columns; no allocation. Generic over the
//! stored type (`f64` or `f32`): each value is read as `f64`, so the `f64` loops are unchanged.

use crate::models::Element;

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
