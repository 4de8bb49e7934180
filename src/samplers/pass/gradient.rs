//! The gradient pass: clipped per-row gradients, summed column by column, in chunks of
//! [`CHUNK`].

use super::CHUNK;
use super::clip_factors::clip_factors;
use crate::models::{CENTRED_MAX_DIM, CentredGradient, Model};
use crate::samplers::split::{Split, run_groups};

/// One group's scratch for gradient passes: the chunk's gradients column-major
/// (`d × CHUNK`), a row-major staging area for models without column gradients, per-row
/// scale factors, and the group's clipped-row count and first error.
#[derive(Debug)]
pub(super) struct GradScratch {
    cols: Vec<f64>,
    rows: Vec<f64>,
    scale: Vec<f64>,
    pub(super) clipped: usize,
    pub(super) error: Option<crate::Error>,
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
    /// Room for one model call's gradients: [`call_chunks`] chunks of column gradients, one
    /// chunk of row gradients (`staging`, with the area they are transposed from).
    pub(super) fn new(d: usize, staging: bool) -> Self {
        let size = CHUNK * d;
        let call = if staging { 1 } else { call_chunks(d) };
        GradScratch {
            cols: vec![0.0; call * size],
            rows: if staging { vec![0.0; size] } else { Vec::new() },
            scale: vec![0.0; CHUNK],
            clipped: 0,
            error: None,
        }
    }
}

/// Buffers for per-row gradient passes: one `GradScratch` per group of chunks (`Split`)
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
    /// sequential anyway, see `Split`). Allocates the groups' scratch; results do not
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
    /// A chain run in lockstep with others (`lockstep`) hands the pass to its group, which
    /// computes it chunk by chunk with the other chains' passes: the same bits.
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
        if let Some(routed) = super::lockstep::gradient(model, theta, bound, out) {
            return routed;
        }
        let plan = GradPlan::new(model, bound);
        let per = self.split.per_group();
        let work = |g: usize, s: &mut GradScratch, parts: &mut [f64], _: &mut [f64]| {
            plan.span(model, theta, g * per, s, parts);
        };
        run_groups(
            &self.split,
            &mut self.groups,
            &mut self.partials,
            plan.d,
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
        fold_partials(&self.partials, plan.d, out);
        Ok(clipped)
    }
}

/// `out = Σ` of the per-chunk partial sums (`d` values each), added in chunk order.
pub(super) fn fold_partials(partials: &[f64], d: usize, out: &mut [f64]) {
    out.fill(0.0);
    for part in partials.chunks_exact(d) {
        for (o, &p) in out.iter_mut().zip(part) {
            *o += p;
        }
    }
}

/// How one gradient pass computes its chunks: the model's dimension and rows, the clip bound,
/// whether the model writes column gradients, whether the fused sweep applies, and how many
/// chunks one model call covers.
#[derive(Clone, Copy, Debug)]
pub(super) struct GradPlan {
    d: usize,
    n: usize,
    bound: f64,
    columns: bool,
    fused: bool,
    call: usize,
    in_cache: bool,
}

impl GradPlan {
    /// The plan of a pass of `model` clipped at `bound`.
    pub(super) fn new<M: Model + ?Sized>(model: &M, bound: f64) -> Self {
        let d = model.dim();
        let columns = model.has_column_gradients();
        let fused = columns && bound.is_finite() && d <= FUSED_MAX_DIM;
        GradPlan {
            d,
            n: model.n_rows(),
            bound,
            columns,
            fused,
            call: if columns && !fused { call_chunks(d) } else { 1 },
            in_cache: false,
        }
    }

    /// The plan of a pass whose chunks' data are already in cache (a lockstep group's span):
    /// centred gradients wider than [`FUSED_MAX_DIM`] are then computed where they are clipped
    /// too. A chain alone streams its data from memory, and blocks of 32 rows of 30 columns
    /// are 30 short runs the prefetchers miss: its whole-chunk calls stay (DP HMC on gauss-30d,
    /// one chain, 48 MB: 44 ms an iteration that way, 59 ms from the centred columns).
    pub(super) fn in_cache(self) -> Self {
        GradPlan {
            in_cache: true,
            ..self
        }
    }

