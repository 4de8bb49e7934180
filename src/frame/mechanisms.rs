//! DataFrames of mechanism results.
