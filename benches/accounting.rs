//! Accountant benchmarks (bench binary): `cargo bench --bench accounting`.
fn main() {}
