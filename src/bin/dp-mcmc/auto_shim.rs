//! TEMPORARY (branch `fit` only, removed before the merge): the shape of `dp_mcmc::auto`
//! with fixed DP-penalty settings, so `fit` can be tested end to end before `auto` lands.
#![allow(dead_code)]

use std::time::Duration;

use dp_mcmc::Result;
use dp_mcmc::models::Model;
use dp_mcmc::samplers::{DpPenalty, Run};

#[derive(Clone, Copy, Debug)]
pub enum AutoAlgorithm {
    DpPenalty,
    DpHmc,
    MinibatchPenalty,
    DpBarker,
}

impl AutoAlgorithm {
    pub fn for_model<M: Model + ?Sized>(_m: &M) -> Self {
        AutoAlgorithm::DpPenalty
    }
    pub fn key(self) -> &'static str {
        "dp-penalty"
    }
}

pub struct Auto {
    e: f64,
    d: f64,
    c: usize,
    s: u64,
    t: Option<Duration>,
}

pub struct ShimRun {
    pub run: Run,
    pub warmup: usize,
    pub auto: Option<serde_json::Value>,
}

impl std::ops::Deref for ShimRun {
    type Target = Run;
    fn deref(&self) -> &Run {
        &self.run
    }
}

impl Auto {
    pub fn new(_a: AutoAlgorithm) -> Self {
        Self {
            e: 1.0,
            d: 1e-6,
            c: 4,
            s: 0,
            t: None,
        }
    }
    pub fn epsilon(mut self, e: f64) -> Self {
        self.e = e;
        self
    }
    pub fn delta(mut self, d: f64) -> Self {
        self.d = d;
        self
    }
    pub fn chains(mut self, c: usize) -> Self {
        self.c = c;
        self
    }
    pub fn seed(mut self, s: u64) -> Self {
        self.s = s;
        self
    }
    pub fn max_time(mut self, t: Option<Duration>) -> Self {
        self.t = t;
        self
    }
    pub fn progress(self, _p: bool) -> Self {
        self
    }
    pub fn run<M: Model + ?Sized>(&self, m: &M) -> Result<ShimRun> {
        let mut b = DpPenalty::builder()
            .epsilon(self.e)
            .delta(self.d)
            .chains(self.c)
            .seed(self.s)
            .start(vec![0.0; m.dim()])
            .tau(0.3)
            .clip_bound(1.0)
            .proposal_sd(0.02)
            .progress(true);
        if let Some(t) = self.t {
            b = b.max_time(t);
        }
        let run = b.run(m)?;
        let warmup = run.iterations / 2;
        Ok(ShimRun {
            run,
            warmup,
            auto: None,
        })
    }
}
