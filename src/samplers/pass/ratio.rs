//! The ratio pass: clipped per-row log-likelihood ratios, summed, in chunks of [`CHUNK`].

use super::CHUNK;
use super::linear_ratio::{ALONE_MAX_TERMS, covers, linear_span};
use crate::models::{Layout, LinearRatio, Model};
use crate::samplers::split::{Split, run_groups};

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
    pub(super) fn add_chunk<const RAW: bool>(&mut self, r: &[f64], bound: f64) {
        let mut lanes = ChunkLanes::default();
        let mut groups = r.chunks_exact(LANES);
        for x in &mut groups {
            let x: &[f64; LANES] = x.try_into().expect("a group of LANES rows");
            lanes.add_block::<RAW, LANES>(x, bound);
        }
        for &x in groups.remainder() {
            lanes.add_last::<RAW>(x, bound);
        }
        lanes.add_to(self);
    }
}

/// A chunk's lane sums as [`ClippedSum::add_chunk`] forms them, fed a few rows at a time:
/// whole groups of [`LANES`] rows to lanes `0..LANES` in order, then the last `len mod 4`
/// rows to lane 0 (and the clipped rows counted, in any order).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ChunkLanes {
    pub(super) sum: [f64; LANES],
    pub(super) raw: [f64; LANES],
    pub(super) clipped: u64,
}

impl ChunkLanes {
    /// Adds the next `R` rows' ratios `x` (`R` a multiple of [`LANES`]: whole groups).
    #[inline(always)]
    pub(super) fn add_block<const RAW: bool, const R: usize>(&mut self, x: &[f64; R], bound: f64) {
        for &x in x {
            self.clipped += u64::from(x.abs() > bound);
        }
        let clamped: [f64; R] = std::array::from_fn(|k| clamp_nan_low(x[k], bound));
        for (k, &c) in clamped.iter().enumerate() {
            self.sum[k % LANES] += c;
        }
        if RAW {
            for (k, &x) in x.iter().enumerate() {
                self.raw[k % LANES] += x;
            }
        }
    }

    /// Adds one of the chunk's last `len mod 4` rows' ratio `x` (after its whole groups).
    #[inline(always)]
    pub(super) fn add_last<const RAW: bool>(&mut self, x: f64, bound: f64) {
        self.sum[0] += clamp_nan_low(x, bound);
        self.clipped += u64::from(x.abs() > bound);
        if RAW {
            self.raw[0] += x;
        }
    }

    /// Adds the lanes to `out` (pairwise, as every chunk's sum is formed).
    #[inline(always)]
    pub(super) fn add_to(&self, out: &mut ClippedSum) {
        let (s, raw) = (&self.sum, &self.raw);
        out.sum += (s[0] + s[1]) + (s[2] + s[3]);
        out.raw_sum += (raw[0] + raw[1]) + (raw[2] + raw[3]);
        out.clipped += self.clipped as usize;
    }
}

impl ClippedSum {
    /// Two chunks' clipped sums, each formed exactly as [`add_chunk`](Self::add_chunk) forms
    /// it into a fresh `ClippedSum` (the same lanes, the same order: the same bits), but
    /// faster. One chunk's sum is a single chain of dependent vector additions, so it runs at
    /// the adder's latency; two chunks side by side are two independent chains. The clamp
    /// and the count are element-wise sweeps (vectorised at full width) that clamp `a` and
    /// `b` in place.
    pub(super) fn pair<const RAW: bool>(a: &mut [f64], b: &mut [f64], bound: f64) -> [Self; 2] {
        let mut raw = [[0.0; LANES]; 2];
        if RAW {
            lane_sums2(a, b, &mut raw);
        }
        let clipped = [clamp_in_place(a, bound), clamp_in_place(b, bound)];
        let mut sums = [[0.0; LANES]; 2];
        lane_sums2(a, b, &mut sums);
        std::array::from_fn(|i| {
            let mut c = ClippedSum::default();
            c.sum += (sums[i][0] + sums[i][1]) + (sums[i][2] + sums[i][3]);
            c.raw_sum += (raw[i][0] + raw[i][1]) + (raw[i][2] + raw[i][3]);
            c.clipped += clipped[i];
            c
        })
    }
}

/// Lanes of a chunk's sums (see [`ClippedSum::add_chunk`]).
pub(super) const LANES: usize = 4;

