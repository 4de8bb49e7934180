//! `iterations`, `delta`, `epsilon` subcommands (placeholder until the accounting module lands).
use clap::Args;
use serde_json::Value;

#[derive(Args)]
pub struct IterationsArgs {}
#[derive(Args)]
pub struct DeltaArgs {}
#[derive(Args)]
pub struct EpsilonArgs {}

fn pending() -> dp_mcmc::Result<Value> {
    Err(dp_mcmc::Error::Model("accounting CLI pending".into()))
}
pub fn iterations(_: IterationsArgs) -> dp_mcmc::Result<Value> {
    pending()
}
pub fn delta(_: DeltaArgs) -> dp_mcmc::Result<Value> {
    pending()
}
pub fn epsilon(_: EpsilonArgs) -> dp_mcmc::Result<Value> {
    pending()
}
