//! [`CertifiedPld`]: privacy loss distribution accountant whose every answer is an interval
//! certified to contain the true value (engine: `engine/`).

pub(crate) mod engine;

use super::accountant::{Accountant, unsupported, walk, wor_rate};
use crate::accounting::accountant_kind::CERTIFIED_PLD_LABEL;
use crate::accounting::event::PrivacyEvent;
use crate::error::{Error, Result, check};
use engine::Interval;
use engine::compose::{Part, compose, window_span};
use engine::discretise::{Discretised, discretise};
use engine::loss::Loss;
use rayon::prelude::*;

/// Default relative width wanted (`upper − lower ≤ tolerance·upper`).
const DEFAULT_TOLERANCE: f64 = 2e-3;
/// Default work budget: the longest FFT (points) a refinement may use.
const DEFAULT_MAX_POINTS: usize = 1 << 22;
/// At most this many refinements.
const MAX_ROUNDS: usize = 6;
/// Mass of each tail of a mechanism's loss left outside its lattice.
const TAIL: f64 = 1e-25;
/// Tilted mass allowed outside the composition's window.
const TAU: f64 = 1e-10;
/// Relative error allowed for the closed form of a Gaussian composition (`pld_delta`; its
/// references agree to 1e-9 relative and its own round-off is about 1e-13 where it cancels
/// most): the closed-form interval is `δ·(1 ± CLOSED_FORM_REL)`, at most 4e-10 wide.
const CLOSED_FORM_REL: f64 = 2e-10;

/// The expected multiplicity of a `PoissonMultiplicity` event: positive and at most 50 (a
/// batch larger than fifty times the data set is not a subsample).
fn check_mean(mean: f64) -> Result<f64> {
    if mean.is_finite() && mean > 0.0 && mean <= 50.0 {
        Ok(mean)
    } else {
        Err(Error::invalid(
            "mean",
            mean,
            "the expected multiplicity must be in (0, 50]",
        ))
    }
}

/// What is asked.
#[derive(Clone, Copy)]
enum Query {
    Delta(f64),
    Epsilon(f64),
}

/// Certified privacy loss distribution accountant.
///
/// Supports `Gaussian`, `Laplace`, `PoissonSampled{Gaussian}` (add/remove relation, both
/// directions, the maximum of the two), `SampledWithoutReplacement{Gaussian}` (substitute
/// relation, the pair `(1−q)N(0,σ²)+qN(1,σ²)` vs `(1−q)N(0,σ²)+qN(−1,σ²)` with σ the noise
/// multiplier and q = batch_size/n, the pair the Fourier accountant and the thesis' minibatch
/// penalty use), `PoissonSubstitute{Gaussian}` (the same pair at the Poisson rate q),
/// `PoissonMultiplicity{Gaussian}` (the public-label mixture over a row's multiplicity m of
/// that pair with noise multiplier σ/m, DP-Fast MH's batches), `BarkerTest` (one DP Barker step: the connect-the-dots PMF of its privacy
/// profile over the feasible family, amplified by sampling without replacement; no lower
/// bound, so a composition containing it reports `lower = 0` and is refined only while the
/// upper bound improves by more than the tolerance; see `docs/ACCOUNTING.md`) and
/// any `Composed`/`SelfComposed`/`NoOp` mix of them. Each query predicts a lattice step from
/// the tolerance and refines it until the interval's width is at most `tolerance × upper` or
/// the work budget ([`CertifiedPld::max_points`], the longest FFT; at most 6 rounds) is
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
    upper_only: bool,
}

impl Default for CertifiedPld {
    fn default() -> Self {
        CertifiedPld {
            leaves: Vec::new(),
            tolerance: DEFAULT_TOLERANCE,
            max_points: DEFAULT_MAX_POINTS,
            upper_only: false,
        }
    }
}

impl CertifiedPld {
    /// An empty accountant (tolerance 2e-3: about three significant digits; budget: an FFT of
    /// 2²² points).
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

