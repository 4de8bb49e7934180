//! The paper's experiments (Section 5): Hellinger error vs data size and vs a growing balanced
//! prior, for the exponential mechanism and the Laplace baseline; plain result structs.
//!
//! Streams: setting `s` (a data size or a prior) draws the exponential mechanism from
//! `chain_rng(seed, 2 s)` and the Laplace baseline from `chain_rng(seed, 2 s + 1)`, so results
//! do not depend on the thread count.
//!
//! # Reproducing the authors' code
//! The paper's figures come from its authors' Python code (public repository
//! `JiawenUB/DP-Bayesian-Inference`), which differs from the paper's text in three places; each
//! is an option here, off by default:
//! * the smooth sensitivity's distance and γ ([`SensitivityScope::AuthorsCode`]),
//! * the Laplace baseline ([`LaplaceVariant::AuthorsCode`]),
//! * from 26 July 2018 (after Figure 3, before Figures 1 and 2), the "Hellinger distance"
//!   itself: their `gen_betaln` divides `Σ ln Γ(α_i)` by `ln(Σα)` instead of subtracting
//!   `ln Γ(Σα)` ([`DistanceMeasure::AuthorsGenBetaln`]), in the mechanism's utility, its
//!   sensitivities and the plotted error.
//!
//! [`SizeExperiment::authors_code`] / [`PriorExperiment::authors_code`] switch on the first two
//! and `authors_gen_betaln` the third. With all three, the Beta-Binomial crossover of the exact
//! expected errors moves from n ≈ 1830 to n ≈ 650, the paper's number; with the first two, the
//! exponential mechanism wins the (5, 5, 5) experiment from a prior of about 5 on, as in the
//! paper's Figure 3.

use crate::error::{Error, Result, check};
use crate::mechanisms::hellinger::distance::DistanceMeasure;
use crate::mechanisms::hellinger::laplace_baseline::{LaplaceBaseline, LaplaceVariant};
use crate::mechanisms::hellinger::mechanism::HellingerMechanism;
use crate::mechanisms::hellinger::model::DirichletMultinomial;
use crate::mechanisms::hellinger::smooth_sensitivity::SensitivityScope;
use crate::rng::chain_rng;

/// Which mechanism produced an error sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MechanismKind {
    /// The Hellinger exponential mechanism with smooth sensitivity.
    Exponential,
    /// The Laplace baseline with consistency post-processing.
    Laplace,
}

impl MechanismKind {
    /// Display name.
    pub fn name(&self) -> &'static str {
        match self {
            MechanismKind::Exponential => "exponential",
            MechanismKind::Laplace => "laplace",
        }
    }
}

/// One run's error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorSample {
    /// Mechanism.
    pub mechanism: MechanismKind,
    /// Data size.
    pub n: u64,
    /// Balanced prior parameter (the first prior entry for unbalanced priors).
    pub prior_strength: f64,
    /// Run index.
    pub run: usize,
    /// Distance between the true and the released posterior, in the experiment's error
    /// measure (the Hellinger distance by default).
    pub error: f64,
}

/// Per-setting summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorSummary {
    /// Data size.
    pub n: u64,
    /// Balanced prior parameter (the first prior entry for unbalanced priors).
    pub prior_strength: f64,
    /// Mean sampled error of the exponential mechanism.
    pub exponential_mean: f64,
    /// Mean sampled error of the Laplace baseline.
    pub laplace_mean: f64,
    /// Exact expected error of the exponential mechanism (full enumeration).
    pub exponential_expected: f64,
    /// Exact expected error of the Laplace baseline (Beta-Binomial only, by quadrature).
    pub laplace_expected: Option<f64>,
    /// Smooth sensitivity `S(x)` of the data set.
    pub smooth_sensitivity: f64,
    /// Local sensitivity of the data set.
    pub local_sensitivity: f64,
}

/// Samples and summaries of one experiment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExperimentResult {
    /// Every run's error.
    pub samples: Vec<ErrorSample>,
    /// One row per setting.
    pub summary: Vec<ErrorSummary>,
}