    /// The clipped gradient sums of the chunks `first..first + parts.len()/d` at `theta`, each
    /// chunk's into its `d` slots of `parts` (`s.clipped` counts the clipped rows; a model
    /// error stops the span and is left in `s.error`). Each chunk's sum is formed on its own,
    /// so it does not depend on the span it is computed in.
    pub(super) fn span<M: Model + ?Sized>(
        &self,
        model: &M,
        theta: &[f64],
        first: usize,
        s: &mut GradScratch,
        parts: &mut [f64],
    ) {
        let GradPlan {
            d,
            n,
            bound,
            fused,
            call,
            ..
        } = *self;
        s.clipped = 0;
        s.error = None;
        let first = first * CHUNK;
        if let Some(centred) = self.centred(model, theta) {
            for (i, part) in parts.chunks_exact_mut(d).enumerate() {
                let start = first + i * CHUNK;
                let len = CHUNK.min(n - start);
                match centred_chunk(&centred, (start, len), bound, part) {
                    Some(c) => s.clipped += c as usize,
                    None => {
                        if let Err(e) = self.separate_chunk(model, theta, (start, len), s, part) {
                            s.error = Some(e);
                            return;
                        }
                    }
                }
            }
            return;
        }
        if call > 1 {
            // `call` chunks' gradients per model call (longer runs of each data column),
            // each chunk clipped and summed on its own inside the call's columns
            for (k, parts) in parts.chunks_mut(call * d).enumerate() {
                let start = first + k * call * CHUNK;
                let rows = (parts.len() / d * CHUNK).min(n - start);
                let cols = &mut s.cols[..rows * d];
                if let Err(e) = model.grad_log_lik_cols(theta, start, cols) {
                    s.error = Some(e);
                    return;
                }
                for (q, part) in parts.chunks_exact_mut(d).enumerate() {
                    let len = CHUNK.min(rows - q * CHUNK);
                    part.fill(0.0);
                    let (chunk, scale) = (&mut cols[q * CHUNK..], &mut s.scale[..len]);
                    s.clipped += clip_sum_columns::<false>(chunk, (len, rows), bound, scale, part);
                }
            }
            return;
        }
        for (i, part) in parts.chunks_exact_mut(d).enumerate() {
            let start = first + i * CHUNK;
            let len = CHUNK.min(n - start);
            if fused {
                let rows = (start, len);
                if let Some(c) = fused_chunk(model, theta, rows, bound, &mut s.cols, part) {
                    s.clipped += c as usize;
                    continue;
                }
            }
            if let Err(e) = self.separate_chunk(model, theta, (start, len), s, part) {
                s.error = Some(e);
                return;
            }
        }
    }

    /// The model's gradients as centred columns at `theta`, where the pass clips them
    /// ([`centred_chunk`]: column gradients, a finite bound, the model's own dimension, at most
    /// [`FUSED_MAX_DIM`] columns unless the data are in cache: [`in_cache`](Self::in_cache)).
    fn centred<'m, M: Model + ?Sized>(
        &self,
        model: &'m M,
        theta: &[f64],
    ) -> Option<CentredGradient<'m>> {
        let width = if self.in_cache {
            CENTRED_MAX_DIM
        } else {
            FUSED_MAX_DIM
        };
        if !(self.columns && self.bound.is_finite() && self.d <= width) {
            return None;
        }
        model
            .centred_gradient(theta)
            .filter(|c| c.dim == self.d && c.columns[..c.dim].iter().all(|x| x.2.len() == self.n))
    }

    /// One chunk's clipped gradient sum (rows `start..start + len`) into `part` from the
    /// model's gradients, written column-major (transposed from row-major ones) and clipped by
    /// the separate sweeps.
    fn separate_chunk<M: Model + ?Sized>(
        &self,
        model: &M,
        theta: &[f64],
        (start, len): (usize, usize),
        s: &mut GradScratch,
        part: &mut [f64],
    ) -> crate::Result<()> {
        let d = self.d;
        let cols = &mut s.cols[..len * d];
        if self.columns {
            model.grad_log_lik_cols(theta, start, cols)?;
        } else {
            let rows = &mut s.rows[..len * d];
            model.grad_log_lik_rows(theta, start, rows)?;
            for (k, row) in rows.chunks_exact(d).enumerate() {
                for (i, &x) in row.iter().enumerate() {
                    cols[i * len + k] = x;
                }
            }
        }
        part.fill(0.0);
        let scale = &mut s.scale[..len];
        s.clipped += clip_sum_columns::<true>(cols, (len, len), self.bound, scale, part);
        Ok(())
    }
}

