//! A linear model's `XᵀX`, released in two stages and combined into one Gaussian.
//!
//! The pilot releases `svec(XᵀX)` with noise of one scale on every entry, so a weakly
//! determined direction of the design (a rare level against the intercept) can be as noisy as
//! it is informative. The second release is `svec(B XᵀX B)` with `B = H̃₁^{−½}` from the pilot
//! (its eigenvalues floored at the pilot's noise scale: post-processing), whose noise, mapped
//! back, is relative to `XᵀX` in every direction; its substitution sensitivity over the
//! declared box is `√2 max‖Bx‖²` (`‖Bxxᵀ B − Bx'x'ᵀB‖_F² ≤ ‖Bx‖⁴ + ‖Bx'‖⁴`). Both are linear
//! Gaussian observations of `svec(XᵀX)`, so given them its non-public entries have a Gaussian
//! likelihood ([`XtxGaussian`]): the proposal of the linear posterior's `H`.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use rand_distr::{Distribution, StandardNormal};

use super::data::GlmData;
use super::linalg::{SymFn, congruence, floor_eigenvalues, svec, sym_fn, unsvec};
use super::releases::{Release, checked_sensitivity};
use super::sensitivity::whitened_xtx_sensitivity;
use super::structure::{Determined, determined_mask};
use crate::error::Result;
use crate::rng::ChainRng;

/// The eigenvalue floor of a released symmetric `p × p` matrix whose entries carry noise of
/// standard deviation `sd`: the noise's scale, `sd √p`.
pub(crate) fn noise_floor(sd: f64, p: usize) -> f64 {
    (sd * (p as f64).sqrt()).max(1e-12)
}

/// `H̃^{−½}` of a released `H̃` whose entries carry noise of standard deviation `sd`, its
/// eigenvalues floored at [`noise_floor`] first.
pub(crate) fn floored_inv_sqrt(h: &DMatrix<f64>, sd: f64) -> DMatrix<f64> {
    sym_fn(
        &floor_eigenvalues(h, noise_floor(sd, h.nrows())),
        SymFn::InvSqrt,
    )
}

/// `XᵀX` of `data`'s rows (internal coordinates): one pass.
pub(crate) fn exact_xtx(data: &GlmData) -> DMatrix<f64> {
    let p = data.p;
    let mut h = DMatrix::<f64>::zeros(p, p);
    for x in data.x.chunks_exact(p) {
        for a in 0..p {
            for b in a..p {
                h[(a, b)] += x[a] * x[b];
            }
        }
    }
    h.fill_lower_triangle_with_upper_triangle();
    h
}

/// Releases `svec(B XᵀX Bᵀ)` (`B = whitening`, public: a function of earlier releases) with
/// Gaussian noise of standard deviation `Δ·z` on every entry, `Δ` its sensitivity over the
/// declared box (module docs). One pass over the data.
///
/// # Errors
/// A sensitivity that is not a positive normal number (nothing is released).
pub fn release_whitened_xtx(
    data: &GlmData,
    whitening: &DMatrix<f64>,
    z: f64,
    rng: &mut ChainRng,
) -> Result<Release> {
    whitened_release(data, &exact_xtx(data), whitening, z, rng)
}

/// [`release_whitened_xtx`] of a precomputed `XᵀX`.
pub(crate) fn whitened_release(
    data: &GlmData,
    xtx: &DMatrix<f64>,
    whitening: &DMatrix<f64>,
    z: f64,
    rng: &mut ChainRng,
) -> Result<Release> {
    let sensitivity = checked_sensitivity(
        "noise-aware whitened XᵀX release",
        whitened_xtx_sensitivity(data, whitening),
    )?;
    let noise_sd = sensitivity * z;
    let values = svec(&(whitening * xtx * whitening.transpose()))
        .into_iter()
        .map(|v| {
            let e: f64 = StandardNormal.sample(rng);
            v + noise_sd * e
        })
        .collect();
    Ok(Release {
        values,
        noise_sd,
        sensitivity,
    })
}

/// The Gaussian likelihood of `svec(H)`'s non-public entries given the pilot and (if any) the
/// whitened release, used as the independence proposal of `H` (flat prior on the cone).
/// Entries the declared structure determines ([`Determined`]) follow the released ones.
pub(crate) struct XtxGaussian {
    p: usize,
    /// `svec(H)`: public entries exact, the others at their combined estimate.
    mean: Vec<f64>,
    /// `∂ svec(H) / ∂φ` (`q × m`), `φ` the released noisy entries: `svec(H) = c + Mφ`.
    map: DMatrix<f64>,
    /// The two releases' combined precision over `φ`, as `Λ'` with `Λ = Λ'/s²` (its
    /// Cholesky factor) and `s`; or, for the pilot alone, `None` and its noise sd `s`.
    precision: Option<Cholesky<f64, Dyn>>,
    scale: f64,
    /// `(B, B⁻¹, floor)` of the whitened release, or `None` and [`noise_floor`] of the pilot.
    whitening: Option<(DMatrix<f64>, DMatrix<f64>, f64)>,
    floor: f64,
}

