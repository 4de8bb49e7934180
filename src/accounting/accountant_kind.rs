//! [`AccountantKind`]: which accountant turns a privacy budget into a number of iterations
//! (the accountant choice; `fit --method` is the inference method, another thing).

use serde::{Deserialize, Serialize};

/// Accountant used to turn the privacy budget into a number of iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AccountantKind {
    /// zCDP + thesis Theorem 1 conversion (Theorems 5, 11).
    Zcdp,
    /// Tight Gaussian privacy loss distribution ("ADP" in the thesis; Theorems 6, 12) of the
    /// full-data samplers, in closed form ([`Pld`](super::Pld)). A subsampled sampler asked for
    /// it answers with [`CertifiedPld`](Self::CertifiedPld), the PLD of its subsampled event.
    Pld,
    /// The certified numerical PLD ([`CertifiedPld`](super::CertifiedPld)) of the subsampled
    /// samplers and DP Barker: they count with its upper bound (`--accountant pld` on the
    /// command line, as for [`Pld`](Self::Pld): one key, the sampler picks the engine).
    CertifiedPld,
    /// Rényi DP (Theorem 8 for the minibatch penalty, Theorem 7 for DP Barker).
    Rdp,
    /// DP Barker only: Rényi DP with the exact per-step divergence of the Barker test over its
    /// feasible family instead of Theorem 7's bound (`rdp-exact`; same amplification, orders
    /// and conversion; [`BarkerBound::Exact`](super::BarkerBound::Exact)).
    RdpExact,
    /// Fourier accountant of Koskela et al. (minibatch penalty; substitute relation).
    Fourier,
}

/// Label of the certified PLD accountant ([`CertifiedPld`](super::CertifiedPld),
/// [`AccountantKind::CertifiedPld`]): an interval that contains the true value; the subsampled
/// samplers' `--accountant pld` counts with its upper bound.
pub const CERTIFIED_PLD_LABEL: &str = "PLD (certified)";

/// Label of zCDP with the CKS20 conversion ([`ZcdpConversion::Cks20`](super::ZcdpConversion)),
/// the accountant of exact discrete Gaussian noise.
pub const ZCDP_CKS20_LABEL: &str = "zCDP-CKS20";

impl AccountantKind {
    /// Its name on the command line and in JSON (`--accountant`): `zcdp`, `pld` (both PLD
    /// variants), `rdp`, `rdp-exact`, `fourier`.
    pub fn key(self) -> &'static str {
        match self {
            AccountantKind::Zcdp => "zcdp",
            AccountantKind::Pld | AccountantKind::CertifiedPld => "pld",
            AccountantKind::Rdp => "rdp",
            AccountantKind::RdpExact => "rdp-exact",
            AccountantKind::Fourier => "fourier",
        }
    }

    /// Its label in tables, plots, a run's display and [`Accountant::name`](super::Accountant::name):
    /// "zCDP", "ADP" (the thesis' name of the tight Gaussian PLD), "RDP", "RDP-exact",
    /// "Fourier", [`CERTIFIED_PLD_LABEL`]. One name per accountant: the key on the command line
    /// and in JSON, this label everywhere else.
    pub fn label(self) -> &'static str {
        match self {
            AccountantKind::Zcdp => "zCDP",
            AccountantKind::Pld => "ADP",
            AccountantKind::CertifiedPld => CERTIFIED_PLD_LABEL,
            AccountantKind::Rdp => "RDP",
            AccountantKind::RdpExact => "RDP-exact",
            AccountantKind::Fourier => "Fourier",
        }
    }

    /// The kind a subsampled sampler (or DP Barker) counts with when asked for `self`: the
    /// PLD of its event is the certified engine's ([`Pld`](Self::Pld) becomes
    /// [`CertifiedPld`](Self::CertifiedPld)); every other kind is itself.
    pub(crate) fn numerical_pld(self) -> Self {
        match self {
            AccountantKind::Pld => AccountantKind::CertifiedPld,
            other => other,
        }
    }
}
