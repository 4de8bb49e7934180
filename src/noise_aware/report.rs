//! What a noise-aware fit released and how its posterior was sampled, with the warnings a
//! statistician needs to read the answer: whether it converged, whether the Newton path
//! reached the mode, and per parameter how much of the posterior variance the DP noise and
//! the prior account for.

use serde::{Deserialize, Serialize};

use super::coordinates::{Coordinates, PriorReport};
use super::linear::SufficientRelease;
use super::releases::Round;
use crate::samplers::Fit;

/// Share of the information releases' noise distribution outside the positive definite cone
/// ([`NoiseAwareReport::indefinite_share`]) above which the releases do not determine the
/// information's weakest directions: a warning, and the calibration study counts the run
/// among the prior-shaped ones.
pub const INDEFINITE_WARNING: f64 = 0.5;

/// The Newton path's last step against its own DP noise ([`NoiseAwareReport::last_step_noise`],
/// about 1 at the mode) above which the path was still on its way to the mode: the pooled
/// rounds' linearisation is then wrong by far more than the noise, and the answer is refused
/// as not converged. Measured: 1.5-7 on the shipped randhie data at ε = 1 (where the answer is
/// close), 87-122 on a public credit-default table at ε = 8 whose four rounds end far from a
/// distant mode (7 posterior sds off). At the mode it is heavy-tailed (the last point itself
/// carries the earlier, noisier rounds' error): on simulated logistic data with its mode near
/// the origin (n = 2 000, two covariates, seeds 1-100) the largest values were 19.7 (ε = 8),
/// 27.5 (ε = 2, 60 seeds) and 69.5-80.1 (ε = 0.5, 2 of 100 above this limit); the limit was 20
/// before, which refused 1-5 % of such fits that had arrived.
pub const PATH_NOT_CONVERGED: f64 = 40.0;

/// Share of a parameter's posterior variance above which a warning says its interval is
/// mostly DP noise, or mostly the prior ([`NoiseAwareReport::variance_shares`]).
pub const MOSTLY: f64 = 0.75;

/// One parameter's posterior variance, split by where it comes from (from released quantities
/// only): the DP noise's share (the posterior variance beyond the one the released information
/// and the prior alone would give) and the prior's (how far the prior's precision, rather than
/// the data's, sets that variance).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VarianceShare {
    /// The parameter.
    pub parameter: String,
    /// Share of the posterior variance due to the DP noise, in `[0, 1]`.
    pub noise: f64,
    /// Share of the noise-free posterior variance that the prior's precision accounts for:
    /// 0 where the data decide, near 1 where the prior does.
    pub prior: f64,
    /// How far the prior moves the posterior mean, in posterior sds (signed, in the
    /// parameter's direction): `(P − Q)⁻¹Q(m₀ − μ)` with `μ`, `P⁻¹` the draws' mean and
    /// covariance and `m₀`, `Q` the prior's mean and precision, the Gaussian reading of
    /// "posterior = prior × likelihood". Under DP noise the likelihood is weaker than the
    /// data's, so the prior pulls harder than it would without noise (the noise-free
    /// [`prior`](Self::prior) share does not show it). `None` when the prior is not Gaussian
    /// (a library model) or the draws' precision does not exceed the prior's.
    #[serde(default)]
    pub prior_pull: Option<f64>,
}

/// A prior that moves a posterior mean by more than this many posterior sds is warned about
/// (a 90 % interval moved by half an sd covers a point at its former centre ± 1.645 sds about
/// 85 % as often as before).
pub const PULL_WARNING: f64 = 0.5;

/// Pulls beyond this many posterior sds are worded "over 5 sds" in the warning: where the
/// likelihood is nearly flat the likelihood-only mean, and so the pull, is set by the draws'
/// Monte Carlo error (the record keeps the value).
const PULL_SHOWN_UP_TO: f64 = 5.0;