    /// Answer from one composition at a fixed, moderate lattice step (a quarter of the
    /// coarse one: ~8000 nodes over a mechanism's loss range) without refining: the upper
    /// bound (connect-the-dots, already tight at that step) is certified as always, the lower
    /// bound is loose. For searches that only compare the upper bound with a budget
    /// (Algorithm 2), at a fraction of the cost.
    #[must_use]
    pub fn upper_only(mut self, yes: bool) -> Self {
        self.upper_only = yes;
        self
    }

    /// An accountant of the given leaves (crate-internal: the Fourier accountant's guard builds
    /// its own pair, `Loss::PoissonRemove` or `Loss::Substitute`, at the exact rate q).
    pub(crate) fn of_leaves(leaves: Vec<(Loss, u64)>) -> Self {
        CertifiedPld {
            leaves: leaves
                .into_iter()
                .map(|(l, c)| (exact_gaussian(l), c))
                .collect(),
            ..Self::default()
        }
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
                    other => return Err(unsupported(CERTIFIED_PLD_LABEL, other)),
                },
                PrivacyEvent::PoissonSubstitute { q, event: inner } => match &**inner {
                    PrivacyEvent::Gaussian { noise_multiplier } => Loss::Substitute {
                        sigma: check::positive("noise_multiplier", *noise_multiplier)?,
                        q: check::rate("q", *q)?,
                    },
                    other => return Err(unsupported(CERTIFIED_PLD_LABEL, other)),
                },
                PrivacyEvent::PoissonMultiplicity { mean, event: inner } => match &**inner {
                    PrivacyEvent::Gaussian { noise_multiplier } => Loss::SubstituteMultiple {
                        sigma: check::positive("noise_multiplier", *noise_multiplier)?,
                        mean: check_mean(*mean)?,
                    },
                    other => return Err(unsupported(CERTIFIED_PLD_LABEL, other)),
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
                        other => return Err(unsupported(CERTIFIED_PLD_LABEL, other)),
                    }
                }
                PrivacyEvent::BarkerTest { n, batch_size } => {
                    wor_rate(*n, *batch_size)?;
                    Loss::BarkerTest {
                        n: *n,
                        batch_size: *batch_size,
                    }
                }
                other => return Err(unsupported(CERTIFIED_PLD_LABEL, other)),
            };
            if c > 9.0e15 {
                return Err(Error::invalid("count", c, "must be at most 9e15"));
            }
            let (c, loss) = (c as u64, exact_gaussian(loss));
            match out.iter_mut().find(|(l, _)| *l == loss) {
                Some(slot) => slot.1 += c,
                None => out.push((loss, c)),
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The leaves of each direction: the remove direction, and the add direction if any
    /// leaf differs in it (the answer is the maximum over directions).
    fn directions(&self) -> Vec<Vec<(Loss, u64)>> {
        let live: Vec<(Loss, u64)> = self.leaves.iter().copied().filter(|l| l.1 > 0).collect();
        let add: Vec<(Loss, u64)> = live.iter().map(|&(l, c)| (l.add_direction(), c)).collect();
        if add == live {
            vec![live]
        } else {
            vec![live, add]
        }
    }

    /// The interval of one direction, refined until narrow enough or out of budget.
    ///
    /// A coarse discretisation gives the tilt and a Chernoff estimate of the answer, from
    /// which the first lattice step is predicted (the lower bound's Hoeffding term
    /// `h·√(n·ln(1/η)/2)` sets the width); the step then shrinks by the observed width until
    /// the interval is narrow enough. A step whose composition would exceed the budget is
    /// doubled until it fits, and the narrowest certified interval is returned.
    ///
    /// `floor`, the interval of the directions already answered: once this direction's
    /// upper bound is at most `floor.lower` it cannot change the maximum over directions,
    /// and refining it further would change nothing (checked on the coarse lattice first).
    fn refine(&self, leaves: &[(Loss, u64)], query: Query, floor: Option<Interval>) -> Interval {
        let trivial = match query {
            Query::Delta(_) => Interval {
                lower: 0.0,
                upper: 1.0,
            },
            Query::Epsilon(_) => Interval {
                lower: 0.0,
                upper: f64::INFINITY,
            },
        };
        let Some((h_coarse, coarse)) = first_step(leaves, self.max_points) else {
            return trivial;
        };
        let counts: Vec<u64> = leaves.iter().map(|l| l.1).collect();
        // the tilts and windows of earlier rounds, by argument (each is a pass over every
        // coarse node, and rounds and the pre-check ask for the same ones again)
        let tilt_at = Memo::default();
        let saddle = |eps: f64| tilt_at.get(eps, || saddle(&coarse, &counts, eps));
        let chernoff_memo = Memo::default();
        let chernoff =
            |delta: f64| chernoff_memo.get_pair(delta, || chernoff(&coarse, &counts, delta));
        let span_at = Memo::default();
        let n: f64 = counts.iter().map(|&c| c as f64).sum();
        let (mut target, delta_scale) = match query {
            Query::Delta(eps) => {
                let lambda = saddle(eps);
                let ln_delta = log_mgf_sum(&coarse, &counts, lambda) - lambda * eps;
                (Some(eps), ln_delta.min(0.0).exp())
            }
            Query::Epsilon(delta) => {
                let (_, eps) = chernoff(delta);
                (eps.is_finite().then_some(eps), delta)
            }
        };
        let hoeffding = |h: f64| {
            h * (n * (1e2 / delta_scale.max(1e-300)).ln() / 2.0)
                .sqrt()
                .min(n)
        };
        let t_wanted = match (query, target) {
            (Query::Delta(eps), _) => 0.6 * self.tolerance / (saddle(eps) + 1.0),
            (Query::Epsilon(_), Some(eps)) => 0.6 * self.tolerance * eps,
            (Query::Epsilon(_), None) => f64::NAN,
        };
        // the step at which the first-order (Hoeffding) term alone would meet the tolerance;
        // the second-order lower bound (`engine/curve.rs`) is as good at a step coarser by
        // about 1/√(C·0.6·tolerance), C ≈ 20 measured on subsampled Gaussians
        let predicted =
            t_wanted / hoeffding(1.0) * (1.0 / (12.0 * self.tolerance)).sqrt().clamp(1.0, 8.0);
        // a leaf known only through its privacy profile has no optimistic PMF: the lower
        // bound stays 0, so refine only while the upper bound still improves
        let no_lower = leaves
            .iter()
            .any(|(l, _)| matches!(l, Loss::BarkerTest { .. }));
        let mut last_upper = f64::INFINITY;
        let mut h = if self.upper_only || no_lower {
            h_coarse / 4.0
        } else if predicted.is_finite() && predicted > 0.0 {
            predicted.clamp(h_coarse / 256.0, 8.0 * h_coarse)
        } else {
            h_coarse
        };
        // the tilt of a round: the saddle point of the current estimate of ε
        let tilt = |target: Option<f64>| match (target, query) {
            (Some(eps), _) => saddle(eps),
            (None, Query::Epsilon(delta)) => chernoff(delta).0,
            (None, Query::Delta(_)) => 0.0,
        };
        // one round: compose the discretised leaves at step h, the certified interval and the
        // composition's window (nodes); `None` over budget
        let round = |discs: &[Discretised], h: f64, lambda: f64| -> Option<(Interval, usize)> {
            let include = match query {
                Query::Delta(eps) => Some((eps / h).floor() as i64),
                Query::Epsilon(_) => None,
            };
            let c = compose(
                &parts_of(discs, &counts),
                h,
                lambda,
                include,
                TAU,
                self.max_points,
            )?;
            let (lower, upper) = match query {
                Query::Delta(eps) => c.delta_bounds(eps),
                Query::Epsilon(delta) => c.epsilon_bounds(delta),
            };
            Some((Interval { lower, upper }, c.pess.len().max(c.opt.len())))
        };
        let below_floor = |iv: &Interval| floor.is_some_and(|f| iv.upper <= f.lower);
        if floor.is_some() {
            // a cheap certified interval from the coarse lattice: enough when this direction
            // is dominated by the ones already answered
            if let Some((iv, _)) = round(&coarse, h_coarse, tilt(target))
                && below_floor(&iv)
            {
                return iv;
            }
        }
        let mut best = trivial;
        let mut answered = false;
        let mut last_h: Option<(f64, f64)> = None;
        let mut tries = 0;
        while tries < MAX_ROUNDS + 8 {
            tries += 1;
            let lambda = tilt(target);
            // never finer than the budget allows (the window measured on the coarse lattice)
            let span = span_at.get(lambda, || {
                window_span(&parts_of(&coarse, &counts), h_coarse, lambda, TAU)
            });
            h = h.max(span / (0.9 * self.max_points as f64));
            if answered && last_h == Some((h, lambda)) {
                // the budget holds the step where it was: the same round again adds nothing
                break;
            }
            last_h = Some((h, lambda));
            let discs: Option<Vec<Discretised>> = if h == h_coarse {
                Some(coarse.clone())
            } else {
                leaves
                    .par_iter()
                    .map(|&(l, _)| discretise(l, h, TAIL, self.max_points))
                    .collect()
            };
            let Some((interval, window)) = discs.as_ref().and_then(|d| round(d, h, lambda)) else {
                if answered {
                    break;
                }
                // over budget before any answer: coarsen and try again
                h *= 2.0;
                continue;
            };
            answered = true;
            best = best.intersect(interval);
            let want = self.tolerance * best.upper;
            if self.upper_only
                || below_floor(&best)
                || (best.upper.is_finite() && best.width() <= want)
            {
                break;
            }
            if no_lower {
                if last_upper - best.upper <= self.tolerance * best.upper {
                    break;
                }
                last_upper = best.upper;
            }
            if tries >= MAX_ROUNDS {
                break;
            }
            if matches!(query, Query::Epsilon(_)) && best.upper.is_finite() {
                target = Some(best.upper);
            }
            let ratio = if no_lower {
                0.25
            } else if best.width().is_finite() && best.width() > 0.0 {
                // the width shrinks as h² where the second-order bound decides, as h where
                // the first-order one does: the square root is the cautious step
                (0.8 * want / best.width()).sqrt()
            } else {
                0.25
            };
            // the finest step whose window still fits the budget
            let finest = h * window as f64 / (0.9 * self.max_points as f64);
            if finest >= h {
                break;
            }
            h = (h * ratio.clamp(1.0 / 16.0, 0.5)).max(finest);
        }
        best
    }

    fn answer(&self, query: Query) -> Interval {
        let zero = Interval {
            lower: 0.0,
            upper: 0.0,
        };
        let mut answer: Option<Interval> = None;
        for d in self.directions().iter().filter(|d| !d.is_empty()) {
            let iv = self.refine(d, query, answer);
            answer = Some(answer.map_or(iv, |a| a.max(iv)));
        }
        answer.unwrap_or(zero)
    }

    /// Whether every composed event is a plain Gaussian (a subsampled one at rate 1 counts: it
    /// samples every row): the composition is then one Gaussian
    /// mechanism with the summed `μ` (Balle & Wang 2018), and the answers come from its closed
    /// form ([`pld_delta`](crate::accounting::pld_delta)) with an interval as wide as its
    /// rounding (relative 4e-10), not from the discretised engine.
    ///
    /// ```
    /// use dp_mcmc::accounting::{Accountant, CertifiedPld, PrivacyEvent};
    /// let mut acc = CertifiedPld::new();
    /// acc.compose(&PrivacyEvent::gaussian(1000.0).repeat(1_000_000))?;
    /// assert!(acc.closed_form());
    /// let iv = acc.delta_interval(1.0)?; // closed form 0.1269367375… (mpmath)
    /// assert!(iv.lower <= 0.12693673750664395 && 0.12693673750664395 <= iv.upper);
    /// assert!(iv.upper - iv.lower <= 1e-9 * iv.upper);
    /// acc.compose(&PrivacyEvent::gaussian(1.0).poisson(0.01))?;
    /// assert!(!acc.closed_form());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn closed_form(&self) -> bool {
        self.gaussian_mu().is_some()
    }

    /// The total `μ = Σ c/(2σ²)` when every live leaf is Gaussian.
    fn gaussian_mu(&self) -> Option<f64> {
        let mut mu = 0.0;
        let mut any = false;
        for &(l, c) in self.leaves.iter().filter(|l| l.1 > 0) {
            match l {
                Loss::Gaussian { sigma } => mu += c as f64 / (2.0 * sigma * sigma),
                _ => return None,
            }
            any = true;
        }
        (any && mu.is_finite()).then_some(mu)
    }

    /// An interval certified to contain the true δ(ε) of the composition (from the closed form
    /// when every event is Gaussian, [`CertifiedPld::closed_form`]).
    ///
    /// # Errors
    /// `epsilon` negative or not finite.
    pub fn delta_interval(&self, epsilon: f64) -> Result<Interval> {
        let e = check::non_negative("epsilon", epsilon)?;
        if let Some(mu) = self.gaussian_mu() {
            let v = crate::accounting::pld_delta(mu, e)?;
            return Ok(Interval {
                lower: v * (1.0 - CLOSED_FORM_REL),
                upper: (v * (1.0 + CLOSED_FORM_REL)).min(1.0),
            });
        }
        Ok(self.answer(Query::Delta(e)))
    }

    /// An interval certified to contain the true ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}
    /// (`upper = ∞` if no finite ε could be certified within the budget).
    ///
    /// # Errors
    /// `delta` outside (0, 1).
    pub fn epsilon_interval(&self, delta: f64) -> Result<Interval> {
        let d = check::delta("delta", delta)?;
        if let Some(mu) = self.gaussian_mu() {
            // δ(ε) is decreasing: solving for a δ smaller (larger) by the closed form's error
            // gives an ε above (below) the true one
            let upper = crate::accounting::pld_epsilon(mu, d * (1.0 - CLOSED_FORM_REL))?;
            let lower =
                crate::accounting::pld_epsilon(mu, (d * (1.0 + CLOSED_FORM_REL)).min(1.0 - 1e-16))?;
            return Ok(Interval {
                lower: lower * (1.0 - 1e-12),
                upper,
            });
        }
        Ok(self.answer(Query::Epsilon(d)))
    }
}

