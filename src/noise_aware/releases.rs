//! The private part of a noise-aware fit: a DP Newton path of shaped Gaussian releases.
//!
//! Round `k` at the public point `θ_k` (the origin, or the previous round's Newton step)
//! releases two statistics, each with Gaussian noise of standard deviation `Δ·z` (`Δ` the
//! substitution sensitivity over every row the declared bounds allow, `z` the round's noise
//! multiplier from the budget schedule):
//!
//! 1. the **information** sum `B (Σ_j I_j) Bᵀ` in `svec` form (off-diagonals times `√2`, so the
//!    Euclidean norm is the Frobenius norm), with `B = (Î_{k−1} + P)^{−½}` the inverse square
//!    root of the previous round's released information plus the prior precision (round 0:
//!    `B = I`): whitening makes the noise relative to each direction's own curvature;
//! 2. the **score** sum `A Σ_j g_j`, with `A` chosen from the released information (a matrix
//!    mechanism: the noise `A⁻¹ξ` in score space is shaped so that the posterior's variance
//!    inflation, averaged over the parameters, is small for the box's worst-case rows).
//!
//! `A` and `B` are functions of earlier releases and public bounds (post-processing), and the
//! sensitivities are bounds over every row the declared box allows (`sensitivity.rs` with the
//! allowed polytope's vertices and edges, else the separate worst cases of `data.rs`), so no
//! row is clipped except Poisson rows past the declared cap. The next point is the Newton step
//! `θ_{k+1} = θ_k + (Î_k + P)⁻¹ (ĝ_k + ∇ ln p(θ_k))` with eigenvalues floored at the noise's
//! scale and, for Poisson, the change of `η` over the box capped at 2 per round; a linear
//! model's `ln σ` moves by its exact profile update from the released score instead.

use nalgebra::{DMatrix, DVector};
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::data::GlmData;
use super::linalg::{SymFn, floor_eigenvalues, svec, sym_fn, unsvec};
use super::link::GlmKind;
use super::sensitivity::{information_bound, score_sensitivity, separate_bounds};
use crate::error::{Error, Result};
use crate::rng::ChainRng;

/// One round's two releases and what they were made with (all public after the release).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The public point the statistics were computed at.
    pub theta: Vec<f64>,
    /// Shape of the information release (`d × d`, row-major).
    pub info_shape: Vec<f64>,
    /// Released shaped information, `svec` form (length `d(d+1)/2`).
    pub info_release: Vec<f64>,
    /// Standard deviation of each entry's noise (`Δ_I · z_I`).
    pub info_noise_sd: f64,
    /// Substitution sensitivity of the information release.
    pub info_sensitivity: f64,
    /// Noise multiplier of the information release.
    pub info_noise_multiplier: f64,
    /// Shape of the score release (`d × d`, row-major).
    pub score_shape: Vec<f64>,
    /// Released shaped score sum.
    pub score_release: Vec<f64>,
    /// Standard deviation of each entry's noise (`Δ_g · z_g`).
    pub score_noise_sd: f64,
    /// Substitution sensitivity of the score release.
    pub score_sensitivity: f64,
    /// Noise multiplier of the score release.
    pub score_noise_multiplier: f64,
}

impl Round {
    /// The round at the public point `theta` of the information release `info` (shape `b`,
    /// noise multiplier `z_i`) and the score release `score` (shape `a`, `z_g`).
    ///
    /// # Errors
    /// A released value that is not finite (the sums left the finite range).
    pub(crate) fn new(
        theta: &[f64],
        b: &DMatrix<f64>,
        info: Release,
        z_i: f64,
        a: &DMatrix<f64>,
        score: Release,
        z_g: f64,
    ) -> Result<Self> {
        if score
            .values
            .iter()
            .chain(&info.values)
            .any(|v| !v.is_finite())
        {
            return Err(Error::Model(
                "the score or information left the finite range on the Newton path; narrow the \
                 declared bounds"
                    .into(),
            ));
        }
        Ok(Round {
            theta: theta.to_vec(),
            info_shape: row_major(b),
            info_release: info.values,
            info_noise_sd: info.noise_sd,
            info_sensitivity: info.sensitivity,
            info_noise_multiplier: z_i,
            score_shape: row_major(a),
            score_release: score.values,
            score_noise_sd: score.noise_sd,
            score_sensitivity: score.sensitivity,
            score_noise_multiplier: z_g,
        })
    }
}

/// Shares of the run's Gaussian `μ` per round for logistic regression: `(information,
/// score)`. Fixed public rule: cheap early rounds to reach the quadratic region, most of the
/// budget on the last rounds (pooled: [`pooled_round_count`](super::pooled_round_count)), the
/// score's largest share last.
pub const SCHEDULE: [(f64, f64); 4] = [(0.03, 0.03), (0.05, 0.07), (0.15, 0.12), (0.20, 0.35)];

/// Poisson regression's schedule: six rounds, the same shape with two more cheap rounds in
/// front. Newton's method on a log link from the origin moves `η` by at most 2 per round (the
/// trust region), so four rounds left the pooled points tens of posterior sds from the mode at
/// n = 100 000 and the intervals under-covered (74-86 %); with six, the simulated 90 %
/// intervals cover 86.6-92.4 % there (docs/NOISE-AWARE.md, "Calibration").
pub const POISSON_SCHEDULE: [(f64, f64); 6] = [
    (0.02, 0.02),
    (0.02, 0.02),
    (0.03, 0.03),
    (0.05, 0.06),
    (0.15, 0.12),
    (0.18, 0.30),
];

/// The default schedule of a model's Newton path ([`SCHEDULE`] or [`POISSON_SCHEDULE`]; a
/// linear model releases its sufficient statistics instead and has none).
pub fn default_schedule(kind: GlmKind) -> &'static [(f64, f64)] {
    match kind {
        GlmKind::Poisson => &POISSON_SCHEDULE,
        GlmKind::Logistic | GlmKind::Linear => &SCHEDULE,
    }
}

