//! Noise-aware linear regression (and the Gaussian mean) from **one release of the sufficient
//! statistics**, after Bernstein & Sheldon, "Differentially private Bayesian linear
//! regression" (NeurIPS 2019), with the design conditioned on instead of modelled.
//!
//! # The releases
//! In the internal coordinates of the declared bounds (`coordinates.rs`: with an intercept,
//! every other covariate and the response centred at their boxes' midpoints and divided by
//! their half-widths), the Gaussian likelihood depends on the data only through
//! `H = XᵀX`, `u = Xᵀy` and `v = yᵀy`. They are released with Gaussian noise of standard
//! deviation `Δ_i·z_i`, `XᵀX` in two stages (a pilot, then whitened by it: `xtx.rs`), the
//! pilot's and `yᵀy`'s shares of the budget fixed by [`SUFFICIENT_SHARES`], the rest split
//! between the whitened `XᵀX` and `Xᵀy` by `whitened_share` from what the pilot and `yᵀy`
//! made public; entries of `XᵀX` between two constant covariates (the intercept's `n`) are
//! public and exact, and those the declared indicators fix are not released (`structure.rs`).
//! The substitution sensitivities over
//! the declared box:
//!
//! - `svec(XᵀX)`: `x xᵀ − x' x'ᵀ` has squared Frobenius norm `‖x‖⁴ + ‖x'‖⁴ − 2 (xᵀx')²`, so
//!   `Δ² = 2 max‖x‖⁴ − 2 max(0, min xᵀx')²` (both extremes are sums of per-coordinate ones);
//! - `svec(B XᵀX B)`, `B = H̃₁^{−½}` from the pilot: `√2 max‖Bx‖²`;
//! - `A Xᵀy`, shaped by `A = H̄^{−½}` from `H̄`, the two `XᵀX` releases' combined estimate
//!   (floored at the noise's scale; post-processing, so `XᵀX` is released first):
//!   `‖A(x y − x' y')‖ ≤ 2 max‖Ax‖ max|y|`,
//!   the maximum over the allowed polytope's vertices. The noise `A⁻¹ξ` of `u` then has the
//!   shape of `H` itself, so every coefficient's variance is inflated by the same
//!   `4 max(xᵀH⁻¹x) z²/σ²` (the largest leverage), where the unshaped release inflated the
//!   poorly determined coefficients most (`4 max‖x‖² z² (H⁻²)_{ii}/((H⁻¹)_{ii} σ²)`): on
//!   ISLP's `Wage` design a median 7× smaller variance inflation at the same budget;
//! - `yᵀy`: `max y² − min y²`.
//!
//! # The posterior
//! Given the design, `u | β, σ, H ~ N(Hβ, σ²H)` and the residual sum of squares
//! `r = v − uᵀH⁻¹u = σ² κ`, `κ ~ χ²_{n−p}`, independent of `u` (exact for Gaussian errors;
//! no central limit approximation). With `β ~ N(0, S₀)` integrated out,
//! `u | H, σ ~ N(0, H S₀ H + σ² H)`; `H` is flat on the positive definite cone; `s = ln σ`
//! has the model's normal prior. The releases give `H̃ = H + E`, `ũ = u + e_u`,
//! `ṽ = κσ² + uᵀH⁻¹u + e_v` with the noise's known law. The sampler is Metropolis-within-Gibbs
//! over `(H, u, κ, s)`:
//!
//! - `H` by independence proposals from the release's Gaussian (restricted to positive
//!   definite matrices), once with `s` fixed and once with `s` moved so that `v` stays fixed
//!   (a deterministic coupling whose Jacobian enters the acceptance ratio);
//! - `u` the same way, proposed from the release's Gaussian for `u`, `N(A⁻¹ũ, t_u²A⁻²)`;
//! - `κ` and `s` by slice sampling (Neal 2003) of their one-dimensional conditionals;
//! - `β` exactly from `β | u, H, σ ~ N(P⁻¹u/σ², P⁻¹)`, `P = S₀⁻¹ + H/σ²`.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::data::GlmData;
use super::linalg::{SymFn, draw_from_precision, svec, sym_fn, too_noisy, unsvec};
use super::link::GlmKind;
use super::posterior::ChainDraws;
use super::releases::{Release, checked_sensitivity};
use super::sensitivity::{moment_sensitivities, xty_sensitivity};
use super::structure::{determined_entries, determined_mask};
use super::xtx::{XtxGaussian, floored_inv_sqrt, whitened_release};
use crate::error::{Error, Result};
use crate::rng::ChainRng;

/// Tries of the positive definite proposal of `H` before it is floored.
const MAX_PD_TRIES: usize = 200;

/// Shares of the run's Gaussian `μ` of the four releases `(XᵀX pilot, XᵀX whitened, Xᵀy,
/// yᵀy)`: a fixed public rule, chosen on simulated data (docs/NOISE-AWARE.md) among a handful
/// of splits by the posterior sds of β and ln σ. The pilot only has to find the design's
/// scales for the whitened release; `yᵀy` has a far smaller sensitivity than the others, so a
/// small share gives it little noise. `fit` (`release_for_budget`) spends the pilot's and
/// `yᵀy`'s shares as they are and splits the whitened `XᵀX`'s and `Xᵀy`'s together by
/// `whitened_share`, planned from those two releases. When `XᵀX` is entirely public (a
/// Gaussian mean: `n`), its shares go to the other two in proportion.
pub const SUFFICIENT_SHARES: [f64; 4] = [0.08, 0.17, 0.60, 0.15];

