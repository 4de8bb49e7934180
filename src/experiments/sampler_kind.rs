//! The algorithms of the thesis experiments, by CLI key and by the thesis code's name.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An algorithm of the thesis experiments (plus the non-private baselines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SamplerKind {
    /// Random-walk MH (non-private baseline).
    Rwmh,
    /// HMC (non-private baseline).
    Hmc,
    /// DP penalty, full update (thesis code `dpps`).
    DpPenalty,
    /// DP penalty with one-component updates (the `dppa` tuning, without the guided walk).
    DpPenaltyOcu,
    /// DP penalty with OCU + guided walk (`dppa`).
    DpPenaltyGwmh,
    /// DP HMC (`hmc`).
    DpHmc,
    /// Minibatch DP penalty, full update (`mdpps`).
    MinibatchPenalty,
    /// Minibatch DP penalty with OCU + guided walk (`mdppa`).
    MinibatchPenaltyGwmh,
    /// DP Barker (`barker`).
    DpBarker,
}

impl SamplerKind {
    /// Every algorithm.
    pub const ALL: [SamplerKind; 9] = [
        SamplerKind::Rwmh,
        SamplerKind::Hmc,
        SamplerKind::DpPenalty,
        SamplerKind::DpPenaltyOcu,
        SamplerKind::DpPenaltyGwmh,
        SamplerKind::DpHmc,
        SamplerKind::MinibatchPenalty,
        SamplerKind::MinibatchPenaltyGwmh,
        SamplerKind::DpBarker,
    ];

    /// CLI key (`dp-penalty-gwmh`, ...).
    pub fn key(self) -> &'static str {
        match self {
            SamplerKind::Rwmh => "rwmh",
            SamplerKind::Hmc => "hmc",
            SamplerKind::DpPenalty => "dp-penalty",
            SamplerKind::DpPenaltyOcu => "dp-penalty-ocu",
            SamplerKind::DpPenaltyGwmh => "dp-penalty-gwmh",
            SamplerKind::DpHmc => "dp-hmc",
            SamplerKind::MinibatchPenalty => "minibatch-penalty",
            SamplerKind::MinibatchPenaltyGwmh => "minibatch-penalty-gwmh",
            SamplerKind::DpBarker => "dp-barker",
        }
    }

    /// Label used in the thesis' figures.
    pub fn label(self) -> &'static str {
        match self {
            SamplerKind::Rwmh => "RWMH",
            SamplerKind::Hmc => "HMC",
            SamplerKind::DpPenalty => "DP Penalty",
            SamplerKind::DpPenaltyOcu => "DP Penalty OCU",
            SamplerKind::DpPenaltyGwmh => "DP Penalty OCU+GWMH",
            SamplerKind::DpHmc => "DP HMC",
            SamplerKind::MinibatchPenalty => "Minibatch DP Penalty",
            SamplerKind::MinibatchPenaltyGwmh => "Minibatch DP Penalty OCU+GWMH",
            SamplerKind::DpBarker => "DP Barker",
        }
    }

    /// Whether the algorithm is differentially private.
    pub fn is_private(self) -> bool {
        !matches!(self, SamplerKind::Rwmh | SamplerKind::Hmc)
    }
}

impl fmt::Display for SamplerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for SamplerKind {
    type Err = Error;

    /// Parses a CLI key, or one of the thesis code's names `dpps`, `dppa`, `mdpps`, `mdppa`,
    /// `barker`. (The thesis' `hmc` is DP HMC; here `hmc` is the non-private baseline and DP
    /// HMC is `dp-hmc`.)
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        let by_code = match s {
            "dpps" => Some(SamplerKind::DpPenalty),
            "dppa" => Some(SamplerKind::DpPenaltyGwmh),
            "mdpps" => Some(SamplerKind::MinibatchPenalty),
            "mdppa" => Some(SamplerKind::MinibatchPenaltyGwmh),
            "barker" => Some(SamplerKind::DpBarker),
            _ => None,
        };
        by_code
            .or_else(|| SamplerKind::ALL.into_iter().find(|k| k.key() == s))
            .ok_or_else(|| {
                let keys: Vec<&str> = SamplerKind::ALL.iter().map(|k| k.key()).collect();
                Error::invalid("algorithm", s, format!("use one of {}", keys.join(", ")))
            })
    }
}