/// One chunk's clipped gradient sum (rows `start..start + len`) into `part` from a model's
/// centred columns: each row's gradient is computed from its data where it is clipped (once
/// for the squared norms, once for the scaled sums) and never written out. Every value is
/// computed by the operations of the model's `grad_log_lik_cols` and added in the order of
/// [`FusedLanes`]: the same bits as the model's gradients through the fused or the separate
/// sweeps. `None` (and `part` untouched) where a squared norm is not finite: the caller takes
/// the separate sweeps.
fn centred_chunk(
    c: &CentredGradient,
    (start, len): (usize, usize),
    bound: f64,
    part: &mut [f64],
) -> Option<u64> {
    let mut lanes = FusedLanes::new(c.dim)?;
    let full = len - len % 4;
    let mut j = 0;
    macro_rules! in_registers {
        ($($d:literal)*) => {
            match c.dim {
                $($d => j = centred_rows_in_registers::<$d, { register_rows($d) }>(
                    &mut lanes, c, (start, full), bound
                ),)*
                _ => while j + FUSED_BLOCK <= full {
                    lanes.add_centred::<FUSED_BLOCK>(c, start + j, bound);
                    j += FUSED_BLOCK;
                },
            }
        };
    }
    in_registers!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    while j < full {
        lanes.add_centred::<4>(c, start + j, bound);
        j += 4;
    }
    while j < len {
        lanes.add_centred::<1>(c, start + j, bound);
        j += 1;
    }
    part.fill(0.0);
    lanes.finish(part)
}

/// Rows a block of [`centred_rows_in_registers`] holds for a `d`-coordinate gradient: 32 (the
/// clip factors of the clipped rows only, packed: `clip_factors`) up to d = 4, where the
/// divider's work is most of a row's; eight beyond (every row's factor: fewer registers).
const fn register_rows(d: usize) -> usize {
    if d <= 4 { 32 } else { 8 }
}

/// The rows `start..start + full` of a chunk from the centred columns `c` of a `D`-coordinate
/// gradient, `R` at a time (`full` a multiple of 4; returns how many rows it took), as
/// [`FusedLanes::add_centred`] adds them, with the block's gradients computed once and held
/// in registers (the factors by `clip_factors`: the same factors for any `R`).
#[inline(never)]
fn centred_rows_in_registers<const D: usize, const R: usize>(
    lanes: &mut FusedLanes,
    c: &CentredGradient,
    (start, full): (usize, usize),
    bound: f64,
) -> usize {
    let t: [f64; D] = std::array::from_fn(|i| c.columns[i].0);
    let m: [f64; D] = std::array::from_fn(|i| c.columns[i].1);
    let x: [&[f64]; D] = std::array::from_fn(|i| &c.columns[i].2[start..start + full]);
    let bend = c.coupling.filter(|_| D > 1);
    let mut acc: [[f64; 4]; D] = std::array::from_fn(|i| lanes.lanes[i]);
    let (mut clipped, mut finite) = (0, true);
    let mut j = 0;
    while j + R <= full {
        let mut g = [[0.0f64; R]; D];
        for i in 0..D {
            let xi: &[f64; R] = x[i][j..j + R].try_into().expect("a block of R rows");
            for k in 0..R {
                g[i][k] = t[i] * (xi[k] - m[i]);
            }
        }
        if let Some(bend) = bend {
            let g1 = g[1];
            for (g0, g1) in g[0].iter_mut().zip(g1) {
                *g0 += g1 * bend;
            }
        }
        let mut f = [0.0f64; R];
        for gi in &g {
            for k in 0..R {
                f[k] += gi[k] * gi[k];
            }
        }
        let (cl, fin) = clip_factors(&mut f, bound);
        clipped += cl;
        finite &= fin;
        for (a, gi) in acc.iter_mut().zip(&g) {
            for k in 0..R {
                a[k % 4] += f[k] * gi[k];
            }
        }
        j += R;
    }
    lanes.lanes[..D].copy_from_slice(&acc);
    lanes.clipped += clipped;
    lanes.finite &= finite;
    j
}

/// Coordinate `i`'s gradients of rows `row..row + R` from the centred columns `c` into `g`:
/// `t_i·(x_i − μ_i)`, and for coordinate 0 with a coupling, `+ (t_1·(x_1 − μ_1))·c`.
#[inline(always)]
fn centred_values<const R: usize>(c: &CentredGradient, i: usize, row: usize, g: &mut [f64; R]) {
    let (t, m, x) = c.columns[i];
    let x: &[f64; R] = x[row..row + R].try_into().expect("a block of R rows");
    for k in 0..R {
        g[k] = t * (x[k] - m);
    }
    if i == 0
        && let Some(bend) = c.coupling
    {
        let (t1, m1, x1) = c.columns[1];
        let x1: &[f64; R] = x1[row..row + R].try_into().expect("a block of R rows");
        for k in 0..R {
            g[k] += (t1 * (x1[k] - m1)) * bend;
        }
    }
}

