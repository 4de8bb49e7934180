//! Ratio passes over ratios linear in the row ([`Model::linear_ratio`]): each row's ratio is
//! computed where it is clipped and summed, a block of rows at a time in registers, and never
//! written out.
//!
//! The model's own ratios are written to a buffer (for ten columns in three sweeps) and then
//! clamped and summed ([`ClippedSum::pair`]). Here each block of 32 rows is summed over every
//! column in registers, clamped, and added to its chunk's lanes. Measured on one core, the
//! same rows: a lockstep box of 20 RWMH chains on easy-10d 1.5x faster, a box of DP penalty
//! chains on the circle (one column) 1.4x, of GWMH chains on gauss-30d 2.7x.
//!
//! [`Model::linear_ratio`]: crate::models::Model::linear_ratio

use super::CHUNK;
use super::ratio::{ChunkLanes, ClippedSum, LANES};
use crate::models::{LINEAR_RATIO_MAX_TERMS, LinearRatio};

/// Most terms of a linear ratio a chain alone (not in a lockstep group, whose span is in cache)
/// computes this way. Wider ratios keep the model's whole-chunk calls: a block reads 32 rows of
/// each column, short runs the prefetchers miss on data beyond the caches (DP penalty on
/// gauss-30d, 30 columns of 1.6 MB, one chain: 3.4-3.5 ms an iteration this way, 1.5-1.6 ms from
/// the model's calls over eight chunks; with ten columns of 16 MB, easy-10d, 180 µs this way
/// against 330).
pub(super) const ALONE_MAX_TERMS: usize = 16;

/// Whether `lr` describes the ratios of `n` rows: at most [`LINEAR_RATIO_MAX_TERMS`] terms,
/// each column with at least `n` values (a model's `linear_ratio` that breaks its contract
/// then has its own ratios taken instead of failing the pass).
pub(super) fn covers(lr: &LinearRatio, n: usize) -> bool {
    lr.len <= LINEAR_RATIO_MAX_TERMS && lr.terms[..lr.len].iter().all(|(_, x)| x.len() >= n)
}

/// Rows whose ratios one block computes in registers (four AVX-512 vectors).
const BLOCK: usize = 32;

/// The clipped sums of the chunks `first..first + parts.len()` of a pass over `n` rows whose
/// per-row ratios are `lr`, each chunk's into its slot of `parts` ([`linear_chunk`]); with
/// `raw`, the unclipped sums too.
pub(super) fn linear_span(
    lr: &LinearRatio,
    raw: bool,
    (first, n): (usize, usize),
    bound: f64,
    parts: &mut [ClippedSum],
) {
    for (k, part) in parts.iter_mut().enumerate() {
        let start = (first + k) * CHUNK;
        let len = CHUNK.min(n - start);
        *part = if raw {
            linear_chunk::<true>(lr, start, len, bound)
        } else {
            linear_chunk::<false>(lr, start, len, bound)
        };
    }
}

/// The clipped sum of the chunk of rows `start..start + len` whose per-row ratios are `lr`,
/// formed as [`ClippedSum::add_chunk`] forms it from the ratios the model's
/// `log_lik_ratio_rows` writes (each ratio by the same operations, added to the same lane in
/// the same order): the same bits.
#[inline(always)]
fn linear_chunk<const RAW: bool>(
    lr: &LinearRatio,
    start: usize,
    len: usize,
    bound: f64,
) -> ClippedSum {
    let mut lanes = ChunkLanes::default();
    let whole = len - len % LANES;
    let blocks = whole - whole % BLOCK;
    add_blocks::<RAW>(lr, (start, blocks), bound, &mut lanes);
    for from in (start + blocks..start + whole).step_by(LANES) {
        let group = std::array::from_fn(|r| row_ratio(lr, from + r));
        lanes.add_block::<RAW, LANES>(&group, bound);
    }
    for row in start + whole..start + len {
        lanes.add_last::<RAW>(row_ratio(lr, row), bound);
    }
    let mut sum = ClippedSum::default();
    lanes.add_to(&mut sum);
    sum
}

