//! Hot loops for log-likelihood ratios that are linear in the row: `r_j = C + Σ_i w_i x_ji`
//! (banana and Gaussian models). Only columns with `w_i ≠ 0` are passed in, so a
//! one-coordinate update streams through one or two columns; no allocation. Generic over the
//! stored type (`f64` or `f32`): each value is read as `f64`, so the `f64` loops are unchanged.

use crate::models::Element;

/// `out[k] = constant + Σ_(w, col) w · col[k]` (each `col` has `out.len()` values).
pub(crate) fn rows<'a, T: Element>(
    out: &mut [f64],
    constant: f64,
    mut terms: impl Iterator<Item = (f64, &'a [T])>,
) {
    match terms.next() {
        None => out.fill(constant),
        Some((w, col)) => {
            for (o, &x) in out.iter_mut().zip(col) {
                *o = w * x.to_f64() + constant;
            }
            for (w, col) in terms {
                for (o, &x) in out.iter_mut().zip(col) {
                    *o += w * x.to_f64();
                }
            }
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