/// A subsampled Gaussian that samples every row (`q = 1`) as the Gaussian it is: Poisson
/// sampling's pair `N(1, σ²)` against `N(0, σ²)`, the substitute pair `N(1, σ²)` against
/// `N(−1, σ²)` (sensitivity 2: the Gaussian with `σ/2`). The closed form then answers
/// ([`CertifiedPld::closed_form`]) where the mixture's discretisation would not (its range
/// has `ln 0` where the missing component's density underflows).
fn exact_gaussian(loss: Loss) -> Loss {
    match loss {
        Loss::PoissonRemove { sigma, q: 1.0 } | Loss::PoissonAdd { sigma, q: 1.0 } => {
            Loss::Gaussian { sigma }
        }
        Loss::Substitute { sigma, q: 1.0 } => Loss::Gaussian { sigma: 0.5 * sigma },
        other => other,
    }
}

/// Values of a pure function of one `f64` already computed (by the argument's bits).
#[derive(Default)]
struct Memo(std::cell::RefCell<Vec<(u64, (f64, f64))>>);

impl Memo {
    fn get_pair(&self, x: f64, f: impl FnOnce() -> (f64, f64)) -> (f64, f64) {
        if let Some(&(_, v)) = self.0.borrow().iter().find(|(k, _)| *k == x.to_bits()) {
            return v;
        }
        let v = f();
        self.0.borrow_mut().push((x.to_bits(), v));
        v
    }
    fn get(&self, x: f64, f: impl FnOnce() -> f64) -> f64 {
        self.get_pair(x, || (f(), 0.0)).0
    }
}

