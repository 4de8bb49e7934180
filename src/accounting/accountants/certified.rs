//! [`CertifiedPld`]: privacy loss distribution accountant whose every answer is an interval
//! certified to contain the true value (engine: `accounting/pld/`).

use super::{Accountant, unsupported, walk, wor_rate};
use crate::accounting::event::PrivacyEvent;
use crate::accounting::pld::loss::Loss;
use crate::accounting::pld::pmf::Pmf;
use crate::accounting::pld::{Interval, delta_interval, epsilon_interval};
use crate::error::{Error, Result, check};

/// Default relative width wanted: 3 significant digits.
const DEFAULT_TOLERANCE: f64 = 1e-3;
/// Default work budget: the largest PMF (lattice points) one refinement may build.
const DEFAULT_MAX_POINTS: usize = 1 << 22;
/// Coarsest lattice step tried first; each refinement divides it by 4.
const FIRST_STEP: f64 = 1e-2;
/// At most this many refinements.
const MAX_ROUNDS: usize = 8;

/// Certified privacy loss distribution accountant.
///
/// Supports `Gaussian`, `Laplace`, `PoissonSampled{Gaussian}` (add/remove relation, both
/// directions, the maximum of the two), `SampledWithoutReplacement{Gaussian}` (substitute
/// relation, the pair `(1−q)N(0,σ²)+qN(1,σ²)` vs `(1−q)N(0,σ²)+qN(−1,σ²)` with σ the noise
/// multiplier and q = batch_size/n, the pair the Fourier accountant and the thesis' minibatch
/// penalty use) and any `Composed`/`SelfComposed`/`NoOp` mix of them. Each query refines the
/// lattice step (÷4 per round, from 1e-2) until the interval's width is at most
/// `tolerance × upper` or the work budget ([`CertifiedPld::max_points`], at most 8 rounds) is
/// spent; then the narrowest interval found is returned, never an error for a valid query.
/// [`Accountant::epsilon`] and [`Accountant::delta`] return the certified **upper** bound. The
/// method and what is certified are in the `accounting::pld` module docs (crate source).
///
/// # Examples
/// ```
/// use dp_mcmc::accounting::{Accountant, CertifiedPld, PrivacyEvent, pld_delta};
/// let mut acc = CertifiedPld::new().tolerance(1e-2);
/// acc.compose(&PrivacyEvent::gaussian(2.0).repeat(10))?;
/// let iv = acc.delta_interval(1.0)?;
/// let exact = pld_delta(10.0 * 0.5 / 4.0, 1.0)?; // closed form N(μ, 2μ)
/// assert!(iv.lower <= exact && exact <= iv.upper);
/// assert!(iv.upper - iv.lower <= 1e-2 * iv.upper);
/// assert_eq!(acc.delta(1.0)?, iv.upper);
/// // subsampled events, heterogeneous compositions
/// acc.compose(&PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(100))?;
/// assert!(acc.epsilon_interval(1e-5)?.upper.is_finite());
/// // invalid parameters are typed errors naming the parameter, state unchanged
/// let err = acc.compose(&PrivacyEvent::gaussian(1.0).poisson(1.5)).unwrap_err();
/// assert!(err.to_string().contains("q"));
/// assert!(acc.delta(-1.0).is_err());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CertifiedPld {
    /// Composed leaves with their counts (equal leaves merged).
    leaves: Vec<(Loss, u64)>,
    tolerance: f64,
    max_points: usize,
}

impl Default for CertifiedPld {
    fn default() -> Self {
        CertifiedPld {
            leaves: Vec::new(),
            tolerance: DEFAULT_TOLERANCE,
            max_points: DEFAULT_MAX_POINTS,
        }
    }
}

impl CertifiedPld {
    /// An empty accountant (tolerance 1e-3, budget 2²² points).
    pub fn new() -> Self {
        Self::default()
    }