/// Add `Σ_k clip_{bound}(g_k)` to `out` (length `d`), where row `k`'s gradient is
/// `cols[i*stride + k]` (`i < d`, `k < len`, `stride ≥ len`: a chunk of a model call over
/// `stride` rows); `scale` (length `len`) is scratch. Returns the number of clipped rows.
///
/// With `FUSED` (and `stride == len`), the one-sweep form ([`fused_clip_sum`]) where it
/// applies; otherwise (and for a chunk it hands back) separate sweeps: squared norms into
/// `scale`, scale factors, the rows with a non-finite squared norm fixed up, scaled sums. Both
/// give the same bits.
pub(super) fn clip_sum_columns<const FUSED: bool>(
    cols: &mut [f64],
    (len, stride): (usize, usize),
    bound: f64,
    scale: &mut [f64],
    out: &mut [f64],
) -> usize {
    if !bound.is_finite() {
        add_column_dots(out, cols, (len, stride), None);
        return 0;
    }
    if FUSED
        && stride == len
        && let Some(clipped) = fused_clip_sum(&cols[..out.len() * len], len, bound, out)
    {
        return clipped as usize;
    }
    squared_norms(cols, (len, stride), out.len(), scale);
    let (mut clipped, finite) = clip_factors(scale, bound);
    if !finite {
        clipped = fix_nonfinite_rows(cols, (len, stride), out.len(), bound, scale, clipped);
    }
    add_column_dots(out, cols, (len, stride), Some(scale));
    clipped as usize
}

/// Chunks per model call of a gradient pass over `d` columns without the fused sweep (wider
/// than [`FUSED_MAX_DIM`], or an infinite bound): a model reads its data column by column, so
/// a call over more rows reads longer contiguous runs of each data column (the ratio pass'
/// `call_chunks`). Measured on gauss-30d (d = 30, 48 MB of data, beyond the caches): the
/// model's gradients take 11.9 ns a row in calls over four chunks, 15.7 over one; the four
/// chunks' gradients (960 KB) still fit in L2 for the sweeps. Narrow gradients keep one chunk.
fn call_chunks(d: usize) -> usize {
    if d > FUSED_MAX_DIM { 4 } else { 1 }
}

/// Widest gradient the fused sweep takes (its lane sums live on the stack).
const FUSED_MAX_DIM: usize = 16;

/// Rows per block of the fused sweep (four groups of the four lanes).
const FUSED_BLOCK: usize = 32;

/// [`clip_sum_columns`] in one sweep over the rows, without the `scale` buffer
/// ([`FusedLanes`]). Adds into `out` and returns the clipped-row count, or `None` (leaving `out`
/// as it was) when a row's squared norm is not finite, which the separate sweeps handle
/// (`fix_nonfinite_rows`), or when the gradient is wider than [`FUSED_MAX_DIM`].
fn fused_clip_sum(cols: &[f64], len: usize, bound: f64, out: &mut [f64]) -> Option<u64> {
    if len == 0 {
        return Some(0);
    }
    let d = cols.len() / len;
    if d > FUSED_MAX_DIM {
        return None;
    }
    let mut lanes = FusedLanes::new(d)?;
    lanes.add_rows(cols, len, bound);
    lanes.finish(out)
}

/// Whether [`FusedLanes`] computes each block's clip factors one block ahead of its sums, so
/// the divider's work overlaps them. With AVX-512 (32 vector registers, the factors of the
/// clipped rows only: `clip_factors`) measured 3-4 % faster on DP HMC easy-2d; with AVX2 (16
/// registers, every row's factor) 20 % slower: the two blocks' values no longer fit in
/// registers.
const FACTORS_AHEAD: bool = cfg!(all(target_arch = "x86_64", target_feature = "avx512f"));

/// Gradient values per model call of a fused gradient chunk (24 KB, inside L1).
const FUSED_VALUES: usize = 3072;