/// Adds the rows `start..start + rows` (`rows` a multiple of [`BLOCK`]) to `lanes`: with
/// AVX-512 by [`avx512::add_blocks`], else by [`portable_blocks`] (the same bits).
#[inline(always)]
fn add_blocks<const RAW: bool>(
    lr: &LinearRatio,
    rows: (usize, usize),
    bound: f64,
    lanes: &mut ChunkLanes,
) {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    {
        // SAFETY: the crate is compiled for CPUs with AVX-512F (the `cfg` above), so the
        // instructions exist on any CPU this code runs on.
        unsafe { avx512::add_blocks::<RAW>(lr, rows, bound, lanes) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    portable_blocks::<RAW>(lr, rows, bound, lanes);
}

/// [`add_blocks`] in plain Rust (what the compiler vectorises of it).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "avx512f"),
    allow(dead_code)
)]
#[inline(always)]
fn portable_blocks<const RAW: bool>(
    lr: &LinearRatio,
    (start, rows): (usize, usize),
    bound: f64,
    lanes: &mut ChunkLanes,
) {
    for from in (start..start + rows).step_by(BLOCK) {
        let mut acc = [lr.constant; BLOCK];
        for &(w, x) in &lr.terms[..lr.len] {
            let x: &[f64; BLOCK] = x[from..from + BLOCK].try_into().expect("a block of rows");
            for r in 0..BLOCK {
                acc[r] += w * x[r];
            }
        }
        lanes.add_block::<RAW, BLOCK>(&acc, bound);
    }
}

/// Row `row`'s ratio: `((constant + w_0·x_0) + w_1·x_1) + …`.
#[inline(always)]
fn row_ratio(lr: &LinearRatio, row: usize) -> f64 {
    lr.terms[..lr.len]
        .iter()
        .fold(lr.constant, |acc, &(w, x)| acc + w * x[row])
}