impl ExperimentResult {
    /// Data size at which the exponential mechanism's expected error first drops below the
    /// Laplace baseline's (linear interpolation of the difference); exact expectations where
    /// available, sampled means otherwise. `None` if it never does or is better from the start.
    pub fn crossover_n(&self) -> Option<f64> {
        let xs: Vec<f64> = self.summary.iter().map(|s| s.n as f64).collect();
        crossover(&xs, &self.differences())
    }

    /// Prior strength at which the exponential mechanism first becomes better (see
    /// [`ExperimentResult::crossover_n`]).
    pub fn crossover_prior(&self) -> Option<f64> {
        let xs: Vec<f64> = self.summary.iter().map(|s| s.prior_strength).collect();
        crossover(&xs, &self.differences())
    }

    fn differences(&self) -> Vec<f64> {
        self.summary
            .iter()
            .map(|s| s.exponential_expected - s.laplace_expected.unwrap_or(s.laplace_mean))
            .collect()
    }
}

/// First `x` where `diff` (exponential minus Laplace error) turns from `≥ 0` to `< 0`,
/// interpolated linearly; `None` without such a change.
pub fn crossover(xs: &[f64], diff: &[f64]) -> Option<f64> {
    (1..xs.len().min(diff.len())).find_map(|i| {
        let (d0, d1) = (diff[i - 1], diff[i]);
        (d0 >= 0.0 && d1 < 0.0).then(|| xs[i - 1] + (xs[i] - xs[i - 1]) * d0 / (d0 - d1))
    })
}

/// Error vs data size (paper Figures 1 and 2): deterministic data sets with the given
/// category proportions.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeExperiment {
    /// Prior parameters α.
    pub prior: Vec<f64>,
    /// Category proportions of the data (rounded per [`DirichletMultinomial::counts_from_proportions`]).
    pub proportions: Vec<f64>,
    /// Data sizes.
    pub sizes: Vec<u64>,
    /// ε, δ, runs per size, seed and the mechanisms' options.
    pub settings: StudySettings,
}

impl SizeExperiment {
    /// Figure 1: Beta(1, 1) prior, 10 % ones, ε = 0.8, δ = 1e-8.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::SizeExperiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let res = SizeExperiment::beta_binomial(vec![300, 800], 20).run()?;
    /// assert_eq!(res.samples.len(), 2 * 2 * 20);
    /// let mut bad = SizeExperiment::beta_binomial(vec![300], 20);
    /// bad.settings.delta = 2.0;
    /// assert!(bad.run().is_err()); // names `delta`
    /// # Ok(()) }
    /// ```
    pub fn beta_binomial(sizes: Vec<u64>, runs: usize) -> Self {
        Self {
            prior: vec![1.0, 1.0],
            proportions: vec![0.1, 0.9],
            sizes,
            settings: StudySettings::paper(runs),
        }
    }

    /// The authors' smooth sensitivity and Laplace baseline
    /// ([`SensitivityScope::AuthorsCode`], [`LaplaceVariant::AuthorsCode`]); see the module docs.
    /// No privacy claim is made for the resulting exponential mechanism.
    #[must_use]
    pub fn authors_code(mut self) -> Self {
        self.settings = self.settings.authors_code();
        self
    }

    /// The authors' `gen_betaln` quantity (**not** the Hellinger distance) as the exponential
    /// mechanism's utility and as the error measure ([`DistanceMeasure::AuthorsGenBetaln`]).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::SizeExperiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// // Exact expected errors at n = 600 and 700 (1 sampled run each).
    /// let theirs = SizeExperiment::beta_binomial(vec![600, 700], 1)
    ///     .authors_code()
    ///     .authors_gen_betaln()
    ///     .run()?;
    /// let x = theirs.crossover_n().expect("crosses between 600 and 700");
    /// assert!(x > 600.0 && x < 700.0); // the paper: about 650
    /// let ours = SizeExperiment::beta_binomial(vec![600, 700], 1).run()?;
    /// assert_eq!(ours.crossover_n(), None); // ours crosses near 1830
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn authors_gen_betaln(mut self) -> Self {
        self.settings = self.settings.authors_gen_betaln();
        self
    }