/// The releases of a linear model's sufficient statistics (see the module docs), in the
/// internal coordinates. Public after the release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SufficientRelease {
    /// The pilot `svec(XᵀX)` (off-diagonal entries times `√2`); entries between two constant
    /// covariates are public and exact (`noise_sd` applies to the others).
    pub xtx: Release,
    /// Whether each `xtx` entry carries noise. An entry the declared structure fixes (an
    /// indicator's square, two one-hot members' product: `structure.rs`) is not released and
    /// holds the value its rule gives from the released entries.
    pub xtx_noisy: Vec<bool>,
    /// `svec(B XᵀX B)`, whitened by `B = xtx_whitening` (a function of the pilot); `None`
    /// when `XᵀX` is entirely public.
    pub xtx_whitened: Option<Release>,
    /// `B` (`p × p`, row-major; empty without a whitened release).
    pub xtx_whitening: Vec<f64>,
    /// `A Xᵀy`, shaped by `xty_shape`.
    pub xty: Release,
    /// The shape `A` of the `Xᵀy` release (`p × p`, row-major): `H̄^{−½}`, a function of the
    /// released `XᵀX` (module docs).
    pub xty_shape: Vec<f64>,
    /// `yᵀy` (one value).
    pub yty: Release,
    /// Noise multipliers of the four releases in the order of [`SUFFICIENT_SHARES`]
    /// (`μ_i = 1/(2z_i²)`; `None` for a release that is entirely public, i.e. `XᵀX` of a
    /// Gaussian mean).
    pub noise_multipliers: [Option<f64>; 4],
}

/// The noise multipliers of the four releases for a total Gaussian `mu` split by `shares`
/// (a release that is entirely public gets none: `∞`, and its share goes to the others).
pub(crate) fn sufficient_noise_multipliers(
    data: &GlmData,
    mu: f64,
    shares: [f64; 4],
) -> Result<[f64; 4]> {
    let xtx_public = (0..data.p).all(|a| data.lo[a] == data.hi[a]);
    let used: f64 = if xtx_public {
        shares[2] + shares[3]
    } else {
        shares.iter().sum()
    };
    let z = |i: usize| {
        if xtx_public && i < 2 {
            Ok(f64::INFINITY)
        } else {
            super::releases::noise_multiplier(mu * shares[i] / used)
        }
    };
    Ok([z(0)?, z(1)?, z(2)?, z(3)?])
}

/// `fit`'s releases of a linear model for a total Gaussian `mu`: the pilot and `yᵀy` at their
/// [`SUFFICIENT_SHARES`], then the rest split between the whitened `XᵀX` and `Xᵀy` by
/// [`whitened_share`] (an `XᵀX` that is entirely public gets none).
pub(crate) fn release_for_budget(
    data: &GlmData,
    mu: f64,
    rng: &mut ChainRng,
) -> Result<SufficientRelease> {
    let z = sufficient_noise_multipliers(data, mu, SUFFICIENT_SHARES)?;
    if z[0].is_infinite() {
        return release_sufficient(data, z, rng);
    }
    let rest =
        mu * (SUFFICIENT_SHARES[1] + SUFFICIENT_SHARES[2]) / SUFFICIENT_SHARES.iter().sum::<f64>();
    let split = |inputs: &SplitInputs| {
        let w = whitened_share(inputs);
        Ok([
            super::releases::noise_multiplier(rest * w)?,
            super::releases::noise_multiplier(rest * (1.0 - w))?,
        ])
    };
    release_planned(data, [z[0], z[3]], &split, rng)
}

/// The whitened `XᵀX`'s share of what the whitened `XᵀX` and `Xᵀy` releases spend together,
/// from what is public after the pilot and `yᵀy`: it minimises the coefficients' predicted
/// variance inflation `a/s_u + b/s_w` to first order in the noise. In the frame whitened by
/// `H`, the `Xᵀy` release adds `4 h Y² z_u²` (`h` the largest leverage, `Y` the largest `|y|`),
/// and the whitened release's noise `E` moves `β_w = H^{½}β` by `Eβ_w`, adding about
/// `h² z_w² ‖β_w‖²`, so `s_w/s_u = √(b/a) = √(h ‖β_w‖²)/(2Y)`, with `‖β_w‖² = ‖Xβ‖² ≤ yᵀy`
/// taken at the released `yᵀy` (pessimistic toward `XᵀX`). Kept within
/// [`WHITENED_SHARE_RANGE`].
pub(crate) fn whitened_share(inputs: &SplitInputs) -> f64 {
    let ratio = (inputs.max_leverage * inputs.yty.max(0.0)).sqrt() / (2.0 * inputs.y_max);
    let w = ratio / (1.0 + ratio);
    let (lo, hi) = WHITENED_SHARE_RANGE;
    if w.is_finite() { w.clamp(lo, hi) } else { lo }
}

/// The range of [`whitened_share`]: neither of the two releases is starved whatever the pilot
/// says (a pilot whose floored eigenvalues overstate the leverage, a `yᵀy` released near 0).
pub(crate) const WHITENED_SHARE_RANGE: (f64, f64) = (0.1, 0.8);