/// The discretised leaves with their counts, as the composition takes them.
fn parts_of<'a>(discs: &'a [Discretised], counts: &[u64]) -> Vec<Part<'a>> {
    discs
        .iter()
        .zip(counts)
        .map(|(d, &count)| Part { d, count })
        .collect()
}

/// The coarse first lattice step and the leaves discretised at it: fine enough to resolve
/// the widest leaf's loss range in ~2000 nodes, coarse enough that the composition's window
/// is ~2·10⁴ nodes (the refinements go finer).
fn first_step(leaves: &[(Loss, u64)], max_points: usize) -> Option<(f64, Vec<Discretised>)> {
    let widest = leaves
        .iter()
        .map(|(l, _)| {
            let (a, b) = l.range(TAIL);
            b - a
        })
        .fold(0.0, f64::max);
    let probe_h = (widest / 2000.0).max(1e-12);
    let probe: Option<Vec<Discretised>> = leaves
        .par_iter()
        .map(|&(l, _)| discretise(l, probe_h, TAIL, max_points))
        .collect();
    let probe = probe?;
    let sd: f64 = probe
        .iter()
        .zip(leaves)
        .map(|(d, (_, c))| *c as f64 * variance(d, probe_h))
        .sum::<f64>()
        .sqrt();
    let h = probe_h.max(sd / 2000.0);
    if h == probe_h {
        return Some((h, probe));
    }
    let discs: Option<Vec<Discretised>> = leaves
        .par_iter()
        .map(|&(l, _)| discretise(l, h, TAIL, max_points))
        .collect();
    Some((h, discs?))
}