    /// Relative width wanted (`upper − lower ≤ tolerance·upper`); values ≤ 0 or not finite
    /// are replaced by the default.
    #[must_use]
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = if tolerance.is_finite() && tolerance > 0.0 {
            tolerance
        } else {
            DEFAULT_TOLERANCE
        };
        self
    }

    /// Work budget: the largest PMF, in lattice points, a refinement may build (at least
    /// 1024). Time and memory grow linearly in it (times a log for the FFT).
    #[must_use]
    pub fn max_points(mut self, points: usize) -> Self {
        self.max_points = points.max(1024);
        self
    }

    fn leaves_of(event: &PrivacyEvent) -> Result<Vec<(Loss, u64)>> {
        let mut out: Vec<(Loss, u64)> = Vec::new();
        walk(event, 1.0, &mut |e, c| {
            let loss = match e {
                PrivacyEvent::Gaussian { noise_multiplier } => Loss::Gaussian {
                    sigma: check::positive("noise_multiplier", *noise_multiplier)?,
                },
                PrivacyEvent::Laplace { noise_multiplier } => Loss::Laplace {
                    b: check::positive("noise_multiplier", *noise_multiplier)?,
                },
                PrivacyEvent::PoissonSampled { q, event: inner } => match &**inner {
                    PrivacyEvent::Gaussian { noise_multiplier } => Loss::PoissonRemove {
                        sigma: check::positive("noise_multiplier", *noise_multiplier)?,
                        q: check::rate("q", *q)?,
                    },
                    other => return Err(unsupported("CertifiedPLD", other)),
                },
                PrivacyEvent::SampledWithoutReplacement {
                    n,
                    batch_size,
                    event: inner,
                } => {
                    let q = wor_rate(*n, *batch_size)?;
                    match &**inner {
                        PrivacyEvent::Gaussian { noise_multiplier } => Loss::Substitute {
                            sigma: check::positive("noise_multiplier", *noise_multiplier)?,
                            q,
                        },
                        other => return Err(unsupported("CertifiedPLD", other)),
                    }
                }
                other => return Err(unsupported("CertifiedPLD", other)),
            };
            if c > 9.0e15 {
                return Err(Error::invalid("count", c, "must be at most 9e15"));
            }
            let c = c as u64;
            match out.iter_mut().find(|(l, _)| *l == loss) {
                Some(slot) => slot.1 += c,
                None => out.push((loss, c)),
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The composed PMFs (remove direction, and add direction if it differs) at step `h`.
    fn pmfs(&self, h: f64) -> Result<Vec<Pmf>> {
        let asymmetric = self.leaves.iter().any(|(l, _)| l.add_direction() != *l);
        let mut out = Vec::new();
        for add in [false, true] {
            if add && !asymmetric {
                break;
            }
            let mut acc = Pmf::identity(h);
            for &(loss, count) in &self.leaves {
                if count == 0 {
                    continue;
                }
                let loss = if add { loss.add_direction() } else { loss };
                let one = Pmf::discretise(loss, h, self.max_points)?;
                acc = acc.compose(&one.power(count, self.max_points)?, self.max_points)?;
            }
            out.push(acc);
        }
        Ok(out)
    }

    /// Refine until `query`'s interval is narrow enough or the budget is spent.
    fn refine(&self, query: impl Fn(&Pmf) -> Interval, trivial: Interval) -> Interval {
        let mut best = trivial;
        let mut h = FIRST_STEP;
        for _ in 0..MAX_ROUNDS {
            let Ok(pmfs) = self.pmfs(h) else { break };
            let iv = pmfs
                .iter()
                .map(&query)
                .reduce(Interval::max)
                .unwrap_or(trivial);
            best = best.intersect(iv);
            if best.upper.is_finite() && best.width() <= self.tolerance * best.upper {
                break;
            }
            h /= 4.0;
        }
        best
    }

    /// An interval certified to contain the true δ(ε) of the composition.
    ///
    /// # Errors
    /// `epsilon` negative or not finite.
    pub fn delta_interval(&self, epsilon: f64) -> Result<Interval> {
        let e = check::non_negative("epsilon", epsilon)?;
        if self.leaves.is_empty() {
            return Ok(Interval {
                lower: 0.0,
                upper: 0.0,
            });
        }
        Ok(self.refine(
            |p| delta_interval(p, e),
            Interval {
                lower: 0.0,
                upper: 1.0,
            },
        ))
    }

    /// An interval certified to contain the true ε(δ) (`upper = ∞` if no finite ε could be
    /// certified within the budget).
    ///
    /// # Errors
    /// `delta` outside (0, 1).
    pub fn epsilon_interval(&self, delta: f64) -> Result<Interval> {
        let d = check::delta("delta", delta)?;
        if self.leaves.is_empty() {
            return Ok(Interval {
                lower: 0.0,
                upper: 0.0,
            });
        }
        Ok(self.refine(
            |p| epsilon_interval(p, d),
            Interval {
                lower: 0.0,
                upper: f64::INFINITY,
            },
        ))
    }
}

impl Accountant for CertifiedPld {
    fn name(&self) -> &'static str {
        "CertifiedPLD"
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        Self::leaves_of(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<()> {
        for (loss, c) in Self::leaves_of(event)? {
            match self.leaves.iter_mut().find(|(l, _)| *l == loss) {
                Some(slot) => slot.1 = slot.1.saturating_add(c),
                None => self.leaves.push((loss, c)),
            }
        }
        Ok(())
    }
    fn boxed(&self) -> Box<dyn Accountant> {
        Box::new(self.clone())
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        Ok(self.epsilon_interval(delta)?.upper)
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        Ok(self.delta_interval(epsilon)?.upper)
    }
}