/// Releases `svec(XᵀX)`, then `svec(B XᵀX B)` whitened by it, `Xᵀy` and `yᵀy` (internal
/// coordinates) with Gaussian noise of standard deviation `Δ_i·z_i` on every entry that is not
/// public (see the module docs; `z` in the order of [`SUFFICIENT_SHARES`]). One pass over the
/// data.
///
/// # Errors
/// A noise multiplier that is not positive (`∞` is allowed for the two `XᵀX` releases only
/// when it is entirely public); a model that is not linear; a sensitivity that is not a
/// positive normal number.
pub fn release_sufficient(
    data: &GlmData,
    z: [f64; 4],
    rng: &mut ChainRng,
) -> Result<SufficientRelease> {
    for zi in z {
        if zi.is_nan() || zi <= 0.0 {
            return Err(Error::invalid(
                "noise multiplier",
                zi,
                "must be positive (∞ for an entirely public release)",
            ));
        }
    }
    if z[0].is_finite() != z[1].is_finite() {
        return Err(Error::invalid(
            "noise multiplier",
            format!("{} and {}", z[0], z[1]),
            "the two XᵀX releases are both public (∞) or both noisy",
        ));
    }
    release_planned(data, [z[0], z[3]], &|_| Ok([z[1], z[2]]), rng)
}

/// What is public when the whitened `XᵀX` and `Xᵀy` releases are planned: after the pilot
/// and `yᵀy` ([`release_planned`]).
pub(crate) struct SplitInputs {
    /// `max‖Bx‖²` over the allowed rows, `B` the pilot's whitening: the largest leverage.
    pub max_leverage: f64,
    /// The released `yᵀy` (internal coordinates).
    pub yty: f64,
    /// The largest `|y|` the declared response range allows (internal coordinates).
    pub y_max: f64,
}

/// The releases of [`release_sufficient`] with the pilot's and `yᵀy`'s noise multipliers
/// `z_first` fixed and the whitened `XᵀX`'s and `Xᵀy`'s chosen by `split` from what those two
/// releases made public (a fully adaptive choice of Gaussian budgets: Smith & Thakurta 2022).
pub(crate) fn release_planned(
    data: &GlmData,
    z_first: [f64; 2],
    split: &dyn Fn(&SplitInputs) -> Result<[f64; 2]>,
    rng: &mut ChainRng,
) -> Result<SufficientRelease> {
    if data.kind != GlmKind::Linear {
        return Err(Error::invalid(
            "model",
            format!("{:?}", data.kind),
            "sufficient statistics are released for a linear model only",
        ));
    }
    let [z_pilot, z_v] = z_first;
    let p = data.p;
    let mut h = DMatrix::<f64>::zeros(p, p);
    let mut u = vec![0.0; p];
    let mut v = 0.0;
    for (x, &y) in data.x.chunks_exact(p).zip(&data.y) {
        for a in 0..p {
            let xa = x[a];
            u[a] += xa * y;
            for b in a..p {
                h[(a, b)] += xa * x[b];
            }
        }
        v += y * y;
    }
    h.fill_lower_triangle_with_upper_triangle();
    let constant = |a: usize| data.lo[a] == data.hi[a];
    let n = data.n_rows() as f64;
    let [d_h, d_v] = moment_sensitivities(data);
    let d_v = checked_sensitivity("noise-aware yᵀy release", d_v)?;
    if z_pilot.is_finite() {
        checked_sensitivity("noise-aware XᵀX release", d_h)?;
    }
    let mut xtx = svec(&h);
    let mut xtx_noisy = Vec::with_capacity(xtx.len());
    let sd_h = if z_pilot.is_finite() {
        d_h * z_pilot
    } else {
        0.0
    };
    let determined = determined_entries(data);
    let fixed = determined_mask(xtx.len(), &determined);
    let mut k = 0;
    for a in 0..p {
        for b in a..p {
            if fixed[k] {
                // not released: computed from the released entries below
                xtx_noisy.push(false);
            } else if constant(a) && constant(b) {
                // public: n · c_a · c_b
                let exact = n * data.lo[a] * data.lo[b];
                xtx[k] = if a == b {
                    exact
                } else {
                    exact * std::f64::consts::SQRT_2
                };
                xtx_noisy.push(false);
            } else {
                if !z_pilot.is_finite() {
                    return Err(Error::invalid(
                        "noise multiplier",
                        z_pilot,
                        "XᵀX has non-public entries: give it a finite noise multiplier",
                    ));
                }
                xtx[k] += sd_h * normal(rng);
                xtx_noisy.push(true);
            }
            k += 1;
        }
    }
    for rule in &determined {
        xtx[rule.entry] = rule.terms.iter().map(|&(k, c)| c * xtx[k]).sum();
    }
    let pilot = Release {
        values: xtx,
        noise_sd: sd_h,
        sensitivity: d_h,
    };
    let sd_v = d_v * z_v;
    let v = v + sd_v * normal(rng);
    // the whitened release, with B from the pilot (post-processing), and the two budgets
    // still to spend, planned from what is public now
    let whitening = floored_inv_sqrt(&unsvec(&pilot.values, p), sd_h);
    let [z_w, z_u] = split(&SplitInputs {
        max_leverage: data.max_shaped_norm(&whitening).powi(2),
        yty: v,
        y_max: data.y_lo.abs().max(data.y_hi.abs()),
    })?;
    if !(z_u > 0.0 && z_u.is_finite()) {
        return Err(Error::invalid(
            "noise multiplier",
            z_u,
            "the Xᵀy release needs a positive, finite noise multiplier",
        ));
    }
    if z_w.is_nan() || z_w <= 0.0 || z_w.is_infinite() != z_pilot.is_infinite() {
        return Err(Error::invalid(
            "noise multiplier",
            z_w,
            "the two XᵀX releases are both public (∞) or both noisy",
        ));
    }
    let whitened = if z_w.is_finite() {
        Some(whitened_release(data, &h, &whitening, z_w, rng)?)
    } else {
        None
    };
    // the shape of Xᵀy from both XᵀX releases' estimate (post-processing)
    let estimate = XtxGaussian::new(
        &pilot,
        &xtx_noisy,
        &determined,
        whitened.as_ref().map(|w| (w, &whitening)),
        p,
    )
    .ok_or_else(|| failed("the combined XᵀX releases"))?
    .estimate();
    let shape = sym_fn(&estimate, SymFn::InvSqrt);
    let d_u = checked_sensitivity("noise-aware Xᵀy release", xty_sensitivity(data, &shape))?;
    let sd_u = d_u * z_u;
    let u: Vec<f64> = (&shape * DVector::from_vec(u))
        .iter()
        .map(|x| x + sd_u * normal(rng))
        .collect();
    let second = whitened
        .as_ref()
        .map(|w| w.values.as_slice())
        .unwrap_or(&[]);
    if pilot
        .values
        .iter()
        .chain(second)
        .chain(&u)
        .chain([&v])
        .any(|x| !x.is_finite())
    {
        return Err(Error::Model(
            "the sufficient statistics left the finite range; narrow the declared bounds".into(),
        ));
    }
    let z = [z_pilot, z_w, z_u, z_v];
    Ok(SufficientRelease {
        xtx: pilot,
        xtx_noisy,
        xtx_whitening: if whitened.is_some() {
            super::releases::row_major(&whitening)
        } else {
            Vec::new()
        },
        xtx_whitened: whitened,
        xty: Release {
            values: u,
            noise_sd: sd_u,
            sensitivity: d_u,
        },
        xty_shape: super::releases::row_major(&shape),
        yty: Release {
            values: vec![v],
            noise_sd: sd_v,
            sensitivity: d_v,
        },
        noise_multipliers: z.map(|z| z.is_finite().then_some(z)),
    })
}