/// `∂ svec(H)/∂φ` (`q × m`, `q = p(p+1)/2`) with every entry free but those the `determined`
/// rules fix: `φ` the free entries in order, a determined entry the combination its rule
/// names.
pub(crate) fn structure_map(q: usize, determined: &[Determined]) -> DMatrix<f64> {
    let free: Vec<bool> = determined_mask(q, determined).iter().map(|d| !d).collect();
    entry_map(&vec![0.0; q], &free, determined).1
}

/// `svec(H) = c + Mφ` over the released noisy entries `φ` of `values` (flagged by `noisy`),
/// the public ones exact and the `determined` ones the combinations their rule names.
fn entry_map(
    values: &[f64],
    noisy: &[bool],
    determined: &[Determined],
) -> (DVector<f64>, DMatrix<f64>) {
    let q = noisy.len();
    let free: Vec<usize> = (0..q).filter(|&k| noisy[k]).collect();
    let mut c = DVector::from_iterator(q, (0..q).map(|k| if noisy[k] { 0.0 } else { values[k] }));
    let mut m = DMatrix::zeros(q, free.len());
    for (i, &k) in free.iter().enumerate() {
        m[(k, i)] = 1.0;
    }
    for rule in determined {
        c[rule.entry] = 0.0;
        for &(k, coef) in &rule.terms {
            if noisy[k] {
                let i = free.binary_search(&k).expect("a noisy entry");
                m[(rule.entry, i)] += coef;
            } else {
                c[rule.entry] += coef * c[k];
            }
        }
    }
    (c, m)
}

impl XtxGaussian {
    /// The Gaussian of `svec(H)` given the `pilot` (entries flagged by `noisy` carry noise;
    /// the `determined` ones are not released and follow the rules) and the `whitened`
    /// release with its `B`; `None` if the combined precision is singular.
    pub(crate) fn new(
        pilot: &Release,
        noisy: &[bool],
        determined: &[Determined],
        whitened: Option<(&Release, &DMatrix<f64>)>,
        p: usize,
    ) -> Option<Self> {
        let (c, map) = entry_map(&pilot.values, noisy, determined);
        let y1 = DVector::from_iterator(
            map.ncols(),
            (0..noisy.len())
                .filter(|&k| noisy[k])
                .map(|k| pilot.values[k]),
        );
        let floor = noise_floor(pilot.noise_sd, p);
        let Some((second, b)) = whitened.filter(|_| map.ncols() > 0) else {
            let mean = (&c + &map * y1).as_slice().to_vec();
            return Some(XtxGaussian {
                p,
                mean,
                map,
                precision: None,
                scale: pilot.noise_sd,
                whitening: None,
                floor,
            });
        };
        // h̃₂ = L svec(H) + e₂ = L c + (L M) φ + e₂
        let l = congruence(b);
        let y2 = DVector::from_column_slice(&second.values) - &l * &c;
        let l_n = &l * &map;
        // the precisions relative to the larger one (finite for any positive sds): the
        // combined precision is Λ = Λ'/s², s the smaller sd
        let s = pilot.noise_sd.min(second.noise_sd);
        let (w1, w2) = ((s / pilot.noise_sd).powi(2), (s / second.noise_sd).powi(2));
        let m = map.ncols();
        let lam = DMatrix::identity(m, m) * w1 + l_n.transpose() * &l_n * w2;
        let rhs = y1 * w1 + l_n.transpose() * y2 * w2;
        let chol = Cholesky::new((&lam + lam.transpose()) * 0.5)?;
        let combined = chol.solve(&rhs);
        let mean = (&c + &map * combined).as_slice().to_vec();
        let b_inv = b.clone().try_inverse()?;
        // the floor in B's frame: the noise scale of the combined estimate there, the pilot's
        // noise magnified by at most ‖B‖² (B is symmetric; so a whitened release far noisier than the pilot
        // floors at the pilot's scale, not its own)
        let pilot_there = pilot.noise_sd * b.symmetric_eigenvalues().amax().powi(2);
        let combined_sd = (second.noise_sd.powi(-2) + pilot_there.powi(-2)).powf(-0.5);
        Some(XtxGaussian {
            p,
            mean,
            map,
            precision: Some(chol),
            scale: s,
            whitening: Some((b.clone(), b_inv, noise_floor(combined_sd, p))),
            floor,
        })
    }

