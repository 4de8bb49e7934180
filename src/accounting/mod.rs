//! Privacy accountants: zCDP, RDP (incl. subsampled RDP), the tight Gaussian PLD bound, the
//! Fourier accountant, and Algorithm 2 (maximum number of iterations).
//!
//! Every mechanism is a *sensitivity-normalised* Gaussian: `noise_multiplier` (σ) is the noise
//! std ÷ the l2 sensitivity under the relation in force (see [`PrivacyEvent`] for the
//! substitute-relation convention and the Fourier accountant's factor-2 trap).
//!
//! | what | theorem (thesis) | API |
//! |---|---|---|
//! | zCDP → (ε, δ), ρ budget | Thm 1, Thm 5, Thm 11 | [`Zcdp`], [`zcdp_rho_budget`] |
//! | Gaussian RDP → (ε, δ) over integer orders | Thm 1, Thm 4 | [`Rdp`], [`gaussian_rdp`] |
//! | tight Gaussian PLD δ(ε), ε(δ) | Thm 4, 6, 12 | [`pld_delta`], [`pld_epsilon`], [`Pld`] |
//! | subsampled RDP without replacement | Thm 7/8 (WBK19 Thm 9) | [`wor_subsampled_gaussian_rdp`] |
//! | Poisson-subsampled RDP | Mironov–Talwar–Zhang 2019 | [`poisson_subsampled_gaussian_rdp`] |
//! | DP Barker per-step RDP | Thm 7 (`rd_approx`) | [`BarkerRdp`], [`barker_rd_approx`] |
//! | DP Barker exact per-step RDP (`rdp-exact`) | beside Thm 7 | [`BarkerBound::Exact`], [`barker_rd_exact`] |
//! | DP Barker PLD over the feasible family (`pld`) | beside Thm 7 | [`CertifiedPld`] with `BarkerTest`, `AccountantKind::CertifiedPld` |
//! | Fourier accountant | Koskela et al. 2020 | [`Fourier`], [`fourier::FourierAccountant`] |
//! | certified PLD intervals (Gaussian, Laplace, subsampled) | Thm 6, 12 | [`CertifiedPld`], [`Interval`] |
//! | iterations for (ε, δ) | Alg. 2, Thm 5–8, 11, 12 | [`Accountant::max_iterations`], [`algorithm2()`], [`algorithm2::search`], a DP sampler's `budget(n)` (`samplers::IterationBudget`) |
//!
//! Where the thesis code is optimistic (the minibatch RDP sum stopping at `j = α−1`) the corrected
//! computation is the default and the thesis-code one an explicit option
//! (`.thesis_compatible(true)`, [`WorBound::ThesisCode`]). All rounding is pessimistic.

mod accountant;
mod accountant_kind;
#[cfg(test)]
mod accountant_tests;
pub mod algorithm2;
pub(crate) mod barker;
pub(crate) mod certified;
mod event;
pub mod fourier;
mod pld;
pub(crate) mod rdp;
mod releases;
pub(crate) mod special;
pub(crate) mod zcdp;

pub use accountant::{Accountant, Measure};
pub use accountant_kind::{AccountantKind, CERTIFIED_PLD_LABEL, ZCDP_CKS20_LABEL};
pub use algorithm2::{MAX_ITERATIONS, algorithm2};
pub use barker::exact::barker_rd_exact;
pub use barker::{BarkerBound, BarkerRdp, barker_rd_approx};
pub use certified::CertifiedPld;
pub use certified::engine::Interval;
pub use event::PrivacyEvent;
pub use fourier::Fourier;
/// The accountant choice under its former name.
#[deprecated(
    since = "0.1.0",
    note = "renamed `AccountantKind` (the accountant choice, not the inference method of `fit --method`)"
)]
pub type Method = AccountantKind;
pub use pld::{Pld, gaussian_budget, gaussian_mu, pld_delta, pld_epsilon};
pub use rdp::{
    MAX_RDP_ORDER, Rdp, RdpConversion, WorBound, dp_accounting_orders, gaussian_rdp,
    integer_orders, poisson_subsampled_gaussian_rdp, wor_subsampled_gaussian_rdp,
};
pub use releases::Releases;
pub use zcdp::discrete_gaussian::{
    cks_zcdp_delta, cks_zcdp_epsilon, discrete_gaussian_delta, discrete_gaussian_rho,
};
pub use zcdp::{Zcdp, ZcdpConversion, zcdp_rho_budget};