/// Chunks whose per-row ratios one model call writes, for a model of dimension `d`. A model
/// reads its data column by column, so a call over more rows reads longer contiguous runs of
/// each column: on gauss-30d (d = 30, n = 2·10⁵, 48 MB, beyond the caches) one call over
/// eight chunks takes 7.2 ns a row against 13.7 over one (the memory system streams long runs
/// at twice the rate of 30 interleaved 8 KB pieces); DP penalty there 1.5x faster, on
/// tempered-10d 10-15 %. Narrow models, whose data usually sit in the caches, keep the ratios
/// of a call in L1 (two chunks; eight measured 5 % slower on easy-2d, 18 % on the circle).
/// Each row's ratio does not depend on the call it is computed in, and each chunk's sum is
/// still formed on its own: the same bits.
fn call_chunks(d: usize) -> usize {
    if d >= 8 { 8 } else { 2 }
}

/// Add `a` and `b` to their lanes (`acc[0]`, `acc[1]`) as [`ClippedSum::add_chunk`] adds one
/// chunk: whole groups of four rows to lanes 0..3 in order, then the last `len mod 4` rows to
/// lane 0. The groups both chunks have are added side by side.
#[inline(always)]
fn lane_sums2(a: &[f64], b: &[f64], acc: &mut [[f64; LANES]; 2]) {
    let [sa, sb] = acc;
    // Side by side over the groups both have (by index: a zip of the two iterators would
    // drop a group of the longer one), then each one's own remaining groups and rows.
    let both = a.len().min(b.len()) / LANES * LANES;
    for (x, y) in a[..both]
        .chunks_exact(LANES)
        .zip(b[..both].chunks_exact(LANES))
    {
        for k in 0..LANES {
            sa[k] += x[k];
            sb[k] += y[k];
        }
    }
    for (r, s) in [(&a[both..], &mut *sa), (&b[both..], &mut *sb)] {
        let groups = r.chunks_exact(LANES);
        let rest = groups.remainder();
        for x in groups {
            for k in 0..LANES {
                s[k] += x[k];
            }
        }
        for &x in rest {
            s[0] += x;
        }
    }
}

/// Clamp every value of `r` to `[−bound, bound]` (NaN ↦ `−bound`, [`clamp_nan_low`]) in
/// place; returns how many had `|r_j| > bound`.
#[inline(always)]
fn clamp_in_place(r: &mut [f64], bound: f64) -> usize {
    let mut clipped = 0u64;
    for x in r.iter_mut() {
        clipped += u64::from(x.abs() > bound);
        *x = clamp_nan_low(*x, bound);
    }
    clipped as usize
}

/// `x` clamped to `[−bound, bound]`, NaN ↦ `−bound`. Written as two comparisons (one
/// `max`/`min` instruction each) rather than `f64::max`/`min`, whose NaN rules cost extra
/// instructions per element; the values are the same.
#[inline(always)]
pub(super) fn clamp_nan_low(x: f64, bound: f64) -> f64 {
    let low = if x > -bound { x } else { -bound };
    if low < bound { low } else { bound }
}

/// Per-row state a full-data kernel keeps: one buffer of a model call's chunks
/// (`call_chunks`) per group of chunks (`Split`), the per-chunk partial sums, and for models without a closed-form ratio the
/// per-row log-likelihoods of the current and the proposed state, in the model's
/// [`layout`](Model::layout) (`f64`, or `f32` for compact models: see there).
#[derive(Clone, Debug)]
pub struct RowCache {
    pass: RatioPass,
    values: RowValues,
}

