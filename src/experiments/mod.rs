//! The thesis experiments: algorithms by name, their tuned parameters (THESIS-NOTES §11), the
//! metrics each chain records (THESIS-NOTES §2), and the Chapter 6 grids (algorithm comparison,
//! clipping study, baseline MMDs) with a resumable parallel runner writing CSV results, split
//! into shards and merged back ([`Shard`], [`merge_results`]).

mod clipping;
mod grid;
mod metrics;
mod posterior;
mod results;
mod runner;
mod shard;
mod tuned;

pub use crate::samplers::SamplerKind;
pub use clipping::{BaselineSpec, ClippingSpec, THESIS_CLIP_BOUNDS};
pub use grid::{
    ComparisonSpec, FieldSpec, Task, TaskKind, comparison_algorithms, field_algorithms,
};
pub use metrics::{ChainMetrics, chain_metrics, trace_metrics};
pub use posterior::{FIGURE_5_1_EXPERIMENTS, HmcTrajectory, PosteriorGrid};
pub use results::{RESULT_COLUMNS, ResultRow, ResultsFile, finished_tasks, read_results};
pub use runner::{GridReport, GridRunner};
pub use shard::{MergeReport, Shard, merge_results};
pub use tuned::{tuned, tuned_as};

#[cfg(test)]
mod tests;
