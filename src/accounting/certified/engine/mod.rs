//! Certified privacy loss distribution engine: two-sided bounds on δ(ε) and ε(δ) of
//! compositions, used by [`CertifiedPld`](crate::accounting::CertifiedPld).
//!
//! # Method
//! 1. **Discretisation** ([`discretise`]): each mechanism's dominating pair (P, Q)
//!    ([`loss`]) is cut into loss buckets `(ih, (i+1)h]` whose P- and Q-masses are computed
//!    from normal tails. The **pessimistic** PMF is the connect-the-dots discretisation of
//!    Doroshenko, Ghazi, Kamath, Kumar and Manurangsi (PETS 2022, the one dp_accounting
//!    uses): each bucket's P-mass is split between its two nodes keeping its Q-mass, which
//!    gives a pair that dominates the mechanism; the mass above the lattice is an explicit
//!    atom at +∞. The **optimistic** PMF is the mean-preserving rounding of the bucket pair
//!    (each bucket's P-mass split by its loss `ln(P_b/Q_b)`; the tails are dropped).
//! 2. **Composition** ([`compose`]): one FFT (rustfft) per distinct mechanism, pointwise
//!    powers and products, one inverse FFT, on exponentially tilted PMFs so that the
//!    round-off stays relative to δ however small δ is; the window follows from a Chernoff
//!    bound, and every error (window, aliasing, FFT and power round-off, the
//!    discretisation's own round-off) is bounded and charged to the interval.
//! 3. **Bounds** ([`curve`]): the upper bound is δ of the composed connect-the-dots PMF
//!    plus the allowances; the lower bound is δ of the composed mean-preserving rounding of
//!    the bucket pair, less a second-order gap (or shifted by a Hoeffding deviation, first
//!    order, whichever is better). ε(δ) is solved exactly
//!    on each lattice cell of both curves.
//! 4. **Refinement** ([`CertifiedPld`](crate::accounting::CertifiedPld)): the lattice step
//!    starts coarse and shrinks until the interval is as narrow as asked or the work budget
//!    is spent; every round's interval is certified, so the answer is their intersection.

pub(crate) mod barker;
pub(crate) mod compose;
pub(crate) mod curve;
pub(crate) mod discretise;
pub(crate) mod loss;
pub(crate) mod profile;

/// A closed interval `[lower, upper]` certified to contain the true value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
}

impl Interval {
    /// `upper − lower`.
    pub fn width(&self) -> f64 {
        self.upper - self.lower
    }
    /// Whether `x` lies in the interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }
    /// The intersection of two intervals that both contain the true value.
    pub(crate) fn intersect(self, other: Interval) -> Interval {
        Interval {
            lower: self.lower.max(other.lower),
            upper: self.upper.min(other.upper),
        }
    }
    /// The interval of the maximum of two quantities.
    pub(crate) fn max(self, other: Interval) -> Interval {
        Interval {
            lower: self.lower.max(other.lower),
            upper: self.upper.max(other.upper),
        }
    }
}

#[cfg(test)]
mod tests;