    /// Figure 2: Dir(1, 1, 1) prior, proportions (0.2, 0.3, 0.5), ε = 0.8, δ = 1e-8.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::SizeExperiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let res = SizeExperiment::dirichlet(vec![50], 10).run()?;
    /// assert_eq!(res.summary.len(), 1);
    /// let mut bad = SizeExperiment::dirichlet(vec![50], 10);
    /// bad.prior = vec![1.0, 0.0, 1.0];
    /// assert!(bad.run().is_err()); // names `prior`
    /// # Ok(()) }
    /// ```
    pub fn dirichlet(sizes: Vec<u64>, runs: usize) -> Self {
        Self {
            prior: vec![1.0, 1.0, 1.0],
            proportions: vec![0.2, 0.3, 0.5],
            ..Self::beta_binomial(sizes, runs)
        }
    }

    /// Run the experiment.
    ///
    /// # Errors
    /// Invalid prior, proportions, ε, δ, zero runs, a size of 0, or too many candidates.
    pub fn run(&self) -> Result<ExperimentResult> {
        let model = DirichletMultinomial::new(self.prior.clone())?;
        check::at_least_one("runs", self.settings.runs)?;
        let mut out = ExperimentResult::default();
        for (s, &n) in self.sizes.iter().enumerate() {
            let counts = model.counts_from_proportions(&self.proportions, n)?;
            run_setting(&model, &counts, &self.settings, s as u64, &mut out)?;
        }
        Ok(out)
    }
}

/// Fixed data, growing balanced prior `Dir(a, …, a)` (paper Figure 3: data (5, 5, 5)).
#[derive(Debug, Clone, PartialEq)]
pub struct PriorExperiment {
    /// The fixed data set's counts.
    pub counts: Vec<u64>,
    /// The balanced prior parameters `a` to try.
    pub strengths: Vec<f64>,
    /// ε, δ, runs per prior, seed and the mechanisms' options.
    pub settings: StudySettings,
}

impl PriorExperiment {
    /// Figure 3: data (5, 5, 5), ε = 0.8, δ = 1e-8.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::PriorExperiment;
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let res = PriorExperiment::paper(vec![1.0, 10.0], 10).run()?;
    /// assert_eq!(res.summary.len(), 2);
    /// assert!(PriorExperiment::paper(vec![-1.0], 10).run().is_err()); // names `strength`
    /// # Ok(()) }
    /// ```
    pub fn paper(strengths: Vec<f64>, runs: usize) -> Self {
        Self {
            counts: vec![5, 5, 5],
            strengths,
            settings: StudySettings::paper(runs),
        }
    }

    /// The authors' smooth sensitivity and Laplace baseline, as in
    /// [`SizeExperiment::authors_code`]. Their Figure 3 predates `gen_betaln`: it used the
    /// Hellinger distance, so this alone reproduces it.
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::{LaplaceVariant, PriorExperiment};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let theirs = PriorExperiment::paper(vec![10.0], 20).authors_code();
    /// assert_eq!(theirs.settings.laplace, LaplaceVariant::AuthorsCode);
    /// assert_eq!(theirs.run()?.summary.len(), 1);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn authors_code(mut self) -> Self {
        self.settings = self.settings.authors_code();
        self
    }

    /// The authors' `gen_betaln` quantity as utility and error measure, as in
    /// [`SizeExperiment::authors_gen_betaln`].
    #[must_use]
    pub fn authors_gen_betaln(mut self) -> Self {
        self.settings = self.settings.authors_gen_betaln();
        self
    }

    /// Run the experiment.
    ///
    /// # Errors
    /// Invalid strengths, ε, δ, zero runs, or empty data.
    pub fn run(&self) -> Result<ExperimentResult> {
        check::at_least_one("runs", self.settings.runs)?;
        let mut out = ExperimentResult::default();
        for (s, &a) in self.strengths.iter().enumerate() {
            let model = DirichletMultinomial::balanced(self.counts.len(), a)?;
            run_setting(&model, &self.counts, &self.settings, s as u64, &mut out)?;
        }
        Ok(out)
    }
}