/// The posterior given a [`SufficientRelease`] (module docs), ready to sample.
pub(crate) struct LinearPosterior {
    p: usize,
    /// Degrees of freedom of the residual sum of squares, `n − p`.
    k: f64,
    /// Noise sds of `Xᵀy`'s entries and of `yᵀy`.
    t_u: f64,
    t_v: f64,
    /// Proposal of `H`: the `XᵀX` releases' Gaussian.
    xtx: XtxGaussian,
    /// `Xᵀy` estimated from its release, `A⁻¹ũ`, and the factor `A⁻¹` of its noise.
    u_obs: DVector<f64>,
    u_noise: DMatrix<f64>,
    v_obs: f64,
    /// Prior of the coefficients: `N(prior_mean, prior_cov)`.
    prior_mean: DVector<f64>,
    prior_cov: DMatrix<f64>,
    prior_prec: DMatrix<f64>,
    s_mean: f64,
    s_var: f64,
    /// Tries of the positive definite proposal before flooring: [`MAX_PD_TRIES`], or 1 when
    /// none of [`MAX_PD_TRIES`] trial draws was positive definite (then every proposal is
    /// floored anyway, and trying costs 200 draws a step for nothing).
    pd_tries: usize,
}

/// What the log density needs of `(H, u)`: with `H = LLᵀ` and `LᵀS₀L = QΛQᵀ`,
/// `w = QᵀL⁻¹(u − Hμ₀)`, so `u ~ N(Hμ₀, HS₀H + σ²H)` has log density
/// `−½ Σ w_i²/(λ_i + σ²) − ½ Σ ln(λ_i + σ²) − ln|L|`: every `σ` costs `O(p)`.
#[derive(Clone)]
struct Parts {
    w2: DVector<f64>,
    lam: DVector<f64>,
    log_det_l: f64,
    /// `uᵀH⁻¹u`.
    g: f64,
}

/// The sampler's state.
#[derive(Clone)]
struct State {
    h: DMatrix<f64>,
    h_chol: Cholesky<f64, Dyn>,
    u: DVector<f64>,
    kappa: f64,
    s: f64,
    parts: Parts,
    /// The log density up to a constant (see [`LinearPosterior::log_at`]).
    log: f64,
}

