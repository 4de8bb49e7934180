//! The notebooks' quick flag: one reading of `DP_MCMC_QUICK` for every notebook.

/// The environment variable that sizes the notebooks' live grids.
pub const QUICK_ENV: &str = "DP_MCMC_QUICK";

/// `true` (small live grids) unless `DP_MCMC_QUICK=0`: the default is quick, as in
/// `scripts/notebooks.sh` and CI, which export `DP_MCMC_QUICK=1`. Start Jupyter with
/// `DP_MCMC_QUICK=0` for the full grids. The kernel inherits Jupyter's environment; read the
/// flag once, in a notebook's first cells.
///
/// ```
/// use dp_mcmc::prelude::*;
/// use dp_mcmc::display::{QUICK_ENV, quick_mode_from};
/// let quick: bool = quick_mode();
/// assert_eq!(quick, quick_mode_from(std::env::var(QUICK_ENV).ok().as_deref()));
/// ```
pub fn quick_mode() -> bool {
    quick_mode_from(std::env::var(QUICK_ENV).ok().as_deref())
}

/// The quick flag for a value of `DP_MCMC_QUICK` (`None`: not set): quick unless the value
/// is `0` (surrounding spaces ignored).
///
/// ```
/// use dp_mcmc::display::quick_mode_from;
/// assert!(quick_mode_from(None));
/// assert!(quick_mode_from(Some("1")));
/// assert!(!quick_mode_from(Some("0")));
/// assert!(!quick_mode_from(Some(" 0\n")));
/// // Anything else, even a typo, keeps the notebooks quick (bounded work is the safe side).
/// assert!(quick_mode_from(Some("no")));
/// ```
pub fn quick_mode_from(value: Option<&str>) -> bool {
    value.is_none_or(|v| v.trim() != "0")
}
