//! DataFrames of accountant grids.
