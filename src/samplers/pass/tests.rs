use super::gradient::*;
use super::ratio::*;
use super::*;
use crate::models::{BananaModel, BananaParams, ColumnData};
use crate::models::{Layout, Model};

/// A model seen through its row-wise methods only (no closed-form ratio, no column
/// gradients), in a declared layout: the kernels then use the per-row cache (in that
/// layout's precision) and the transposed row-gradient path.
struct RowView<'a, M>(&'a M, Layout);

/// The row-wise `Model` methods of a wrapper, delegated to the model in its field `.0`.
macro_rules! row_methods_of_inner {
    () => {
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn n_rows(&self) -> usize {
            self.0.n_rows()
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
    };
}

impl<M: Model> Model for RowView<'_, M> {
    row_methods_of_inner!();
    fn layout(&self) -> Layout {
        self.1
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

/// Two chunks side by side give each chunk's `add_chunk` sum bit for bit, with and without
/// the raw sum, for equal and unequal lengths (either one longer, lanes with and without a
/// remainder), NaN and infinite ratios included.
#[test]
fn chunk_pairs_equal_one_chunk_at_a_time() {
    let value = |i: usize| match i % 97 {
        13 => f64::NAN,
        41 => f64::INFINITY,
        _ => ((i as f64 * 0.618_033_988_7).fract() - 0.5) * 10f64.powf((i % 5) as f64 - 2.0),
    };
    let one = |r: &[f64], raw: bool| {
        let mut c = ClippedSum::default();
        if raw {
            c.add_chunk::<true>(r, 0.9);
        } else {
            c.add_chunk::<false>(r, 0.9);
        }
        c
    };
    let bits = |c: ClippedSum| (c.sum.to_bits(), c.raw_sum.to_bits(), c.clipped);
    for (la, lb) in [
        (1024, 1024),
        (1024, 673),
        (5, 1024),
        (7, 6),
        (0, 3),
        (12, 0),
    ] {
        let a: Vec<f64> = (0..la).map(value).collect();
        let b: Vec<f64> = (0..lb).map(|i| value(i + 5003)).collect();
        for raw in [false, true] {
            let (mut x, mut y) = (a.clone(), b.clone());
            let got = if raw {
                ClippedSum::pair::<true>(&mut x, &mut y, 0.9)
            } else {
                ClippedSum::pair::<false>(&mut x, &mut y, 0.9)
            };
            assert_eq!(bits(got[0]), bits(one(&a, raw)), "a: {la}, {lb}, raw {raw}");
            assert_eq!(bits(got[1]), bits(one(&b, raw)), "b: {la}, {lb}, raw {raw}");
        }
    }
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
    let clipped = clip_sum_columns::<true>(&mut cols, (len, len), bound, &mut scale, &mut out);
    let h = std::f64::consts::SQRT_2;
    assert_eq!(clipped, 5);
    // A bound so large that B² overflows: the overflowing finite row is not clipped.
    let mut cols2 = vec![1e300, 1.0, 1e300, 1.0];
    let mut out2 = vec![0.0; 2];
    let c2 = clip_sum_columns::<true>(&mut cols2, (2, 2), 1e300 * 10.0, &mut scale[..2], &mut out2);
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
fn sequential_ratio_sum<M: Model + ?Sized>(m: &M, t: &[f64], t_new: &[f64], b: f64) -> ClippedSum {
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
        let (cols, scale) = (&mut cols[..len * d], &mut scale[..len]);
        // the separate sweeps, which the fused ones must reproduce
        clipped += clip_sum_columns::<false>(cols, (len, len), b, scale, out);
        start += len;
    }
    clipped
}

/// `[pass, sweeps]`: the clipped-row count and the bits of the sum of a gradient pass of `m` at
/// `theta` clipped at `bound` (`GradBuffer`), and of the separate sweeps it must reproduce.
fn pass_and_sweeps<M: Model + ?Sized>(m: &M, theta: &[f64], bound: f64) -> [(usize, Vec<u64>); 2] {
    let d = m.dim();
    let mut got = vec![f64::NAN; d];
    let c = GradBuffer::new(m)
        .clipped_grad_sum(m, theta, bound, &mut got)
        .unwrap();
    let mut want = vec![0.0; d];
    let cwant = sequential_grad_sum(m, theta, bound, &mut want);
    [(c, bits(&got)), (cwant, bits(&want))]
}

/// The bits of each value.
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Clip bounds at the 25 %, 50 % and 90 % quantiles of the rows' gradient norms at `theta`.
fn quantile_bounds(m: &BananaModel, theta: &[f64]) -> [f64; 3] {
    let (n, d) = (m.n_rows(), m.dim());
    let mut norms: Vec<f64> = (0..n)
        .map(|j| {
            let mut g = vec![0.0; d];
            m.grad_log_lik_row(theta, j, &mut g).unwrap();
            g.iter().map(|x| x * x).sum::<f64>().sqrt()
        })
        .collect();
    norms.sort_by(f64::total_cmp);
    [norms[n / 4], norms[n / 2], norms[n * 9 / 10]]
}

/// A model whose gradient at one row is NaN (column gradients, written in any row range).
struct Poisoned<'a>(&'a BananaModel, usize);

impl Model for Poisoned<'_> {
    row_methods_of_inner!();
    fn has_column_gradients(&self) -> bool {
        true
    }
    fn grad_log_lik_cols(&self, t: &[f64], start: usize, out: &mut [f64]) -> crate::Result<()> {
        self.0.grad_log_lik_cols(t, start, out)?;
        let len = out.len() / self.dim();
        if (start..start + len).contains(&self.1) {
            out[self.1 - start] = f64::NAN;
        }
        Ok(())
    }
}

