//! One pass over the data: clipped per-row log-likelihood ratios, summed (no allocation).
//!
//! Every kernel of this crate spends its time here. Rows are processed in chunks of
//! [`CHUNK`] so the per-row terms stay in L1 between the model writing them and the kernel
//! clipping them; the model decides how to compute the terms (closed-form ratio, or one
//! likelihood evaluation against a cache of the current state's per-row values).

use crate::models::Model;

/// Rows per chunk of a data pass.
pub const CHUNK: usize = 1024;

/// Sum of clipped per-row ratios and how many rows were clipped.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClippedSum {
    /// `Σ_j clip(r_j, −B, B)`.
    pub sum: f64,
    /// Unclipped `Σ_j r_j` (to tell whether clipping changed a decision); only computed when
    /// asked for (`RAW = true`), else 0.
    pub raw_sum: f64,
    /// Number of rows with `|r_j| > B`.
    pub clipped: usize,
}

impl ClippedSum {
    /// Clip `r` to `[-bound, bound]` and add it (a bound of `+∞` clips nothing; a NaN ratio
    /// counts as `−bound`, so its contribution stays bounded and the privacy analysis holds,
    /// and `f64::clamp`'s panic on a NaN bound cannot happen). Four
    /// independent lanes let the compiler vectorise the sums; the order of additions is
    /// fixed, so results are reproducible. `RAW` also sums the unclipped values.
    #[inline(always)]
    fn add_chunk<const RAW: bool>(&mut self, r: &[f64], bound: f64) {
        const L: usize = 4;
        let (mut s, mut raw, mut c) = ([0.0; L], [0.0; L], [0u64; L]);
        let mut lanes = r.chunks_exact(L);
        for x in &mut lanes {
            for k in 0..L {
                s[k] += x[k].max(-bound).min(bound);
                c[k] += u64::from(x[k].abs() > bound);
                if RAW {
                    raw[k] += x[k];
                }
            }
        }
        for &x in lanes.remainder() {
            s[0] += x.max(-bound).min(bound);
            c[0] += u64::from(x.abs() > bound);
            if RAW {
                raw[0] += x;
            }
        }
        self.sum += (s[0] + s[1]) + (s[2] + s[3]);
        self.raw_sum += (raw[0] + raw[1]) + (raw[2] + raw[3]);
        self.clipped += (c[0] + c[1] + c[2] + c[3]) as usize;
    }
}

/// Per-row state a full-data kernel keeps: the chunk buffer, and for models without a
/// closed-form ratio the per-row log-likelihoods of the current and the proposed state.
#[derive(Clone, Debug)]
pub struct RowCache {
    chunk: Vec<f64>,
    current: Vec<f64>,
    proposed: Vec<f64>,
}

impl RowCache {
    /// Allocate once per chain; fills the cache with `ℓ_j(θ)` when the model needs it.
    pub fn new<M: Model + ?Sized>(model: &M, theta: &[f64]) -> Self {
        let (current, proposed) = if model.has_direct_ratio() {
            (Vec::new(), Vec::new())
        } else {
            let mut cur = vec![0.0; model.n_rows()];
            for (k, c) in cur.chunks_mut(CHUNK).enumerate() {
                model.log_lik_rows(theta, k * CHUNK, c);
            }
            (cur, vec![0.0; model.n_rows()])
        };
        RowCache {
            chunk: vec![0.0; CHUNK],
            current,
            proposed,
        }
    }

    /// One pass over all rows: `Σ clip(ℓ_j(θ') − ℓ_j(θ), ±bound)`; with `RAW`, also the
    /// unclipped sum.
    pub fn clipped_ratio_sum<const RAW: bool, M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        theta_new: &[f64],
        bound: f64,
    ) -> ClippedSum {
        let n = model.n_rows();
        let mut acc = ClippedSum::default();
        if model.has_direct_ratio() {
            let mut start = 0;
            while start < n {
                let len = CHUNK.min(n - start);
                let buf = &mut self.chunk[..len];
                model.log_lik_ratio_rows(theta, theta_new, start, buf);
                acc.add_chunk::<RAW>(buf, bound);
                start += len;
            }
        } else {
            for (k, (new, cur)) in self
                .proposed
                .chunks_mut(CHUNK)
                .zip(self.current.chunks(CHUNK))
                .enumerate()
            {
                model.log_lik_rows(theta_new, k * CHUNK, new);
                let buf = &mut self.chunk[..new.len()];
                for ((b, &a), &c) in buf.iter_mut().zip(new.iter()).zip(cur) {
                    *b = a - c;
                }
                acc.add_chunk::<RAW>(buf, bound);
            }
        }
        acc
    }

    /// The proposal was accepted: its per-row values become the current ones.
    pub fn accept(&mut self) {
        std::mem::swap(&mut self.current, &mut self.proposed);
    }
}

/// Clip a gradient to L2 norm `bound` in place (`0 ↦ 0`); returns whether it was clipped.
#[inline]
pub fn clip_l2(g: &mut [f64], bound: f64) -> bool {
    let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > bound {
        let s = bound / norm;
        g.iter_mut().for_each(|x| *x *= s);
        true
    } else {
        false
    }
}

/// Chunk buffer for per-row gradient passes (`CHUNK × d` values).
#[derive(Clone, Debug)]
pub struct GradBuffer {
    chunk: Vec<f64>,
}

impl GradBuffer {
    /// Allocate once per chain.
    pub fn new(dim: usize) -> Self {
        GradBuffer {
            chunk: vec![0.0; CHUNK * dim],
        }
    }

    /// `out = Σ_j clip_{bound}(∇ℓ_j(θ))` over all rows; returns the number of clipped rows.
    /// A bound of `+∞` clips nothing.
    pub fn clipped_grad_sum<M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        bound: f64,
        out: &mut [f64],
    ) -> crate::Result<usize> {
        let d = model.dim();
        let n = model.n_rows();
        out.iter_mut().for_each(|x| *x = 0.0);
        let mut clipped = 0;
        let mut start = 0;
        while start < n {
            let len = CHUNK.min(n - start);
            let buf = &mut self.chunk[..len * d];
            model.grad_log_lik_rows(theta, start, buf)?;
            for g in buf.chunks_exact_mut(d) {
                if bound.is_finite() {
                    clipped += usize::from(clip_l2(g, bound));
                }
                for (o, x) in out.iter_mut().zip(g.iter()) {
                    *o += x;
                }
            }
            start += len;
        }
        Ok(clipped)
    }
}
