//! Composition by FFT of exponentially tilted PMFs, with a bound on every error it makes.
//!
//! Each PMF `p` is tilted, `p̃_s = p_s·e^{λs}/Z(λ)`, before the transform, and the
//! composition untilted afterwards: `p^{*k}_s = Z(λ)^k·e^{−λs}·p̃^{*k}_s`. With λ chosen so the
//! tilted composition is centred near the ε of the query (the saddle point), the entries that
//! decide δ(ε) are the large ones of the transformed array, so the FFT's round-off, which is
//! relative to the largest entries, stays relative to δ however small δ is, and `|F|^k`
//! cannot overflow (it is a characteristic function, `|F| ≤ 1`).
//!
//! The window of the composed sum is chosen by a Chernoff bound so that at most `tau` of the
//! tilted mass lies outside it; that mass, aliased into the window by the cyclic convolution,
//! is charged to the bounds, and so is the untilted mass above the window.
//!
//! Round-off, after Higham, *Accuracy and Stability of Numerical Algorithms* (2002), §24.1:
//! a radix-2 FFT of length N computes `X̂` with `‖X̂ − X‖₂ ≤ γ·‖X‖₂`, `γ = log₂N·η/(1 −
//! log₂N·η)`, `η = μ + γ₄(√2 + μ)` (μ the twiddle error); we take η = 8u and double γ for
//! mixed radices. Each coefficient's error is at most the l2 norm of all of them, so
//! `|X̂_k − X_k| ≤ ε_c = γ·√N·‖x‖₂`; powers and products then carry bounds
//! ([`power_bounds`]: `|ẑ^n − z^n| ≤ n·ε·(|ẑ| + ε)^{n−1}` plus the round-off of repeated
//! squaring, and `|xy − x̂ŷ| ≤ |x − x̂|·B_y + B_x·|y − ŷ|` for products); the inverse
//! transform adds `γ·‖Ĝ‖₂`, and dividing by √N (Parseval) gives the l2 error of the output.

use super::discretise::Discretised;
use rayon::prelude::*;
use rustfft::FftPlanner;
use rustfft::num_complex::Complex;

/// `(ln Z(λ), normalised tilted array)`.
type Tilted = (f64, Vec<f64>);

/// One mechanism's discretisation and how many times it is composed.
pub(crate) struct Part<'a> {
    pub d: &'a Discretised,
    pub count: u64,
}

/// The tilted composition of both discretisations on the window `[lo, lo + len)`.
#[derive(Clone, Debug)]
pub(crate) struct Composed {
    pub h: f64,
    /// Tilt λ (per unit of loss).
    pub lambda: f64,
    /// Lattice index of entry 0 of `pess` and of `opt` (each has its own window).
    pub lo_pess: i64,
    pub lo_opt: i64,
    /// Tilted composed connect-the-dots PMF.
    pub pess: Vec<f64>,
    /// Tilted composed optimistic PMF (the mean-preserving rounding, `discretise.rs`).
    pub opt: Vec<f64>,
    /// `Σ n_c ln Z_c(λ)` of each: `p_s = exp(ln_scale − λ·s)·p̃_s`.
    pub ln_scale_pess: f64,
    pub ln_scale_opt: f64,
    /// Mass at +∞ of the composed pessimistic PMF.
    pub pess_inf: f64,
    /// Bound on the l2 norm of the round-off of `pess` and of `opt` (tilted units).
    pub err_l2: f64,
    /// Tilted mass outside the window (either array).
    pub tau: f64,
    /// Relative error of the entries from the discretisation's own round-off.
    pub rel: f64,
    /// `Σ n_c·bias_mean_c` and `max_c bias_c`: the total conditional mean `B` of the
    /// optimistic rounding is at most `bias_mean + bias_max·√(k·ln(1/η)/2)` in absolute
    /// value except with probability `η` (Hoeffding), under P and under Q.
    pub bias_mean: f64,
    pub bias_max: f64,
    /// `Σ n_c·q_loose_c`: bound on the Q-mass of the outcomes not split by their loss.
    pub q_loose: f64,
    /// Upper bound on `ln E_P[e^{−S}]` of the composed optimistic lattice sum `S`
    /// (`Σ n_c ln Σ_i opt_c[i]·e^{−x_i}`).
    pub ln_z_opt: f64,
    /// Number of mechanisms composed.
    pub count: f64,
}

