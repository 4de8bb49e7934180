//! The thesis experiments: algorithms by name, their tuned parameters (spec §6.3), and the
//! metrics each chain records (spec §2).

mod metrics;
mod sampler_kind;
mod tuned;

pub use metrics::{ChainMetrics, chain_metrics};
pub use sampler_kind::SamplerKind;
pub use tuned::Sampler;

#[cfg(test)]
mod tests;
