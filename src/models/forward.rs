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

use super::Model;

/// The `Model` methods of a type that holds a model, each forwarded to `|s| inner` (an
/// expression of `s: &Self` giving the model): `impl Model for Wrapper { forward_model!(|s|
/// s.inner()); }`. Every method is forwarded, so a wrapper behaves exactly as its model.
macro_rules! forward_model {
    (|$s:ident| $inner:expr) => {
        fn dim(&self) -> usize {
            let $s = self;
            ($inner).dim()
        }
        fn n_rows(&self) -> usize {
            let $s = self;
            ($inner).n_rows()
        }
        fn param_names(&self) -> Vec<String> {
            let $s = self;
            ($inner).param_names()
        }
        fn tempering(&self) -> f64 {
            let $s = self;
            ($inner).tempering()
        }
        fn public_lipschitz(&self) -> Option<f64> {
            let $s = self;
            ($inner).public_lipschitz()
        }
        fn log_prior(&self, theta: &[f64]) -> f64 {
            let $s = self;
            ($inner).log_prior(theta)
        }
        fn grad_log_prior(&self, theta: &[f64], grad: &mut [f64]) {
            let $s = self;
            ($inner).grad_log_prior(theta, grad)
        }
        fn log_lik_row(&self, theta: &[f64], row: usize) -> f64 {
            let $s = self;
            ($inner).log_lik_row(theta, row)
        }
        fn has_gradient(&self) -> bool {
            let $s = self;
            ($inner).has_gradient()
        }
        fn grad_log_lik_row(
            &self,
            theta: &[f64],
            row: usize,
            grad: &mut [f64],
        ) -> $crate::Result<()> {
            let $s = self;
            ($inner).grad_log_lik_row(theta, row, grad)
        }
        fn has_direct_ratio(&self) -> bool {
            let $s = self;
            ($inner).has_direct_ratio()
        }
        fn layout(&self) -> $crate::models::Layout {
            let $s = self;
            ($inner).layout()
        }
        fn log_lik_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
            let $s = self;
            ($inner).log_lik_rows(theta, start, out)
        }
        fn log_lik_ratio_rows(
            &self,
            theta: &[f64],
            theta_new: &[f64],
            start: usize,
            out: &mut [f64],
        ) {
            let $s = self;
            ($inner).log_lik_ratio_rows(theta, theta_new, start, out)
        }
        fn log_lik_ratio_indexed(
            &self,
            theta: &[f64],
            theta_new: &[f64],
            rows: &[usize],
            out: &mut [f64],
        ) {
            let $s = self;
            ($inner).log_lik_ratio_indexed(theta, theta_new, rows, out)
        }
        fn grad_log_lik_rows(
            &self,
            theta: &[f64],
            start: usize,
            out: &mut [f64],
        ) -> $crate::Result<()> {
            let $s = self;
            ($inner).grad_log_lik_rows(theta, start, out)
        }
        fn has_column_gradients(&self) -> bool {
            let $s = self;
            ($inner).has_column_gradients()
        }
        fn grad_log_lik_cols(
            &self,
            theta: &[f64],
            start: usize,
            out: &mut [f64],
        ) -> $crate::Result<()> {
            let $s = self;
            ($inner).grad_log_lik_cols(theta, start, out)
        }
        fn centred_gradient(&self, theta: &[f64]) -> Option<$crate::models::CentredGradient<'_>> {
            let $s = self;
            ($inner).centred_gradient(theta)
        }
        fn linear_ratio(
            &self,
            theta: &[f64],
            theta_new: &[f64],
        ) -> Option<$crate::models::LinearRatio<'_>> {
            let $s = self;
            ($inner).linear_ratio(theta, theta_new)
        }
        fn has_gradient_sum(&self) -> bool {
            let $s = self;
            ($inner).has_gradient_sum()
        }
        fn grad_log_lik_sum(&self, theta: &[f64], out: &mut [f64]) -> $crate::Result<()> {
            let $s = self;
            ($inner).grad_log_lik_sum(theta, out)
        }
    };
}
pub(crate) use forward_model;

impl<M: Model + ?Sized> Model for &M {
    forward_model!(|s| **s);
}
impl<M: Model + ?Sized> Model for Box<M> {
    forward_model!(|s| **s);
}
impl<M: Model + ?Sized> Model for Arc<M> {
    forward_model!(|s| **s);
}
