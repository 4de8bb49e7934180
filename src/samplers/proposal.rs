//! Random-walk proposals: full update, one-component update (OCU) and guided walk (GWMH).

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, check};
use crate::rng::ChainRng;

/// Which coordinates a random-walk proposal moves (thesis §3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProposalKind {
    /// `θ' = θ + N(0, diag(s²))`: every coordinate moves.
    #[default]
    Full,
    /// One-component update: a uniformly chosen coordinate `c` moves by `N(0, s_c²)`.
    OneComponent,
    /// Guided walk (Gustafson): coordinate `c` moves by `dir_c·|N(0, s_c²)|`; `dir_c` flips
    /// on rejection. Implies one-component updates.
    GuidedWalk,
}

impl ProposalKind {
    /// Name used in results (`"full"`, `"ocu"`, `"gwmh"`).
    pub fn label(self) -> &'static str {
        match self {
            ProposalKind::Full => "full",
            ProposalKind::OneComponent => "ocu",
            ProposalKind::GuidedWalk => "gwmh",
        }
    }
}

/// Proposal standard deviations: one for all coordinates, or one per coordinate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StepSize {
    /// The same standard deviation for every coordinate.
    Scalar(f64),
    /// One standard deviation per coordinate.
    PerCoordinate(Vec<f64>),
}

impl From<f64> for StepSize {
    fn from(s: f64) -> Self {
        StepSize::Scalar(s)
    }
}
impl From<Vec<f64>> for StepSize {
    fn from(s: Vec<f64>) -> Self {
        StepSize::PerCoordinate(s)
    }
}
impl From<&[f64]> for StepSize {
    fn from(s: &[f64]) -> Self {
        StepSize::PerCoordinate(s.to_vec())
    }
}

impl StepSize {
    /// Expand to one positive standard deviation per coordinate, validating.
    pub fn resolve(&self, name: &'static str, dim: usize) -> Result<Vec<f64>> {
        let v = match self {
            StepSize::Scalar(s) => vec![*s; dim],
            StepSize::PerCoordinate(v) => {
                check::len(name, v.len(), dim)?;
                v.clone()
            }
        };
        for &s in &v {
            check::positive(name, s)?;
        }
        Ok(v)
    }
}

/// A random-walk proposal with its per-chain state (the GWMH directions).
#[derive(Clone, Debug)]
pub struct RandomWalk {
    kind: ProposalKind,
    /// The configured standard deviations.
    base: Vec<f64>,
    /// The standard deviations in use: `base` times the warm-up scale (exactly `base` until
    /// [`set_scale`](Self::set_scale) is called).
    sd: Vec<f64>,
    direction: Vec<f64>,
    last: Option<usize>,
}

impl RandomWalk {
    /// A proposal for dimension `sd.len()`; GWMH directions are drawn uniformly from ±1.
    pub fn new(kind: ProposalKind, sd: Vec<f64>, rng: &mut ChainRng) -> Result<Self> {
        if sd.is_empty() {
            return Err(Error::invalid(
                "proposal_sd",
                "[]",
                "needs one entry per parameter",
            ));
        }
        let direction = match kind {
            ProposalKind::GuidedWalk => (0..sd.len())
                .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
                .collect(),
            _ => Vec::new(),
        };
        Ok(RandomWalk {
            kind,
            base: sd.clone(),
            sd,
            direction,
            last: None,
        })
    }

    /// Write a proposal from `theta` into `out` (same length).
    pub fn propose(&mut self, theta: &[f64], out: &mut [f64], rng: &mut ChainRng) {
        out.copy_from_slice(theta);
        match self.kind {
            ProposalKind::Full => {
                for ((o, t), s) in out.iter_mut().zip(theta).zip(&self.sd) {
                    let z: f64 = StandardNormal.sample(rng);
                    *o = t + s * z;
                }
            }
            ProposalKind::OneComponent => {
                let c = rng.random_range(0..theta.len());
                let z: f64 = StandardNormal.sample(rng);
                out[c] = theta[c] + self.sd[c] * z;
                self.last = Some(c);
            }
            ProposalKind::GuidedWalk => {
                let c = rng.random_range(0..theta.len());
                let z: f64 = StandardNormal.sample(rng);
                out[c] = theta[c] + self.direction[c] * (self.sd[c] * z).abs();
                self.last = Some(c);
            }
        }
    }

    /// Scale every standard deviation to `scale` times its configured value (warm-up
    /// adaptation, [`crate::samplers::adapt`]).
    pub fn set_scale(&mut self, scale: f64) {
        for (s, b) in self.sd.iter_mut().zip(&self.base) {
            *s = b * scale;
        }
    }

    /// Tell the proposal whether the last move was accepted (GWMH flips its direction on
    /// rejection).
    pub fn feedback(&mut self, accepted: bool) {
        if let (ProposalKind::GuidedWalk, Some(c), false) = (self.kind, self.last, accepted) {
            self.direction[c] = -self.direction[c];
        }
    }
}

/// `‖a − b‖₂`.
#[inline]
pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Distance used to scale the clip bound (thesis clipping experiment: `|Σ_i (θ_i − θ'_i)|`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClipDistance {
    /// `‖θ − θ'‖₂` (correct; default).
    #[default]
    L2,
    /// `|Σ_i (θ_i − θ'_i)|`, as the thesis' clipping-experiment code computes it.
    AbsSumThesis,
}

impl ClipDistance {
    /// Evaluate the distance between `a` and `b`.
    pub fn eval(self, a: &[f64], b: &[f64]) -> f64 {
        match self {
            ClipDistance::L2 => distance(a, b),
            ClipDistance::AbsSumThesis => a.iter().zip(b).map(|(x, y)| x - y).sum::<f64>().abs(),
        }
    }
}
