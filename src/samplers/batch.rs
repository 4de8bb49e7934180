//! Uniform minibatches of `b` distinct rows out of `n`, drawn in O(b) (Floyd's algorithm),
//! and the clipped-ratio statistics of a batch.

use rand::RngExt;

use super::pass::CHUNK;
use super::proposal::{ProposalKind, RandomWalk};
use super::split::{Split, run_groups};
use crate::error::{Error, Result};
use crate::models::Model;
use crate::rng::ChainRng;

/// Per-chain state of the subsampled kernels (minibatch DP penalty, DP Barker): the position,
/// a proposal buffer, `ln p(θ)`, the batch sampler and the random walk.
#[derive(Clone, Debug)]
pub struct SubsampledState {
    pub(super) theta: Vec<f64>,
    pub(super) proposal_buf: Vec<f64>,
    pub(super) log_prior: f64,
    pub(super) batches: BatchSampler,
    pub(super) walk: RandomWalk,
}

impl SubsampledState {
    /// A subsampled kernel's settings against `model`: one proposal sd per parameter and a
    /// batch of `1 ≤ batch_size ≤ n` rows.
    pub(super) fn validate<M: Model + ?Sized>(
        model: &M,
        proposal_sd: &[f64],
        batch_size: usize,
    ) -> Result<()> {
        crate::error::check::len("proposal_sd", proposal_sd.len(), model.dim())?;
        check_batch(batch_size, model.n_rows())
    }

    /// The state at `theta0` for batches of `batch_size` rows (validated by the kernel).
    pub(super) fn new<M: Model + ?Sized>(
        model: &M,
        theta0: &[f64],
        batch_size: usize,
        proposal: ProposalKind,
        proposal_sd: Vec<f64>,
        rng: &mut ChainRng,
    ) -> Result<Self> {
        Ok(SubsampledState {
            theta: theta0.to_vec(),
            proposal_buf: theta0.to_vec(),
            log_prior: model.log_prior(theta0),
            batches: BatchSampler::new(model.n_rows(), batch_size),
            walk: RandomWalk::new(proposal, proposal_sd, rng)?,
        })
    }
}

/// Draws batches of distinct row indices without allocating after construction.
#[derive(Clone, Debug)]
pub struct BatchSampler {
    marked: Vec<bool>,
    batch: Vec<usize>,
    ratios: Vec<f64>,
    size: usize,
    split: Split,
    groups: Vec<()>,
}

impl BatchSampler {
    /// A sampler of batches of `size` rows out of `n` (caller validated `1 ≤ size ≤ n`).
    pub fn new(n: usize, size: usize) -> Self {
        BatchSampler {
            marked: vec![false; n],
            batch: Vec::with_capacity(size),
            ratios: vec![0.0; size],
            size,
            split: Split::new(size, 1),
            groups: vec![()],
        }
    }

    /// Compute a batch's ratios on up to `threads` rayon threads, in chunks of
    /// [`CHUNK`](super::pass::CHUNK) rows (only batches of
    /// [`PARALLEL_MIN_CHUNKS`](super::split::PARALLEL_MIN_CHUNKS) chunks or more). The ratios
    /// are summed in batch order afterwards, so results do not depend on it.
    pub fn set_threads(&mut self, threads: usize) {
        self.split = Split::new(self.size, threads);
        self.groups.resize(self.split.groups(), ());
    }

    /// Draw a fresh batch, uniformly among all `size`-subsets (Floyd 1987).
    pub fn draw(&mut self, rng: &mut ChainRng) -> &[usize] {
        for &j in &self.batch {
            self.marked[j] = false;
        }
        self.batch.clear();
        let n = self.marked.len();
        for j in n - self.size..n {
            let t = rng.random_range(0..=j);
            let pick = if self.marked[t] { j } else { t };
            self.marked[pick] = true;
            self.batch.push(pick);
        }
        &self.batch
    }