/// Gradient chunks written and clipped a few hundred rows at a time (the fused sweep, up to
/// 16 columns: the poisoned model; the banana itself takes the centred path, see
/// `centred_gradients_equal_the_models_own`) are the same bits as the separate sweeps over whole chunks, including the
/// last, short chunk (`len mod 4 ≠ 0`); a chunk with a NaN row falls back to the separate
/// sweeps (the row contributes zero and counts as clipped).
#[test]
fn fused_gradient_chunks_equal_the_separate_sweeps() {
    let n = 2 * CHUNK + 77;
    for d in [2, 4, 10, 16] {
        let params = BananaParams::thesis(d, 20.0);
        let mut centre = vec![0.0; d];
        centre[1] = 3.0;
        let banana = BananaModel::new(params.generate(&centre, n, 5).unwrap(), params).unwrap();
        let theta: Vec<f64> = (0..d).map(|i| 0.2 * i as f64 - 0.1).collect();
        let poisoned = Poisoned(&banana, CHUNK + 700);
        for (name, m) in [("banana", &banana as &dyn Model), ("poisoned", &poisoned)] {
            for bound in quantile_bounds(&banana, &theta) {
                let [(c, got), want] = pass_and_sweeps(m, &theta, bound);
                assert_eq!(
                    (c, &got),
                    (want.0, &want.1),
                    "{name}, d = {d}, bound {bound}"
                );
                assert!(
                    got.iter().all(|&x| f64::from_bits(x).is_finite()),
                    "{name}, d = {d}"
                );
                assert!(
                    c > 0 && c < n,
                    "{name}, d = {d}, bound {bound}: {c} clipped"
                );
            }
        }
    }
}

