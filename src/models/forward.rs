//! `Model` for pointers to models: `&M`, `Box<M>` and `Arc<M>` (including `Box<dyn Model>`)
//! are models that forward every method, so a boxed or borrowed model goes wherever a model
//! does (a sampler value's `run(&dyn Model)`, the `auto` layer, a list of models).
//!
//! ```
//! use dp_mcmc::models::{Model, testing::IsotropicGaussian};
//! let boxed: Box<dyn Model> = Box::new(IsotropicGaussian::generate(100, 2, 1));
//! fn rows(m: &impl Model) -> usize { m.n_rows() }
//! assert_eq!(rows(&boxed), 100);
//! assert_eq!(rows(&&*boxed), 100);
//! ```

use std::sync::Arc;

use super::{Layout, Model};
use crate::error::Result;

macro_rules! forward_model {
    ($($ptr:ty),*) => {$(
        impl<M: Model + ?Sized> Model for $ptr {
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn n_rows(&self) -> usize {
                (**self).n_rows()
            }
            fn param_names(&self) -> Vec<String> {
                (**self).param_names()
            }
            fn tempering(&self) -> f64 {
                (**self).tempering()
            }
            fn public_lipschitz(&self) -> Option<f64> {
                (**self).public_lipschitz()
            }
            fn log_prior(&self, theta: &[f64]) -> f64 {
                (**self).log_prior(theta)
            }
            fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
                (**self).grad_log_prior(theta, grad)
            }
            fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
                (**self).log_lik_row(theta, row)
            }
            fn has_gradient(&self) -> bool {
                (**self).has_gradient()
            }
            fn grad_log_lik_row(&self, theta: &[f64], row: usize, grad: &mut [f64]) -> Result<()> {
                (**self).grad_log_lik_row(theta, row, grad)
            }
            fn has_direct_ratio(&self) -> bool {
                (**self).has_direct_ratio()
            }
            fn layout(&self) -> Layout {
                (**self).layout()
            }
            fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
                (**self).log_lik_rows(theta, start, out)
            }
            fn log_lik_ratio_rows(
                &self,
                theta: &[f64],
                theta_new: &[f64],
                start: usize,
                out: &mut [f64],
            ) {
                (**self).log_lik_ratio_rows(theta, theta_new, start, out)
            }
            fn log_lik_ratio_indexed(
                &self,
                theta: &[f64],
                theta_new: &[f64],
                rows: &[usize],
                out: &mut [f64],
            ) {
                (**self).log_lik_ratio_indexed(theta, theta_new, rows, out)
            }
            fn grad_log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
                (**self).grad_log_lik_rows(theta, start, out)
            }
            fn has_column_gradients(&self) -> bool {
                (**self).has_column_gradients()
            }
            fn grad_log_lik_cols(&self, theta: &[f64], start: usize, out: &mut [f64]) -> Result<()> {
                (**self).grad_log_lik_cols(theta, start, out)
            }
            fn has_gradient_sum(&self) -> bool {
                (**self).has_gradient_sum()
            }
            fn grad_log_lik_sum(&self, theta: &[f64], out: &mut [f64]) -> Result<()> {
                (**self).grad_log_lik_sum(theta, out)
            }
        }
    )*};
}

forward_model!(&M, Box<M>, Arc<M>);