/// How a Newton path spends its budget (`μ` shares `(information, score)` of the whole).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathPlan {
    /// These shares, one pair per round.
    Fixed(Vec<(f64, f64)>),
    /// Cheap exploration rounds until the path has reached the mode's quadratic region, then
    /// the rest of the budget on the final rounds ([`AdaptivePlan`]).
    Adaptive(AdaptivePlan),
}

/// A path that explores until it has arrived (see [`PathPlan::Adaptive`]). After each
/// exploration round the next Newton step's length beyond its own DP noise is computed from
/// the releases (`√max(0, ‖s‖²_C − tr(C⁻¹Σ))` in the metric of the released curvature `C`,
/// `Σ` the score release's noise): at most [`stop`](Self::stop) whitened units, or after
/// [`max_explore`](Self::max_explore) rounds, the final rounds take the budget left.
///
/// Which rounds run, and so the shares the final ones get, depend on the released values
/// only: the composition is fully adaptive, and Gaussian differential privacy composes so
/// (Smith & Thakurta, "Fully adaptive composition for Gaussian differential privacy", 2022): a
/// run whose shares add up to at most 1 on every path is within the budget, and the ledger
/// lists the releases that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaptivePlan {
    /// The shares of the first rounds, which always run.
    pub lead: Vec<(f64, f64)>,
    /// The shares of each further exploration round.
    pub explore: (f64, f64),
    /// Most exploration rounds after the lead.
    pub max_explore: usize,
    /// The final rounds' shares of the budget left, adding up to 1.
    pub finals: Vec<(f64, f64)>,
    /// Exploration stops once the next step is at most this many whitened units beyond its
    /// noise (one exact Newton step from 3 units lands about 0.05 units from the mode).
    pub stop: f64,
}

impl PathPlan {
    /// The default plan of a model: adaptive, exploring at 0.025 + 0.025 of the budget per
    /// round (Poisson: 0.02 + 0.02; at most 6, Poisson 8: its trust region moves `η` by at
    /// most 2 a round), the rest on two final rounds in the proportions of the fixed
    /// schedules' last two ([`SCHEDULE`], [`POISSON_SCHEDULE`]).
    pub fn default_for(kind: GlmKind) -> PathPlan {
        let fixed = default_schedule(kind);
        let (lead, finals) = fixed.split_at(fixed.len() - 2);
        let total: f64 = finals.iter().map(|(a, b)| a + b).sum();
        PathPlan::Adaptive(AdaptivePlan {
            lead: lead.to_vec(),
            explore: fixed[0],
            max_explore: 4,
            finals: finals.iter().map(|(a, b)| (a / total, b / total)).collect(),
            stop: 12.0,
        })
    }

    /// The most rounds the plan runs.
    fn most(&self) -> usize {
        match self {
            PathPlan::Fixed(s) => s.len(),
            PathPlan::Adaptive(a) => a.lead.len() + a.max_explore + a.finals.len(),
        }
    }

    /// Checks the shares: positive, adding up to at most 1 on every path (an adaptive plan's
    /// exploration at most, with a positive rest, and its finals' proportions to 1).
    ///
    /// # Errors
    /// A plan that breaks that, naming `schedule`.
    pub fn validate(&self) -> Result<()> {
        let bad = |v: f64, why: &str| Err(Error::invalid("schedule", v, why.to_string()));
        let positive = |s: &[(f64, f64)]| s.iter().all(|&(a, b)| a > 0.0 && b > 0.0);
        match self {
            PathPlan::Fixed(s) => {
                let total: f64 = s.iter().map(|(a, b)| a + b).sum();
                if s.is_empty() {
                    return bad(
                        0.0,
                        "needs at least one round (one release at the public start: PASS-GLM's \
                         quadratic statistics; more rounds to reach the mode)",
                    );
                }
                if total.is_nan() || total > 1.0 + 1e-12 || !positive(s) {
                    return bad(
                        total,
                        "every share must be positive and all of them add up to at most 1",
                    );
                }
            }
            PathPlan::Adaptive(a) => {
                let explore = (a.explore.0 + a.explore.1) * a.max_explore as f64
                    + a.lead.iter().map(|(x, y)| x + y).sum::<f64>();
                let finals: f64 = a.finals.iter().map(|(x, y)| x + y).sum();
                if !(positive(&[a.explore]) && positive(&a.lead) && explore < 1.0) {
                    return bad(
                        explore,
                        "an adaptive plan's exploration shares must be positive and, over its \
                         most rounds, leave part of the budget for the finals",
                    );
                }
                if a.finals.is_empty() || !positive(&a.finals) || (finals - 1.0).abs() > 1e-9 {
                    return bad(
                        finals,
                        "the final rounds' proportions must be positive and add up to 1",
                    );
                }
                if a.stop.is_nan() || a.stop < 0.0 {
                    return bad(a.stop, "the stopping length must be 0 or more");
                }
            }
        }
        Ok(())
    }
}

/// The path's releases and where it ended.
pub(crate) struct Path {
    pub rounds: Vec<Round>,
    /// The point after the last Newton step (post-processing).
    pub final_theta: Vec<f64>,
    /// The last round's curvature (released information made positive definite, plus the
    /// prior precision).
    pub final_curv: DMatrix<f64>,
}

