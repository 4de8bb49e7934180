//! The clip factors of a gradient pass: each row's squared norm `s` becomes `B/√s` where
//! `s > B²` (the row is clipped to the ball of radius `B`), else 1.
//!
//! The square roots and divisions are the slowest operations of a clipped gradient pass (one
//! `B/√s` costs more than computing a two-column gradient), yet only the clipped rows need
//! them. On CPUs with AVX-512 ([`avx512`]), the squared norms of the clipped rows of each
//! 32 are packed together in registers, so the divider works on full vectors of clipped
//! rows only; elsewhere every row's factor is computed and the unclipped ones discarded.
//! Both compute every clipped row's factor by the same two IEEE operations on the same
//! value, so the factors (and every released sum) are the same bits on every CPU.

/// The scale that clips one term of norm `norm` to the ball of radius `bound`: `bound/norm`
/// above it, 1 within, and 0 for a non-finite norm (the term is dropped: bounded, as every
/// clipped sum must be). The per-row form of the passes' factors, for the passes outside the
/// samplers' hot loop (the DP initial point, a library model's noise-aware releases).
pub(crate) fn clip_factor(norm: f64, bound: f64) -> f64 {
    if !norm.is_finite() {
        0.0
    } else if norm > bound {
        bound / norm
    } else {
        1.0
    }
}

/// Replaces each squared norm `s` by the row's clip factor: `B/√s` where `s > B²`, else 1.
/// Returns how many rows were over the bound and whether every `s` was finite (a NaN or
/// infinite one is the caller's to fix up: `fix_nonfinite_rows`, or the separate sweeps).
/// With AVX-512, the square roots and divisions of each 32 rows are for the clipped rows only.
#[inline(always)]
pub(super) fn clip_factors(squared_norms: &mut [f64], bound: f64) -> (u64, bool) {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    {
        let len = squared_norms.len();
        let (head, tail) = squared_norms.split_at_mut(len - len % avx512::ROWS);
        if !head.is_empty() {
            // SAFETY: the crate is compiled for CPUs with AVX-512F (the `cfg` above), so the
            // instructions exist on any CPU this code runs on.
            let (c0, f0) = unsafe { avx512::clip_factors(head, bound) };
            let (c1, f1) = every_row(tail, bound);
            return (c0 + c1, f0 && f1);
        }
    }
    every_row(squared_norms, bound)
}

/// [`clip_factors`] computing `B/√s` for every row (vectorised) and keeping it where `s > B²`.
#[inline(always)]
pub(super) fn every_row(squared_norms: &mut [f64], bound: f64) -> (u64, bool) {
    let b2 = bound * bound;
    let (mut clipped, mut finite) = (0, true);
    for s in squared_norms {
        let over = *s > b2;
        clipped += u64::from(over);
        finite &= s.is_finite();
        let f = bound / s.sqrt();
        *s = if over { f } else { 1.0 };
    }
    (clipped, finite)
}

/// The clip factors with AVX-512F: square roots and divisions for the clipped rows only.
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
pub(super) mod avx512 {
    use std::arch::x86_64::{
        __m512d, __m512i, _CMP_GT_OQ, _CMP_LT_OQ, _mm512_abs_pd, _mm512_cmp_pd_mask, _mm512_div_pd,
        _mm512_loadu_pd, _mm512_loadu_si512, _mm512_mask_div_pd, _mm512_mask_expand_pd,
        _mm512_maskz_compress_pd, _mm512_permutex2var_pd, _mm512_permutexvar_pd, _mm512_set1_pd,
        _mm512_sqrt_pd, _mm512_storeu_pd,
    };

    /// Lanes of a vector.
    const V: usize = 8;

    /// Rows packed together: four vectors.
    pub(super) const ROWS: usize = 4 * V;

    /// `PACK[n]`: lanes `0..n` of the first vector, then lanes `0..8 - n` of the second (the
    /// `vpermt2pd` indices appending a packed vector to one of `n` packed lanes).
    const PACK: [[i64; V]; V + 1] = lane_tables(false);

    /// `SHIFT[n]`: lane `j` takes lane `j + n` (the second vector's share of a packed pair
    /// back to lane 0).
    const SHIFT: [[i64; V]; V + 1] = lane_tables(true);

    /// Row `n` (`0..=8`) of [`PACK`] (`shift = false`) or [`SHIFT`] (`true`).
    const fn lane_tables(shift: bool) -> [[i64; V]; V + 1] {
        let mut t = [[0; V]; V + 1];
        let mut n = 0;
        while n <= V {
            let mut j = 0;
            while j < V {
                t[n][j] = match (shift, j < n, j + n < V) {
                    (false, true, _) => j,
                    (false, false, _) => V + j - n,
                    (true, _, true) => j + n,
                    (true, _, false) => V - 1,
                } as i64;
                j += 1;
            }
            n += 1;
        }
        t
    }