impl LinearPosterior {
    /// The posterior of `release` for the model of `data` (its prior in the internal
    /// coordinates).
    pub(crate) fn new(release: &SufficientRelease, data: &GlmData) -> Result<Self> {
        let p = data.p;
        let n = data.n_rows();
        if n < p + 2 {
            return Err(Error::invalid(
                "rows",
                n,
                format!(
                    "a linear model with {p} coefficients needs at least {} rows",
                    p + 2
                ),
            ));
        }
        let whitened = match &release.xtx_whitened {
            Some(w) if release.xtx_whitening.len() == p * p => {
                Some((w, DMatrix::from_row_slice(p, p, &release.xtx_whitening)))
            }
            Some(_) => return Err(failed("the whitened XᵀX release's B")),
            None => None,
        };
        let xtx = XtxGaussian::new(
            &release.xtx,
            &release.xtx_noisy,
            &determined_entries(data),
            whitened.as_ref().map(|(w, b)| (*w, b)),
            p,
        )
        .ok_or_else(|| failed("the combined XᵀX releases"))?;
        // post-processing: can a draw of the release's Gaussian be positive definite at all?
        // (a fixed public seed: this decides only how many tries a proposal gets)
        let pd_possible = {
            let mut rng = crate::rng::chain_rng(0, 0);
            (0..MAX_PD_TRIES).any(|_| Cholesky::new(xtx.draw(&mut rng)).is_some())
        };
        let shape = DMatrix::from_row_slice(p, p, &release.xty_shape);
        let u_noise = shape
            .clone()
            .try_inverse()
            .ok_or_else(|| failed("the Xᵀy shape's inverse"))?;
        let u_obs = &u_noise * DVector::from_column_slice(&release.xty.values);
        // the prior in the internal coordinates: β and ln σ are independent under it
        let prior = &data.prior;
        let prior_cov = prior.cov.view((0, 0), (p, p)).into_owned();
        let prior_prec = Cholesky::new(prior_cov.clone())
            .ok_or_else(|| failed("prior"))?
            .inverse();
        Ok(LinearPosterior {
            p,
            k: (n - p) as f64,
            t_u: release.xty.noise_sd,
            t_v: release.yty.noise_sd,
            xtx,
            u_obs,
            u_noise,
            v_obs: release.yty.values[0],
            prior_mean: DVector::from_column_slice(&prior.mean[..p]),
            prior_cov,
            prior_prec,
            s_mean: prior.mean[p],
            s_var: prior.cov[(p, p)],
            pd_tries: if pd_possible { MAX_PD_TRIES } else { 1 },
        })
    }

    /// A positive definite proposal of `H` from the release's Gaussian, and whether it had to
    /// be floored (no positive definite draw in [`MAX_PD_TRIES`]).
    fn propose_h(&self, rng: &mut ChainRng) -> (DMatrix<f64>, Cholesky<f64, Dyn>, bool) {
        let mut h = DMatrix::zeros(self.p, self.p);
        for _ in 0..self.pd_tries {
            h = self.xtx.draw(rng);
            if let Some(chol) = Cholesky::new(h.clone()) {
                return (h, chol, false);
            }
        }
        let h = self.xtx.floored(&h);
        let chol = Cholesky::new(h.clone()).expect("eigenvalues floored above zero");
        (h, chol, true)
    }

    /// A proposal of `u` from the release's Gaussian `N(A⁻¹ũ, t_u²A⁻²)`.
    fn propose_u(&self, rng: &mut ChainRng) -> DVector<f64> {
        let xi = DVector::from_fn(self.p, |_, _| self.t_u * normal(rng));
        let mut u = self.u_obs.clone();
        u.gemv(1.0, &self.u_noise, &xi, 1.0);
        u
    }

    /// The `(H, u)` part of the log density (see [`Parts`]); `None` if not finite.
    fn parts(&self, h_chol: &Cholesky<f64, Dyn>, u: &DVector<f64>) -> Option<Parts> {
        let l = h_chol.l();
        let k = l.transpose() * &self.prior_cov * &l;
        let eig = ((&k + k.transpose()) * 0.5).symmetric_eigen();
        let l_inv_u = l.solve_lower_triangular(u)?;
        let w = eig.eigenvectors.transpose() * (&l_inv_u - l.transpose() * &self.prior_mean);
        let parts = Parts {
            g: l_inv_u.norm_squared(),
            w2: w.map(|v| v * v),
            lam: eig.eigenvalues.map(|v| v.max(0.0)),
            log_det_l: l.diagonal().iter().map(|v| v.ln()).sum(),
        };
        parts.g.is_finite().then_some(parts)
    }

    /// Log density of the state up to a constant, **without** the factors of `H̃` and `ũ`
    /// (the proposals' own); `None` outside the support.
    fn log_at(&self, parts: &Parts, kappa: f64, s: f64) -> Option<f64> {
        if !(kappa > 0.0 && s.is_finite()) {
            return None;
        }
        let sig2 = (2.0 * s).exp();
        let mut log_u = -parts.log_det_l;
        for (w2, lam) in parts.w2.iter().zip(&parts.lam) {
            let v = lam + sig2;
            log_u -= 0.5 * (w2 / v + v.ln());
        }
        let resid = self.v_obs - kappa * sig2 - parts.g;
        let log = log_u - resid * resid / (2.0 * self.t_v * self.t_v)
            + (0.5 * self.k - 1.0) * kappa.ln()
            - 0.5 * kappa
            - (s - self.s_mean).powi(2) / (2.0 * self.s_var);
        log.is_finite().then_some(log)
    }

    fn state(
        &self,
        h: DMatrix<f64>,
        h_chol: Cholesky<f64, Dyn>,
        u: DVector<f64>,
        kappa: f64,
        s: f64,
    ) -> Option<State> {
        let parts = self.parts(&h_chol, &u)?;
        let log = self.log_at(&parts, kappa, s)?;
        Some(State {
            h,
            h_chol,
            u,
            kappa,
            s,
            parts,
            log,
        })
    }

    /// `s` moved so that `κσ² + uᵀH⁻¹u` stays fixed when `uᵀH⁻¹u` goes from `g_old` to
    /// `g_new`, and the log Jacobian of the move; `None` if no positive `σ²` does it.
    fn coupled_s(st: &State, g_new: f64) -> Option<(f64, f64)> {
        let r = st.kappa * (2.0 * st.s).exp();
        let r_new = r + st.parts.g - g_new;
        (r_new > 0.0).then(|| (st.s + 0.5 * (r_new / r).ln(), (r / r_new).ln()))
    }

