//! One pass over the data: clipped per-row log-likelihood ratios, summed (no allocation).
//!
//! Every kernel of this crate spends its time here. Rows are processed in chunks of
//! [`CHUNK`] so the per-row terms stay in L1 between the model writing them and the kernel
//! clipping them; the model decides how to compute the terms (closed-form ratio, or one
//! likelihood evaluation against a cache of the current state's per-row values).

use super::split::{Split, run_groups};
use crate::models::{Layout, Model};

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
                s[k] += clamp_nan_low(x[k], bound);
                c[k] += u64::from(x[k].abs() > bound);
                if RAW {
                    raw[k] += x[k];
                }
            }
        }
        for &x in lanes.remainder() {
            s[0] += clamp_nan_low(x, bound);
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

/// `x` clamped to `[−bound, bound]`, NaN ↦ `−bound`. Written as two comparisons (one
/// `max`/`min` instruction each) rather than `f64::max`/`min`, whose NaN rules cost extra
/// instructions per element; the values are the same.
#[inline(always)]
fn clamp_nan_low(x: f64, bound: f64) -> f64 {
    let low = if x > -bound { x } else { -bound };
    if low < bound { low } else { bound }
}

/// Per-row state a full-data kernel keeps: one chunk buffer per group of chunks
/// ([`Split`]), the per-chunk partial sums, and for models without a closed-form ratio the
/// per-row log-likelihoods of the current and the proposed state, in the model's
/// [`layout`](Model::layout) (`f64`, or `f32` for compact models: see there).
#[derive(Clone, Debug)]
pub struct RowCache {
    pass: RatioPass,
    values: RowValues,
}

/// The buffers of a ratio pass: how the chunks are split into groups, one chunk buffer per
/// group, one partial sum per chunk.
#[derive(Clone, Debug)]
struct RatioPass {
    split: Split,
    chunks: Vec<Vec<f64>>,
    partials: Vec<ClippedSum>,
}

/// The cached per-row log-likelihoods, current and proposed.
#[derive(Clone, Debug)]
enum RowValues {
    /// The model has a direct ratio: nothing is cached.
    None,
    F64(Vec<f64>, Vec<f64>),
    F32(Vec<f32>, Vec<f32>),
}

/// A precision the per-row cache can be kept in.
trait Cached: Copy + Default + Send + Sync {
    /// `x` rounded to this precision.
    fn round(x: f64) -> Self;

    /// The stored value as `f64` (exact).
    fn widen(self) -> f64;

    /// The model's `ℓ_j(θ')` for one chunk: stored (rounded to `Self`) into `proposed`, and
    /// `ℓ_j(θ') − ℓ_j(θ)` (the difference of the stored values) written into `ratios`.
    fn ratios<M: Model + ?Sized>(
        model: &M,
        theta_new: &[f64],
        start: usize,
        current: &[Self],
        proposed: &mut [Self],
        ratios: &mut [f64],
    ) {
        model.log_lik_rows(theta_new, start, ratios);
        for ((r, p), &c) in ratios.iter_mut().zip(proposed.iter_mut()).zip(current) {
            *p = Self::round(*r);
            *r = p.widen() - c.widen();
        }
    }

    /// `ℓ_j(θ)` for every row, in this precision.
    fn fill<M: Model + ?Sized>(model: &M, theta: &[f64]) -> Vec<Self> {
        let n = model.n_rows();
        let mut values = vec![Self::default(); n];
        let mut buf = vec![0.0; CHUNK.min(n)];
        for (k, v) in values.chunks_mut(CHUNK).enumerate() {
            let buf = &mut buf[..v.len()];
            model.log_lik_rows(theta, k * CHUNK, buf);
            for (o, &x) in v.iter_mut().zip(buf.iter()) {
                *o = Self::round(x);
            }
        }
        values
    }
}

impl Cached for f64 {
    #[inline(always)]
    fn round(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
}

impl Cached for f32 {
    #[inline(always)]
    fn round(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn widen(self) -> f64 {
        f64::from(self)
    }
}

impl RowCache {
    /// Allocate once per chain; fills the cache with `ℓ_j(θ)` when the model needs it. The
    /// passes are sequential until [`set_threads`](Self::set_threads).
    pub fn new<M: Model + ?Sized>(model: &M, theta: &[f64]) -> Self {
        let n = model.n_rows();
        let values = match (model.has_direct_ratio(), model.layout()) {
            (true, _) => RowValues::None,
            (false, Layout::F64) => RowValues::F64(f64::fill(model, theta), vec![0.0; n]),
            (false, Layout::F32) => RowValues::F32(f32::fill(model, theta), vec![0.0; n]),
        };
        let split = Split::new(n, 1);
        let pass = RatioPass {
            split,
            chunks: vec![vec![0.0; CHUNK]],
            partials: vec![ClippedSum::default(); split.chunks()],
        };
        RowCache { pass, values }
    }

    /// Split the passes over up to `threads` rayon threads (1: sequential; small data stay
    /// sequential anyway, see [`Split`]). Allocates the groups' chunk buffers; results do not
    /// depend on it.
    pub fn set_threads(&mut self, threads: usize) {
        let pass = &mut self.pass;
        pass.split = Split::new(pass.split.chunks() * CHUNK, threads);
        while pass.chunks.len() < pass.split.groups() {
            pass.chunks.push(vec![0.0; CHUNK]);
        }
    }

    /// One pass over all rows: `Σ clip(ℓ_j(θ') − ℓ_j(θ), ±bound)`; with `RAW`, also the
    /// unclipped sum. Each chunk's sum is computed on its own (in parallel with
    /// [`set_threads`](Self::set_threads)) and the chunk sums are added in chunk order, so
    /// the result is the same for every thread count.
    pub fn clipped_ratio_sum<const RAW: bool, M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        theta_new: &[f64],
        bound: f64,
    ) -> ClippedSum {
        let n = model.n_rows();
        match &mut self.values {
            RowValues::None => {
                let ratios = |start: usize, buf: &mut [f64], _: &mut [f64]| {
                    model.log_lik_ratio_rows(theta, theta_new, start, buf);
                };
                self.pass.run::<RAW, f64, _>(&mut [], n, bound, &ratios)
            }
            RowValues::F64(current, proposed) => self
                .pass
                .cached::<RAW, _, _>(model, theta_new, bound, current, proposed),
            RowValues::F32(current, proposed) => self
                .pass
                .cached::<RAW, _, _>(model, theta_new, bound, current, proposed),
        }
    }

    /// The proposal was accepted: its per-row values become the current ones.
    pub fn accept(&mut self) {
        match &mut self.values {
            RowValues::None => {}
            RowValues::F64(current, proposed) => std::mem::swap(current, proposed),
            RowValues::F32(current, proposed) => std::mem::swap(current, proposed),
        }
    }
}

impl RatioPass {
    /// [`run`](Self::run) against a per-row cache: `ℓ_j(θ')` is computed, stored into
    /// `proposed` in the cache's precision, and differenced with `current`.
    fn cached<const RAW: bool, R: Cached, M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta_new: &[f64],
        bound: f64,
        current: &[R],
        proposed: &mut [R],
    ) -> ClippedSum {
        let ratios = |start: usize, buf: &mut [f64], new: &mut [R]| {
            let cur = &current[start..start + buf.len()];
            R::ratios(model, theta_new, start, cur, new, buf);
        };
        self.run::<RAW, R, _>(proposed, current.len(), bound, &ratios)
    }

    /// The pass of [`RowCache::clipped_ratio_sum`] over `n` rows: `ratios(start, buf, new)`
    /// writes one chunk's per-row ratios into `buf` (and its rows' cached values into `new`,
    /// a chunk of `proposed`, empty without a cache); each chunk's clipped sum goes to its
    /// slot of `partials`, and the slots are added in chunk order.
    fn run<const RAW: bool, R, F>(
        &mut self,
        proposed: &mut [R],
        n: usize,
        bound: f64,
        ratios: &F,
    ) -> ClippedSum
    where
        R: Send,
        F: Fn(usize, &mut [f64], &mut [R]) + Sync,
    {
        let per = self.split.per_group();
        let cached = !proposed.is_empty();
        let work = |g: usize, buf: &mut Vec<f64>, parts: &mut [ClippedSum], new: &mut [R]| {
            for (i, part) in parts.iter_mut().enumerate() {
                let start = (g * per + i) * CHUNK;
                let len = CHUNK.min(n - start);
                let buf = &mut buf[..len];
                let new: &mut [R] = if cached {
                    &mut new[i * CHUNK..i * CHUNK + len]
                } else {
                    &mut []
                };
                ratios(start, buf, new);
                *part = ClippedSum::default();
                part.add_chunk::<RAW>(buf, bound);
            }
        };
        run_groups(
            &self.split,
            &mut self.chunks,
            &mut self.partials,
            1,
            proposed,
            &work,
        );
        let mut acc = ClippedSum::default();
        for p in &self.partials {
            acc.sum += p.sum;
            acc.raw_sum += p.raw_sum;
            acc.clipped += p.clipped;
        }
        acc
    }
}

/// One group's scratch for gradient passes: the chunk's gradients column-major
/// (`d × CHUNK`), a row-major staging area for models without column gradients, per-row
/// scale factors, and the group's clipped-row count and first error.
#[derive(Debug)]
struct GradScratch {
    cols: Vec<f64>,
    rows: Vec<f64>,
    scale: Vec<f64>,
    clipped: usize,
    error: Option<crate::Error>,
}

impl Clone for GradScratch {
    /// The buffers (an error is only held between a pass and its end).
    fn clone(&self) -> Self {
        GradScratch {
            cols: self.cols.clone(),
            rows: self.rows.clone(),
            scale: self.scale.clone(),
            clipped: self.clipped,
            error: None,
        }
    }
}

impl GradScratch {
    fn new(d: usize, staging: bool) -> Self {
        let size = CHUNK * d;
        GradScratch {
            cols: vec![0.0; size],
            rows: if staging { vec![0.0; size] } else { Vec::new() },
            scale: vec![0.0; CHUNK],
            clipped: 0,
            error: None,
        }
    }
}

/// Buffers for per-row gradient passes: one `GradScratch` per group of chunks ([`Split`])
/// and the per-chunk partial gradient sums (`d` per chunk).
#[derive(Clone, Debug)]
pub struct GradBuffer {
    split: Split,
    dim: usize,
    staging: bool,
    groups: Vec<GradScratch>,
    partials: Vec<f64>,
}

impl GradBuffer {
    /// Allocate once per chain (the row-major staging area only for models without column
    /// gradients). The passes are sequential until [`set_threads`](Self::set_threads).
    pub fn new<M: Model + ?Sized>(model: &M) -> Self {
        let d = model.dim();
        let staging = !model.has_column_gradients();
        let split = Split::new(model.n_rows(), 1);
        GradBuffer {
            split,
            dim: d,
            staging,
            groups: vec![GradScratch::new(d, staging)],
            partials: vec![0.0; split.chunks() * d],
        }
    }

    /// Split the passes over up to `threads` rayon threads (1: sequential; small data stay
    /// sequential anyway, see [`Split`]). Allocates the groups' scratch; results do not
    /// depend on it.
    pub fn set_threads(&mut self, threads: usize) {
        self.split = Split::new(self.split.chunks() * CHUNK, threads);
        while self.groups.len() < self.split.groups() {
            self.groups.push(GradScratch::new(self.dim, self.staging));
        }
    }

    /// `out = Σ_j clip_{bound}(∇ℓ_j(θ))` over all rows (L2 clipping, `0 ↦ 0`); returns the
    /// number of clipped rows. With a finite bound, a row whose gradient has a NaN or
    /// infinite component contributes zero (and counts as clipped), so one bad row cannot
    /// turn the released sum into NaN: every row's contribution has norm ≤ `bound`. A bound of `+∞` clips nothing (and models with
    /// [`Model::has_gradient_sum`] then skip the pass).
    ///
    /// Each chunk's gradients are laid out column-major (written so by models with
    /// [`Model::has_column_gradients`], else transposed from the row-major ones), so the
    /// squared norms, the scale factors `min(1, B/‖g_j‖)` and the scaled sums are all
    /// vectorised passes over contiguous columns. Each chunk's clipped sum is computed on its
    /// own (in parallel with [`set_threads`](Self::set_threads)) and the chunk sums are added
    /// in chunk order, so the result is the same for every thread count.
    ///
    /// # Errors
    /// The model's gradient error of the first failing chunk (in chunk order).
    pub fn clipped_grad_sum<M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        bound: f64,
        out: &mut [f64],
    ) -> crate::Result<usize> {
        if !bound.is_finite() && model.has_gradient_sum() {
            // Nothing to clip: the model's sufficient statistics give the sum directly.
            model.grad_log_lik_sum(theta, out)?;
            return Ok(0);
        }
        let d = model.dim();
        let n = model.n_rows();
        let per = self.split.per_group();
        let columns = model.has_column_gradients();
        let work = |g: usize, s: &mut GradScratch, parts: &mut [f64], _: &mut [f64]| {
            s.clipped = 0;
            s.error = None;
            for (i, part) in parts.chunks_exact_mut(d).enumerate() {
                let start = (g * per + i) * CHUNK;
                let len = CHUNK.min(n - start);
                let cols = &mut s.cols[..len * d];
                let filled = if columns {
                    model.grad_log_lik_cols(theta, start, cols)
                } else {
                    let rows = &mut s.rows[..len * d];
                    model.grad_log_lik_rows(theta, start, rows).map(|()| {
                        for (k, row) in rows.chunks_exact(d).enumerate() {
                            for (i, &x) in row.iter().enumerate() {
                                cols[i * len + k] = x;
                            }
                        }
                    })
                };
                if let Err(e) = filled {
                    s.error = Some(e);
                    return;
                }
                part.fill(0.0);
                s.clipped += clip_sum_columns(cols, len, bound, &mut s.scale[..len], part);
            }
        };
        run_groups(
            &self.split,
            &mut self.groups,
            &mut self.partials,
            d,
            &mut [],
            &work,
        );
        let mut clipped = 0;
        for s in &mut self.groups[..self.split.groups()] {
            if let Some(e) = s.error.take() {
                return Err(e);
            }
            clipped += s.clipped;
        }
        out.fill(0.0);
        for part in self.partials.chunks_exact(d) {
            for (o, &p) in out.iter_mut().zip(part) {
                *o += p;
            }
        }
        Ok(clipped)
    }
}

