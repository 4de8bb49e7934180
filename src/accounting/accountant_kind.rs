//! [`Method`]: which accountant turns a privacy budget into a number of iterations.

use serde::{Deserialize, Serialize};

/// Accountant used to turn the privacy budget into a number of iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// zCDP + thesis Theorem 1 conversion (Theorems 5, 11).
    Zcdp,
    /// Tight Gaussian privacy loss distribution ("ADP" in the thesis; Theorems 6, 12).
    Pld,
    /// Rényi DP (Theorem 8 for the minibatch penalty, Theorem 7 for DP Barker).
    Rdp,
    /// DP Barker only: Rényi DP with the exact per-step divergence of the Barker test over its
    /// feasible family instead of Theorem 7's bound (`rdp-exact`; same amplification, orders
    /// and conversion; [`BarkerBound::Exact`](super::BarkerBound::Exact)).
    RdpExact,
    /// Fourier accountant of Koskela et al. (minibatch penalty; substitute relation).
    Fourier,
}

/// Label of the certified PLD accountant ([`CertifiedPld`](super::CertifiedPld)): an interval
/// that contains the true value; the subsampled samplers' `--accountant pld` counts with its
/// upper bound.
pub const CERTIFIED_PLD_LABEL: &str = "PLD (certified)";

/// Label of zCDP with the CKS20 conversion ([`ZcdpConversion::Cks20`](super::ZcdpConversion)),
/// the accountant of exact discrete Gaussian noise.
pub const ZCDP_CKS20_LABEL: &str = "zCDP-CKS20";

impl Method {
    /// Its name on the command line and in JSON (`--accountant`): `zcdp`, `pld`, `rdp`,
    /// `rdp-exact`, `fourier`.
    pub fn key(self) -> &'static str {
        match self {
            Method::Zcdp => "zcdp",
            Method::Pld => "pld",
            Method::Rdp => "rdp",
            Method::RdpExact => "rdp-exact",
            Method::Fourier => "fourier",
        }
    }

    /// Its label in tables, plots, a run's display and [`Accountant::name`](super::Accountant::name):
    /// "zCDP", "ADP" (the thesis' name of the tight Gaussian PLD), "RDP", "RDP-exact",
    /// "Fourier". One name per accountant: the key on the command line and in JSON, this label
    /// everywhere else; the certified PLD is [`CERTIFIED_PLD_LABEL`].
    pub fn label(self) -> &'static str {
        match self {
            Method::Zcdp => "zCDP",
            Method::Pld => "ADP",
            Method::Rdp => "RDP",
            Method::RdpExact => "RDP-exact",
            Method::Fourier => "Fourier",
        }
    }
}
