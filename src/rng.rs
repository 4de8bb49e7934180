//! Per-chain random streams: chain `i` of a run seeded with `seed` owns `chain_rng(seed, i)`.
//!
//! Every random draw of a chain (proposals, minibatch indices, privacy noise) comes from that
//! one stream, so results do not depend on the number of threads. A seeded PRNG is right for
//! reproducible research; it is not a secure source for a real DP release.

use rand::SeedableRng;

/// The generator every chain uses (ChaCha with 8 rounds, as nuts-rs does).
pub type ChainRng = rand_chacha::ChaCha8Rng;

/// The stream of chain `chain` in a run seeded with `seed`.
///
/// ```
/// use dp_mcmc::rng::chain_rng;
/// use rand::RngExt;
/// let a: f64 = chain_rng(7, 0).random();
/// let b: f64 = chain_rng(7, 0).random();
/// let c: f64 = chain_rng(7, 1).random();
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// ```
pub fn chain_rng(seed: u64, chain: u64) -> ChainRng {
    let mut rng = ChainRng::seed_from_u64(seed);
    rng.set_stream(chain);
    rng
}