/// A banana's gradient pass from its centred columns (each row's gradient computed where it is
/// clipped: eight rows in registers up to d = 16, blocks of 32 beyond when the data are in
/// cache, as in a lockstep group) is the same bits, and
/// the same clipped count, as its own column gradients through the separate sweeps: with and
/// without the bend (`θ₀ ≠ m`, `θ₀ = m`), at three bounds, for dimensions on both sides of 16,
/// and with a row whose squared norm overflows (its chunk falls back to the separate sweeps).
#[test]
fn centred_gradients_equal_the_models_own() {
    // short data sets too (four rows and a tail; eight and a tail; 32, four and a tail): sums
    // of a few terms keep a one-ulp change of any row's gradient
    for (n, d) in [2, 3, 10, 16, 17, 30]
        .into_iter()
        .flat_map(|d| [5, 9, 37, 2 * CHUNK + 77].map(|n| (n, d)))
    {
        let params = BananaParams::thesis(d, 20.0);
        let mut centre = vec![0.0; d];
        centre[1] = 3.0;
        let data = params.generate(&centre, n, 5).unwrap();
        let mut cols: Vec<Vec<f64>> = (0..d).map(|i| data.col(i).to_vec()).collect();
        let plain = BananaModel::new(data, params.clone()).unwrap();
        cols[d - 1][n / 2 + 1] = 1e300;
        let huge = ColumnData::from_columns(cols).unwrap();
        let huge = BananaModel::new(huge, params.clone()).unwrap();
        for (name, m) in [("plain", &plain), ("huge row", &huge)] {
            for bent in [true, false] {
                let mut theta: Vec<f64> = (0..d).map(|i| 0.2 * i as f64 - 0.1).collect();
                if !bent {
                    theta[0] = params.m;
                }
                let centred = m.centred_gradient(&theta).expect("a banana's columns");
                assert_eq!(centred.coupling.is_some(), bent, "d = {d}");
                for bound in quantile_bounds(&plain, &theta) {
                    let [(c, got), (cwant, want)] = pass_and_sweeps(m, &theta, bound);
                    let what = format!("{name}, n = {n}, d = {d}, bent {bent}, bound {bound}");
                    assert_eq!((c, &got), (cwant, &want), "{what}");
                    // as a lockstep group computes it (data in cache: wide centred columns too)
                    let mut scratch = GradScratch::new(d, false);
                    let mut parts = vec![0.0; n.div_ceil(CHUNK) * d];
                    GradPlan::new(m, bound)
                        .in_cache()
                        .span(m, &theta, 0, &mut scratch, &mut parts);
                    assert!(scratch.error.is_none(), "{what}");
                    let mut sum = vec![f64::NAN; d];
                    fold_partials(&parts, d, &mut sum);
                    assert_eq!(
                        (scratch.clipped, bits(&sum)),
                        (cwant, want),
                        "in cache: {what}"
                    );
                    assert!(sum.iter().all(|x| x.is_finite()), "{what}");
                    assert!(n < 100 || (c > 0 && c < n), "{what}: {c} clipped");
                }
            }
        }
    }
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
                let got = pool.install(|| cache.clipped_ratio_sum::<true, _>(m, &t, &t_new, bound));
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

#[test]
fn wide_models_calls_over_several_chunks_equal_one_chunk_at_a_time() {
    // d ≥ 8: one model call writes several chunks' ratios; d > 16 (beyond the fused gradient
    // sweep): several chunks' column gradients. Chunk counts per group that are not multiples
    // of a call, an odd chunk and a short last chunk.
    let d = 17;
    let n = (crate::samplers::split::PARALLEL_MIN_CHUNKS + 13) * CHUNK + 517;
    let params = BananaParams::thesis(d, 20.0);
    let mut truth = vec![0.0; d];
    truth[1] = 3.0;
    let banana = BananaModel::new(params.generate(&truth, n, 7).unwrap(), params).unwrap();
    let iso = crate::models::testing::IsotropicGaussian::generate(n, d, 8);
    let compact = RowView(&iso, Layout::F32);
    let t: Vec<f64> = (0..d).map(|i| 0.1 * i as f64 - 0.3).collect();
    let t_new: Vec<f64> = t
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.01 * (i % 3) as f64)
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let bits = |c: ClippedSum| (c.sum.to_bits(), c.raw_sum.to_bits(), c.clipped);
    for (name, m) in [
        ("direct", &banana as &dyn Model),
        ("cached", &iso as &dyn Model),
        ("cached f32", &compact as &dyn Model),
    ] {
        for bound in [0.05, f64::INFINITY] {
            let want = sequential_ratio_sum(m, &t, &t_new, bound);
            let back = sequential_ratio_sum(m, &t_new, &t, bound);
            if bound == 0.05 {
                assert!(want.clipped > 0, "{name}: the bound must clip");
            }
            let mut gwant = vec![0.0; d];
            let cwant = sequential_grad_sum(m, &t, bound, &mut gwant);
            for threads in [1, 3] {
                let mut grads = GradBuffer::new(m);
                grads.set_threads(threads);
                let mut got = vec![f64::NAN; d];
                let c = pool
                    .install(|| grads.clipped_grad_sum(m, &t, bound, &mut got))
                    .unwrap();
                if !(bound.is_infinite() && m.has_gradient_sum()) {
                    let b = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        (c, b(&got)),
                        (cwant, b(&gwant)),
                        "{name}, {threads} threads"
                    );
                }
                let mut cache = RowCache::new(m, &t);
                cache.set_threads(threads);
                let got = pool.install(|| cache.clipped_ratio_sum::<true, _>(m, &t, &t_new, bound));
                assert_eq!(
                    bits(got),
                    bits(want),
                    "{name}, bound {bound}, {threads} threads"
                );
                cache.accept();
                let got = pool.install(|| cache.clipped_ratio_sum::<true, _>(m, &t_new, &t, bound));
                assert_eq!(
                    bits(got),
                    bits(back),
                    "{name}, bound {bound}, {threads} threads"
                );
            }
        }
    }
}

/// A model whose column gradients fail from row `self.1` on (a model error in mid-pass).
struct Failing<'a>(&'a BananaModel, usize);