/// Add `Σ_k clip_{bound}(g_k)` to `out`, where row `k`'s gradient is `cols[i*len + k]`
/// (`i < d`); `scale` (length `len`) is scratch. Returns the number of clipped rows.
fn clip_sum_columns(
    cols: &mut [f64],
    len: usize,
    bound: f64,
    scale: &mut [f64],
    out: &mut [f64],
) -> usize {
    if !bound.is_finite() {
        for (o, col) in out.iter_mut().zip(cols.chunks_exact(len)) {
            *o += lane_dot(None, col);
        }
        return 0;
    }
    scale.fill(0.0);
    for col in cols.chunks_exact(len) {
        for (s, &g) in scale.iter_mut().zip(col) {
            *s += g * g;
        }
    }
    let b2 = bound * bound;
    let mut clipped = 0u64;
    let mut nonfinite = 0u64;
    for s in scale.iter_mut() {
        // ‖g‖² > B²: scale by B/‖g‖. A NaN or infinite ‖g‖² is fixed up below.
        let over = *s > b2;
        clipped += u64::from(over);
        nonfinite += u64::from(!s.is_finite());
        let f = bound / s.sqrt();
        *s = if over { f } else { 1.0 };
    }
    if nonfinite > 0 {
        clipped = fix_nonfinite_rows(cols, len, bound, scale, clipped);
    }
    for (o, col) in out.iter_mut().zip(cols.chunks_exact(len)) {
        *o += lane_dot(Some(scale), col);
    }
    clipped as usize
}