    /// The first 8 values of `x` (an unaligned load; also the linear ratios' kernel's).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(in crate::samplers::pass) fn load(x: &[f64]) -> __m512d {
        let x = &x[..V];
        // SAFETY: `x` holds 8 values; an unaligned load reads exactly those.
        unsafe { _mm512_loadu_pd(x.as_ptr()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store(x: &mut [f64], v: __m512d) {
        let x = &mut x[..V];
        // SAFETY: `x` has room for 8 values; an unaligned store writes exactly those.
        unsafe { _mm512_storeu_pd(x.as_mut_ptr(), v) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn indices(t: &[i64; V]) -> __m512i {
        // SAFETY: `t` holds 8 values (64 bytes); an unaligned load reads exactly those.
        unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
    }

    /// The lanes `m0` of `x0` (`n0` of them) then the lanes `m1` of `x1`, packed into one
    /// vector (`n0 + n1 ≤ 8`; the lanes after them are zero).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn pack(x0: __m512d, m0: u8, n0: usize, x1: __m512d, m1: u8) -> __m512d {
        let c0 = _mm512_maskz_compress_pd(m0, x0);
        let c1 = _mm512_maskz_compress_pd(m1, x1);
        _mm512_permutex2var_pd(c0, indices(&PACK[n0]), c1)
    }

    /// The inverse of [`pack`] for the packed factors `f`: each packed lane back to its row,
    /// 1 in the other rows.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn unpack(f: __m512d, m0: u8, n0: usize, m1: u8) -> [__m512d; 2] {
        let one = _mm512_set1_pd(1.0);
        let f1 = _mm512_permutexvar_pd(indices(&SHIFT[n0]), f);
        [
            _mm512_mask_expand_pd(one, m0, f),
            _mm512_mask_expand_pd(one, m1, f1),
        ]
    }

    /// [`super::clip_factors`] on a multiple of [`ROWS`] squared norms. Of each 32 rows, the
    /// squared norms over the bound are packed (`vcompresspd`, `vpermt2pd`) into one vector
    /// when at most 8 are, else into one per 16 rows when at most 8 of each 16 are (else
    /// each vector is divided where clipped); each packed vector is divided once and its
    /// factors unpacked to their rows (`vpermpd`, `vexpandpd`). At the thesis' typical
    /// clipping rates (a fifth to a half of the rows) that is one or two vector divisions per
    /// 32 rows instead of four.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn clip_factors(s: &mut [f64], bound: f64) -> (u64, bool) {
        debug_assert!(s.len().is_multiple_of(ROWS));
        let b2 = _mm512_set1_pd(bound * bound);
        let bv = _mm512_set1_pd(bound);
        let inf = _mm512_set1_pd(f64::INFINITY);
        let one = _mm512_set1_pd(1.0);
        let factor = |x: __m512d| _mm512_div_pd(bv, _mm512_sqrt_pd(x));
        let (mut over, mut finite) = (0, true);
        for rows in s.chunks_exact_mut(ROWS) {
            let mut x = [_mm512_set1_pd(0.0); 4];
            let mut m = [0u8; 4];
            let mut n = [0usize; 4];
            let mut all_finite = 0xffu8;
            for (i, v) in rows.chunks_exact(V).enumerate() {
                x[i] = load(v);
                m[i] = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(x[i], b2);
                n[i] = m[i].count_ones() as usize;
                // `s ≥ 0` or NaN: finite iff `|s| < ∞` (false for NaN)
                all_finite &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(x[i]), inf);
            }
            finite &= all_finite == 0xff;
            let (na, nb) = (n[0] + n[1], n[2] + n[3]);
            over += na + nb;
            let f = if na <= V && nb <= V {
                let pa = pack(x[0], m[0], n[0], x[1], m[1]);
                let pb = pack(x[2], m[2], n[2], x[3], m[3]);
                let (fa, fb) = if na + nb <= V {
                    let f = factor(_mm512_permutex2var_pd(pa, indices(&PACK[na]), pb));
                    (f, _mm512_permutexvar_pd(indices(&SHIFT[na]), f))
                } else {
                    (factor(pa), factor(pb))
                };
                let [f0, f1] = unpack(fa, m[0], n[0], m[1]);
                let [f2, f3] = unpack(fb, m[2], n[2], m[3]);
                [f0, f1, f2, f3]
            } else {
                // more than 8 of some 16 rows clipped: each vector divided where clipped
                [0, 1, 2, 3].map(|i| _mm512_mask_div_pd(one, m[i], bv, _mm512_sqrt_pd(x[i])))
            };
            for (v, f) in rows.chunks_exact_mut(V).zip(f) {
                store(v, f);
            }
        }
        (over as u64, finite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// Squared norms around `bound²` with about `rate` of them over it, some exactly on it,
    /// and zeros.
    fn norms(len: usize, bound: f64, rate: f64, seed: u64) -> Vec<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..len)
            .map(|k| match k % 37 {
                5 => bound * bound,
                11 => 0.0,
                _ if rng.random::<f64>() < rate => {
                    bound * bound * (1.0 + 10.0 * rng.random::<f64>())
                }
                _ => bound * bound * rng.random::<f64>(),
            })
            .collect()
    }

    #[test]
    fn clip_factors_equal_every_rows_factors_bit_for_bit() {
        for &len in &[0, 1, 7, 31, 32, 33, 64, 100, 1024, 1027] {
            for &rate in &[0.0, 0.05, 0.25, 0.5, 0.9, 1.0] {
                for &bound in &[0.3, 1.0, 7.5] {
                    let s = norms(len, bound, rate, len as u64);
                    let (mut fast, mut every) = (s.clone(), s.clone());
                    let got = clip_factors(&mut fast, bound);
                    let want = every_row(&mut every, bound);
                    assert_eq!(got, want, "len {len}, rate {rate}, bound {bound}");
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&fast), bits(&every), "len {len}, rate {rate}");
                    let over = s.iter().filter(|&&x| x > bound * bound).count() as u64;
                    assert_eq!(got.0, over);
                }
            }
        }
    }

    #[test]
    fn clip_factors_report_non_finite_norms() {
        for bad in [f64::NAN, f64::INFINITY] {
            for at in [0, 13, 31, 32, 40, 63, 64] {
                let mut s = norms(65, 1.0, 0.3, 7);
                s[at] = bad;
                let mut every = s.clone();
                let got = clip_factors(&mut s, 1.0);
                let want = every_row(&mut every, 1.0);
                assert!(!got.1, "{bad} at {at}");
                assert_eq!(got, want);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&s), bits(&every), "{bad} at {at}");
            }
        }
    }
}