/// Rows per model call of a fused gradient chunk of `d` columns: the largest power of two whose
/// gradients fit in [`FUSED_VALUES`], at most a chunk. The model writes this many rows, which
/// the fused sweep clips and sums while they are in L1 (measured: d = 10 takes 256 rows a call,
/// 10-15 % faster than whole chunks; d = 2 whole chunks, 10 % faster than 256 rows a call,
/// where the call's own cost counts).
fn fused_rows_per_call(d: usize) -> usize {
    let fit = (FUSED_VALUES / d.max(1)).max(4);
    (1usize << fit.ilog2()).min(CHUNK)
}

/// One chunk's clipped gradient sum (rows `start..start + len`) into `part`, the gradients
/// written by the model [`fused_rows_per_call`] rows at a time into `buf` and clipped by the fused sweep
/// ([`FusedLanes`]; the same bits as the whole chunk written and clipped at once). `None`: the
/// caller takes the separate sweeps on the whole chunk (a row with a non-finite squared norm,
/// a gradient wider than [`FUSED_MAX_DIM`], or a model error, which the whole-chunk call then
/// reports as it always has).
fn fused_chunk<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    (start, len): (usize, usize),
    bound: f64,
    buf: &mut [f64],
    part: &mut [f64],
) -> Option<u64> {
    let d = part.len();
    let mut lanes = FusedLanes::new(d)?;
    let per_call = fused_rows_per_call(d);
    let mut off = 0;
    while off < len {
        let rows = per_call.min(len - off);
        let cols = &mut buf[..rows * d];
        model.grad_log_lik_cols(theta, start + off, cols).ok()?;
        lanes.add_rows(cols, rows, bound);
        off += rows;
    }
    part.fill(0.0);
    lanes.finish(part)
}

/// The running lane sums of a fused clipped-gradient sweep over one chunk: the squared norms,
/// the scale factors and the scaled sums of each block of [`FUSED_BLOCK`] rows together, while
/// the block is in L1. The divider's square roots and divisions of one block then overlap the
/// loads and additions of its neighbours, where separate sweeps leave the divider idle during
/// the sums and everything else idle during the divisions. Every value is computed by the
/// same operations in the same order as the separate sweeps (squared norms
/// `((0 + g₀²) + g₁²) + …`, factor `B/√s` where `s > B²` else 1, row `k` of each whole group
/// of four to lane `k mod 4`, the last `len mod 4` rows to lane 0, lanes folded
/// `(a₀ + a₁) + (a₂ + a₃)`): the same bits.
struct FusedLanes {
    lanes: [[f64; 4]; CENTRED_MAX_DIM],
    dim: usize,
    clipped: u64,
    finite: bool,
}

impl FusedLanes {
    /// Zero sums for `dim` columns (`None` beyond [`CENTRED_MAX_DIM`]).
    fn new(dim: usize) -> Option<Self> {
        (dim <= CENTRED_MAX_DIM).then_some(FusedLanes {
            lanes: [[0.0; 4]; CENTRED_MAX_DIM],
            dim,
            clipped: 0,
            finite: true,
        })
    }

    /// The next `len` rows of the chunk (`cols`: `dim` columns of `len` values). Every call but
    /// the chunk's last must take a multiple of four rows, so each row keeps its lane.
    fn add_rows(&mut self, cols: &[f64], len: usize, bound: f64) {
        let lanes = &mut self.lanes[..self.dim];
        let full = len - len % 4;
        let (mut clipped, mut finite) = (0, true);
        let mut j = 0;
        let mut add = |(c, f): (u64, bool)| {
            clipped += c;
            finite &= f;
        };
        if FACTORS_AHEAD && FUSED_BLOCK <= full {
            // one block ahead: the next block's factors (the divider) overlap this one's sums
            let (mut f, c, fin) = block_factors::<FUSED_BLOCK>(cols, len, 0, bound);
            add((c, fin));
            while j + 2 * FUSED_BLOCK <= full {
                let (next, c, fin) =
                    block_factors::<FUSED_BLOCK>(cols, len, j + FUSED_BLOCK, bound);
                add((c, fin));
                scaled_block::<FUSED_BLOCK>(cols, len, j, &f, lanes);
                f = next;
                j += FUSED_BLOCK;
            }
            scaled_block::<FUSED_BLOCK>(cols, len, j, &f, lanes);
            j += FUSED_BLOCK;
        }
        while j + FUSED_BLOCK <= full {
            add(fused_block::<FUSED_BLOCK>(cols, len, j, bound, lanes));
            j += FUSED_BLOCK;
        }
        while j < full {
            add(fused_block::<4>(cols, len, j, bound, lanes));
            j += 4;
        }
        while j < len {
            add(fused_block::<1>(cols, len, j, bound, lanes));
            j += 1;
        }
        self.clipped += clipped;
        self.finite &= finite;
    }

