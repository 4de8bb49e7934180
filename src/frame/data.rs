//! Model data from polars DataFrames and CSV files.