/// Variance of the pessimistic PMF's finite part (loss units).
fn variance(d: &Discretised, h: f64) -> f64 {
    let (mut m0, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for (i, &p) in d.pess.iter().enumerate() {
        let s = (d.start + i as i64) as f64 * h;
        m0 += p;
        m1 += p * s;
        m2 += p * s * s;
    }
    if m0 <= 0.0 {
        return 0.0;
    }
    (m2 / m0 - (m1 / m0).powi(2)).max(0.0)
}

/// `ln Σ p e^{λs}` and the tilted mean of one pessimistic PMF (finite part).
fn log_mgf_mean(d: &Discretised, lambda: f64) -> (f64, f64) {
    let h = d.h;
    let shift = d
        .pess
        .iter()
        .enumerate()
        .filter(|(_, p)| **p > 0.0)
        .map(|(i, _)| lambda * (d.start + i as i64) as f64 * h)
        .fold(f64::NEG_INFINITY, f64::max);
    if shift == f64::NEG_INFINITY {
        return (f64::NEG_INFINITY, 0.0);
    }
    let (mut z, mut zs) = (0.0, 0.0);
    for (i, &p) in d.pess.iter().enumerate() {
        let s = (d.start + i as i64) as f64 * h;
        let w = p * (lambda * s - shift).exp();
        z += w;
        zs += w * s;
    }
    (shift + z.ln(), zs / z)
}

/// The tilt λ ≥ 0 that centres the composed (coarse, pessimistic) loss at `eps`.
fn saddle(coarse: &[Discretised], counts: &[u64], eps: f64) -> f64 {
    let mean = |lambda: f64| -> f64 {
        coarse
            .iter()
            .zip(counts)
            .map(|(d, &c)| c as f64 * log_mgf_mean(d, lambda).1)
            .sum()
    };
    if mean(0.0) >= eps {
        return 0.0;
    }
    let mut hi = 1.0;
    while mean(hi) < eps {
        hi *= 2.0;
        if hi > 1e4 {
            // ε lies above (almost) all the loss: only the mass at +∞ counts, no tilt helps
            return 0.0;
        }
    }
    let mut lo = 0.0;
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if mean(mid) < eps {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `Σ n_c ln Z_c(λ)` of the (coarse, pessimistic) finite parts.
fn log_mgf_sum(coarse: &[Discretised], counts: &[u64], lambda: f64) -> f64 {
    coarse
        .iter()
        .zip(counts)
        .map(|(d, &c)| c as f64 * log_mgf_mean(d, lambda).0)
        .sum()
}

/// The Chernoff bound on ε(δ), `min_λ (Σ n ln Z(λ) + ln(1/δ))/λ` over a grid of λ, and
/// its minimiser: the tilt of the saddle point of that (slightly pessimistic) ε.
fn chernoff(coarse: &[Discretised], counts: &[u64], delta: f64) -> (f64, f64) {
    let mut best = (0.0, f64::INFINITY);
    for i in 0..=120 {
        let lambda = 10f64.powf(-4.0 + i as f64 * 0.06);
        let eps = (log_mgf_sum(coarse, counts, lambda) - delta.ln()) / lambda;
        if eps < best.1 {
            best = (lambda, eps);
        }
    }
    best
}

impl Accountant for CertifiedPld {
    fn name(&self) -> &'static str {
        CERTIFIED_PLD_LABEL
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