/// What both studies share: privacy parameters, runs per setting, seed and the mechanisms'
/// options.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::{LaplaceVariant, StudySettings};
/// let s = StudySettings::paper(100).authors_code();
/// assert_eq!((s.epsilon, s.delta, s.runs), (0.8, 1e-8, 100));
/// assert_eq!(s.laplace, LaplaceVariant::AuthorsCode);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StudySettings {
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Runs per setting (a data size or a prior; the paper: 1000).
    pub runs: usize,
    /// Seed.
    pub seed: u64,
    /// Data sets the smooth sensitivity ranges over (default: all, as Theorem 4.1 needs).
    pub scope: SensitivityScope,
    /// The Laplace baseline's noise and consistency step (default ours).
    pub laplace: LaplaceVariant,
    /// The exponential mechanism's utility (default the Hellinger distance).
    pub utility: DistanceMeasure,
    /// What the errors measure (default the Hellinger distance).
    pub error_measure: DistanceMeasure,
}

impl StudySettings {
    /// The paper's: ε = 0.8, δ = 1e-8, `runs` runs, seed 2018, the mechanisms as written
    /// (smooth sensitivity over all data sets, our Laplace baseline, Hellinger distance).
    pub fn paper(runs: usize) -> Self {
        StudySettings {
            epsilon: 0.8,
            delta: 1e-8,
            runs,
            seed: 2018,
            scope: SensitivityScope::AllDataSets,
            laplace: LaplaceVariant::Continuous,
            utility: DistanceMeasure::Hellinger,
            error_measure: DistanceMeasure::Hellinger,
        }
    }

    /// The authors' smooth sensitivity and Laplace baseline ([`SensitivityScope::AuthorsCode`],
    /// [`LaplaceVariant::AuthorsCode`]); see the module docs.
    #[must_use]
    pub fn authors_code(mut self) -> Self {
        self.scope = SensitivityScope::AuthorsCode;
        self.laplace = LaplaceVariant::AuthorsCode;
        self
    }

    /// The authors' `gen_betaln` quantity as utility and error measure
    /// ([`DistanceMeasure::AuthorsGenBetaln`]).
    #[must_use]
    pub fn authors_gen_betaln(mut self) -> Self {
        self.utility = DistanceMeasure::AuthorsGenBetaln;
        self.error_measure = DistanceMeasure::AuthorsGenBetaln;
        self
    }
}

fn run_setting(
    model: &DirichletMultinomial,
    counts: &[u64],
    o: &StudySettings,
    setting: u64,
    out: &mut ExperimentResult,
) -> Result<()> {
    let (runs, seed) = (o.runs, o.seed);
    let n = super::model::total(counts)?;
    if n == 0 {
        return Err(Error::invalid("sizes", n, "every data size must be >= 1"));
    }
    let exp = HellingerMechanism::new(model.clone(), o.epsilon, o.delta)?
        .sensitivity_scope(o.scope)
        .utility(o.utility)
        .error_measure(o.error_measure);
    let lap = LaplaceBaseline::new(model.clone(), o.epsilon)?
        .variant(o.laplace)
        .error_measure(o.error_measure);
    let prepared = exp.prepare(counts)?;
    let strength = model.prior()[0];
    let mut rng = chain_rng(seed, 2 * setting);
    let mut sum_e = 0.0;
    for run in 0..runs {
        let error = prepared.sample(&mut rng).error;
        sum_e += error;
        out.samples.push(ErrorSample {
            mechanism: MechanismKind::Exponential,
            n,
            prior_strength: strength,
            run,
            error,
        });
    }
    let mut rng = chain_rng(seed, 2 * setting + 1);
    let mut sum_l = 0.0;
    for run in 0..runs {
        let error = lap.release(counts, &mut rng)?.error;
        sum_l += error;
        out.samples.push(ErrorSample {
            mechanism: MechanismKind::Laplace,
            n,
            prior_strength: strength,
            run,
            error,
        });
    }
    out.summary.push(ErrorSummary {
        n,
        prior_strength: strength,
        exponential_mean: sum_e / runs as f64,
        laplace_mean: sum_l / runs as f64,
        exponential_expected: prepared.expected_error(),
        laplace_expected: if model.k() == 2 {
            Some(lap.expected_error_beta(counts)?)
        } else {
            None
        },
        smooth_sensitivity: prepared.smooth_sensitivity(),
        local_sensitivity: prepared.local_sensitivity(),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossover_interpolates() {
        assert_eq!(crossover(&[0.0, 10.0], &[1.0, -1.0]), Some(5.0));
        assert_eq!(crossover(&[0.0, 10.0], &[-1.0, -1.0]), None);
    }
}
