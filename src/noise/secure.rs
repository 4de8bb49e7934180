//! Secure random sources: generators keyed from operating-system entropy, never from a user
//! seed. Used by the run driver when `.secure_rng(true)` is set.

use rand::SeedableRng;
use rand::rngs::SysRng;
use rand_chacha::ChaCha20Rng;

use crate::error::{Error, Result};
use crate::rng::ChainRng;

fn entropy_error(e: impl std::fmt::Display) -> Error {
    Error::Numerical {
        what: "secure random source",
        reason: format!("the operating system's entropy source failed: {e}"),
    }
}

/// A ChaCha20 generator keyed with 256 bits from the operating system's entropy source
/// (`getrandom` through [`rand::rngs::SysRng`]). For draws outside the samplers, e.g. calling
/// [`DiscreteGaussian::sample`](super::DiscreteGaussian::sample) directly.
///
/// ```
/// use rand::Rng;
/// let mut a = dp_mcmc::noise::os_chacha20()?;
/// let mut b = dp_mcmc::noise::os_chacha20()?;
/// assert_ne!(a.next_u64(), b.next_u64()); // fresh OS keys (equal with probability 2^-64)
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
///
/// # Errors
/// [`Error::Numerical`] if the OS entropy source fails.
pub fn os_chacha20() -> Result<ChaCha20Rng> {
    ChaCha20Rng::try_from_rng(&mut SysRng).map_err(entropy_error)
}

/// A chain generator (the [`ChainRng`] type every kernel takes) keyed with 256 bits and a
/// 64-bit stream id from the operating system's entropy source, for secure runs. The kernel
/// interface fixes the ChaCha variant with 8 rounds; with a secret 256-bit key it is a stream
/// cipher with no known attack (the best published attacks reach 7 rounds).
///
/// ```
/// use rand::Rng;
/// let mut a = dp_mcmc::noise::os_chain_rng()?;
/// let mut b = dp_mcmc::noise::os_chain_rng()?;
/// assert_ne!(a.next_u64(), b.next_u64());
/// # Ok::<(), dp_mcmc::Error>(())
/// ```
///
/// # Errors
/// [`Error::Numerical`] if the OS entropy source fails.
pub fn os_chain_rng() -> Result<ChainRng> {
    let mut rng = ChainRng::try_from_rng(&mut SysRng).map_err(entropy_error)?;
    let mut stream = [0u8; 8];
    rand::TryRng::try_fill_bytes(&mut SysRng, &mut stream).map_err(entropy_error)?;
    rng.set_stream(u64::from_le_bytes(stream));
    Ok(rng)
}

/// Which random source produced a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RngMode {
    /// `chain_rng(seed, chain)`: reproducible research runs; **not** a secure DP release.
    #[default]
    Seeded,
    /// Keys from OS entropy ([`os_chain_rng`]); the user seed is ignored.
    Secure,
}

impl RngMode {
    /// `"seeded"` or `"secure"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RngMode::Seeded => "seeded",
            RngMode::Secure => "secure",
        }
    }
}

impl std::fmt::Display for RngMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
