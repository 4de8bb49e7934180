//! `diagnose`, `mmd` subcommands (placeholder until the diagnostics module lands).
use clap::Args;
use serde_json::Value;

#[derive(Args)]
pub struct DiagnoseArgs {}
#[derive(Args)]
pub struct MmdArgs {}

fn pending() -> dp_mcmc::Result<Value> {
    Err(dp_mcmc::Error::Model("diagnostics CLI pending".into()))
}
pub fn diagnose(_: DiagnoseArgs) -> dp_mcmc::Result<Value> {
    pending()
}
pub fn mmd(_: MmdArgs) -> dp_mcmc::Result<Value> {
    pending()
}