    /// One Metropolis–Hastings step from `st` to `(h, u)` (proposed independently of the
    /// state), with `s` fixed or coupled.
    fn mh(
        &self,
        st: &mut State,
        h: DMatrix<f64>,
        h_chol: Cholesky<f64, Dyn>,
        u: DVector<f64>,
        coupled: bool,
        rng: &mut ChainRng,
    ) -> bool {
        let Some(parts) = self.parts(&h_chol, &u) else {
            return false;
        };
        let (s, log_jac) = if coupled {
            match Self::coupled_s(st, parts.g) {
                Some(v) => v,
                None => return false,
            }
        } else {
            (st.s, 0.0)
        };
        let Some(log) = self.log_at(&parts, st.kappa, s) else {
            return false;
        };
        let uniform: f64 = rng.random();
        if uniform.ln() < log - st.log + log_jac {
            *st = State {
                h,
                h_chol,
                u,
                kappa: st.kappa,
                s,
                parts,
                log,
            };
            true
        } else {
            false
        }
    }

    /// Slice sampling (stepping out, then shrinkage) of one coordinate with log density `f`.
    fn slice(x0: f64, f0: f64, w: f64, f: impl Fn(f64) -> Option<f64>, rng: &mut ChainRng) -> f64 {
        let e: f64 = rng.random();
        let level = f0 + e.max(f64::MIN_POSITIVE).ln();
        let above = |x: f64| f(x).is_some_and(|v| v > level);
        let start: f64 = rng.random();
        let mut lo = x0 - w * start;
        let mut hi = lo + w;
        for _ in 0..60 {
            if !above(lo) {
                break;
            }
            lo -= w;
        }
        for _ in 0..60 {
            if !above(hi) {
                break;
            }
            hi += w;
        }
        for _ in 0..200 {
            let v: f64 = rng.random();
            let x = lo + v * (hi - lo);
            if above(x) {
                return x;
            }
            if x < x0 {
                lo = x;
            } else {
                hi = x;
            }
        }
        x0
    }

    /// A chain of `warmup + draws` steps from an over-dispersed start; the draws are in the
    /// data's internal coordinates (`β` of the scaled covariates, then `ln σ`).
    pub(crate) fn chain(
        &self,
        warmup: usize,
        draws: usize,
        rng: &mut ChainRng,
    ) -> Result<ChainDraws> {
        let p = self.p;
        let mut floored = 0usize;
        let mut st = None;
        for _ in 0..100 {
            let (h, h_chol, f) = self.propose_h(rng);
            floored += usize::from(f);
            let u = self.propose_u(rng);
            let g = u.dot(&h_chol.solve(&u));
            let z: f64 = StandardNormal.sample(rng);
            let kappa = (self.k + (2.0 * self.k).sqrt() * z).max(0.5 * self.k);
            let r = (self.v_obs - g).max(self.t_v).max(1e-300);
            st = self.state(h, h_chol, u, kappa, 0.5 * (r / kappa).ln());
            if st.is_some() {
                break;
            }
        }
        let mut st = st.ok_or_else(|| Error::Numerical {
            what: "noise-aware linear posterior",
            reason: "no valid starting point; the releases are too noisy for this model at \
                     this budget (increase epsilon)"
                .into(),
        })?;
        let mut out = ChainDraws {
            draws: Vec::with_capacity(draws * (p + 1)),
            accepted: Vec::with_capacity(draws),
            start: Vec::new(),
            floored: 0,
        };
        for step in 0..warmup + draws {
            let mut accepted = false;
            for coupled in [false, true] {
                let (h, h_chol, f) = self.propose_h(rng);
                if !coupled {
                    floored += usize::from(f);
                }
                let u = st.u.clone();
                let a = self.mh(&mut st, h, h_chol, u, coupled, rng);
                accepted |= a && !coupled;
            }
            for coupled in [false, true] {
                let u = self.propose_u(rng);
                let (h, h_chol) = (st.h.clone(), st.h_chol.clone());
                self.mh(&mut st, h, h_chol, u, coupled, rng);
            }
            // κ | rest and s | rest by slice sampling
            let w_kappa = (2.0 * self.k).sqrt();
            let kappa = Self::slice(
                st.kappa,
                st.log,
                w_kappa,
                |k| self.log_at(&st.parts, k, st.s),
                rng,
            );
            st.log = self
                .log_at(&st.parts, kappa, st.s)
                .ok_or_else(|| failed("κ step"))?;
            st.kappa = kappa;
            let s = Self::slice(
                st.s,
                st.log,
                0.05,
                |s| self.log_at(&st.parts, st.kappa, s),
                rng,
            );
            st.log = self
                .log_at(&st.parts, st.kappa, s)
                .ok_or_else(|| failed("s step"))?;
            st.s = s;
            // s along the ridge κσ² = r: at a large n and a precise yᵀy release the posterior
            // of (κ, s) is a narrow ridge that the two moves above cross but barely travel. In
            // the coordinates (r, s), κ = r e^{−2s}, the density is p(κ, s)·e^{−2s} (the
            // Jacobian), and s | r is sampled by slice
            let r = st.kappa * (2.0 * st.s).exp();
            let s = Self::slice(
                st.s,
                st.log - 2.0 * st.s,
                0.05,
                |s| {
                    self.log_at(&st.parts, r * (-2.0 * s).exp(), s)
                        .map(|l| l - 2.0 * s)
                },
                rng,
            );
            st.kappa = r * (-2.0 * s).exp();
            st.s = s;
            st.log = self
                .log_at(&st.parts, st.kappa, st.s)
                .ok_or_else(|| failed("ridge step"))?;
            // β | u, H, σ exactly
            let sig2 = (2.0 * st.s).exp();
            let prec = &self.prior_prec + &st.h / sig2;
            let beta = draw_from_precision(
                &prec,
                &(&self.prior_prec * &self.prior_mean + &st.u / sig2),
                rng,
            )
            .ok_or_else(|| failed("β step"))?;
            let theta: Vec<f64> = beta.iter().copied().chain([st.s]).collect();
            if step == 0 {
                out.start = theta.clone();
            }
            if step >= warmup {
                out.draws.extend(theta);
                out.accepted.push(accepted);
            }
        }
        out.floored = floored;
        Ok(out)
    }

