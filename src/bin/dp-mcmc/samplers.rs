//! `dp-mcmc samplers`: every sampler of the registry, one JSON object each (its key for
//! `--algorithm`, its label in tables and figures, the other names it parses from, whether
//! its runs are differentially private, and the privacy parameters its budget depends on).

use clap::Args;
use dp_mcmc::samplers::REGISTRY;
use serde_json::{Value, json};

/// `dp-mcmc samplers` takes no options.
#[derive(Args)]
pub struct SamplersArgs {}

/// The registry as a JSON array, in the figures' colour order.
pub fn samplers(_: SamplersArgs) -> Value {
    REGISTRY
        .iter()
        .map(|entry| {
            let sampler = (entry.build)();
            let parameters: Vec<&str> = sampler
                .privacy_parameters()
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            json!({
                "key": entry.key,
                "label": entry.label,
                "aliases": entry.aliases,
                "private": entry.private,
                "privacy_parameters": parameters,
            })
        })
        .collect()
}
