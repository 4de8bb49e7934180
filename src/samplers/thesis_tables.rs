//! The thesis' tuned settings for its Table 5.1 experiments (public: its parameter files),
//! one home for the samplers that start from another sampler's table (DP-Fast MH and RWMH
//! from the DP penalty's, DP-SGLD and DP-SGNHT from DP HMC's, the HMC baseline from DP HMC's
//! integrator).

use super::proposal::StepSize;
use super::sampler::per_coordinate;
use crate::models::Experiment;

/// The thesis' `dpps` table (DP penalty, full update): `(τ, proposal sd, clip bound)`.
pub(crate) fn penalty_full(experiment: Experiment) -> (f64, StepSize, f64) {
    use Experiment::*;
    let (tau, s, b) = match experiment {
        EasyBanana2d => (0.1, 0.008, 2.0),
        EasyBanana10d => (0.1, 0.0015, 2.0),
        TemperedBanana2d => (0.2, 0.035, 5.0),
        TemperedBanana10d => (0.18, 0.02, 3.0),
        HardBanana2d => (0.20, 0.0015, 5.5),
        Gauss30d => (0.06, 0.00084, 3.0),
        HardGauss2d => (0.07, 0.00015, 50.0),
        Circle => (4.0, 0.2, 0.002),
    };
    let sd = if experiment == Gauss30d {
        StepSize::Scalar(s)
    } else {
        per_coordinate(s, experiment.dim())
    };
    (tau, sd, b)
}

/// The thesis' `dppa` table (DP penalty with OCU and GWMH): `(τ, proposal sd per coordinate,
/// clip bound)`.
pub(crate) fn penalty_ocu(experiment: Experiment) -> (f64, f64, f64) {
    use Experiment::*;
    match experiment {
        EasyBanana2d => (0.1, 0.008, 1.8),
        EasyBanana10d => (0.10, 0.0015, 3.0),
        TemperedBanana2d => (0.2, 0.04, 3.5),
        TemperedBanana10d => (0.10, 0.04, 3.0),
        HardBanana2d => (0.1, 0.0015, 8.5),
        Gauss30d => (0.2, 0.00084, 3.0),
        HardGauss2d => (0.1, 0.0002, 45.0),
        Circle => (4.0, 0.3, 0.002),
    }
}

/// The thesis' `hmc` table for `experiment`: `(τ_l, τ_g, b_l, b_g)`.
pub(crate) fn dp_hmc_table(experiment: Experiment) -> (f64, f64, f64, f64) {
    use Experiment::*;
    match experiment {
        EasyBanana2d => (0.1, 0.4, 2.0, 1.0),
        EasyBanana10d => (0.05, 0.2, 2.5, 3.0),
        TemperedBanana2d => (0.2, 0.6, 2.5, 2.0),
        TemperedBanana10d => (0.08, 0.20, 2.5, 3.5),
        HardBanana2d => (0.15, 0.25, 5.0, 2.8),
        Gauss30d => (0.05, 0.10, 2.5, 6.0),
        HardGauss2d => (0.05, 0.20, 30.0, 29.0),
        Circle => (0.6, 1.9, 0.001, 0.0015),
    }
}

/// The thesis' tuned leapfrog integrator `(L, η)` per experiment (its DP HMC table, `hmc`;
/// the non-private baseline uses it outside the flat bananas; unit masses).
pub(crate) fn integrator(experiment: Experiment) -> (usize, f64) {
    use Experiment::*;
    match experiment {
        EasyBanana2d => (10, 0.0005),
        EasyBanana10d => (10, 0.00015),
        TemperedBanana2d => (10, 0.01),
        TemperedBanana10d => (10, 0.015),
        HardBanana2d => (5, 0.00045),
        Gauss30d => (5, 0.00025),
        HardGauss2d => (8, 0.00007),
        Circle => (40, 0.07),
    }
}