/// The releases of the path: `plan` gives each round's `μ` shares (summing to at most 1 on
/// every path) of `mu_total` (Gaussian `μ = Σ 1/(2z²)`).
pub(crate) fn newton_path(
    data: &GlmData,
    mu_total: f64,
    plan: &PathPlan,
    rng: &mut ChainRng,
) -> Result<Path> {
    let d = data.dim();
    let prior_prec = data.prior.prec.clone();
    let mut theta = data.public_start();
    let mut b = DMatrix::<f64>::identity(d, d);
    let mut rounds = Vec::with_capacity(plan.most());
    let mut final_curv = prior_prec.clone();
    // the rounds still to run: a fixed schedule's, or exploration until the path arrives
    let mut queue: Vec<(f64, f64)> = match plan {
        PathPlan::Fixed(s) => s.iter().rev().copied().collect(),
        PathPlan::Adaptive(a) => vec![a.lead.first().copied().unwrap_or(a.explore)],
    };
    let mut spent = 0.0;
    while let Some((share_i, share_g)) = queue.pop() {
        spent += share_i + share_g;
        let z_i = noise_multiplier(share_i * mu_total)?;
        let z_g = noise_multiplier(share_g * mu_total)?;
        let info_rel = release_information(data, &theta, &b, z_i, rng)?;
        let b_inv = b.clone().try_inverse().ok_or_else(singular)?;
        let released = unsvec(&info_rel.values, d);
        let info_hat = &b_inv * released * b_inv.transpose();
        let floor = info_rel.noise_sd * (d as f64).sqrt();
        // the curvature the next shapes and the step use: released information, made
        // positive definite at the noise's scale (in the whitened frame)
        let curv = project_pd(&info_hat, &b, floor) + &prior_prec;
        // score release, shaped by A
        let a = score_shape(data, &theta, &curv)?;
        let score_rel = release_score(data, &theta, &a, z_g, rng)?;
        let round = Round::new(&theta, &b, info_rel, z_i, &a, score_rel, z_g)?;
        let rel_g = round.score_release.clone();
        let score_sd = round.score_noise_sd;
        rounds.push(round);
        // post-processing: the Newton step and the next round's shape
        let a_inv = a.clone().try_inverse().ok_or_else(singular)?;
        let score = &a_inv * DVector::from_vec(rel_g);
        // the path's steps are damped by the prior's scale Gaussian (a public rule: the path
        // only has to reach the likelihood's quadratic region)
        let prior_grad = data.prior.gaussian_grad(&theta);
        let score_s = score[d - 1];
        let chol = curv.clone().cholesky().ok_or_else(singular)?;
        let raw = chol.solve(&(score + prior_grad));
        let mut step = trust_region(data, raw.clone());
        if data.kind == GlmKind::Linear {
            // ln σ by its exact profile update: the s-score is −n + RSS·e^{−2s}, so
            // RSS/n = (1 + score_s/n)·e^{2s} and the best s for the current β is
            // s + ½ ln(1 + score_s/n) (post-processing of the release; n is public). Newton's
            // step in s overshoots by far from a poor start.
            let ratio = (1.0 + score_s / data.n_rows() as f64).max(0.01);
            step[d - 1] = 0.5 * ratio.ln();
        }
        if let PathPlan::Adaptive(plan) = plan
            && queue.is_empty()
            && spent < 1.0 - 1e-12
        {
            // an exploration round: explore on, or the rest of the budget on the finals
            let (beyond, noise) = step_beyond_noise(&raw, &curv, &chol, &a, score_sd);
            let explored = rounds.len();
            // arrived, or so noisy that another cheap round would not tell (its step at most
            // twice its noise: beyond ≤ √3 × noise)
            let arrived = (beyond <= plan.stop || beyond <= 3f64.sqrt() * noise) && raw == step;
            if explored < plan.lead.len() {
                queue.push(plan.lead[explored]);
            } else if arrived || explored >= plan.lead.len() + plan.max_explore {
                let left = (1.0 - spent).max(0.0);
                queue = plan
                    .finals
                    .iter()
                    .rev()
                    .map(|(i, g)| (i * left, g * left))
                    .collect();
            } else {
                queue.push(plan.explore);
            }
        }
        for (t, s) in theta.iter_mut().zip(step.iter()) {
            *t += s;
        }
        if theta.iter().any(|t| !t.is_finite()) {
            return Err(Error::Model(
                "the DP Newton path left the finite range; rescale the covariates".into(),
            ));
        }
        b = sym_fn(&curv, SymFn::InvSqrt);
        final_curv = curv;
    }
    Ok(Path {
        rounds,
        final_theta: theta,
        final_curv,
    })
}

/// How many times its own score noise a pooled round's linearisation error may be
/// ([`pooled_rounds`]): a round whose Newton linearisation, carried to the final point, is off
/// by more than three times the noise it brings is still on its way. It replaced a fixed
/// whitened radius (18 units) that could not tell a far round from a noisy one: on the
/// simulated rare-outcome design (n = 10 000, ε = 8) the radius pooled rounds whose
/// linearisation was off (90 % coverage 0.64-0.81; with this rule 0.80-0.89), and on randhie
/// at ε = 0.5 it dropped rounds that were only noisy (sd ratio 12.0; now 3.75).
pub const POOL_LINEARISATION: f64 = 3.0;

