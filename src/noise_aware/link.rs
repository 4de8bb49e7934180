//! The GLMs' per-row residual and information weight as functions of the linear predictor
//! `η`: **one formula** for the rows' terms and for the bounds the releases are charged for,
//! each evaluated where it is accurate.
//!
//! The logistic residual `1 − σ(η)` is `σ(−η)`, and the weight `σ(η)(1 − σ(η))` is
//! `e^{−|η|}/(1 + e^{−|η|})²`: written as `1 − σ` they cancel for `η ≳ 30` and are exactly 0
//! from `η ≈ 36.7` on, while the same quantities at `−η` are accurate. A bound evaluated at
//! `|η|` with the cancelling form is then 0 where the rows' own terms are not, which would
//! release a sum without noise. Every caller here goes through these functions, so a row's
//! term and its bound are the same floating-point function of `η`.
//!
//! ```text
//! logistic: residual y − σ(η) ∈ [−σ(η), σ(−η)],   weight σ(η)σ(−η)
//! Poisson (cap K): residual clamp(y − e^η, −K, K) ∈ [max(−e^η, −K), clamp(K − e^η, −K, K)],
//!                  weight min(e^η, K)
//! ```

/// Which regression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GlmKind {
    /// Logistic regression of a 0/1 response.
    Logistic,
    /// Poisson regression (log link) of a count response capped at a declared `K`.
    Poisson,
    /// Linear regression with Gaussian errors; the last parameter is `ln σ`.
    Linear,
}

impl GlmKind {
    /// The model's name as the CLI and the JSON spell it (`logistic`, `poisson`, `linear`).
    pub fn label(self) -> &'static str {
        match self {
            GlmKind::Logistic => "logistic",
            GlmKind::Poisson => "poisson",
            GlmKind::Linear => "linear",
        }
    }
}

/// `σ(η) = 1/(1 + e^{−η})`, accurate in both tails (no `1 − ·` cancellation).
pub(crate) fn sigmoid(eta: f64) -> f64 {
    if eta >= 0.0 {
        1.0 / (1.0 + (-eta).exp())
    } else {
        let e = eta.exp();
        e / (1.0 + e)
    }
}

/// The logistic weight `σ(η)(1 − σ(η)) = e^{−|η|}/(1 + e^{−|η|})²`: symmetric in `η`,
/// non-increasing in `|η|`, accurate everywhere (positive until `e^{−|η|}` underflows).
pub(crate) fn logistic_weight(eta: f64) -> f64 {
    let e = (-eta.abs()).exp();
    let one = 1.0 + e;
    e / (one * one)
}

/// A GLM's row terms: the model and the Poisson cap `K`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Link {
    pub kind: GlmKind,
    pub cap: f64,
}

impl Link {
    /// The residual `∂ ln p / ∂η` of a row with response `y` at `eta` (logistic: `y ∈ {0, 1}`;
    /// Poisson: `y ∈ [0, K]`).
    pub(crate) fn residual(self, y: f64, eta: f64) -> f64 {
        match self.kind {
            GlmKind::Logistic => {
                if y == 1.0 {
                    sigmoid(-eta)
                } else {
                    y - sigmoid(eta)
                }
            }
            _ => (y - eta.exp()).clamp(-self.cap, self.cap),
        }
    }

    /// The residual's limit over the model's responses at `eta`: the largest (`upper`) or
    /// the smallest. Equal, bit for bit, to [`Link::residual`] at the response that attains it.
    pub(crate) fn residual_limit(self, eta: f64, upper: bool) -> f64 {
        match self.kind {
            GlmKind::Logistic => self.residual(if upper { 1.0 } else { 0.0 }, eta),
            _ => self.residual(if upper { self.cap } else { 0.0 }, eta),
        }
    }

    /// The information weight `−∂² ln p / ∂η²` at `eta`.
    pub(crate) fn weight(self, eta: f64) -> f64 {
        match self.kind {
            GlmKind::Logistic => logistic_weight(eta),
            _ => eta.exp().min(self.cap),
        }
    }

    /// The largest weight over `η` between `e0` and `e1` (logistic: at the `η` closest to 0;
    /// Poisson: at the larger end).
    pub(crate) fn max_weight(self, e0: f64, e1: f64) -> f64 {
        let (lo, hi) = (e0.min(e1), e0.max(e1));
        match self.kind {
            GlmKind::Logistic => {
                let eta = if lo <= 0.0 && hi >= 0.0 {
                    0.0
                } else if hi < 0.0 {
                    hi
                } else {
                    lo
                };
                logistic_weight(eta)
            }
            _ => self.weight(hi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The accurate forms agree with the textbook ones where those are accurate, stay
    /// positive far in the tails where `1 − σ` cancels to 0, and the bound over an interval
    /// is never below the weight of a point inside it.
    #[test]
    fn logistic_terms_are_accurate_in_both_tails() {
        let link = Link {
            kind: GlmKind::Logistic,
            cap: 1.0,
        };
        // where the textbook forms are accurate (no cancellation beyond a few ulps)
        for eta in [-4.0, -3.0, -0.5, 0.0, 0.7, 2.0, 4.0] {
            let s = 1.0 / (1.0 + f64::exp(-eta));
            assert!((sigmoid(eta) - s).abs() <= 1e-15);
            assert!((logistic_weight(eta) - s * (1.0 - s)).abs() <= 1e-12 * s * (1.0 - s));
        }
        for eta in [-745.0, -200.0, -40.0, 40.0, 200.0, 700.0] {
            // the exact values are e^{−|η|} to 16 digits here
            let exact = f64::exp(-f64::abs(eta));
            assert!((logistic_weight(eta) / exact - 1.0).abs() < 1e-14, "{eta}");
            assert_eq!(link.residual_limit(eta, true), sigmoid(-eta));
            assert!(link.residual_limit(eta, true) > 0.0 || eta > 700.0);
        }
        // the textbook form of the weight at |η| is 0 there: the defect this module removes
        let textbook = |eta: f64| {
            let s = 1.0 / (1.0 + f64::exp(-f64::abs(eta)));
            s * (1.0 - s)
        };
        assert_eq!(textbook(-40.0), 0.0);
        assert!(link.max_weight(-67.0, -36.0) >= link.weight(-50.0));
        assert_eq!(link.max_weight(-67.0, -36.0), link.weight(-36.0));
        assert_eq!(link.max_weight(2.0, 5.0), link.weight(2.0));
        assert_eq!(link.max_weight(-1.0, 5.0), 0.25);
    }
}