impl Model for Failing<'_> {
    row_methods_of_inner!();
    fn has_direct_ratio(&self) -> bool {
        true
    }
    fn log_lik_ratio_rows(&self, t: &[f64], t_new: &[f64], start: usize, out: &mut [f64]) {
        self.0.log_lik_ratio_rows(t, t_new, start, out);
    }
    fn has_column_gradients(&self) -> bool {
        true
    }
    fn grad_log_lik_cols(&self, t: &[f64], start: usize, out: &mut [f64]) -> crate::Result<()> {
        if start + out.len() / self.dim() > self.1 {
            // the same error whichever call reaches the row (calls span different rows alone,
            // in lockstep and on several threads)
            return Err(crate::Error::Model(format!(
                "no gradient from row {}",
                self.1
            )));
        }
        self.0.grad_log_lik_cols(t, start, out)
    }
}

/// What one chain's passes returned: each gradient pass' bits and clipped rows (or its
/// error), each ratio pass' sum, raw sum and clipped rows.
type Passes = Vec<(
    std::result::Result<(Vec<u64>, usize), String>,
    (u64, u64, usize),
)>;

/// Chain `i` of a lockstep test: `2 + i` gradient and ratio passes (so the chains finish at
/// different times) at positions of its own, through its own buffers, as a kernel makes them.
fn chain_passes<M: Model + ?Sized>(m: &M, i: usize, bound: f64) -> Passes {
    let d = m.dim();
    let at = |k: usize| -> Vec<f64> {
        (0..d)
            .map(|c| 0.1 * c as f64 - 0.3 + 0.01 * (i * 7 + k * 3 + c % 2) as f64)
            .collect()
    };
    let mut grads = GradBuffer::new(m);
    let mut cache = RowCache::new(m, &at(0));
    let mut out = vec![f64::NAN; d];
    (0..2 + i)
        .map(|k| {
            let g = grads
                .clipped_grad_sum(m, &at(k), bound, &mut out)
                .map(|c| (out.iter().map(|x| x.to_bits()).collect(), c))
                .map_err(|e| e.to_string());
            let r = cache.clipped_ratio_sum::<true, _>(m, &at(k), &at(k + 1), bound);
            cache.accept();
            (g, (r.sum.to_bits(), r.raw_sum.to_bits(), r.clipped))
        })
        .collect()
}

/// Chains in lockstep get the bits each one gets alone: gradient passes on the fused sweep
/// (d ≤ 16), the wide path (calls over several chunks) and the row-major path, a chunk with a
/// NaN row, ratio passes with a direct ratio (shared) and against a per-row cache (each on its
/// own chain's thread), a model error in mid-pass, and chains that stop at different times.
#[test]
fn passes_in_lockstep_equal_each_chain_alone() {
    for d in [3, 17] {
        let n = 5 * CHUNK + 517;
        let params = BananaParams::thesis(d, 20.0);
        let mut truth = vec![0.0; d];
        truth[1] = 3.0;
        let banana = BananaModel::new(params.generate(&truth, n, 7).unwrap(), params).unwrap();
        let rows = RowView(&banana, Layout::F64);
        let poisoned = Poisoned(&banana, 2 * CHUNK + 5);
        let failing = Failing(&banana, 3 * CHUNK + 1);
        for (name, m, shared_ratios) in [
            ("columns", &banana as &dyn Model, true),
            ("rows, cached ratios", &rows as &dyn Model, false),
            ("a NaN row", &poisoned as &dyn Model, false),
            ("a failing model", &failing as &dyn Model, true),
        ] {
            let members = 4;
            let bound = 0.05;
            let alone: Vec<Passes> = (0..members).map(|i| chain_passes(m, i, bound)).collect();
            assert!(
                alone[0].iter().all(|(_, r)| r.2 > 0),
                "{name}: the bound must clip"
            );
            let group = Lockstep::new(m, members);
            let together: Vec<Passes> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..members)
                    .map(|i| {
                        let group = &group;
                        s.spawn(move || run_member(group, i, || chain_passes(m, i, bound)))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(together, alone, "{name}, d = {d}");
            // every pass went through the group (but the cached ratios and failed gradients)
            let passes: usize = (0..members).map(|i| 2 + i).sum();
            let failed = alone.iter().flatten().filter(|(g, _)| g.is_err()).count();
            let want = passes - failed + if shared_ratios { passes } else { 0 };
            assert_eq!(group.shared_passes(), want, "{name}, d = {d}");
        }
        // a pass on another model than the group's is not shared
        let group = Lockstep::new(&rows, 1);
        let alone = chain_passes(&banana, 0, 0.05);
        assert_eq!(
            run_member(&group, 0, || chain_passes(&banana, 0, 0.05)),
            alone
        );
        assert_eq!(group.shared_passes(), 0);
    }
}