/// The blocks of a linear ratio with AVX-512F.
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod avx512 {
    use std::arch::x86_64::{
        __m256d, __m512d, _CMP_GT_OQ, _mm256_add_pd, _mm256_loadu_pd, _mm256_storeu_pd,
        _mm512_abs_pd, _mm512_add_pd, _mm512_castpd512_pd256, _mm512_cmp_pd_mask,
        _mm512_extractf64x4_pd, _mm512_max_pd, _mm512_min_pd, _mm512_mul_pd, _mm512_set1_pd,
    };

    use super::super::clip_factors::avx512::load;
    use super::{BLOCK, ChunkLanes, LANES, LinearRatio};

    /// Lanes of a vector.
    const V: usize = 8;

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load4(x: &[f64; LANES]) -> __m256d {
        // SAFETY: `x` holds 4 values; an unaligned load reads exactly those.
        unsafe { _mm256_loadu_pd(x.as_ptr()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store4(x: &mut [f64; LANES], v: __m256d) {
        // SAFETY: `x` has room for 4 values; an unaligned store writes exactly those.
        unsafe { _mm256_storeu_pd(x.as_mut_ptr(), v) }
    }

    /// `acc` plus the vector `x`'s rows in order: its first four lanes, then its last four
    /// (rows `k` and `k + 4` to lane `k`, as [`ChunkLanes::add_block`] adds them).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add_rows(acc: __m256d, x: __m512d) -> __m256d {
        let acc = _mm256_add_pd(acc, _mm512_castpd512_pd256(x));
        _mm256_add_pd(acc, _mm512_extractf64x4_pd::<1>(x))
    }

    /// [`super::portable_blocks`]: each block's 32 ratios in four vectors (`vmulpd`, `vaddpd`
    /// per term: the same two roundings), clamped by `vmaxpd`/`vminpd` (which return their
    /// second operand for a NaN, as `clamp_nan_low`), the clipped rows counted from a
    /// comparison mask, and the vectors added to the chunk's four lanes in row order.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn add_blocks<const RAW: bool>(
        lr: &LinearRatio,
        (start, rows): (usize, usize),
        bound: f64,
        lanes: &mut ChunkLanes,
    ) {
        let terms = &lr.terms[..lr.len];
        let (low, high) = (_mm512_set1_pd(-bound), _mm512_set1_pd(bound));
        let (mut sum, mut raw) = (load4(&lanes.sum), load4(&lanes.raw));
        let mut clipped = 0u64;
        for from in (start..start + rows).step_by(BLOCK) {
            let mut a = [_mm512_set1_pd(lr.constant); BLOCK / V];
            for &(w, x) in terms {
                let (w, x) = (_mm512_set1_pd(w), &x[from..from + BLOCK]);
                for (v, a) in a.iter_mut().enumerate() {
                    *a = _mm512_add_pd(*a, _mm512_mul_pd(w, load(&x[v * V..])));
                }
            }
            for a in a {
                let over = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(_mm512_abs_pd(a), high);
                clipped += u64::from(over.count_ones());
                sum = add_rows(sum, _mm512_min_pd(_mm512_max_pd(a, low), high));
                if RAW {
                    raw = add_rows(raw, a);
                }
            }
        }
        store4(&mut lanes.sum, sum);
        store4(&mut lanes.raw, raw);
        lanes.clipped += clipped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{
        BananaModel, BananaParams, CircleModel, GaussianModel, LINEAR_RATIO_MAX_TERMS, Model,
        block_correlated_cov, generate_gaussian,
    };

    /// A chunk's clipped sum from the model's own ratios (`log_lik_ratio_rows`, then
    /// `add_chunk`): the reference.
    fn from_model_ratios(m: &dyn Model, t: &[f64], t_new: &[f64], bound: f64) -> Vec<ClippedSum> {
        let n = m.n_rows();
        (0..n.div_ceil(CHUNK))
            .map(|k| {
                let start = k * CHUNK;
                let mut r = vec![0.0; CHUNK.min(n - start)];
                m.log_lik_ratio_rows(t, t_new, start, &mut r);
                let mut sum = ClippedSum::default();
                sum.add_chunk::<true>(&r, bound);
                sum
            })
            .collect()
    }

    fn bits(sums: &[ClippedSum], raw: bool) -> Vec<(u64, u64, usize)> {
        let raw_bits = |s: &ClippedSum| if raw { s.raw_sum.to_bits() } else { 0 };
        sums.iter()
            .map(|s| (s.sum.to_bits(), raw_bits(s), s.clipped))
            .collect()
    }

    /// Every chunk's sum of [`linear_span`] against the model's own ratios, with and without
    /// the raw sums, at bounds that clip about a tenth and half of the rows and at `+∞`.
    fn check(name: &str, m: &dyn Model, t: &[f64], t_new: &[f64]) {
        let lr = m.linear_ratio(t, t_new).expect("a linear ratio");
        let n = m.n_rows();
        let mut ratios = vec![0.0; n];
        m.log_lik_ratio_rows(t, t_new, 0, &mut ratios);
        let mut sorted: Vec<f64> = ratios.iter().map(|r| r.abs()).collect();
        sorted.sort_by(f64::total_cmp);
        let quantile = |q: f64| sorted[((n - 1) as f64 * q) as usize];
        for bound in [quantile(0.5), quantile(0.9), f64::INFINITY] {
            let want = from_model_ratios(m, t, t_new, bound);
            for raw in [false, true] {
                let mut got = vec![ClippedSum::default(); want.len()];
                linear_span(&lr, raw, (0, n), bound, &mut got);
                assert_eq!(bits(&got, raw), bits(&want, raw), "{name}, bound {bound}");
            }
            if bound.is_finite() && n > 100 {
                let clipped: usize = want.iter().map(|s| s.clipped).sum();
                assert!(
                    clipped > 0 && clipped < n,
                    "{name}: the bound must clip some rows"
                );
            }
        }
    }

    /// The banana, Gaussian and circle models' linear ratios give each chunk the bits of their
    /// own ratios: every coordinate moved, one (a GWMH step), none; 2 to 30 columns; data
    /// sets shorter than a block, than a chunk, and with a short last chunk.
    #[test]
    fn linear_ratios_equal_the_models_own() {
        for d in [2, 10, 30] {
            for n in [5, 37, CHUNK + 37, 2 * CHUNK + 77] {
                let params = BananaParams::thesis(d, 20.0);
                let mut truth = vec![0.0; d];
                truth[1] = 3.0;
                let data = params.generate(&truth, n, d as u64 + n as u64).unwrap();
                let m = BananaModel::new(data, params).unwrap();
                let t: Vec<f64> = (0..d).map(|i| 0.01 * i as f64 + truth[i]).collect();
                let all: Vec<f64> = (0..d).map(|i| t[i] + 0.003 * (i as f64 - 4.5)).collect();
                let mut one = t.clone();
                one[0] += 0.02; // the bend: two columns move
                let mut last = t.clone();
                last[d - 1] -= 0.05;
                for (what, t_new) in [("all", &all), ("first", &one), ("last", &last)] {
                    check(&format!("banana d={d} n={n} {what}"), &m, &t, t_new);
                }
                let lr = m.linear_ratio(&t, &t).unwrap();
                assert_eq!((lr.len, lr.constant), (0, 0.0));
            }
        }
        let n = CHUNK + 333;
        let cov = block_correlated_cov(2, 0.9).unwrap();
        let data = generate_gaussian(&[0.5, -1.0], &cov, n, 3).unwrap();
        let gauss = GaussianModel::new(data, cov, 100.0).unwrap();
        check("gaussian", &gauss, &[0.5, -1.0], &[0.52, -1.01]);
        check("gaussian, one", &gauss, &[0.5, -1.0], &[0.5, -0.97]);
        let circle = CircleModel::new(&CircleModel::generate_radii(n, 4).unwrap(), 1e-3).unwrap();
        check("circle", &circle, &[1.0, 2.0], &[1.1, 1.95]);
        // compact (f32) data: no linear ratio (the kernels take the model's own ratios)
        assert!(
            circle
                .compact()
                .unwrap()
                .linear_ratio(&[1.0, 2.0], &[1.1, 2.0])
                .is_none()
        );
        // more columns than a linear ratio holds
        let d = LINEAR_RATIO_MAX_TERMS + 1;
        let params = BananaParams::thesis(d, 20.0);
        let wide = BananaModel::new(params.generate(&vec![0.0; d], 9, 1).unwrap(), params).unwrap();
        assert!(wide.linear_ratio(&vec![0.0; d], &vec![0.1; d]).is_none());
    }

    /// A linear ratio whose columns are shorter than the data, or whose term count is beyond
    /// its array, is not used (the pass takes the model's own ratios).
    #[test]
    fn linear_ratios_that_break_their_contract_are_not_used() {
        let x = [1.0; 40];
        let mut lr = LinearRatio {
            constant: 0.0,
            terms: [(0.0, &[][..]); LINEAR_RATIO_MAX_TERMS],
            len: 1,
        };
        lr.terms[0] = (2.0, &x);
        assert!(covers(&lr, 40) && !covers(&lr, 41));
        lr.len = LINEAR_RATIO_MAX_TERMS + 1;
        assert!(!covers(&lr, 1));
    }

    /// NaN and infinite values in a column: a NaN ratio adds `−bound` and is not counted as
    /// clipped, ±∞ are clipped; both kernels (AVX-512 where built for it, and the portable one)
    /// give `add_chunk`'s bits.
    #[test]
    fn non_finite_ratios_are_clipped_as_the_model_ratios_are() {
        let n = 2 * BLOCK + 7;
        let mut x: Vec<f64> = (0..n).map(|j| (j as f64 * 0.37).sin()).collect();
        let mut y: Vec<f64> = (0..n).map(|j| (j as f64 * 0.11).cos()).collect();
        x[3] = f64::NAN;
        x[40] = f64::INFINITY;
        y[41] = f64::NEG_INFINITY;
        y[n - 1] = f64::NAN;
        let mut lr = LinearRatio {
            constant: 0.25,
            terms: [(0.0, &[][..]); LINEAR_RATIO_MAX_TERMS],
            len: 2,
        };
        lr.terms[0] = (1.5, &x);
        lr.terms[1] = (-0.75, &y);
        let ratios: Vec<f64> = (0..n).map(|j| (0.25 + 1.5 * x[j]) + -0.75 * y[j]).collect();
        for bound in [0.0, 0.5, f64::INFINITY] {
            let mut want = ClippedSum::default();
            want.add_chunk::<true>(&ratios, bound);
            let got = linear_chunk::<true>(&lr, 0, n, bound);
            assert_eq!(bits(&[got], true), bits(&[want], true), "bound {bound}");
            let rows = (0, n - n % BLOCK);
            let mut fast = ChunkLanes::default();
            add_blocks::<true>(&lr, rows, bound, &mut fast);
            let mut portable = ChunkLanes::default();
            portable_blocks::<true>(&lr, rows, bound, &mut portable);
            let lane_bits = |l: &ChunkLanes| {
                let b = |v: &[f64; LANES]| v.map(f64::to_bits);
                (b(&l.sum), b(&l.raw), l.clipped)
            };
            assert_eq!(lane_bits(&fast), lane_bits(&portable), "bound {bound}");
        }
    }
}