    /// One draw of `H` (symmetric, not necessarily positive definite).
    pub(crate) fn draw(&self, rng: &mut ChainRng) -> DMatrix<f64> {
        let m = self.map.ncols();
        let xi = DVector::from_iterator(m, (0..m).map(|_| StandardNormal.sample(rng)));
        let dev = match &self.precision {
            // N(0, Λ⁻¹) with Λ' = LLᵀ = s²Λ: s L⁻ᵀξ
            Some(chol) => {
                chol.l()
                    .transpose()
                    .solve_upper_triangular(&xi)
                    .unwrap_or_else(|| DVector::zeros(m))
                    * self.scale
            }
            None => xi * self.scale,
        };
        let mut v = DVector::from_column_slice(&self.mean);
        v.gemv(1.0, &self.map, &dev, 1.0);
        unsvec(v.as_slice(), self.p)
    }

    /// `h` made positive definite at the releases' noise scale: with the whitened release, in
    /// its frame (`B⁻¹ ⌊BhB⌋ B⁻¹`, so a weakly determined direction keeps its scale), otherwise
    /// at the pilot's [`noise_floor`].
    pub(crate) fn floored(&self, h: &DMatrix<f64>) -> DMatrix<f64> {
        let out = match &self.whitening {
            Some((b, b_inv, floor)) => {
                b_inv * floor_eigenvalues(&(b * h * b.transpose()), *floor) * b_inv.transpose()
            }
            None => floor_eigenvalues(h, self.floor),
        };
        (&out + out.transpose()) * 0.5
    }

    /// The combined estimate of `H`, made positive definite ([`Self::floored`]).
    pub(crate) fn estimate(&self) -> DMatrix<f64> {
        self.floored(&unsvec(&self.mean, self.p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::chain_rng;

    /// The combined mean is the generalised least-squares estimate: with two releases of
    /// equal precision in the same frame (`B = I`), the average of the two; and draws have the
    /// combined variance (half of one release's).
    #[test]
    fn two_releases_combine_by_their_precisions() {
        let p = 2;
        let pilot = Release {
            values: vec![4.0, 1.0, 2.0],
            noise_sd: 0.5,
            sensitivity: 1.0,
        };
        let second = Release {
            values: vec![6.0, 3.0, 4.0],
            noise_sd: 0.5,
            sensitivity: 1.0,
        };
        let b = DMatrix::identity(p, p);
        let g = XtxGaussian::new(&pilot, &[true; 3], &[], Some((&second, &b)), p).unwrap();
        for (m, want) in g.mean.iter().zip([5.0, 2.0, 3.0]) {
            assert!((m - want).abs() < 1e-12, "{m} vs {want}");
        }
        let mut rng = chain_rng(1, 0);
        let n = 20_000;
        let draws: Vec<f64> = (0..n).map(|_| g.draw(&mut rng)[(0, 0)] - 5.0).collect();
        let var = draws.iter().map(|d| d * d).sum::<f64>() / n as f64;
        // 0.125 with a standard error of 0.125·√(2/n) ≈ 0.00125: 5 standard errors
        assert!((var - 0.125).abs() < 0.00625, "{var}");
        // a public entry stays exact
        let g =
            XtxGaussian::new(&pilot, &[false, true, true], &[], Some((&second, &b)), p).unwrap();
        assert_eq!(g.mean[0], 4.0);
        assert_eq!(g.draw(&mut rng)[(0, 0)], 4.0);
    }

    /// An entry a structural rule determines follows the released ones in the mean and in
    /// every draw (an indicator's square: `H₁₁ = H₀₁`, so `svec₂ = svec₁/√2`).
    #[test]
    fn determined_entries_follow_the_released_ones() {
        let p = 2;
        let pilot = Release {
            values: vec![10.0, 4.0 * std::f64::consts::SQRT_2, 0.0],
            noise_sd: 0.5,
            sensitivity: 1.0,
        };
        let rule = Determined {
            entry: 2,
            terms: vec![(1, std::f64::consts::FRAC_1_SQRT_2)],
        };
        let second = Release {
            values: vec![10.5, 4.0 * std::f64::consts::SQRT_2, 3.0],
            noise_sd: 0.5,
            sensitivity: 1.0,
        };
        let b = DMatrix::identity(p, p);
        let mut rng = chain_rng(2, 0);
        for whitened in [None, Some((&second, &b))] {
            let g = XtxGaussian::new(
                &pilot,
                &[false, true, false],
                std::slice::from_ref(&rule),
                whitened,
                p,
            )
            .unwrap();
            assert_eq!(g.mean[0], 10.0);
            assert!((g.mean[2] - g.mean[1] / std::f64::consts::SQRT_2).abs() < 1e-12);
            for _ in 0..10 {
                let h = g.draw(&mut rng);
                assert_eq!(h[(0, 0)], 10.0);
                assert!((h[(1, 1)] - h[(0, 1)]).abs() < 1e-12, "{h}");
            }
        }
    }
}
