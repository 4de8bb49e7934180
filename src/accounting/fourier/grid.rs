//! The Fourier accountant's discretisation grid on [-L, L), its cached FFT plans, and the
//! spectrum of the δ(ε) weight vector (the linear functional that turns a PLD into δ).

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

/// Chunk length of the deterministic parallel loops (fixed, so that sums do not depend on how
/// rayon schedules the work).
pub(super) const CHUNK: usize = 1 << 14;

/// `f(i)` for i in 0..n, computed in fixed chunks over rayon's pool (sequential inner loops:
/// no per-element scheduling cost).
pub(super) fn par_map(n: usize, f: impl Fn(usize) -> f64 + Sync) -> Vec<f64> {
    let mut out = vec![0.0; n];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (o, v) in chunk.iter_mut().enumerate() {
                *v = f(c * CHUNK + o);
            }
        });
    out
}

/// Grid x_j = -L + j·dx, j = 0..nx-1 (dx = 2L/nx), exactly as `numpy.linspace(-L, L - dx, nx)`
/// computes it, plus the forward/inverse FFT plans of length nx.
pub(super) struct Grid {
    pub(super) nx: usize,
    pub(super) half: usize,
    pub(super) l: f64,
    pub(super) dx: f64,
    step: f64,
    pub(super) forward: Arc<dyn Fft<f64>>,
    pub(super) inverse: Arc<dyn Fft<f64>>,
    /// Spectrum of the weights of the last ε asked for (Algorithm 2 asks for one ε many times).
    weights: Mutex<Option<Arc<Weights>>>,
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grid")
            .field("nx", &self.nx)
            .field("l", &self.l)
            .field("dx", &self.dx)
            .finish_non_exhaustive()
    }
}

/// Inverse DFT (numpy `ifft` convention, i.e. divided by nx) of the half-swapped δ(ε) weight
/// vector u_j = 1 − e^{ε − x_j} for j > j0 = ⌊nx(L + ε)/(2L)⌋ (0 otherwise), kept for the
/// frequencies m = 0..=nx/2 (the rest follow by conjugate symmetry: u is real).
///
/// For the composed density c = IFFT(F^k / dx) (half-swapped), FA's
/// δ(ε) = dx Σ_{j > j0} (1 − e^{ε − x_j}) c_j equals Σ_m U_m F_m^k by Parseval, which needs
/// no inverse FFT per k and lets us skip the frequencies where |U_m F_m^k| is negligible.
pub(super) struct Weights {
    pub(super) epsilon: f64,
    pub(super) u: Vec<Complex<f64>>,
    pub(super) ln_abs_u: Vec<f64>,
}

impl Grid {
    /// `nx` must be even and positive, `l` finite and positive (checked by the caller).
    pub(super) fn new(nx: usize, l: f64) -> Self {
        // One planner per process: it caches plans by length, so fresh accountants reuse them.
        static PLANNER: OnceLock<Mutex<FftPlanner<f64>>> = OnceLock::new();
        let (forward, inverse) = {
            let mut planner = PLANNER
                .get_or_init(|| Mutex::new(FftPlanner::new()))
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            (planner.plan_fft_forward(nx), planner.plan_fft_inverse(nx))
        };
        let dx = 2.0 * l / nx as f64;
        // numpy.linspace(start, stop, num): step = (stop - start)/(num - 1), y = j*step + start,
        // y[-1] = stop.
        let step = if nx > 1 {
            ((l - dx) - (-l)) / (nx - 1) as f64
        } else {
            0.0
        };
        Self {
            nx,
            half: nx / 2,
            l,
            dx,
            step,
            forward,
            inverse,
            weights: Mutex::new(None),
        }
    }

    /// Grid point x_j (original, un-swapped index).
    #[inline]
    pub(super) fn x(&self, j: usize) -> f64 {
        if j + 1 == self.nx {
            self.l - self.dx
        } else {
            j as f64 * self.step + (-self.l)
        }
    }

    /// FA's start index of a sum over x > s: ⌊nx(L + s)/(2L)⌋ (may be negative or ≥ nx).
    #[inline]
    pub(super) fn start_index(&self, s: f64) -> i64 {
        (self.nx as f64 * (self.l + s) / (2.0 * self.l)).floor() as i64
    }

    /// In-place forward FFT.
    pub(super) fn fft(&self, buf: &mut [Complex<f64>]) {
        self.forward.process(buf);
    }

    /// In-place unnormalised inverse FFT.
    pub(super) fn ifft_unnormalised(&self, buf: &mut [Complex<f64>]) {
        self.inverse.process(buf);
    }

    /// The weight spectrum for `epsilon` (cached for the last ε).
    pub(super) fn weights(&self, epsilon: f64) -> Arc<Weights> {
        {
            let guard = self.weights.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(w) = guard.as_ref()
                && w.epsilon.to_bits() == epsilon.to_bits()
            {
                return Arc::clone(w);
            }
        }
        let w = Arc::new(self.compute_weights(epsilon));
        let mut guard = self.weights.lock().unwrap_or_else(|p| p.into_inner());
        *guard = Some(Arc::clone(&w));
        w
    }

    fn compute_weights(&self, epsilon: f64) -> Weights {
        let (nx, half) = (self.nx, self.half);
        let j0 = self.start_index(epsilon);
        let first = (j0 + 1).clamp(0, nx as i64) as usize;
        let mut buf = vec![Complex::new(0.0, 0.0); nx];
        // Swapped index i holds original index (i + half) mod nx.
        buf.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (o, v) in chunk.iter_mut().enumerate() {
                    let j = (c * CHUNK + o + half) % nx;
                    if j >= first {
                        *v = Complex::new(1.0 - (epsilon - self.x(j)).exp(), 0.0);
                    }
                }
            });
        self.ifft_unnormalised(&mut buf);
        buf.truncate(half + 1);
        let inv_n = 1.0 / nx as f64;
        buf.par_chunks_mut(CHUNK).for_each(|chunk| {
            for v in chunk {
                *v *= inv_n;
            }
        });
        let ln_abs_u = par_map(half + 1, |m| buf[m].norm().ln());
        Weights {
            epsilon,
            u: buf,
            ln_abs_u,
        }
    }
}