/// The rounds of `path` that enter the likelihood, `k` the count a fixed schedule pools
/// ([`pooled_round_count`](super::pooled_round_count)): a fixed schedule's last `k`; for an
/// adaptive plan, the rounds after the lead's first `lead − (k − finals)`: the last always,
/// then backwards while each one's linearisation error at the final point is within
/// [`POOL_LINEARISATION`] times its own score noise.
///
/// The linearisation error of round `k` at the final point `θ_f` is bounded through
/// self-concordance: a logistic or Poisson row's weight `w(η)` has `|w'| ≤ w`, so between
/// `θ_k` and `θ_f` every row's curvature changes by at most the factor `e^{Δη}`, `Δη` the
/// largest `|vᵀ(θ_k − θ_f)|` over the declared box, and the score predicted from round `k` is
/// off by about `½·Δη·‖θ_k − θ_f‖_C` in whitened units (`C` the final released curvature).
/// That is compared with the round's own score noise in the same units, `√tr(C⁻¹Σ_k)`:
/// a public rule of released values and the declared bounds.
pub(crate) fn pooled_rounds(data: &GlmData, path: &Path, plan: &PathPlan, k: usize) -> Vec<usize> {
    let rounds = path.rounds.len();
    let first = match plan {
        PathPlan::Fixed(_) => rounds.saturating_sub(k.max(1)),
        PathPlan::Adaptive(a) => a
            .lead
            .len()
            .saturating_sub(k.saturating_sub(a.finals.len())),
    };
    let first = first.min(rounds.saturating_sub(1));
    if let PathPlan::Fixed(_) = plan {
        return (first..rounds).collect();
    }
    let d = path.final_theta.len();
    let curv = &path.final_curv;
    let chol = curv.clone().cholesky();
    let poolable = |r: &Round| {
        let Some(chol) = &chol else {
            return false;
        };
        let v =
            DVector::from_iterator(d, r.theta.iter().zip(&path.final_theta).map(|(a, b)| a - b));
        let distance = (v.transpose() * curv * &v)[(0, 0)].sqrt();
        let a = DMatrix::from_row_slice(d, d, &r.score_shape);
        let (_, noise) = step_beyond_noise(&v, curv, chol, &a, r.score_noise_sd);
        let (lo, hi) = data.eta_range(v.as_slice());
        0.5 * lo.abs().max(hi.abs()) * distance <= POOL_LINEARISATION * noise
    };
    let mut kept: Vec<usize> = (first..rounds)
        .rev()
        .take_while(|&k| k + 1 == rounds || poolable(&path.rounds[k]))
        .collect();
    kept.reverse();
    kept
}

/// A Newton step's length beyond its own DP noise, in the metric of the released curvature
/// `C`: `√max(0, sᵀCs − tr(C⁻¹Σ))`, `Σ = sd²(AᵀA)⁻¹` the score release's noise in score space
/// (the step's noise is `C⁻¹ξ`, whose expected squared `C`-length is `tr(C⁻¹Σ)`); and that
/// noise's own length `√tr(C⁻¹Σ)`.
fn step_beyond_noise(
    step: &DVector<f64>,
    curv: &DMatrix<f64>,
    chol: &nalgebra::Cholesky<f64, nalgebra::Dyn>,
    a: &DMatrix<f64>,
    score_sd: f64,
) -> (f64, f64) {
    let length2 = (step.transpose() * curv * step)[(0, 0)];
    let Some(ata_inv) = (a.transpose() * a).try_inverse() else {
        return (f64::INFINITY, 0.0);
    };
    let noise2 = (chol.solve(&ata_inv)).trace() * score_sd * score_sd;
    let beyond = (length2 - noise2).max(0.0).sqrt();
    if beyond.is_finite() && noise2.is_finite() {
        (beyond, noise2.sqrt())
    } else {
        (f64::INFINITY, 0.0)
    }
}

/// One Gaussian release: the noisy values, the noise's standard deviation and the
/// substitution sensitivity it is calibrated to (`noise_sd = sensitivity × noise multiplier`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Release {
    /// The released values.
    pub values: Vec<f64>,
    /// Standard deviation of each value's noise.
    pub noise_sd: f64,
    /// Substitution sensitivity (L2) over every row the declared bounds allow.
    pub sensitivity: f64,
}

/// Releases `svec(B (Σ_j I_j(θ)) Bᵀ)` with Gaussian noise of standard deviation `Δ·z`, `Δ` the
/// substitution sensitivity over the declared bounds (`√2·max‖B I_j Bᵀ‖_F` for the rank-one
/// information of logistic and Poisson rows, twice it for linear rows). `theta` and `b` must
/// be public (data-independent or earlier releases).
///
/// # Errors
/// A noise multiplier that is not positive and finite.
pub fn release_information(
    data: &GlmData,
    theta: &[f64],
    b: &DMatrix<f64>,
    z: f64,
    rng: &mut ChainRng,
) -> Result<Release> {
    let z = crate::error::check::positive("noise multiplier", z)?;
    let (d, _, info) = exact_sums(data, theta);
    let (_, bound, factor) = separate_bounds(data, theta, &DMatrix::identity(d, d), b);
    let bound = information_bound(data, theta, b).map_or(bound, |e| e.min(bound));
    noisy(
        "noise-aware information release",
        svec(&(b * &info * b.transpose())),
        factor * bound,
        z,
        rng,
    )
}

/// The dimension and the exact score and information sums at `theta` (one pass).
fn exact_sums(data: &GlmData, theta: &[f64]) -> (usize, Vec<f64>, DMatrix<f64>) {
    let d = data.dim();
    let mut grad = vec![0.0; d];
    let mut info = DMatrix::<f64>::zeros(d, d);
    data.sums(theta, &mut grad, &mut info);
    (d, grad, info)
}

/// `values` plus Gaussian noise of standard deviation `sensitivity × z` each.
///
/// # Errors
/// A sensitivity that is not a positive normal number ([`checked_sensitivity`]).
pub(crate) fn noisy(
    what: &'static str,
    mut values: Vec<f64>,
    sensitivity: f64,
    z: f64,
    rng: &mut ChainRng,
) -> Result<Release> {
    let sensitivity = checked_sensitivity(what, sensitivity)?;
    let noise_sd = sensitivity * z;
    for v in values.iter_mut() {
        let e: f64 = StandardNormal.sample(rng);
        *v += noise_sd * e;
    }
    Ok(Release {
        values,
        noise_sd,
        sensitivity,
    })
}