    /// Draw a batch and return the statistics of its ratios clipped to `±bound`.
    pub fn clipped_batch_stats<M: Model + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        theta_new: &[f64],
        bound: f64,
        rng: &mut ChainRng,
    ) -> BatchStats {
        self.draw(rng);
        let batch = &self.batch[..];
        let rows_per_group = self.split.per_group() * CHUNK;
        let work = |g: usize, _: &mut (), _: &mut [()], ratios: &mut [f64]| {
            let first = g * rows_per_group;
            let rows = &batch[first..first + ratios.len()];
            model.log_lik_ratio_indexed(theta, theta_new, rows, ratios);
        };
        run_groups(
            &self.split,
            &mut self.groups,
            &mut [],
            0,
            &mut self.ratios,
            &work,
        );
        let (mut sum, mut sum_sq, mut clipped) = (0.0, 0.0, 0u64);
        for &r in &self.ratios {
            let y = r.max(-bound).min(bound);
            sum += y;
            sum_sq += y * y;
            clipped += u64::from(r.abs() > bound);
        }
        let b = self.size as f64;
        let mean = sum / b;
        BatchStats {
            mean,
            // population variance (divide by b), as the thesis code
            var: (sum_sq / b - mean * mean).max(0.0),
            clipped,
        }
    }
}

/// Mean and population variance of the clipped ratios of one batch.
#[derive(Clone, Copy, Debug)]
pub struct BatchStats {
    /// Mean of the clipped ratios.
    pub mean: f64,
    /// Population variance of the clipped ratios.
    pub var: f64,
    /// Rows clipped.
    pub clipped: u64,
}

/// A batch of `batch` rows drawn without replacement from `n`: between 1 and `n`.
///
/// # Errors
/// `batch` is 0 or above `n`, naming `batch_size`.
pub(crate) fn check_batch(batch: usize, n: usize) -> Result<()> {
    if batch == 0 || batch > n {
        return Err(Error::invalid(
            "batch_size",
            batch,
            format!("must be between 1 and the number of data rows ({n})"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::chain_rng;

    #[test]
    fn batches_are_distinct_and_uniform() {
        // n = 10, b = 3: every row is in a batch with probability 0.3. 30 000 draws give
        // counts 9000 ± 79 (binomial sd); chi-square over 10 rows at α = 1e-6 (crit. 41.3 for 9 df).
        let mut s = BatchSampler::new(10, 3);
        let mut rng = chain_rng(1, 0);
        let mut counts = [0u64; 10];
        for _ in 0..30_000 {
            let b = s.draw(&mut rng).to_vec();
            let mut u = b.clone();
            u.sort_unstable();
            u.dedup();
            assert_eq!(u.len(), 3, "batch {b:?} has repeats");
            for j in b {
                counts[j] += 1;
            }
        }
        let e = 9000.0;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 41.3, "chi2 = {chi2}, counts {counts:?}");
    }

    /// A batch split over threads gives the same statistics bit for bit (the ratios are
    /// computed per chunk of rows, then summed in batch order as before).
    #[test]
    fn split_batches_give_the_same_stats() {
        let n = (crate::samplers::split::PARALLEL_MIN_CHUNKS + 40) * CHUNK;
        let b = n - 5000;
        assert!(Split::new(b, 2).groups() > 1);
        let model = crate::models::testing::IsotropicGaussian::generate(n, 2, 3);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let stats = |threads: usize| {
            let mut s = BatchSampler::new(n, b);
            s.set_threads(threads);
            let mut rng = chain_rng(2, 0);
            let st = pool
                .install(|| s.clipped_batch_stats(&model, &[0.1, 0.4], &[0.2, 0.5], 0.3, &mut rng));
            (st.mean.to_bits(), st.var.to_bits(), st.clipped)
        };
        let want = stats(1);
        assert!(want.2 > 0);
        assert_eq!(stats(2), want);
        assert_eq!(stats(3), want);
    }
}
