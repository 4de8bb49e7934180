//! The chains of a noise-aware posterior: pure post-processing of the releases, so they are
//! continued until converged (R-hat ≤ 1.01 and bulk ESS ≥ 400 on every parameter,
//! [`crate::diagnostics::converged`]), within a draw and a time limit.

use std::time::Instant;

use rayon::prelude::*;

use super::linear::LinearPosterior;
use super::posterior::{ChainDraws, LaplaceChain, NoiseAwarePosterior};
use crate::error::Result;
use crate::rng::ChainRng;

/// The posterior a fit samples: the noise-aware Laplace posterior of a Newton path, or a
/// linear model's posterior given its sufficient statistics.
pub(crate) enum PosteriorSampler {
    Laplace(NoiseAwarePosterior),
    Linear(LinearPosterior),
}

impl PosteriorSampler {
    /// A chain of this posterior, ready to be run ([`Running::extend_to`]).
    fn start(&self, warmup: usize, rng: ChainRng) -> Result<Running<'_>> {
        Ok(match self {
            PosteriorSampler::Laplace(p) => Running::Laplace(LaplaceChain::new(p, warmup, rng)?),
            PosteriorSampler::Linear(post) => Running::Linear {
                post,
                warmup,
                rng,
                out: ChainDraws::default(),
            },
        })
    }

    /// Share of the information releases' Gaussian outside the positive definite cone (a
    /// Newton path's posterior; `None` for a linear model).
    pub(crate) fn indefinite_share(&self) -> Option<f64> {
        match self {
            PosteriorSampler::Laplace(p) => Some(p.indefinite_share()),
            PosteriorSampler::Linear(_) => None,
        }
    }
}

/// A chain being run: the noise-aware Laplace posterior's continues where it stopped; a linear
/// model's is rerun from its start to the new length (the same draws, longer).
// one value per chain (a handful per run): the variants' sizes do not matter
#[allow(clippy::large_enum_variant)]
enum Running<'a> {
    Laplace(LaplaceChain<'a>),
    Linear {
        post: &'a LinearPosterior,
        warmup: usize,
        rng: ChainRng,
        out: ChainDraws,
    },
}

impl Running<'_> {
    /// Runs the chain until `draws` draws after the warm-up are kept.
    fn extend_to(&mut self, draws: usize) -> Result<()> {
        match self {
            Running::Laplace(chain) => chain.advance(draws),
            Running::Linear {
                post,
                warmup,
                rng,
                out,
            } => {
                *out = post.chain(*warmup, draws, &mut rng.clone())?;
                Ok(())
            }
        }
    }

    fn draws(&self) -> &ChainDraws {
        match self {
            Running::Laplace(chain) => &chain.out,
            Running::Linear { out, .. } => out,
        }
    }

    fn into_draws(self) -> ChainDraws {
        match self {
            Running::Laplace(chain) => chain.out,
            Running::Linear { out, .. } => out,
        }
    }
}

/// How long the chains may run: draws per chain to start with and at most, and a deadline.
pub(crate) struct Limits {
    pub warmup: usize,
    pub draws: usize,
    pub max_draws: usize,
    pub deadline: Option<Instant>,
}

/// The chains as sampled, and whether they converged.
pub(crate) struct Sampled {
    pub chains: Vec<ChainDraws>,
    pub draws_per_chain: usize,
    pub max_rhat: f64,
    pub min_ess_bulk: f64,
    pub converged: bool,
}

/// Runs one chain per generator of `rngs` (`d` parameters) and continues them until
/// converged, `limits.max_draws` or the deadline: each time to the length the bulk ESS so far
/// predicts (ESS grows in proportion to the draws) with a tenth to spare, between 1.25 and 2
/// times the current one; 1.5 times when only R-hat is short. A continuation the deadline
/// would cut is not started (the time of the last one predicts the next).
pub(crate) fn sample(
    sampler: &PosteriorSampler,
    rngs: Vec<ChainRng>,
    d: usize,
    limits: &Limits,
) -> Result<Sampled> {
    let mut running: Vec<Running<'_>> = rngs
        .into_iter()
        .map(|rng| sampler.start(limits.warmup, rng))
        .collect::<Result<_>>()?;
    let mut draws = limits.draws;
    let mut done = 0usize;
    let (max_rhat, min_ess) = loop {
        let t0 = Instant::now();
        running
            .par_iter_mut()
            .map(|c| c.extend_to(draws))
            .collect::<Result<Vec<()>>>()?;
        let views: Vec<&ChainDraws> = running.iter().map(Running::draws).collect();
        let (rhat, ess) = convergence(&views, d)?;
        if crate::diagnostics::converged(rhat, ess) || draws >= limits.max_draws {
            break (rhat, ess);
        }
        let next = next_length(draws, ess).min(limits.max_draws);
        // the next continuation's time, from this one's per-draw time
        let per_draw = t0.elapsed().as_secs_f64() / (draws - done).max(1) as f64;
        let needed = std::time::Duration::from_secs_f64(per_draw * (next - draws) as f64);
        if limits.deadline.is_some_and(|d| Instant::now() + needed > d) {
            break (rhat, ess);
        }
        (done, draws) = (draws, next);
    };
    Ok(Sampled {
        chains: running.into_iter().map(Running::into_draws).collect(),
        draws_per_chain: draws,
        max_rhat,
        min_ess_bulk: min_ess,
        converged: crate::diagnostics::converged(max_rhat, min_ess),
    })
}

/// The next length of chains of `draws` draws whose smallest bulk ESS is `ess` (target 400).
fn next_length(draws: usize, ess: f64) -> usize {
    let factor = if ess < crate::diagnostics::CONVERGED_ESS {
        (1.1 * crate::diagnostics::CONVERGED_ESS / ess.max(1.0)).clamp(1.25, 2.0)
    } else {
        1.5
    };
    (draws as f64 * factor).ceil() as usize
}

/// Largest rank-normalised R-hat and smallest bulk ESS over the parameters (one parameter per
/// task).
fn convergence(chains: &[&ChainDraws], d: usize) -> Result<(f64, f64)> {
    let per_param: Vec<(f64, f64)> = (0..d)
        .into_par_iter()
        .map(|i| {
            let cols: Vec<Vec<f64>> = chains
                .iter()
                .map(|c| c.draws.iter().skip(i).step_by(d).copied().collect())
                .collect();
            let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
            let rhat = crate::diagnostics::rhat(&refs)?.unwrap_or(f64::INFINITY);
            let ess = crate::diagnostics::ess_bulk(&refs)?.unwrap_or(0.0);
            Ok((rhat, ess))
        })
        .collect::<Result<_>>()?;
    Ok(per_param
        .into_iter()
        .fold((0.0f64, f64::INFINITY), |(r, e), (ri, ei)| {
            (r.max(ri), e.min(ei))
        }))
}