/// `ln Σ p_i e^{λ(start+i)h}` and the normalised tilted array (`−∞` and zeros if `p = 0`).
fn tilt(p: &[f64], start: i64, h: f64, lambda: f64) -> (f64, Vec<f64>) {
    let shift = tilt_shift(p, start, h, lambda);
    if shift == f64::NEG_INFINITY {
        return (f64::NEG_INFINITY, vec![0.0; p.len()]);
    }
    let mut out: Vec<f64> = p
        .iter()
        .enumerate()
        .map(|(i, &v)| v * (lambda * (start + i as i64) as f64 * h - shift).exp())
        .collect();
    let z: f64 = out.iter().sum();
    out.iter_mut().for_each(|v| *v /= z);
    (shift + z.ln(), out)
}

/// An upper bound on `ln Σ_i p_i·e^{−(start+i)h}` (`−∞` if `p = 0`; the relative round-off of
/// the sum is covered by a margin of `len·u`).
fn ln_mass_at_minus_one(p: &[f64], start: i64, h: f64) -> f64 {
    let shift = tilt_shift(p, start, h, -1.0);
    if shift == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    let s: f64 = p
        .iter()
        .enumerate()
        .map(|(i, &v)| v.max(0.0) * (-((start + i as i64) as f64) * h - shift).exp())
        .sum();
    let reach = (start.unsigned_abs() as f64 + p.len() as f64) * h;
    shift + s.ln() + (p.len() as f64 + 8.0) * f64::EPSILON * (1.0 + reach)
}

