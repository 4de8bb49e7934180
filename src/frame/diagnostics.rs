//! DataFrames of diagnostics (summary tables).