/// `sensitivity` if it is a positive normal number. A bound that is 0, subnormal, infinite or
/// NaN would release a sum with no noise (or none that is known): such a release is refused,
/// whatever the reason (a weight that underflows far in a tail, a shape that overflows).
///
/// # Errors
/// [`Error::Numerical`] naming the release.
pub(crate) fn checked_sensitivity(what: &'static str, sensitivity: f64) -> Result<f64> {
    if sensitivity.is_normal() && sensitivity > 0.0 {
        return Ok(sensitivity);
    }
    Err(Error::Numerical {
        what,
        reason: format!(
            "its sensitivity bound is {sensitivity}, not a positive normal number, so its noise \
             would not be calibrated: nothing was released. The public point or shape is \
             extreme for the declared bounds; narrow the bounds or raise --epsilon"
        ),
    })
}

/// Releases `A Σ_j g_j(θ)` with Gaussian noise of standard deviation `Δ·z`, `Δ = 2·max‖A g_j‖`
/// over every row the declared bounds allow (substitution). `theta` and `a` must be public.
///
/// # Errors
/// A noise multiplier that is not positive and finite.
pub fn release_score(
    data: &GlmData,
    theta: &[f64],
    a: &DMatrix<f64>,
    z: f64,
    rng: &mut ChainRng,
) -> Result<Release> {
    let z = crate::error::check::positive("noise multiplier", z)?;
    let (d, grad, _) = exact_sums(data, theta);
    let (bound, _, _) = separate_bounds(data, theta, a, &DMatrix::identity(d, d));
    let sensitivity = score_sensitivity(data, theta, a).map_or(2.0 * bound, |e| e.min(2.0 * bound));
    let values = (a * DVector::from_column_slice(&grad)).as_slice().to_vec();
    noisy("noise-aware score release", values, sensitivity, z, rng)
}

/// The noise multiplier of a Gaussian release costing `mu` (`μ = 1/(2z²)`).
pub(crate) fn noise_multiplier(mu: f64) -> Result<f64> {
    if !(mu.is_finite() && mu > 0.0) {
        return Err(Error::invalid(
            "schedule",
            mu,
            "every release needs a positive share of the budget",
        ));
    }
    Ok((1.0 / (2.0 * mu)).sqrt())
}

fn singular() -> Error {
    Error::Numerical {
        what: "noise-aware releases",
        reason: "a shaping matrix is singular; check that no covariate is constant apart \
                 from the intercept and that the declared bounds have positive width"
            .into(),
    }
}

/// `m` row-major.
pub(crate) fn row_major(m: &DMatrix<f64>) -> Vec<f64> {
    m.transpose().as_slice().to_vec()
}

/// `info` made positive definite: in the frame whitened by `b`, eigenvalues below `floor`
/// are raised to it.
pub(crate) fn project_pd(info: &DMatrix<f64>, b: &DMatrix<f64>, floor: f64) -> DMatrix<f64> {
    let w = floor_eigenvalues(&(b * info * b.transpose()), floor);
    let b_inv = b
        .clone()
        .try_inverse()
        .unwrap_or_else(|| DMatrix::identity(b.nrows(), b.nrows()));
    let out = &b_inv * w * b_inv.transpose();
    (&out + out.transpose()) * 0.5
}

/// Largest change of `η` over the declared box in one Newton step, per model (a public
/// rule): Poisson 2 (the exponential's curvature changes fast), logistic 4 (a noisy
/// information far from the mode must not throw the path into the tails, where every row's
/// weight is tiny and the releases say nothing). A linear model steps freely.
pub(crate) fn max_eta_step(kind: GlmKind) -> Option<f64> {
    match kind {
        GlmKind::Poisson => Some(2.0),
        GlmKind::Logistic => Some(4.0),
        GlmKind::Linear => None,
    }
}

/// Caps a step so that `η` changes by at most [`max_eta_step`] on every row the box allows.
fn trust_region(data: &GlmData, step: DVector<f64>) -> DVector<f64> {
    let Some(cap) = max_eta_step(data.kind) else {
        return step;
    };
    let m = DMatrix::from_row_slice(1, data.dim(), step.as_slice());
    let change = data.max_shaped_norm(&m);
    if change > cap {
        step * (cap / change)
    } else {
        step
    }
}

/// The score release's shape `A`, chosen among candidates (then, for logistic regression,
/// refined by [`refine_shape`]) by the predicted mean variance
/// inflation `mean_i [C⁻¹ Σ_A C⁻¹]_ii / [C⁻¹]_ii` (`C` the curvature, `Σ_A = Δ(A)² (AᵀA)⁻¹` the
/// noise in score space per unit noise multiplier) at the box's worst case: whitening
/// `C^{−½}`, the identity, `C^{½}`, and the closed-form optimum of the average-case problem
/// (`AᵀA ∝ S^{−½}(S^{½} K S^{½})^{½} S^{−½}`, `K = C⁻¹ D C⁻¹`, `D = diag(C⁻¹)⁻¹`, `S` the
/// vertices' second moment), each also with its columns balanced.
fn score_shape(data: &GlmData, theta: &[f64], curv: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let d = data.dim();
    let cov = curv.clone().cholesky().ok_or_else(singular)?.inverse();
    let dinv = DMatrix::from_diagonal(&cov.diagonal().map(|v| 1.0 / v.max(f64::MIN_POSITIVE)));
    let k = &cov * &dinv * &cov;
    let objective = |a: &DMatrix<f64>| -> f64 {
        let Some(a_inv) = a.clone().try_inverse() else {
            return f64::INFINITY;
        };
        let (bg, _, _) = separate_bounds(data, theta, a, &DMatrix::identity(d, d));
        let sigma = &a_inv * a_inv.transpose() * (bg * bg);
        let infl = &cov * sigma * &cov;
        (0..d).map(|i| infl[(i, i)] / cov[(i, i)]).sum::<f64>() / d as f64
    };
    let mut candidates = vec![
        sym_fn(curv, SymFn::InvSqrt),
        DMatrix::identity(d, d),
        sym_fn(curv, SymFn::Sqrt),
    ];
    if let Some(s) = second_moment(data) {
        let s_half = sym_fn(&s, SymFn::Sqrt);
        let s_inv_half = sym_fn(&s, SymFn::InvSqrt);
        let inner = sym_fn(&(&s_half * &k * &s_half), SymFn::Sqrt);
        let q = &s_inv_half * inner * &s_inv_half;
        candidates.push(sym_fn(&q, SymFn::Sqrt));
    }
    let mut best = (f64::INFINITY, DMatrix::identity(d, d));
    for c in candidates {
        for a in [c.clone(), balance(&c, data)] {
            let v = objective(&a);
            if v < best.0 {
                best = (v, a);
            }
        }
    }
    if data.kind != GlmKind::Logistic {
        // measured on randhie's Poisson model at ε = 8, the refined shape slows the
        // information sampler's mixing 2-4× (docs/NOISE-AWARE.md): kept to the model it was
        // measured to help
        return Ok(best.1);
    }
    let w = &k / d as f64;
    Ok(refine_shape(data, best.1, best.0, &w, &objective))
}