/// `max_i λ·(start+i)·h` over the positive entries (`−∞` if none).
fn tilt_shift(p: &[f64], start: i64, h: f64, lambda: f64) -> f64 {
    p.iter()
        .enumerate()
        .filter(|(_, v)| **v > 0.0)
        .map(|(i, _)| lambda * (start + i as i64) as f64 * h)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// An array's mass in consecutive groups of `width` entries: `(first index, mass)`.
fn grouped(p: &[f64], width: usize) -> Vec<(f64, f64)> {
    p.chunks(width)
        .enumerate()
        .map(|(g, c)| ((g * width) as f64, c.iter().sum()))
        .collect()
}

/// An upper bound on `ln Σ_j p_j e^{t(j − mean)}` (`p` normalised) from its grouped masses,
/// each put at the end of its group where `e^{t·j}` is largest (`width = 1`: exact), plus a
/// margin of 1e-9 for the round-off of the running products (`e^{t·width}` multiplied
/// along, recomputed exactly every 64 groups).
fn centred_log_mgf(groups: &[(f64, f64)], width: f64, mean: f64, t: f64) -> f64 {
    let at = if t > 0.0 { width - 1.0 } else { 0.0 };
    let shift = groups
        .iter()
        .filter(|(_, m)| *m > 0.0)
        .map(|&(j0, _)| t * (j0 + at - mean))
        .fold(f64::NEG_INFINITY, f64::max);
    let step = (t * width).exp();
    let mut s = 0.0;
    for block in groups.chunks(64) {
        let mut r = (t * (block[0].0 + at - mean) - shift).exp();
        for &(_, m) in block {
            s += m * r;
            r *= step;
        }
    }
    shift + s.ln() + 1e-9
}

/// Chernoff window `[lo, hi]` (relative indices of the composed sum) outside which at most
/// `tau/2` of the tilted mass lies on each side.
fn chernoff_window(arrays: &[(&[f64], u64)], tau: f64) -> (f64, f64) {
    let stats: Vec<(f64, f64)> = arrays
        .par_iter()
        .map(|(p, _)| {
            let m: f64 = p.iter().enumerate().map(|(j, v)| j as f64 * v).sum();
            let v: f64 = p
                .iter()
                .enumerate()
                .map(|(j, v)| (j as f64 - m).powi(2) * v)
                .sum();
            (m, v)
        })
        .collect();
    let mean: f64 = arrays
        .iter()
        .zip(&stats)
        .map(|((_, n), (m, _))| *n as f64 * m)
        .sum();
    let var: f64 = arrays
        .iter()
        .zip(&stats)
        .map(|((_, n), (_, v))| *n as f64 * v)
        .sum();
    let full: f64 = arrays
        .iter()
        .map(|(p, n)| *n as f64 * (p.len() - 1) as f64)
        .sum();
    let (mut lo, mut hi) = (0.0_f64, full);
    if var <= 0.0 {
        return (mean.floor().max(0.0), mean.ceil().min(full));
    }
    let log_term = (2.0 / tau).ln();
    let t0 = (2.0 * log_term / var).sqrt();
    // Group the arrays of parts composed few times: moving mass up (or down) by less than a
    // group width w_c keeps the bound valid and widens the window by at most Σ n_c·w_c,
    // kept below 2 % of its half-width (and 64 nodes).
    let slack = (0.02 * (2.0 * log_term * var).sqrt()).max(64.0) / arrays.len() as f64;
    let ts: Vec<f64> = (-8..=12)
        .flat_map(|e| [1.0, -1.0].map(|sign| sign * 2f64.powf(e as f64 * 0.5) * t0))
        .collect();
    // per array, n·ln MGF at every t (in parallel over the arrays; summed below in order)
    let log_mgfs: Vec<Vec<f64>> = arrays
        .par_iter()
        .zip(&stats)
        .map(|((p, n), (m, _))| {
            let width = ((slack / *n as f64) as usize).clamp(1, p.len().max(1));
            let g = grouped(p, width);
            ts.iter()
                .map(|&t| *n as f64 * centred_log_mgf(&g, width as f64, *m, t))
                .collect()
        })
        .collect();
    for (j, &t) in ts.iter().enumerate() {
        let k: f64 = log_mgfs.iter().map(|v| v[j]).sum();
        // P(J − mean ≥ x) ≤ exp(K(t) − t·x), t > 0 (and the mirror for t < 0)
        let x = (k + log_term) / t;
        if !x.is_finite() {
            continue;
        }
        if t > 0.0 {
            hi = hi.min((mean + x).ceil());
        } else {
            lo = lo.max((mean + x).floor());
        }
    }
    (lo.max(0.0), hi.min(full).max(lo.max(0.0)))
}

/// Smallest `2^a·3^b ≥ n`.
fn fast_len(n: usize) -> usize {
    let mut best = n.next_power_of_two();
    let mut three = 1usize;
    while three < best {
        let mut m = three;
        while m < n {
            m *= 2;
        }
        best = best.min(m);
        three *= 3;
    }
    best
}

/// `z^n` by repeated squaring (relative round-off at most `(1 + 2√2·u)^{2n} − 1 ≈ 5.7·n·u`).
fn cpow(mut z: Complex<f64>, mut n: u64) -> Complex<f64> {
    let mut out = Complex::new(1.0, 0.0);
    while n > 0 {
        if n & 1 == 1 {
            out *= z;
        }
        n >>= 1;
        if n > 0 {
            z *= z;
        }
    }
    out
}

/// The width, in loss units, of the larger of the two composition windows of `parts`
/// tilted by `lambda` (to choose a lattice step whose window fits a budget).
pub(crate) fn window_span(parts: &[Part], h: f64, lambda: f64, tau: f64) -> f64 {
    let t = Tilting::new(parts, h, lambda, tau);
    let ((lp, hp), (lo, hi)) = (t.pess_window, t.opt_window);
    (hp - lp).max(hi - lo) * h + h
}

/// The composed parts (count > 0), both their PMFs tilted by λ, and the Chernoff windows of
/// the two composed sums (relative to the sum of the parts' first lattice indices; the
/// optimistic one is the pessimistic one's when a part has no optimistic mass).
struct Tilting<'a> {
    parts: Vec<&'a Part<'a>>,
    tilted: Vec<(Tilted, Tilted)>,
    pess_window: (f64, f64),
    opt_window: (f64, f64),
}

impl<'a> Tilting<'a> {
    fn new(parts: &'a [Part<'a>], h: f64, lambda: f64, tau: f64) -> Self {
        let parts: Vec<&Part> = parts.iter().filter(|p| p.count > 0).collect();
        let tilted: Vec<(Tilted, Tilted)> = parts
            .par_iter()
            .map(|p| {
                (
                    tilt(&p.d.pess, p.d.start, h, lambda),
                    tilt(&p.d.opt, p.d.start, h, lambda),
                )
            })
            .collect();
        let arrays = |opt: bool| -> Vec<(&[f64], u64)> {
            tilted
                .iter()
                .zip(&parts)
                .map(|(t, p)| (if opt { &t.1.1 } else { &t.0.1 }.as_slice(), p.count))
                .collect()
        };
        let pess_window = chernoff_window(&arrays(false), tau);
        let opt_window = if tilted.iter().all(|t| t.1.0 > f64::NEG_INFINITY) {
            chernoff_window(&arrays(true), tau)
        } else {
            (pess_window.0, pess_window.0)
        };
        Tilting {
            parts,
            tilted,
            pess_window,
            opt_window,
        }
    }
}

