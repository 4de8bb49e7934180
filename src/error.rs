//! The crate's error type and the parameter checks every constructor shares.
//!
//! No function of this crate panics on user input: bad input comes back as an [`Error`]
//! whose message names the parameter and says what to change.

use std::fmt::Display;

/// Everything that can go wrong in `dp-mcmc`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its domain (`epsilon <= 0`, `delta` outside (0,1), NaN, ...).
    #[error("invalid `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Name of the parameter as the user spelled it (builder method or CLI flag).
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What the value must satisfy, phrased as what to change.
        reason: String,
    },
    /// A slice, matrix or data set has the wrong shape.
    #[error("wrong dimension for `{name}`: expected {expected}, got {got}")]
    DimensionMismatch {
        /// What has the wrong shape.
        name: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// Data contain NaN or infinite values, or are empty.
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// An accountant was asked to compose a privacy event it cannot account for.
    #[error("accountant `{accountant}` does not support the event {event}")]
    UnsupportedEvent {
        /// The accountant's name.
        accountant: &'static str,
        /// The offending (sub-)event, formatted.
        event: String,
    },
    /// The privacy budget does not allow a single iteration (or release).
    #[error("privacy budget too small: {0}")]
    BudgetTooSmall(String),
    /// A numerical routine failed (overflow, no convergence, window too small, ...).
    #[error("numerical failure in {what}: {reason}")]
    Numerical {
        /// The routine that failed.
        what: &'static str,
        /// Why, and what to change.
        reason: String,
    },
    /// The model cannot do what the sampler asked (e.g. no per-row gradient for HMC).
    #[error("model: {0}")]
    Model(String),
    /// A chain stopped with an error; the other chains are unaffected.
    #[error("chain {chain}: {source}")]
    Chain {
        /// Chain index.
        chain: usize,
        /// The underlying error.
        source: Box<Error>,
    },
    /// Error from polars while building or reading a DataFrame.
    #[error(transparent)]
    Polars(#[from] polars::prelude::PolarsError),
    /// I/O error (reading data, writing results).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `Result` with the crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    ///
    /// A value that prints as a very long decimal (`1e308` as 309 digits) is shown in
    /// scientific notation.
    pub fn invalid(name: &'static str, value: impl Display, reason: impl Into<String>) -> Self {
        let mut value = value.to_string();
        if value.len() > 24
            && let Ok(x) = value.parse::<f64>()
        {
            value = num(x);
        }
        Error::InvalidParameter {
            name,
            value,
            reason: reason.into(),
        }
    }
}

/// `x` for an error message: plain decimals for ordinary magnitudes, scientific notation for
/// huge or tiny ones (`1e308`, not 309 digits).
pub fn num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() || a == 0.0 || (1e-5..1e16).contains(&a) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// Parameter checks shared by every constructor (statrs style: validate once, then trust).
pub mod check {
    use super::{Error, Result, num};

    /// `x` must be finite and `> 0`.
    pub fn positive(name: &'static str, x: f64) -> Result<f64> {
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(Error::invalid(name, num(x), "must be a finite number > 0"))
        }
    }

    /// `x` must be finite and `>= 0`.
    pub fn non_negative(name: &'static str, x: f64) -> Result<f64> {
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(Error::invalid(name, num(x), "must be a finite number >= 0"))
        }
    }

    /// `x` must be finite (any sign).
    pub fn finite(name: &'static str, x: f64) -> Result<f64> {
        if x.is_finite() {
            Ok(x)
        } else {
            Err(Error::invalid(name, num(x), "must be a finite number"))
        }
    }

    /// A δ: strictly inside (0, 1).
    pub fn delta(name: &'static str, x: f64) -> Result<f64> {
        if x > 0.0 && x < 1.0 {
            Ok(x)
        } else {
            Err(Error::invalid(
                name,
                num(x),
                "must lie strictly between 0 and 1",
            ))
        }
    }

    /// A sampling rate q: in (0, 1].
    pub fn rate(name: &'static str, x: f64) -> Result<f64> {
        if x > 0.0 && x <= 1.0 {
            Ok(x)
        } else {
            Err(Error::invalid(name, num(x), "must lie in (0, 1]"))
        }
    }

    /// A count that must be at least 1.
    pub fn at_least_one(name: &'static str, k: usize) -> Result<usize> {
        if k >= 1 {
            Ok(k)
        } else {
            Err(Error::invalid(name, k, "must be at least 1"))
        }
    }

    /// Most `f64` values a constructor allocates on the caller's behalf (data generators,
    /// tables): 2^30, i.e. 8 GiB.
    pub const MAX_VALUES: u128 = 1 << 30;

    /// `count` items of `per_item` `f64` values each must fit in [`MAX_VALUES`]; `name` is the
    /// count's parameter.
    pub fn values(name: &'static str, count: u128, per_item: u128) -> Result<()> {
        if count.saturating_mul(per_item) <= MAX_VALUES {
            Ok(())
        } else {
            Err(Error::invalid(
                name,
                count,
                format!(
                    "{count} × {per_item} values would take more than 8 GiB (at most 2^30 \
                     values); use a smaller {name}"
                ),
            ))
        }
    }

    /// A slice must have length `expected`.
    pub fn len(name: &'static str, got: usize, expected: usize) -> Result<()> {
        if got == expected {
            Ok(())
        } else {
            Err(Error::DimensionMismatch {
                name,
                expected,
                got,
            })
        }
    }

    /// Every value must be finite; `what` names the data in the message.
    pub fn all_finite(what: &str, xs: &[f64]) -> Result<()> {
        match xs.iter().position(|x| !x.is_finite()) {
            None => Ok(()),
            Some(i) => Err(Error::InvalidData(format!(
                "{what} has a non-finite value ({}) at position {i}; remove or impute it",
                xs[i]
            ))),
        }
    }
}
