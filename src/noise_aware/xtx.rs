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
pub(crate) struct XtxGaussian {
    p: usize,
    /// `svec(H)`: public entries exact, the others at their combined estimate.
    mean: Vec<f64>,
    /// Indices of the entries that carry noise.
    noisy: Vec<usize>,
    /// The two releases' combined precision over the noisy entries, as `Λ'` with `Λ = Λ'/s²`
    /// (its Cholesky factor) and `s`; or, for the pilot alone, `None` and its noise sd `s`.
    precision: Option<Cholesky<f64, Dyn>>,
    scale: f64,
    /// `(B, B⁻¹, floor)` of the whitened release, or `None` and [`noise_floor`] of the pilot.
    whitening: Option<(DMatrix<f64>, DMatrix<f64>, f64)>,
    floor: f64,
}

impl XtxGaussian {
    /// The Gaussian of `svec(H)` given the `pilot` (entries flagged by `noisy` carry noise) and
    /// the `whitened` release with its `B`; `None` if the combined precision is singular.
    pub(crate) fn new(
        pilot: &Release,
        noisy: &[bool],
        whitened: Option<(&Release, &DMatrix<f64>)>,
        p: usize,
    ) -> Option<Self> {
        let noisy: Vec<usize> = (0..noisy.len()).filter(|&k| noisy[k]).collect();
        let mut mean = pilot.values.clone();
        let floor = noise_floor(pilot.noise_sd, p);
        let Some((second, b)) = whitened.filter(|_| !noisy.is_empty()) else {
            return Some(XtxGaussian {
                p,
                mean,
                noisy,
                precision: None,
                scale: pilot.noise_sd,
                whitening: None,
                floor,
            });
        };
        // h̃₂ = L svec(H) + e₂: split L's columns into the noisy entries and the public ones
        let l = congruence(b);
        let q = mean.len();
        let public: Vec<usize> = (0..q).filter(|k| !noisy.contains(k)).collect();
        let mut y2 = DVector::from_column_slice(&second.values);
        for &k in &public {
            y2.axpy(-mean[k], &l.column(k), 1.0);
        }
        let l_n = l.select_columns(&noisy);
        // the precisions relative to the larger one (finite for any positive sds): the
        // combined precision is Λ = Λ'/s², s the smaller sd
        let s = pilot.noise_sd.min(second.noise_sd);
        let (w1, w2) = ((s / pilot.noise_sd).powi(2), (s / second.noise_sd).powi(2));
        let m = noisy.len();
        let lam = DMatrix::identity(m, m) * w1 + l_n.transpose() * &l_n * w2;
        let y1 = DVector::from_iterator(m, noisy.iter().map(|&k| pilot.values[k]));
        let rhs = y1 * w1 + l_n.transpose() * y2 * w2;
        let chol = Cholesky::new((&lam + lam.transpose()) * 0.5)?;
        let combined = chol.solve(&rhs);
        for (i, &k) in noisy.iter().enumerate() {
            mean[k] = combined[i];
        }
        let b_inv = b.clone().try_inverse()?;
        // the floor in B's frame: the noise scale of the combined estimate there, the pilot's
        // noise magnified by at most ‖B‖² (B is symmetric; so a whitened release far noisier than the pilot
        // floors at the pilot's scale, not its own)
        let pilot_there = pilot.noise_sd * b.symmetric_eigenvalues().amax().powi(2);
        let combined_sd = (second.noise_sd.powi(-2) + pilot_there.powi(-2)).powf(-0.5);
        Some(XtxGaussian {
            p,
            mean,
            noisy,
            precision: Some(chol),
            scale: s,
            whitening: Some((b.clone(), b_inv, noise_floor(combined_sd, p))),
            floor,
        })
    }

    /// One draw of `H` (symmetric, not necessarily positive definite).
    pub(crate) fn draw(&self, rng: &mut ChainRng) -> DMatrix<f64> {
        let mut v = self.mean.clone();
        let m = self.noisy.len();
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
        for (i, &k) in self.noisy.iter().enumerate() {
            v[k] += dev[i];
        }
        unsvec(&v, self.p)
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
        let g = XtxGaussian::new(&pilot, &[true; 3], Some((&second, &b)), p).unwrap();
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
        let g = XtxGaussian::new(&pilot, &[false, true, true], Some((&second, &b)), p).unwrap();
        assert_eq!(g.mean[0], 4.0);
        assert_eq!(g.draw(&mut rng)[(0, 0)], 4.0);
    }
}