/// Steps of [`refine_shape`].
const SHAPE_STEPS: usize = 120;

/// Local descent on the shape `a` from the best candidate: the objective is
/// `max_v ‖Av‖² · tr(W (AᵀA)⁻¹)` (up to constants: the worst-case sensitivity squared times the
/// mean variance inflation), invariant to `A ↦ QA`, so `A` is kept upper triangular. The
/// direction is the gradient of its logarithm with the maximum over the box's vertices
/// smoothed (a softmax at 1 % of the maximum), `2 A S_w / Δ² − 2 A M W M / g` with
/// `M = (AᵀA)⁻¹`; a step is kept only if the **exact** objective falls (backtracking), so the
/// result is never worse than the candidate. Without enumerable vertices, `a` is returned.
fn refine_shape(
    data: &GlmData,
    a: DMatrix<f64>,
    value: f64,
    w: &DMatrix<f64>,
    objective: &dyn Fn(&DMatrix<f64>) -> f64,
) -> DMatrix<f64> {
    let Some(vertices) = data.vertices() else {
        return a;
    };
    let d = a.nrows();
    let p = data.p;
    if d != p || !value.is_finite() {
        return a;
    }
    // upper triangular with the same AᵀA (QR: A = QR, R upper triangular)
    let mut a = a.qr().r();
    let mut value = objective(&a);
    let mut step = 0.1;
    let count = vertices.len() / p;
    let mut norms = vec![0.0; count];
    for _ in 0..SHAPE_STEPS {
        // smoothed maximum of ‖Av‖² and its weighted second moment S_w
        for (n, v) in norms.iter_mut().zip(vertices.chunks_exact(p)) {
            let av = &a * DVector::from_column_slice(v);
            *n = av.norm_squared();
        }
        let big = norms.iter().copied().fold(0.0, f64::max);
        if big.is_nan() || big <= 0.0 {
            break;
        }
        let temp = 0.01 * big;
        let weights: Vec<f64> = norms.iter().map(|n| ((n - big) / temp).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut s_w = DMatrix::<f64>::zeros(p, p);
        let mut delta2 = 0.0;
        for ((wt, v), n) in weights.iter().zip(vertices.chunks_exact(p)).zip(&norms) {
            let wt = wt / total;
            delta2 += wt * n;
            let v = DVector::from_column_slice(v);
            s_w += &v * v.transpose() * wt;
        }
        let Some(m) = (a.transpose() * &a).try_inverse() else {
            break;
        };
        let mwm = &m * w * &m;
        let g = (w * &m).trace();
        let mut grad = &a * s_w * (2.0 / delta2) - &a * mwm * (2.0 / g);
        for r in 0..d {
            for c in 0..r {
                grad[(r, c)] = 0.0;
            }
        }
        // a relative step: the objective is scale-invariant
        let scale = a.norm() / grad.norm().max(f64::MIN_POSITIVE);
        let mut improved = false;
        for _ in 0..6 {
            let next = &a - &grad * (step * scale);
            let v = objective(&next);
            if v < value {
                a = next;
                value = v;
                step *= 1.5;
                improved = true;
                break;
            }
            step *= 0.3;
        }
        if !improved {
            break;
        }
    }
    a
}

/// `a` with each row rescaled so that the worst-case row norms are balanced across the
/// release's coordinates (a diagonal left factor: `D a`).
fn balance(a: &DMatrix<f64>, data: &GlmData) -> DMatrix<f64> {
    let d = a.nrows();
    let mut out = a.clone();
    for r in 0..d {
        let row = DMatrix::from_row_slice(1, a.ncols(), a.row(r).clone_owned().as_slice());
        let n = data.max_shaped_norm(&pad(&row, data.dim()));
        if n > 0.0 && n.is_finite() {
            out.row_mut(r).scale_mut(1.0 / n);
        }
    }
    out
}

fn pad(row: &DMatrix<f64>, cols: usize) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(1, cols);
    for c in 0..row.ncols().min(cols) {
        m[(0, c)] = row[(0, c)];
    }
    m
}