    /// Rows `row..row + R` of a chunk from the centred columns `c` (`R` = [`FUSED_BLOCK`], 4, or
    /// 1 for the chunk's last `len mod 4` rows), as [`fused_block`] adds them from written
    /// gradients: squared norms, clip factors, scaled sums into the lanes.
    #[inline(always)]
    fn add_centred<const R: usize>(&mut self, c: &CentredGradient, row: usize, bound: f64) {
        let dim = self.dim;
        let (mut f, mut g) = ([0.0; R], [0.0; R]);
        for i in 0..dim {
            centred_values::<R>(c, i, row, &mut g);
            for k in 0..R {
                f[k] += g[k] * g[k];
            }
        }
        let (clipped, finite) = clip_factors(&mut f, bound);
        self.clipped += clipped;
        self.finite &= finite;
        for (i, a) in self.lanes[..dim].iter_mut().enumerate() {
            centred_values::<R>(c, i, row, &mut g);
            let mut acc = *a;
            for k in 0..R {
                acc[k % 4] += f[k] * g[k];
            }
            *a = acc;
        }
    }

    /// Adds each column's folded lanes into `out` and returns the clipped-row count; `None`
    /// (and `out` untouched) if a squared norm was not finite.
    fn finish(&self, out: &mut [f64]) -> Option<u64> {
        if !self.finite {
            return None;
        }
        for (o, a) in out.iter_mut().zip(&self.lanes[..self.dim]) {
            *o += (a[0] + a[1]) + (a[2] + a[3]);
        }
        Some(self.clipped)
    }
}

/// Rows `j..j + R` of a [`FusedLanes`] sweep: row `j + k` to lane `k mod 4` (a block starts on a
/// multiple of four, or is one row of the tail: lane 0). Returns the block's clipped-row
/// count and whether every squared norm was finite.
#[inline(always)]
fn fused_block<const R: usize>(
    cols: &[f64],
    len: usize,
    j: usize,
    bound: f64,
    lanes: &mut [[f64; 4]],
) -> (u64, bool) {
    let (s, clipped, finite) = block_factors::<R>(cols, len, j, bound);
    scaled_block::<R>(cols, len, j, &s, lanes);
    (clipped, finite)
}

/// The clip factors of rows `j..j + R`, their clipped-row count and whether every squared norm
/// was finite.
#[inline(always)]
fn block_factors<const R: usize>(
    cols: &[f64],
    len: usize,
    j: usize,
    bound: f64,
) -> ([f64; R], u64, bool) {
    let mut s = [0.0; R];
    for col in cols.chunks_exact(len) {
        let g: &[f64; R] = col[j..j + R].try_into().expect("a block of R rows");
        for k in 0..R {
            s[k] += g[k] * g[k];
        }
    }
    let (clipped, finite) = clip_factors(&mut s, bound);
    (s, clipped, finite)
}

/// Adds rows `j..j + R` scaled by `f` to the lanes (row `j + k` to lane `k mod 4`).
#[inline(always)]
fn scaled_block<const R: usize>(
    cols: &[f64],
    len: usize,
    j: usize,
    f: &[f64; R],
    lanes: &mut [[f64; 4]],
) {
    for (a, col) in lanes.iter_mut().zip(cols.chunks_exact(len)) {
        let g: &[f64; R] = col[j..j + R].try_into().expect("a block of R rows");
        let mut acc = *a;
        for k in 0..R {
            acc[k % 4] += f[k] * g[k];
        }
        *a = acc;
    }
}

