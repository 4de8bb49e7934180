//! plotly figures from result DataFrames (the only module that imports plotly).
pub mod mechanisms;