/// What a noise-aware fit released and how its posterior was sampled
/// ([`NoiseAwareFit::report`](crate::samplers::Fit::report)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseAwareReport {
    /// The model: `logistic`, `poisson`, `linear` or `library model`.
    pub model: String,
    /// Total Gaussian `μ` of the budget ([`gaussian_budget`](crate::accounting::gaussian_budget)).
    pub mu_total: f64,
    /// Every round's releases, in the internal coordinates ([`Coordinates`]); empty for a
    /// linear model.
    pub rounds: Vec<Round>,
    /// A linear model's one release of its sufficient statistics (internal coordinates).
    #[serde(default)]
    pub sufficient: Option<SufficientRelease>,
    /// The rounds pooled in the likelihood (0-based).
    pub pooled: Vec<usize>,
    /// The path's final point (post-processing of the releases), in the model's units.
    pub final_point: Vec<f64>,
    /// Length of the last Newton step in the metric of the released curvature.
    pub last_step_whitened: f64,
    /// The last Newton step against the covariance its DP noise alone gives it
    /// (`stepᵀV⁻¹step / d`): about 1 when the path reached the mode; above
    /// [`PATH_NOT_CONVERGED`] the fit is not converged. 0 for a linear model (no path).
    #[serde(default)]
    pub last_step_noise: f64,
    /// Share of accepted information proposals per chain.
    pub acceptance: Vec<f64>,
    /// Draws per chain kept.
    pub draws_per_chain: usize,
    /// Share of information proposals that had to be floored (a linear model's sampler: none
    /// of 200 draws from the releases' Gaussian was positive definite): 0 when the releases
    /// determine a positive definite information; above 0 the posterior is an approximation (a
    /// floored prior on the information's weakest directions), too noisy to trust at this
    /// budget. The GLMs' sampler moves exactly within the positive definite cone and floors
    /// nothing (only, possibly, a chain's start).
    pub floored_share: f64,
    /// GLMs (the Newton path): share of the information releases' noise distribution outside
    /// the positive definite cone (2 000 draws). Near 0 the releases determine the information;
    /// near 1 its weakest directions are decided by its prior (flat on the cone), and the
    /// intervals there are wide (a warning above [`INDEFINITE_WARNING`]). `None` for a linear
    /// model.
    #[serde(default)]
    pub indefinite_share: Option<f64>,
    /// Per parameter, the shares of its posterior variance due to the DP noise and the prior.
    #[serde(default)]
    pub variance_shares: Vec<VarianceShare>,
    /// The prior (`None` for a library model: its own `log_prior`).
    #[serde(default)]
    pub prior: Option<PriorReport>,
    /// The public map between the model's units and the internal coordinates the releases
    /// are made in (`None` for a library model).
    #[serde(default)]
    pub coordinates: Option<Coordinates>,
    /// Largest R-hat over the parameters.
    pub max_rhat: f64,
    /// Smallest bulk ESS over the parameters.
    pub min_ess_bulk: f64,
    /// Whether the answer may be used: the chains converged (R-hat ≤ 1.01, bulk ESS ≥ 400 on
    /// every parameter) within the time and draw limits, and the Newton path reached the
    /// mode ([`PATH_NOT_CONVERGED`]).
    pub converged: bool,
    /// Wall seconds of the posterior sampling (post-processing).
    #[serde(default)]
    pub sampling_seconds: f64,
}