/// The rare rows of a chunk whose squared gradient norm is not finite (checked after the fast
/// sweep, so the hot path pays one comparison per row). A row with a NaN or infinite component
/// contributes the zero vector: `B/∞ = 0` times `∞` would be NaN, and a NaN scale would turn
/// the whole noisy gradient into NaN, a release that reveals the row. A row of finite
/// components whose squared norm overflowed is clipped with its norm computed without
/// overflow. Every row's contribution stays in the ball of radius `bound`, so the sensitivity
/// the accountant assumes holds. Such rows count as clipped. Returns the corrected count.
#[cold]
#[inline(never)]
fn fix_nonfinite_rows(
    cols: &mut [f64],
    len: usize,
    bound: f64,
    scale: &mut [f64],
    mut clipped: u64,
) -> u64 {
    for (k, sc) in scale.iter_mut().enumerate().take(len) {
        let row = || cols.iter().skip(k).step_by(len);
        let sq: f64 = row().map(|g| g * g).sum();
        if sq.is_finite() {
            continue;
        }
        // What the fast sweep counted for this row (an infinite ‖g‖² above B², a NaN never).
        let counted = u64::from(sq > bound * bound);
        let over = if row().all(|g| g.is_finite()) {
            let big = row().fold(0.0_f64, |m, g| m.max(g.abs()));
            let norm = big * row().map(|g| (g / big).powi(2)).sum::<f64>().sqrt();
            *sc = if norm > bound { bound / norm } else { 1.0 };
            norm > bound
        } else {
            *sc = 0.0;
            for g in cols.iter_mut().skip(k).step_by(len) {
                *g = 0.0;
            }
            true
        };
        clipped = clipped + u64::from(over) - counted;
    }
    clipped
}