/// For `ẑ` (computed coefficient, `|ẑ − z| ≤ ε`) and its computed power `ĝ = ẑ^n`:
/// `(B, D)` with `B ≥ (|ẑ| + ε)^n ≥ |z^n|` and `D ≥ |ĝ − z^n|`, from
/// `|z^n − ẑ^n| ≤ n·ε·(|ẑ| + ε)^{n−1}` plus the power's round-off `(6n + 8)·u·B`.
/// `(|ẑ|+ε)^{n−1}` is read off `|ĝ|/|ẑ|` (times `e^{1e-3}` and the round-off of `ĝ`) where
/// `(n−1)·ε/|ẑ| ≤ 1e-3`, and computed directly elsewhere.
fn power_bounds(z: f64, g: f64, eps: f64, n: u64, u: f64) -> (f64, f64) {
    let nf = n as f64;
    let a = z + eps;
    let a_nm1 = if z > 0.0 && (nf - 1.0) * eps <= 1e-3 * z {
        g / z * (1.0 + 8.0 * nf * u) * 1.0011
    } else {
        ((nf - 1.0) * a.ln()).exp()
    };
    let b = a_nm1 * a;
    (b, nf * eps * a_nm1 + (6.0 * nf + 8.0) * u * b)
}

/// Parts transformed at once (in parallel) before their transforms are multiplied in.
const TRANSFORMS_AT_ONCE: usize = 2;
/// Frequencies per parallel task.
const FREQUENCY_CHUNK: usize = 1 << 13;

/// `|z|` rounded up: `√(re² + im²)` (relative round-off below 2u) inflated by 4u, or `hypot`
/// where the squares could underflow.
fn upper_norm(z: Complex<f64>, u: f64) -> f64 {
    let s = z.norm_sqr();
    if s > 1e-290 {
        s.sqrt() * (1.0 + 4.0 * u)
    } else {
        z.norm()
    }
}

/// One frequency of the composition, for both PMFs (pessimistic, optimistic).
#[derive(Clone, Copy)]
struct Frequency {
    /// Running product of the computed coefficients.
    g: [Complex<f64>; 2],
    /// Bound on the magnitude of the exact product.
    bound: [f64; 2],
    /// Bound on the error of the computed product.
    error: [f64; 2],
}

impl Frequency {
    /// Multiply in the `count`-th powers of the computed coefficients `z` (each within `eps`
    /// of the exact one), carrying the bounds: `|xy − x̂ŷ| ≤ |x − x̂|·B_y + B_x·|y − ŷ|`
    /// plus the product's round-off.
    fn multiply(&mut self, z: [Complex<f64>; 2], eps: f64, count: u64, u: f64) {
        for (which, z) in z.into_iter().enumerate() {
            let (power, b, d) = if count == 1 {
                // ẑ¹ is exact: B = |ẑ| + ε, D = ε (plus the round-off term of the general case)
                let a = upper_norm(z, u) + eps;
                (z, a, eps + 14.0 * u * a)
            } else {
                let power = cpow(z, count);
                let (b, d) = power_bounds(upper_norm(z, u), upper_norm(power, u), eps, count, u);
                (power, b, d)
            };
            self.g[which] *= power;
            let (bt, dt) = (self.bound[which], self.error[which]);
            self.error[which] = dt * b + bt * d + 4.0 * u * bt * b;
            self.bound[which] = bt * b;
        }
    }
}

