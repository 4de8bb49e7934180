//! Benchmarks (bench binary, no harness): `cargo bench --bench perf`. Reports times and ratios.
fn main() {}