/// `scale[k] = Σ_i g_ik²` of the `d` columns of `cols` (column `i` at `i·stride`, `len` rows),
/// summed over the columns in order `((0 + g₀²) + g₁²) + …`. Four columns are added per sweep
/// over `scale`: the same additions in the same order as one sweep per column, with a quarter
/// of its loads and stores of `scale`.
fn squared_norms(cols: &[f64], (len, stride): (usize, usize), d: usize, scale: &mut [f64]) {
    let scale = &mut scale[..len];
    scale.fill(0.0);
    let col = |i: usize| &cols[i * stride..i * stride + len];
    for g in 0..d / 4 {
        let (c0, c1, c2, c3) = (col(4 * g), col(4 * g + 1), col(4 * g + 2), col(4 * g + 3));
        let rows = scale.iter_mut().zip(c0.iter().zip(c1).zip(c2).zip(c3));
        for (s, (((&g0, &g1), &g2), &g3)) in rows {
            *s = *s + g0 * g0 + g1 * g1 + g2 * g2 + g3 * g3;
        }
    }
    for i in d / 4 * 4..d {
        for (s, &g) in scale.iter_mut().zip(col(i)) {
            *s += g * g;
        }
    }
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
pub(super) fn fix_nonfinite_rows(
    cols: &mut [f64],
    (len, stride): (usize, usize),
    d: usize,
    bound: f64,
    scale: &mut [f64],
    mut clipped: u64,
) -> u64 {
    for (k, sc) in scale.iter_mut().enumerate().take(len) {
        let row = || cols.iter().skip(k).step_by(stride).take(d);
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
            for g in cols.iter_mut().skip(k).step_by(stride).take(d) {
                *g = 0.0;
            }
            true
        };
        clipped = clipped + u64::from(over) - counted;
    }
    clipped
}

/// `Σ_k w_k x_k` (or `Σ_k x_k` without weights) of `C` columns at once, each with four
/// independent lanes (row `k` of a whole group of four to lane `k mod 4`, the last `len mod 4`
/// rows to lane 0, the lanes folded `(a₀ + a₁) + (a₂ + a₃)`), so the compiler vectorises the
/// sums and the order of additions is fixed: results are reproducible, and the same bits for
/// every `C`. The `C` independent chains keep the floating-point adders busy where one chain
/// waits on each addition.
#[inline(always)]
fn lane_dots<const C: usize>(w: Option<&[f64]>, x: [&[f64]; C]) -> [f64; C] {
    const L: usize = 4;
    let mut acc = [[0.0; L]; C];
    let len = x.first().map_or(0, |c| c.len());
    let full = len - len % L;
    match w {
        Some(w) => {
            for j in (0..full).step_by(L) {
                let wc = &w[j..j + L];
                for (a, c) in acc.iter_mut().zip(x) {
                    let c = &c[j..j + L];
                    for k in 0..L {
                        a[k] += wc[k] * c[k];
                    }
                }
            }
            for i in full..len {
                for (a, c) in acc.iter_mut().zip(x) {
                    a[0] += w[i] * c[i];
                }
            }
        }
        None => {
            for j in (0..full).step_by(L) {
                for (a, c) in acc.iter_mut().zip(x) {
                    let c = &c[j..j + L];
                    for k in 0..L {
                        a[k] += c[k];
                    }
                }
            }
            for i in full..len {
                for (a, c) in acc.iter_mut().zip(x) {
                    a[0] += c[i];
                }
            }
        }
    }
    acc.map(|a| (a[0] + a[1]) + (a[2] + a[3]))
}