/// Compose `parts` tilted by `lambda`, the window widened to contain the lattice index
/// `include` if given; `None` if the transform would exceed `max_len` points.
pub(crate) fn compose(
    parts: &[Part],
    h: f64,
    lambda: f64,
    include: Option<i64>,
    tau: f64,
    max_len: usize,
) -> Option<Composed> {
    let u = f64::EPSILON / 2.0;
    let Tilting {
        parts,
        tilted,
        pess_window: (lp, hp),
        opt_window: (lo_o, hi_o),
    } = Tilting::new(parts, h, lambda, tau);
    let base: i64 = parts.iter().map(|p| p.count as i64 * p.d.start).sum();
    let window = |lo: f64, hi: f64| -> (f64, f64) {
        match include {
            Some(i) => (
                lo.min(i as f64 - base as f64),
                hi.max(i as f64 + 1.0 - base as f64),
            ),
            None => (lo, hi),
        }
    };
    let (lp, hp) = window(lp, hp);
    let (lo_o, hi_o) = window(lo_o, hi_o);
    let size = (hp - lp + 1.0).max(hi_o - lo_o + 1.0);
    if size.is_nan() || size > max_len as f64 {
        return None;
    }
    let n = fast_len(size as usize);
    if n > max_len {
        return None;
    }
    let (size_p, size_o) = ((hp - lp + 1.0) as usize, (hi_o - lo_o + 1.0) as usize);
    let nf = n as f64;
    let log2n = nf.log2().max(1.0);
    let radix = if n.is_power_of_two() { 1.0 } else { 2.0 };
    let gamma = {
        let g = radix * log2n * 8.0 * u;
        g / (1.0 - g)
    };

    let mut planner = FftPlanner::<f64>::new();
    let forward = planner.plan_fft_forward(n);
    let inverse = planner.plan_fft_inverse(n);
    let zero = Complex::new(0.0, 0.0);
    // per frequency: the running products of both PMFs' transforms, a bound on the
    // magnitude of each exact product and on the error of the computed one
    let mut acc = vec![
        Frequency {
            g: [Complex::new(1.0, 0.0); 2],
            bound: [1.0; 2],
            error: [0.0; 2],
        };
        n
    ];
    // the parts are transformed `TRANSFORMS_AT_ONCE` at a time, each frequency then takes
    // them in order: the same arithmetic whatever the number of threads
    let work: Vec<(&Tilted, &Tilted, u64)> = tilted
        .iter()
        .zip(&parts)
        .map(|(t, p)| (&t.0, &t.1, p.count))
        .collect();
    let mut bufs = vec![vec![zero; n]; TRANSFORMS_AT_ONCE.min(work.len()).max(1)];
    for batch in work.chunks(TRANSFORMS_AT_ONCE) {
        let eps_c: Vec<f64> = bufs
            .par_iter_mut()
            .zip(batch.par_iter())
            .map(|(buf, (pess, opt, _))| {
                buf.iter_mut().for_each(|z| *z = zero);
                // entry j goes to j mod n (the cyclic convolution's aliasing)
                for (ps, os) in pess.1.chunks(n).zip(opt.1.chunks(n)) {
                    for ((z, &a), &b) in buf.iter_mut().zip(ps).zip(os) {
                        z.re += a;
                        z.im += b;
                    }
                }
                // the entries past the array are zeros: they add nothing to the norm
                let filled = pess.1.len().max(opt.1.len()).min(n);
                let norm2: f64 = buf[..filled].iter().map(|z| z.norm_sqr()).sum();
                forward.process(buf);
                gamma * nf.sqrt() * norm2.sqrt()
            })
            .collect();
        let bufs = &bufs;
        acc.par_chunks_mut(FREQUENCY_CHUNK)
            .enumerate()
            .for_each(|(ci, chunk)| {
                for (off, f) in chunk.iter_mut().enumerate() {
                    let k = ci * FREQUENCY_CHUNK + off;
                    for ((buf, &(_, _, c)), &eps) in bufs.iter().zip(batch).zip(&eps_c) {
                        let x = buf[k];
                        // the conjugate-symmetric partner n − k (mod n), without a division
                        let y = buf[if k == 0 { 0 } else { n - k }].conj();
                        let zp = (x + y) * 0.5;
                        let zo = (x - y) * Complex::new(0.0, -0.5);
                        f.multiply([zp, zo], eps, c, u);
                    }
                }
            });
    }
    let mut buf = std::mem::take(&mut bufs[0]);
    let (mut e_p, mut e_o, mut n_p, mut n_o) = (0.0, 0.0, 0.0, 0.0);
    for (k, f) in acc.iter().enumerate() {
        e_p += f.error[0] * f.error[0];
        e_o += f.error[1] * f.error[1];
        n_p += f.g[0].norm_sqr();
        n_o += f.g[1].norm_sqr();
        buf[k] = f.g[0] + Complex::new(0.0, 1.0) * f.g[1];
    }
    drop((acc, bufs));
    inverse.process(&mut buf);
    let err_l2 =
        ((e_p.sqrt() + e_o.sqrt() + gamma * (n_p.sqrt() + n_o.sqrt())) / nf.sqrt()) * (1.0 + gamma);
    let at = |rel: f64, i: usize| buf[(rel as usize + i) % n] / nf;
    let pess: Vec<f64> = (0..size_p).map(|i| at(lp, i).re).collect();
    let opt: Vec<f64> = (0..size_o).map(|i| at(lo_o, i).im).collect();
    let ln_scale = |which: usize| -> f64 {
        tilted
            .iter()
            .zip(&parts)
            .map(|(t, p)| p.count as f64 * if which == 0 { t.0.0 } else { t.1.0 })
            .sum()
    };
    let count: f64 = parts.iter().map(|p| p.count as f64).sum();
    let rho = parts.iter().map(|p| p.d.rho).fold(0.0, f64::max);
    let log_keep: f64 = parts
        .iter()
        .map(|p| p.count as f64 * (-p.d.pess_inf).ln_1p())
        .sum();
    Some(Composed {
        h,
        lambda,
        lo_pess: base + lp as i64,
        lo_opt: base + lo_o as i64,
        pess,
        opt,
        ln_scale_pess: ln_scale(0),
        ln_scale_opt: ln_scale(1),
        pess_inf: -log_keep.exp_m1(),
        err_l2,
        tau,
        rel: (count * rho.ln_1p()).exp_m1(),
        bias_mean: parts
            .iter()
            .map(|p| p.count as f64 * p.d.bias_mean)
            .sum::<f64>()
            * (1.0 + 1e-12),
        bias_max: parts.iter().map(|p| p.d.bias).fold(0.0, f64::max),
        q_loose: parts
            .iter()
            .map(|p| p.count as f64 * p.d.q_loose)
            .sum::<f64>()
            * (1.0 + 1e-12),
        ln_z_opt: parts
            .iter()
            .map(|p| p.count as f64 * ln_mass_at_minus_one(&p.d.opt, p.d.start, h))
            .sum::<f64>()
            + 1e-12,
        count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Composition of two small PMFs against the direct convolution, untilted and tilted.
    #[test]
    fn matches_direct_convolution() {
        let d = Discretised {
            h: 0.1,
            start: -2,
            pess: vec![0.1, 0.2, 0.3, 0.25, 0.15],
            pess_inf: 0.0,
            opt: vec![0.3, 0.3, 0.2, 0.2, 0.0],
            bias: 0.0,
            q_loose: 0.0,
            rho: 0.0,
            bias_mean: 0.0,
        };
        let parts = [Part { d: &d, count: 3 }];
        let mut direct = vec![1.0];
        for _ in 0..3 {
            let mut next = vec![0.0; direct.len() + 4];
            for (i, a) in direct.iter().enumerate() {
                for (j, b) in d.pess.iter().enumerate() {
                    next[i + j] += a * b;
                }
            }
            direct = next;
        }
        for lambda in [0.0, 3.0] {
            let c = compose(&parts, 0.1, lambda, None, 1e-30, 1 << 12).unwrap();
            for (i, want) in direct.iter().enumerate() {
                let s = -6 + i as i64;
                let idx = (s - c.lo_pess) as usize;
                let got = (c.ln_scale_pess - lambda * s as f64 * 0.1).exp() * c.pess[idx];
                assert!(
                    (got - want).abs() < 1e-14,
                    "λ {lambda}, s {s}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn fast_lengths() {
        assert_eq!(fast_len(1000), 1024);
        assert_eq!(fast_len(1025), 1152);
        assert_eq!(fast_len(7), 8);
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    /// The Chernoff window of a sum of two-point variables is a few standard deviations
    /// wide, not the whole support.
    #[test]
    fn chernoff_window_is_tight() {
        let p = vec![0.5, 0.5];
        let (lo, hi) = chernoff_window(&[(&p, 10_000)], 1e-14);
        eprintln!("{lo} {hi}");
        assert!(lo > 4_500.0 && hi < 5_500.0, "{lo} {hi}");
    }
}