/// Second moment of the box's worst-case score directions (`E vvᵀ` over the box's vertices, the
/// linear model's `ln σ` coordinate with weight 1), or `None` if there are too many vertices.
fn second_moment(data: &GlmData) -> Option<DMatrix<f64>> {
    let d = data.dim();
    let p = data.p;
    let mut s = DMatrix::<f64>::zeros(d, d);
    let free = (0..p).filter(|&i| data.lo[i] < data.hi[i]).count();
    if free > 12 {
        return None;
    }
    let mut count = 0.0;
    for mask in 0..1usize << free {
        let mut v = vec![0.0; d];
        let mut bit = 0;
        for (vi, (&lo, &hi)) in v.iter_mut().zip(data.lo.iter().zip(&data.hi)) {
            *vi = if lo < hi {
                let up = mask >> bit & 1 == 1;
                bit += 1;
                if up { hi } else { lo }
            } else {
                lo
            };
        }
        if d > p {
            v[p] = 1.0;
        }
        for a in 0..d {
            for b in 0..d {
                s[(a, b)] += v[a] * v[b];
            }
        }
        count += 1.0;
    }
    s /= count;
    s += DMatrix::identity(d, d) * (1e-9 * s.trace() / d as f64);
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A logistic model with an intercept and one covariate `a` on [0, 1]: rows `[1, a]`.
    fn one_covariate(x: Vec<f64>, y: Vec<f64>) -> GlmData {
        GlmData::new(
            GlmKind::Logistic,
            x,
            y,
            vec![(1.0, 1.0), (0.0, 1.0)],
            (0.0, 1.0),
            10.0,
            vec!["intercept".into(), "a".into()],
        )
        .unwrap()
    }

    /// [`one_covariate`] with `n` rows, all responses 0.
    fn tail_data(n: usize) -> GlmData {
        let x = (0..n).flat_map(|j| [1.0, (j % 5) as f64 / 4.0]).collect();
        one_covariate(x, vec![0.0; n])
    }

    /// Far in the logistic tail (every η over the box in [−60, −40], where `1 − σ` cancels
    /// to 0) the information and score releases are charged at least what substituting one
    /// allowed row moves them by, and never 0: a bound evaluated at `|η|` with the cancelling
    /// form was exactly 0 there, releasing the exact sum. Where every weight underflows (η
    /// below −745) the release is refused instead.
    #[test]
    fn releases_far_in_the_tail_are_charged_what_a_row_moves() {
        let data = tail_data(10);
        let mut rng = crate::rng::chain_rng(1, 0);
        let theta = [-40.0, -20.0];
        let id = DMatrix::<f64>::identity(2, 2);
        let info = release_information(&data, &theta, &id, 1.0, &mut rng).unwrap();
        let score = release_score(&data, &theta, &id, 1.0, &mut rng).unwrap();
        let link = data.link().unwrap();
        // every pair of box vertices and responses: what one substitution moves the sums by
        let (mut info_moved, mut score_moved) = (0.0f64, 0.0f64);
        let rows = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)];
        for &(a1, y1) in &rows {
            for &(a2, y2) in &rows {
                let (e1, e2) = (theta[0] + theta[1] * a1, theta[0] + theta[1] * a2);
                let (w1, w2) = (link.weight(e1), link.weight(e2));
                let d = DMatrix::from_row_slice(2, 2, &[1.0, a1, a1, a1 * a1]) * w1
                    - DMatrix::from_row_slice(2, 2, &[1.0, a2, a2, a2 * a2]) * w2;
                info_moved = info_moved.max(d.norm());
                let (r1, r2) = (link.residual(y1, e1), link.residual(y2, e2));
                let g = nalgebra::DVector::from_vec(vec![r1 - r2, r1 * a1 - r2 * a2]);
                score_moved = score_moved.max(g.norm());
            }
        }
        assert!(info_moved > 0.0 && score_moved > 0.0);
        assert!(
            info.sensitivity >= info_moved,
            "{} < {info_moved}",
            info.sensitivity
        );
        assert!(score.sensitivity >= score_moved);
        // nothing representable is left of the weights: refused, not released without noise
        let err = release_information(&data, &[-800.0, 0.0], &id, 1.0, &mut rng).unwrap_err();
        assert!(err.to_string().contains("sensitivity"), "{err}");
    }

    /// `n` rows of a logistic regression with one covariate on [0, 1] and log-odds
    /// `b0 + b1·a`.
    fn logistic_data(n: usize, b0: f64, b1: f64, seed: u64) -> GlmData {
        use rand::RngExt;
        let mut rng = crate::rng::chain_rng(seed, 9);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let a: f64 = rng.random();
            x.extend([1.0, a]);
            y.push(f64::from(
                rng.random::<f64>() < super::super::link::sigmoid(b0 + b1 * a),
            ));
        }
        one_covariate(x, y)
    }

    /// A round of unit score noise and shape at `theta` (internal coordinates), for tests of
    /// which rounds are pooled.
    fn round_at(theta: Vec<f64>) -> Round {
        let d = theta.len();
        let release = |len| Release {
            values: vec![0.0; len],
            noise_sd: 1.0,
            sensitivity: 1.0,
        };
        let eye = DMatrix::identity(d, d);
        Round::new(
            &theta,
            &eye,
            release(d * (d + 1) / 2),
            1.0,
            &eye,
            release(d),
            1.0,
        )
        .unwrap()
    }

    /// An adaptive path pools an earlier round only while its linearisation error at the final
    /// point, `½·Δη·‖θ_k − θ_f‖_C`, is within [`POOL_LINEARISATION`] times its own score noise
    /// `√tr(C⁻¹Σ)`: with `C = 100·I` and unit score noise (`√0.02`), a round 0.2 away along
    /// the covariate (Δη 0.2 over the box `[−1, 1]`, error 0.2) is pooled; one 0.5 away (error
    /// 1.25, though only 5 whitened units away) is not, nor any before it.
    #[test]
    fn adaptive_paths_pool_only_rounds_whose_linearisation_holds() {
        let data = tail_data(10);
        let plan = PathPlan::default_for(GlmKind::Logistic);
        let path = |t: f64| Path {
            rounds: vec![
                round_at(vec![0.0, -3.0]),
                round_at(vec![0.0, t]),
                round_at(vec![0.0, 0.1]),
                round_at(vec![0.0, 0.0]),
            ],
            final_theta: vec![0.0, 0.0],
            final_curv: DMatrix::identity(2, 2) * 100.0,
        };
        let k = super::super::pooled_round_count(GlmKind::Logistic);
        assert_eq!(pooled_rounds(&data, &path(0.2), &plan, k), vec![1, 2, 3]);
        assert_eq!(pooled_rounds(&data, &path(0.5), &plan, k), vec![2, 3]);
    }

    /// The adaptive plan explores while the path is on its way and never spends more than the
    /// budget: near a mode at the origin it runs the fixed schedule's four rounds; with a
    /// distant mode (rare events strongly tied to the covariate) it explores further; on every
    /// path the rounds' shares add up to at most 1.
    #[test]
    fn adaptive_paths_explore_until_they_arrive_within_the_budget() {
        let plan = PathPlan::default_for(GlmKind::Logistic);
        plan.validate().unwrap();
        let mu = crate::accounting::gaussian_budget(8.0, 1e-6).unwrap();
        let near = logistic_data(10_000, 0.1, 0.2, 1);
        let far = logistic_data(10_000, -9.0, 8.0, 2);
        let mut extra = 0;
        for seed in 0..6 {
            for (data, is_far) in [(&near, false), (&far, true)] {
                let path =
                    newton_path(data, mu, &plan, &mut crate::rng::chain_rng(seed, 3)).unwrap();
                let spent: f64 = path
                    .rounds
                    .iter()
                    .map(|r| {
                        0.5 / (r.info_noise_multiplier.powi(2) * mu)
                            + 0.5 / (r.score_noise_multiplier.powi(2) * mu)
                    })
                    .sum();
                assert!(spent <= 1.0 + 1e-9, "{spent}");
                assert!(
                    spent >= 1.0 - 1e-9,
                    "the plan leaves no budget unspent: {spent}"
                );
                if is_far {
                    extra += path.rounds.len() - 4;
                } else {
                    assert_eq!(path.rounds.len(), 4, "seed {seed}");
                }
            }
        }
        assert!(
            extra >= 6,
            "the distant mode took {extra} extra rounds over 6 paths"
        );
        // a plan that could spend more than the budget is refused
        let PathPlan::Adaptive(mut greedy) = plan else {
            unreachable!()
        };
        greedy.max_explore = 40;
        assert!(PathPlan::Adaptive(greedy).validate().is_err());
    }

    /// The logistic Newton path keeps every round's point within the trust region: on tiny
    /// data with every response 0 (the mode far out, the releases mostly noise) the box's `η`
    /// moves by at most 4 per round, so round `k` (from 0) lies within `4k` of the origin.
    #[test]
    fn logistic_path_stays_in_its_trust_region() {
        let data = tail_data(20);
        let mu = crate::accounting::gaussian_budget(1.0, 1e-6).unwrap();
        let cap = 4.0;
        assert_eq!(max_eta_step(GlmKind::Logistic), Some(cap));
        for seed in 0..40 {
            let mut rng = crate::rng::chain_rng(seed, 0);
            let path = newton_path(
                &data,
                mu,
                &PathPlan::default_for(GlmKind::Logistic),
                &mut rng,
            )
            .unwrap();
            for (k, round) in path.rounds.iter().enumerate() {
                let t = &round.theta;
                let far = t[0].abs().max((t[0] + t[1]).abs());
                assert!(
                    far <= cap * k as f64 * (1.0 + 1e-12),
                    "seed {seed} round {k}: {t:?}"
                );
            }
        }
    }

    /// The refined score shape is never worse than the best candidate by the exact objective
    /// (each step is kept only if it lowers it), and on an anisotropic curvature it is
    /// strictly better: the refinement does something, and nothing that hurts.
    #[test]
    fn refined_shape_improves_on_the_candidates() {
        let names: Vec<String> = (0..4).map(|i| format!("b{i}")).collect();
        let data = GlmData::new(
            GlmKind::Logistic,
            vec![1.0, 0.5, 0.2, 0.9],
            vec![1.0],
            vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)],
            (0.0, 1.0),
            10.0,
            names,
        )
        .unwrap();
        let theta = [0.2, -0.3, 0.1, 0.4];
        let curv = DMatrix::from_row_slice(
            4,
            4,
            &[
                900.0, 400.0, 300.0, 50.0, 400.0, 300.0, 120.0, 20.0, 300.0, 120.0, 160.0, 10.0,
                50.0, 20.0, 10.0, 12.0,
            ],
        );
        let cov = curv.clone().cholesky().unwrap().inverse();
        let objective = |a: &DMatrix<f64>| -> f64 {
            let a_inv = a.clone().try_inverse().unwrap();
            let (bg, _, _) = separate_bounds(&data, &theta, a, &DMatrix::identity(4, 4));
            let infl = &cov * (&a_inv * a_inv.transpose() * (bg * bg)) * &cov;
            (0..4).map(|i| infl[(i, i)] / cov[(i, i)]).sum::<f64>() / 4.0
        };
        let chosen = score_shape(&data, &theta, &curv).unwrap();
        let k = {
            let dinv = DMatrix::from_diagonal(&cov.diagonal().map(|v| 1.0 / v));
            &cov * dinv * &cov
        };
        let s = second_moment(&data).unwrap();
        let (s_half, s_inv_half) = (sym_fn(&s, SymFn::Sqrt), sym_fn(&s, SymFn::InvSqrt));
        let q = &s_inv_half * sym_fn(&(&s_half * &k * &s_half), SymFn::Sqrt) * &s_inv_half;
        let candidates = [
            sym_fn(&curv, SymFn::InvSqrt),
            DMatrix::identity(4, 4),
            sym_fn(&curv, SymFn::Sqrt),
            sym_fn(&q, SymFn::Sqrt),
        ];
        let best = candidates
            .iter()
            .flat_map(|c| [objective(c), objective(&balance(c, &data))])
            .fold(f64::INFINITY, f64::min);
        let got = objective(&chosen);
        assert!(got < best * 0.999, "refined {got} vs best candidate {best}");
    }
}