/// The buffers of a ratio pass: how the chunks are split into groups, one buffer of
/// `call` chunks per group, one partial sum per chunk.
#[derive(Clone, Debug)]
struct RatioPass {
    split: Split,
    call: usize,
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
        let call = call_chunks(model.dim());
        let pass = RatioPass {
            split,
            call,
            chunks: vec![vec![0.0; call * CHUNK]],
            partials: vec![ClippedSum::default(); split.chunks()],
        };
        RowCache { pass, values }
    }

    /// Split the passes over up to `threads` rayon threads (1: sequential; small data stay
    /// sequential anyway, see `Split`). Allocates the groups' chunk buffers; results do not
    /// depend on it.
    pub fn set_threads(&mut self, threads: usize) {
        let pass = &mut self.pass;
        pass.split = Split::new(pass.split.chunks() * CHUNK, threads);
        while pass.chunks.len() < pass.split.groups() {
            pass.chunks.push(vec![0.0; pass.call * CHUNK]);
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
                if let Some(routed) =
                    super::lockstep::ratio::<RAW, M>(model, theta, theta_new, bound)
                {
                    return routed;
                }
                let alone = |lr: &LinearRatio| lr.len <= ALONE_MAX_TERMS && covers(lr, n);
                if let Some(lr) = model.linear_ratio(theta, theta_new).filter(alone) {
                    return self.pass.linear(&lr, RAW, n, bound);
                }
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

    /// The pass of [`RowCache::clipped_ratio_sum`] over `n` rows whose per-row ratios are
    /// linear in the row (`lr`): each chunk's sum from the data ([`linear_span`]), the chunk
    /// sums added in chunk order.
    fn linear(&mut self, lr: &LinearRatio, raw: bool, n: usize, bound: f64) -> ClippedSum {
        let per = self.split.per_group();
        let work = |g: usize, _: &mut Vec<f64>, parts: &mut [ClippedSum], _: &mut [f64]| {
            linear_span(lr, raw, (g * per, n), bound, parts);
        };
        run_groups(
            &self.split,
            &mut self.chunks,
            &mut self.partials,
            1,
            &mut [],
            &work,
        );
        fold_sums(&self.partials)
    }

    /// The pass of [`RowCache::clipped_ratio_sum`] over `n` rows: `ratios(start, buf, new)`
    /// writes the per-row ratios of rows `start..start + buf.len()` (up to `call` chunks) into
    /// `buf` (and their cached values into `new`, the same rows of `proposed`, empty without a
    /// cache); each chunk's clipped sum goes to its slot of `partials`, and the slots are added
    /// in chunk order.
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
        let call = self.call;
        let work = |g: usize, buf: &mut Vec<f64>, parts: &mut [ClippedSum], new: &mut [R]| {
            ratio_span::<RAW, R, F>(ratios, (g * per, n), call, bound, buf, parts, new);
        };
        run_groups(
            &self.split,
            &mut self.chunks,
            &mut self.partials,
            1,
            proposed,
            &work,
        );
        fold_sums(&self.partials)
    }
}

/// The per-chunk sums added in chunk order.
pub(super) fn fold_sums(partials: &[ClippedSum]) -> ClippedSum {
    let mut acc = ClippedSum::default();
    for p in partials {
        acc.sum += p.sum;
        acc.raw_sum += p.raw_sum;
        acc.clipped += p.clipped;
    }
    acc
}

/// The clipped ratio sums of the chunks `first..first + parts.len()` of a pass over `n` rows,
/// each chunk's into its slot of `parts`: `ratios(start, buf, new)` writes the per-row ratios
/// of up to `call` chunks at a time into `buf` (and their cached values into `new`, these rows'
/// share of the proposed cache, which is empty without a cache), then the chunks are summed
/// two at a time (`ClippedSum::pair`), an odd last one alone. Each chunk's sum is formed on
/// its own, so it does not depend on the span or the call it is computed in.
pub(super) fn ratio_span<const RAW: bool, R, F>(
    ratios: &F,
    (first, n): (usize, usize),
    call: usize,
    bound: f64,
    buf: &mut [f64],
    parts: &mut [ClippedSum],
    new: &mut [R],
) where
    F: Fn(usize, &mut [f64], &mut [R]) + Sync,
{
    let cached = !new.is_empty();
    for (k, slots) in parts.chunks_mut(call).enumerate() {
        let local = k * call;
        let start = (first + local) * CHUNK;
        let len = (slots.len() * CHUNK).min(n - start);
        let new: &mut [R] = if cached {
            &mut new[local * CHUNK..local * CHUNK + len]
        } else {
            &mut []
        };
        ratios(start, &mut buf[..len], new);
        let mut rest = &mut buf[..len];
        let mut pairs = slots.chunks_exact_mut(2);
        for pair in &mut pairs {
            let rows = std::mem::take(&mut rest);
            let (a, tail) = rows.split_at_mut(CHUNK.min(rows.len()));
            let (b, tail) = tail.split_at_mut(CHUNK.min(tail.len()));
            rest = tail;
            let [sa, sb] = ClippedSum::pair::<RAW>(a, b, bound);
            pair[0] = sa;
            pair[1] = sb;
        }
        if let [last] = pairs.into_remainder() {
            *last = ClippedSum::default();
            last.add_chunk::<RAW>(rest, bound);
        }
    }
}