/// `out[i] += Σ_k w_k cols[i·stride + k]` (`k < len`; see [`lane_dots`]) for every column `i <
/// out.len()`, four columns at a time: the same bits as one column at a time.
fn add_column_dots(
    out: &mut [f64],
    cols: &[f64],
    (len, stride): (usize, usize),
    w: Option<&[f64]>,
) {
    if len == 0 {
        return;
    }
    let col = |i: usize| &cols[i * stride..i * stride + len];
    let d = out.len();
    for (g, o) in out.chunks_exact_mut(4).enumerate() {
        let b = 4 * g;
        for (x, v) in o
            .iter_mut()
            .zip(lane_dots(w, [col(b), col(b + 1), col(b + 2), col(b + 3)]))
        {
            *x += v;
        }
    }
    // The last one to three columns, also side by side.
    let b = d / 4 * 4;
    let sums: &[f64] = match d - b {
        0 => &[],
        1 => &lane_dots(w, [col(b)]),
        2 => &lane_dots(w, [col(b), col(b + 1)]),
        _ => &lane_dots(w, [col(b), col(b + 1), col(b + 2)]),
    };
    for (x, v) in out[b..].iter_mut().zip(sums) {
        *x += v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns of `cols` (`len` rows each) `gap` values apart, NaN in the gaps: a chunk
    /// inside a model call over more rows. Returns the stride and the values.
    fn strided(cols: &[f64], len: usize, gap: usize) -> (usize, Vec<f64>) {
        let stride = len + gap;
        let mut wide = vec![f64::NAN; cols.len() / len * stride];
        for (w, c) in wide.chunks_exact_mut(stride).zip(cols.chunks_exact(len)) {
            w[..len].copy_from_slice(c);
        }
        (stride, wide)
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

    /// Four columns at a time give the same bits as one column at a time, for every column
    /// count (groups of four and a remainder) and row count (lanes of four and a remainder).
    #[test]
    fn column_dots_match_one_at_a_time() {
        let value = |i: usize| {
            ((i as f64 * 0.618_033_988_7).fract() - 0.5) * 1e3f64.powf((i % 7) as f64 - 3.0)
        };
        for d in 1..=9 {
            for len in [1, 3, 4, 7, 1024, 1027] {
                let cols: Vec<f64> = (0..d * len).map(value).collect();
                let w: Vec<f64> = (0..len).map(|i| value(i + 7919)).collect();
                for weights in [None, Some(w.as_slice())] {
                    let mut got = vec![0.5; d];
                    add_column_dots(&mut got, &cols, (len, len), weights);
                    // the same columns inside a call over more rows (stride > len)
                    let (stride, wide) = strided(&cols, len, 5);
                    let mut strided = vec![0.5; d];
                    add_column_dots(&mut strided, &wide, (len, stride), weights);
                    assert_eq!(strided, got, "d = {d}, len = {len}, stride {stride}");
                    let want: Vec<f64> = cols
                        .chunks_exact(len)
                        .map(|c| 0.5 + lane_dot(weights, c))
                        .collect();
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "d = {d}, len = {len}: {got:?} vs {want:?}");
                }
            }
        }
    }

    /// The fused sweep is the same bits as the separate sweeps (sums, clip counts), for every
    /// gradient width it takes and every chunk length (blocks, groups of four, tail rows), with
    /// rows below, at and above the bound; a non-finite row leaves it to the separate sweeps.
    #[test]
    fn fused_sweep_matches_separate_sweeps() {
        let value = |i: usize| ((i as f64 * 0.618_033_988_7).fract() - 0.5) * 3.0;
        let bound = 1.5;
        for d in 1..=FUSED_MAX_DIM {
            for len in [1, 3, 4, 5, 16, 31, 32, 33, 37, 1024, 1027] {
                let mut cols: Vec<f64> = (0..d * len).map(value).collect();
                // a row exactly on the bound (not clipped)
                cols[0] = bound;
                for i in 1..d {
                    cols[i * len] = 0.0;
                }
                let mut want = vec![0.25; d];
                let mut scale = vec![0.0; len];
                let want_clipped = clip_sum_columns::<false>(
                    &mut cols.clone(),
                    (len, len),
                    bound,
                    &mut scale,
                    &mut want,
                );
                let mut got = vec![0.25; d];
                let clipped = fused_clip_sum(&cols, len, bound, &mut got);
                assert_eq!(clipped, Some(want_clipped as u64), "d = {d}, len = {len}");
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "d = {d}, len = {len}: {got:?} vs {want:?}"
                );
                if len >= 16 && d > 1 {
                    assert!(
                        want_clipped > 0 && want_clipped < len,
                        "d = {d}, len = {len}"
                    );
                }
                cols[len - 1] = f64::NAN;
                let mut untouched = vec![0.25; d];
                assert_eq!(fused_clip_sum(&cols, len, bound, &mut untouched), None);
                assert_eq!(untouched, vec![0.25; d]);
            }
        }
        let wide = vec![0.1; (FUSED_MAX_DIM + 1) * 8];
        assert_eq!(
            fused_clip_sum(&wide, 8, bound, &mut [0.0; FUSED_MAX_DIM + 1]),
            None
        );
    }

    /// Squared norms four columns per sweep are the same bits as one sweep per column.
    #[test]
    fn squared_norms_match_one_column_at_a_time() {
        let len = 13;
        for d in 1..=9 {
            let cols: Vec<f64> = (0..d * len)
                .map(|i| (i as f64 * 0.77).sin() * 1e3)
                .collect();
            let mut want = vec![0.0; len];
            for col in cols.chunks_exact(len) {
                for (s, &g) in want.iter_mut().zip(col) {
                    *s += g * g;
                }
            }
            let mut got = vec![f64::NAN; len];
            squared_norms(&cols, (len, len), d, &mut got);
            let (stride, wide) = strided(&cols, len, 3);
            let mut strided = vec![f64::NAN; len];
            squared_norms(&wide, (len, stride), d, &mut strided);
            assert_eq!(strided, got, "d = {d}, stride {stride}");
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "d = {d}"
            );
        }
    }
}