    /// The posterior precision the released statistics would give without their noise
    /// (internal coordinates, `(β, ln σ)`): `H̃/σ̂² + S₀⁻¹` for the coefficients (`H̃` the
    /// released `XᵀX`, floored to positive definite; `σ̂` from [`Self::point`]) and
    /// `2(n − p) + 1/s_var` for `ln σ`; with the prior's precision alone beside it.
    pub(crate) fn noise_free_precision(&self) -> (DMatrix<f64>, DMatrix<f64>) {
        let p = self.p;
        let s = self.point()[p];
        let h = self.xtx.estimate() / (2.0 * s).exp();
        let mut prec = DMatrix::zeros(p + 1, p + 1);
        let mut prior = DMatrix::zeros(p + 1, p + 1);
        prec.view_mut((0, 0), (p, p))
            .copy_from(&(&h + &self.prior_prec));
        prior.view_mut((0, 0), (p, p)).copy_from(&self.prior_prec);
        prec[(p, p)] = 2.0 * self.k + 1.0 / self.s_var;
        prior[(p, p)] = 1.0 / self.s_var;
        (prec, prior)
    }

    /// A point estimate from the release alone (post-processing): the ridge solution
    /// `(H̃ + S₀⁻¹)⁻¹ ũ` with `H̃` floored to positive definite, and `ln σ` from the released
    /// residual sum of squares; internal coordinates.
    pub(crate) fn point(&self) -> Vec<f64> {
        let h = self.xtx.estimate();
        let a = &h + &self.prior_prec;
        let beta = Cholesky::new((&a + a.transpose()) * 0.5)
            .map(|c| c.solve(&(&self.u_obs + &self.prior_prec * &self.prior_mean)))
            .unwrap_or_else(|| DVector::zeros(self.p));
        let rss = (self.v_obs - 2.0 * beta.dot(&self.u_obs)
            + (beta.transpose() * &h * &beta)[(0, 0)])
            .max(self.t_v);
        beta.iter()
            .copied()
            .chain([0.5 * (rss / self.k).ln()])
            .collect()
    }
}

fn normal(rng: &mut ChainRng) -> f64 {
    StandardNormal.sample(rng)
}

