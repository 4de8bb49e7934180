//! Iteration-budget queries of the reference tests, written as the thesis states them
//! (`sampler(parameters, n)`, then ε, δ and the accountant), answered by the samplers' own
//! `budget(n)` for one chain: the test bodies name the thesis' parameters, the library's one
//! budget API computes the count. δ defaults to 0.1/n, as in every thesis experiment.

#![allow(dead_code)]

use dp_mcmc::Result;
use dp_mcmc::accounting::AccountantKind;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::{DpBarker, DpHmc, DpPenalty, Gradient, IterationBudget, MinibatchPenalty};

/// Entry point: one constructor per DP sampler family.
pub struct MaxIterations;

/// A budget query on sampler `S` with `n` rows.
#[derive(Clone, Debug)]
pub struct Query<S> {
    sampler: S,
    n: u64,
    epsilon: f64,
    delta: Option<f64>,
}

impl MaxIterations {
    pub fn dp_penalty(tau: f64, n: u64) -> Query<DpPenalty> {
        Query::new(DpPenalty::builder().tau(tau), n)
    }
    pub fn dp_hmc(tau_l: f64, tau_g: f64, leapfrog_steps: u32, n: u64) -> Query<DpHmc> {
        let s = DpHmc::builder()
            .tau_l(tau_l)
            .tau_g(tau_g)
            .leapfrog_steps(leapfrog_steps as usize);
        Query::new(s, n)
    }
    pub fn minibatch_penalty(tau: f64, batch_size: u64, n: u64) -> Query<MinibatchPenalty> {
        let s = MinibatchPenalty::builder()
            .tau(tau)
            .batch_size(batch_size as usize);
        Query::new(s, n)
    }
    pub fn dp_barker(batch_size: u64, n: u64) -> Query<DpBarker> {
        Query::new(DpBarker::builder().batch_size(batch_size as usize), n)
    }
}

impl<S> Query<S> {
    fn new(sampler: S, n: u64) -> Self {
        Query {
            sampler,
            n,
            epsilon: f64::NAN,
            delta: None,
        }
    }
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = Some(delta);
        self
    }
    fn rows(&self) -> Result<usize> {
        if self.n == 0 {
            return Err(dp_mcmc::Error::invalid("n", 0, "must be at least 1"));
        }
        Ok(self.n as usize)
    }
}

macro_rules! query {
    ($t:ty) => {
        impl Query<$t> {
            pub fn method(mut self, m: AccountantKind) -> Self {
                self.sampler = self.sampler.accountant(m);
                self
            }
            pub fn compute(&self) -> Result<IterationBudget> {
                let n = self.rows()?;
                let delta = self.delta.unwrap_or(0.1 / self.n as f64);
                let s = self
                    .sampler
                    .clone()
                    .chains(1)
                    .epsilon(self.epsilon)
                    .delta(delta);
                s.budget(n)
            }
        }
    };
}
query!(DpPenalty);
query!(DpHmc);
query!(MinibatchPenalty);
query!(DpBarker);

impl Query<DpHmc> {
    pub fn gradient(mut self, g: Gradient) -> Self {
        self.sampler = self.sampler.gradient(g);
        self
    }
}

impl Query<MinibatchPenalty> {
    pub fn thesis_compatible(mut self, yes: bool) -> Self {
        self.sampler = self.sampler.thesis_compatible(yes);
        self
    }
    pub fn fourier_accountant(
        mut self,
        fa: dp_mcmc::accounting::fourier::FourierAccountant,
    ) -> Self {
        self.sampler = self.sampler.fourier_accountant(fa);
        self
    }
}