impl NoiseAwareReport {
    /// The warnings a reader of the answer needs, in words (empty when there are none): not
    /// converged (and what to change), a path that did not reach the mode, floored or mostly
    /// indefinite information releases, intervals that are mostly noise or mostly prior.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.last_step_noise > PATH_NOT_CONVERGED {
            out.push(format!(
                "the DP Newton path had not reached the posterior mode (its last step was {:.0} \
                 times what its noise explains, at most {PATH_NOT_CONVERGED} allowed): the answer \
                 would be biased, so it is not given; declare narrower --bounds (a box far wider \
                 than the data slows the path) or raise --epsilon",
                self.last_step_noise
            ));
        }
        if !(crate::diagnostics::converged(self.max_rhat, self.min_ess_bulk)) {
            out.push(format!(
                "the posterior's chains did not converge (max R-hat {:.3}, min bulk ESS {:.0} \
                 after {} draws per chain; needed R-hat ≤ {} and ESS ≥ {}): raise \
                 --max-seconds, or raise --epsilon or narrow --bounds (noisy releases mix \
                 slowly)",
                self.max_rhat,
                self.min_ess_bulk,
                self.draws_per_chain,
                crate::diagnostics::CONVERGED_RHAT,
                crate::diagnostics::CONVERGED_ESS
            ));
        }
        if self.floored_share > 0.0 {
            out.push(format!(
                "{:.0} % of the information proposals were floored: the releases are too noisy \
                 at this budget for a positive definite information, and the posterior is an \
                 approximation not to be trusted; raise --epsilon or declare narrower --bounds",
                100.0 * self.floored_share
            ));
        }
        if let Some(share) = self.indefinite_share.filter(|s| *s > INDEFINITE_WARNING) {
            out.push(format!(
                "{:.0} % of the information releases' noise distribution is not positive \
                 definite: the releases do not determine the information in its weakest \
                 directions, so the intervals there are wide and shaped by the prior rather \
                 than the data; raise --epsilon or declare narrower --bounds",
                100.0 * share
            ));
        }
        let noisy: Vec<&str> = self
            .variance_shares
            .iter()
            .filter(|s| s.noise > MOSTLY)
            .map(|s| s.parameter.as_str())
            .collect();
        if !noisy.is_empty() {
            out.push(format!(
                "the intervals of {} are mostly DP noise (over {:.0} % of their posterior \
                 variance): honest, but wide; a larger --epsilon or narrower --bounds narrow them",
                noisy.join(", "),
                100.0 * MOSTLY
            ));
        }
        let prior: Vec<&str> = self
            .variance_shares
            .iter()
            .filter(|s| s.prior > MOSTLY)
            .map(|s| s.parameter.as_str())
            .collect();
        if !prior.is_empty() {
            out.push(format!(
                "the intervals of {} are mostly the prior's (it sets over {:.0} % of their \
                 noise-free variance): the data say little about them",
                prior.join(", "),
                100.0 * MOSTLY
            ));
        }
        let pulled: Vec<String> = self
            .variance_shares
            .iter()
            .filter_map(|s| {
                let pull = s.prior_pull.filter(|p| p.abs() > PULL_WARNING)?;
                Some(if pull.abs() > PULL_SHOWN_UP_TO {
                    let sign = if pull > 0.0 { '+' } else { '-' };
                    format!("{} ({sign}over {PULL_SHOWN_UP_TO:.0} sds)", s.parameter)
                } else {
                    format!("{} ({pull:+.1} sds)", s.parameter)
                })
            })
            .collect();
        if !pulled.is_empty() {
            out.push(format!(
                "the prior moves the estimates of {} toward its mean by over {PULL_WARNING} \
                 posterior sds: with the DP noise the likelihood is weak there and the reported \
                 `prior` shapes the answer; if that prior is not your belief, declare a wider \
                 one (--prior-sd), or raise --epsilon or narrow --bounds",
                pulled.join(", ")
            ));
        }
        out
    }
}

impl std::fmt::Display for Fit<NoiseAwareReport> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.report;
        writeln!(
            f,
            "noise-aware {} fit: {} rounds released, rounds {:?} pooled; {} chains × {} draws, \
             max R-hat {:.4}, min bulk ESS {:.0}{}",
            r.model,
            r.rounds.len(),
            r.pooled,
            self.run.chains.len(),
            r.draws_per_chain,
            r.max_rhat,
            r.min_ess_bulk,
            if r.converged {
                ""
            } else {
                " — NOT CONVERGED: not a result"
            }
        )?;
        for w in r.warnings() {
            writeln!(f, "warning: {w}")?;
        }
        write!(f, "{}", self.run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pull the warning names: within [`PULL_SHOWN_UP_TO`] with its value, beyond it as "over
    /// 5 sds" (a nearly flat likelihood's pull is Monte Carlo error); below
    /// [`PULL_WARNING`] not at all.
    #[test]
    fn the_prior_pull_warning_words_large_pulls_as_over_five_sds() {
        let share = |parameter: &str, pull: f64| VarianceShare {
            parameter: parameter.into(),
            noise: 0.5,
            prior: 0.1,
            prior_pull: Some(pull),
        };
        let report = NoiseAwareReport {
            model: "logistic".into(),
            mu_total: 1.0,
            rounds: Vec::new(),
            sufficient: None,
            pooled: Vec::new(),
            final_point: Vec::new(),
            last_step_whitened: 0.0,
            last_step_noise: 1.0,
            acceptance: vec![0.5],
            draws_per_chain: 1000,
            floored_share: 0.0,
            indefinite_share: Some(0.0),
            variance_shares: vec![share("a", 0.2), share("b", -1.34), share("c", 30.7)],
            prior: None,
            coordinates: None,
            max_rhat: 1.0,
            min_ess_bulk: 1000.0,
            converged: true,
            sampling_seconds: 0.0,
        };
        let warnings = report.warnings().join("\n");
        assert!(
            warnings.contains("b (-1.3 sds), c (+over 5 sds)") && !warnings.contains("a ("),
            "{warnings}"
        );
    }
}