/// A step of this posterior that the releases' noise made impossible ([`too_noisy`]).
fn failed(what: &str) -> Error {
    too_noisy("noise-aware linear posterior", what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitivity_bounds_every_substitution_and_is_nearly_tight() {
        // z = (1, x, y/c) with x ∈ [0, 1], y ∈ [−2, 2] (c = 2): brute force over a grid of pairs
        let data = GlmData::new(
            GlmKind::Linear,
            vec![1.0, 0.5],
            vec![0.3],
            vec![(1.0, 1.0), (0.0, 1.0)],
            (-2.0, 2.0),
            10.0,
            vec!["intercept".into(), "x".into(), "log_sigma".into()],
        )
        .unwrap();
        let grid: Vec<(f64, f64)> = (0..=10)
            .flat_map(|i| (0..=20).map(move |j| (i as f64 / 10.0, j as f64 / 10.0 - 1.0)))
            .collect();
        // the unshaped Xᵀy and a shape that mixes the coordinates
        for shape in [
            DMatrix::identity(2, 2),
            DMatrix::from_row_slice(2, 2, &[0.7, 0.2, 0.2, 1.3]),
        ] {
            let [d_h, d_v] = moment_sensitivities(&data);
            let got = [d_h, xty_sensitivity(&data, &shape), d_v];
            // internal coordinates: x centred at ½ and divided by ½, y ∈ [−2, 2] divided by 2
            // (the grid's y is already)
            let moved = |a: (f64, f64), b: (f64, f64)| {
                let (x, y) = (DVector::from_vec(vec![1.0, 2.0 * a.0 - 1.0]), a.1);
                let (x2, y2) = (DVector::from_vec(vec![1.0, 2.0 * b.0 - 1.0]), b.1);
                [
                    (&x * x.transpose() - &x2 * x2.transpose()).norm(),
                    (&shape * (&x * y - &x2 * y2)).norm(),
                    (y * y - y2 * y2).abs(),
                ]
            };
            let mut best = [0.0f64; 3];
            for &a in &grid {
                for &b in &grid {
                    for (best, m) in best.iter_mut().zip(moved(a, b)) {
                        *best = best.max(m);
                    }
                }
            }
            // sound (≥ every change on the grid) and within 10 % of the largest
            for (g, b) in got.iter().zip(best) {
                assert!(*g >= b && *g <= b * 1.1, "{got:?} vs {best:?}");
            }
        }
    }

    #[test]
    fn xty_release_is_shaped_by_the_released_information_and_charged_for_it() {
        // two covariates, one rare: the shape is H̄^{−½} of the released XᵀX, the charge is
        // 2 max‖Ax‖ max|y| with that shape, and A⁻¹ of the release is Xᵀy plus noise of sd
        // `t_u` shaped by A⁻¹ (checked through a release with negligible noise)
        let n = 400;
        let x: Vec<f64> = (0..n)
            .flat_map(|i| [1.0, f64::from(u8::from(i % 20 == 0)), (i % 7) as f64 / 6.0])
            .collect();
        let y: Vec<f64> = (0..n).map(|i| ((i % 5) as f64 - 2.0) / 2.0).collect();
        let data = GlmData::new(
            GlmKind::Linear,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0)],
            (-1.0, 1.0),
            10.0,
            vec![
                "intercept".into(),
                "a".into(),
                "b".into(),
                "log_sigma".into(),
            ],
        )
        .unwrap();
        let mut rng = crate::rng::chain_rng(3, 0);
        let r = release_sufficient(&data, [1e-9; 4], &mut rng).unwrap();
        let shape = DMatrix::from_row_slice(3, 3, &r.xty_shape);
        let h = unsvec(&r.xtx.values, 3);
        // the two XᵀX releases' estimate is H up to their tiny noise
        let expected = floored_inv_sqrt(&h, r.xtx.noise_sd);
        assert!((&shape - &expected).norm() <= 1e-6 * expected.norm());
        // A H A = I: the release's noise in u-space has the shape of H
        let aha = &shape * &h * &shape;
        assert!((aha - DMatrix::identity(3, 3)).norm() < 1e-6);
        let charged = 2.0 * data.max_shaped_norm(&shape);
        assert!(r.xty.sensitivity >= charged && r.xty.sensitivity <= charged * (1.0 + 1e-9));
        // the unshaped estimate is Xᵀy (internal coordinates) up to the tiny noise
        let mut u = DVector::zeros(3);
        for (row, &yi) in data.x.chunks_exact(3).zip(&data.y) {
            u += DVector::from_row_slice(row) * yi;
        }
        let posterior = LinearPosterior::new(&r, &data).unwrap();
        assert!((&posterior.u_obs - &u).norm() < 1e-6 * u.norm().max(1.0));
    }

    /// The planned split grows with the leverage and `yᵀy` (the whitened release's noise
    /// moves `β` in proportion to both), stays in its range, and is finite on a `yᵀy`
    /// released below 0.
    #[test]
    fn whitened_share_follows_its_first_order_optimum() {
        let at = |max_leverage: f64, yty: f64| {
            whitened_share(&SplitInputs {
                max_leverage,
                yty,
                y_max: 1.0,
            })
        };
        // √(h v)/(2Y) = 1: an even split
        assert!((at(0.01, 400.0) - 0.5).abs() < 1e-12);
        assert!(at(0.001, 400.0) < at(0.01, 400.0));
        assert!(at(0.01, 100.0) < at(0.01, 400.0));
        let (lo, hi) = WHITENED_SHARE_RANGE;
        assert_eq!(at(1.0, 1e9), hi);
        assert_eq!(at(0.01, -5.0), lo);
        assert_eq!(at(f64::NAN, 1.0), lo);
    }

    /// `fit`'s releases spend exactly the budget: the four Gaussian `μ = 1/(2z²)` sum to the
    /// total whatever the planned split, and each release's noise is its sensitivity times its
    /// multiplier.
    #[test]
    fn planned_releases_spend_the_budget() {
        let mut rng = crate::rng::chain_rng(5, 0);
        let n = 300;
        let mut x = Vec::with_capacity(3 * n);
        let mut y = Vec::with_capacity(n);
        for i in 0..n {
            let a = f64::from(u8::from(i % 10 == 0));
            let b = rng.random::<f64>();
            x.extend([1.0, a, b]);
            y.push((0.5 + 0.3 * a - 0.2 * b + 0.1 * normal(&mut rng)).clamp(-2.0, 2.0));
        }
        let names = ["intercept", "a", "b", "log_sigma"]
            .map(String::from)
            .to_vec();
        let data = GlmData::new(
            GlmKind::Linear,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0)],
            (-2.0, 2.0),
            10.0,
            names,
        )
        .unwrap()
        .binary(&["a"])
        .unwrap();
        for mu in [0.05, 0.5, 8.0] {
            let r = release_for_budget(&data, mu, &mut rng).unwrap();
            let z: Vec<f64> = r.noise_multipliers.iter().map(|z| z.unwrap()).collect();
            let spent: f64 = z.iter().map(|z| 1.0 / (2.0 * z * z)).sum();
            assert!((spent - mu).abs() <= 1e-12 * mu, "{spent} vs {mu}");
            let whitened = r.xtx_whitened.as_ref().unwrap();
            for (release, z) in [
                (&r.xtx, z[0]),
                (whitened, z[1]),
                (&r.xty, z[2]),
                (&r.yty, z[3]),
            ] {
                assert!(
                    (release.noise_sd - release.sensitivity * z).abs() <= 1e-12 * release.noise_sd
                );
            }
        }
    }
}
