//! `use dp_mcmc::prelude::*;` brings what a notebook cell needs into scope.
pub use crate::display::*;
pub use crate::error::{Error, Result};
pub use polars::prelude::DataFrame;