/// `Σ_k w_k x_k` (or `Σ_k x_k` without weights) with four independent lanes, so the compiler
/// vectorises it; the order of additions is fixed, so results are reproducible.
#[inline(always)]
fn lane_dot(w: Option<&[f64]>, x: &[f64]) -> f64 {
    const L: usize = 4;
    let mut acc = [0.0; L];
    let mut xs = x.chunks_exact(L);
    match w {
        Some(w) => {
            let mut ws = w.chunks_exact(L);
            for (a, b) in (&mut ws).zip(&mut xs) {
                for k in 0..L {
                    acc[k] += a[k] * b[k];
                }
            }
            for (a, b) in ws.remainder().iter().zip(xs.remainder()) {
                acc[0] += a * b;
            }
        }
        None => {
            for b in &mut xs {
                for k in 0..L {
                    acc[k] += b[k];
                }
            }
            for b in xs.remainder() {
                acc[0] += b;
            }
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{BananaModel, BananaParams};

    /// A model seen through its row-wise methods only (no closed-form ratio, no column
    /// gradients), in a declared layout: the kernels then use the per-row cache (in that
    /// layout's precision) and the transposed row-gradient path.
    struct RowView<'a, M>(&'a M, Layout);

    impl<M: Model> Model for RowView<'_, M> {
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn n_rows(&self) -> usize {
            self.0.n_rows()
        }
        fn layout(&self) -> Layout {
            self.1
        }
        fn log_prior(&self, t: &[f64]) -> f64 {
            self.0.log_prior(t)
        }
        fn grad_log_prior(&self, t: &[f64], g: &mut [f64]) {
            self.0.grad_log_prior(t, g)
        }
        fn log_lik_row(&self, t: &[f64], j: usize) -> f64 {
            self.0.log_lik_row(t, j)
        }
        fn has_gradient(&self) -> bool {
            true
        }
        fn grad_log_lik_row(&self, t: &[f64], j: usize, g: &mut [f64]) -> crate::Result<()> {
            self.0.grad_log_lik_row(t, j, g)
        }
    }

    #[test]
    fn clamp_matches_max_min_and_sends_nan_low() {
        for x in [
            -5.0,
            -2.0,
            -0.5,
            0.0,
            1.5,
            2.0,
            7.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(clamp_nan_low(x, 2.0), x.clamp(-2.0, 2.0));
            assert_eq!(clamp_nan_low(x, f64::INFINITY), x);
        }
        assert_eq!(clamp_nan_low(f64::NAN, 2.0), -2.0);
        let mut acc = ClippedSum::default();
        acc.add_chunk::<true>(&[1.0, 3.0, -4.0, 0.5, f64::NAN], 2.0);
        assert_eq!((acc.sum, acc.clipped), (1.0 + 2.0 - 2.0 + 0.5 - 2.0, 2));
    }

    /// A row with a NaN or infinite gradient component contributes zero, a row whose squared
    /// norm overflows is clipped to norm `B` (before the fix: NaN scale 1, or `0·∞ = NaN`).
    #[test]
    fn nonfinite_gradient_rows_stay_bounded() {
        let len = 6;
        let bound = 2.0;
        // Row-wise: (3,4) clipped to (1.2,1.6); (NaN,1); (∞,0); (1e300,1e300) → (√2,√2);
        // (0.5,0) kept; (−∞,NaN).
        let rows = [
            [3.0, 4.0],
            [f64::NAN, 1.0],
            [f64::INFINITY, 0.0],
            [1e300, 1e300],
            [0.5, 0.0],
            [f64::NEG_INFINITY, f64::NAN],
        ];
        let mut cols = vec![0.0; 2 * len];
        for (k, r) in rows.iter().enumerate() {
            cols[k] = r[0];
            cols[len + k] = r[1];
        }
        let mut scale = vec![0.0; len];
        let mut out = vec![0.0; 2];
        let clipped = clip_sum_columns(&mut cols, len, bound, &mut scale, &mut out);
        let h = std::f64::consts::SQRT_2;
        assert_eq!(clipped, 5);
        // A bound so large that B² overflows: the overflowing finite row is not clipped.
        let mut cols2 = vec![1e300, 1.0, 1e300, 1.0];
        let mut out2 = vec![0.0; 2];
        let c2 = clip_sum_columns(&mut cols2, 2, 1e300 * 10.0, &mut scale[..2], &mut out2);
        assert_eq!((c2, out2), (0, vec![1e300 + 1.0, 1e300 + 1.0]));
        assert!((out[0] - (1.2 + h + 0.5)).abs() < 1e-12, "{out:?}");
        assert!((out[1] - (1.6 + h)).abs() < 1e-12, "{out:?}");
    }

    /// The chunked, vectorised clipped gradient sum equals clipping row by row, on both the
    /// column-major and the transposed row-major path, across chunk boundaries.
    #[test]
    fn clipped_grad_sum_matches_row_by_row() {
        let params = BananaParams::thesis(3, 20.0);
        let data = params
            .generate(&[0.0, 3.0, 0.0], 2 * CHUNK + 77, 5)
            .unwrap();
        let model = BananaModel::new(data, params).unwrap();
        let theta = [0.2, 1.7, -0.4];
        let d = 3;
        for bound in [0.3, 1.0, 3.0, f64::INFINITY] {
            let (mut want, mut want_clipped) = (vec![0.0; d], 0);
            let mut scale = vec![0.0; d];
            let mut g = vec![0.0; d];
            for j in 0..model.n_rows() {
                model.grad_log_lik_row(&theta, j, &mut g).unwrap();
                let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
                let s = if norm > bound { bound / norm } else { 1.0 };
                want_clipped += usize::from(norm > bound);
                want.iter_mut().zip(&g).for_each(|(w, x)| *w += s * x);
                scale
                    .iter_mut()
                    .zip(&g)
                    .for_each(|(w, x)| *w += (s * x).abs());
            }
            for (path, m) in [
                ("columns", &model as &dyn Model),
                ("rows", &RowView(&model, Layout::F64) as &dyn Model),
            ] {
                let mut out = vec![f64::NAN; d];
                let clipped = GradBuffer::new(m)
                    .clipped_grad_sum(m, &theta, bound, &mut out)
                    .unwrap();
                assert_eq!(clipped, want_clipped, "{path}, bound {bound}");
                // Relative to Σ_j |g_ji|: the unclipped sum comes from sufficient statistics
                // (`grad_log_lik_sum`) on the column path, with its own rounding.
                for ((o, w), sc) in out.iter().zip(&want).zip(&scale) {
                    assert!(
                        (o - w).abs() <= 1e-12 * sc,
                        "{path}, bound {bound}: {o} vs {w}"
                    );
                }
            }
            if bound.is_finite() {
                assert!(want_clipped > 0 && want_clipped < model.n_rows());
            }
        }
    }

    /// Today's sequential ratio pass, chunk by chunk into one running sum (the reference the
    /// split pass must reproduce bit for bit).
    fn sequential_ratio_sum<M: Model + ?Sized>(
        m: &M,
        t: &[f64],
        t_new: &[f64],
        b: f64,
    ) -> ClippedSum {
        let mut acc = ClippedSum::default();
        let mut buf = vec![0.0; CHUNK];
        let mut start = 0;
        while start < m.n_rows() {
            let len = CHUNK.min(m.n_rows() - start);
            let buf = &mut buf[..len];
            if m.layout() == Layout::F32 && !m.has_direct_ratio() {
                // the cache's precision: each log-likelihood rounded to f32, then differenced
                let rounded = |t: &[f64], j: usize| f64::from(m.log_lik_row(t, j) as f32);
                for (k, r) in buf.iter_mut().enumerate() {
                    *r = rounded(t_new, start + k) - rounded(t, start + k);
                }
            } else {
                m.log_lik_ratio_rows(t, t_new, start, buf);
            }
            acc.add_chunk::<true>(buf, b);
            start += len;
        }
        acc
    }

    /// Today's sequential gradient pass (every chunk's clipped sum added into `out`).
    fn sequential_grad_sum<M: Model + ?Sized>(m: &M, t: &[f64], b: f64, out: &mut [f64]) -> usize {
        let d = m.dim();
        let (mut rows, mut cols, mut scale) =
            (vec![0.0; CHUNK * d], vec![0.0; CHUNK * d], vec![0.0; CHUNK]);
        out.fill(0.0);
        let (mut clipped, mut start) = (0, 0);
        while start < m.n_rows() {
            let len = CHUNK.min(m.n_rows() - start);
            if m.has_column_gradients() {
                m.grad_log_lik_cols(t, start, &mut cols[..len * d]).unwrap();
            } else {
                m.grad_log_lik_rows(t, start, &mut rows[..len * d]).unwrap();
                for (k, g) in rows[..len * d].chunks_exact(d).enumerate() {
                    for (i, &x) in g.iter().enumerate() {
                        cols[i * len + k] = x;
                    }
                }
            }
            clipped += clip_sum_columns(&mut cols[..len * d], len, b, &mut scale[..len], out);
            start += len;
        }
        clipped
    }

    /// The split passes (1, 2, 3 and 7 threads, in a pool of 3) equal the sequential pass bit
    /// for bit: ratio passes with a closed-form ratio and with the per-row cache (`f64`, and
    /// `f32` for a compact model: differences of rounded values), gradient
    /// passes on the column and the transposed row path, with and without clipping.
    #[test]
    fn split_passes_equal_the_sequential_pass_bit_for_bit() {
        let n = (crate::samplers::split::PARALLEL_MIN_CHUNKS + 7) * CHUNK + 123;
        assert!(crate::samplers::split::Split::new(n, 2).groups() > 2);
        let params = BananaParams::thesis(3, 20.0);
        let banana =
            BananaModel::new(params.generate(&[0.0, 3.0, 0.0], n, 5).unwrap(), params).unwrap();
        let iso = crate::models::testing::IsotropicGaussian::generate(n, 3, 6);
        let (t, t_new) = ([0.2, 1.7, -0.4], [0.21, 1.69, -0.38]);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let compact = RowView(&iso, Layout::F32);
        for (name, m) in [
            ("direct", &banana as &dyn Model),
            ("cached", &iso as &dyn Model),
            ("cached f32", &compact as &dyn Model),
        ] {
            assert_eq!(name == "direct", m.has_direct_ratio());
            for bound in [0.05, 0.5, f64::INFINITY] {
                let want = sequential_ratio_sum(m, &t, &t_new, bound);
                if name == "cached f32" {
                    // the reference really is the rounded one (so the test tells f32 from f64)
                    let exact = sequential_ratio_sum(&iso, &t, &t_new, bound);
                    assert_ne!(want.raw_sum.to_bits(), exact.raw_sum.to_bits());
                    assert!((want.raw_sum - exact.raw_sum).abs() < 1e-6 * n as f64);
                }
                let mut gwant = vec![0.0; 3];
                let cwant = sequential_grad_sum(m, &t, bound, &mut gwant);
                for threads in [1, 2, 3, 7] {
                    let mut cache = RowCache::new(m, &t);
                    cache.set_threads(threads);
                    let got =
                        pool.install(|| cache.clipped_ratio_sum::<true, _>(m, &t, &t_new, bound));
                    let bits = |c: ClippedSum| (c.sum.to_bits(), c.raw_sum.to_bits(), c.clipped);
                    assert_eq!(
                        bits(got),
                        bits(want),
                        "{name}, bound {bound}, {threads} threads"
                    );
                    // after an accept the cache holds θ' and the pass back is the negation
                    cache.accept();
                    let back =
                        pool.install(|| cache.clipped_ratio_sum::<true, _>(m, &t_new, &t, bound));
                    assert_eq!(bits(back), bits(sequential_ratio_sum(m, &t_new, &t, bound)));
                    let mut grads = GradBuffer::new(m);
                    grads.set_threads(threads);
                    let mut got = vec![f64::NAN; 3];
                    let c = pool
                        .install(|| grads.clipped_grad_sum(m, &t, bound, &mut got))
                        .unwrap();
                    if !(bound.is_infinite() && m.has_gradient_sum()) {
                        assert_eq!(c, cwant, "{name}, bound {bound}, {threads} threads");
                        let b = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(
                            b(&got),
                            b(&gwant),
                            "{name}, bound {bound}, {threads} threads"
                        );
                    }
                }
                if bound == 0.05 {
                    assert!(want.clipped > 0 && cwant > 0, "{name}: the bound must clip");
                }
            }
        }
    }
}
