//! A large synthetic table with a known θ, for benchmarking `dp-mcmc fit` on data of any size
//! (docs/PERFORMANCE.md, "`fit` on large tables"):
//!
//! ```text
//! cargo run --release --example synthetic_table -- OUT.parquet [--rows N] [--d D] [--seed S]
//! ```
//!
//! writes a parquet file of `N` rows (default 10⁷) in row groups of 2²⁰ rows: `d` covariates
//! `x1 … xd` (default 10) uniform on their declared box [−1, 1], and a logistic response
//! `y ∈ {0, 1}` with `logit p = θ₀ + Σ θ_j x_j`, `θ₀ = −1`, `θ_j = (−1)^j / √d` (the linear
//! predictor's sd about 0.58 whatever `d`). Memory is one row group, whatever `N`. Row group `g`
//! draws from its own stream `chain_rng(seed, g)`, so a table is the same on any machine. On
//! stdout: one JSON line with the rows, θ and the `fit` flags (`--features`, `--bounds`) that
//! declare the table's public box.
use std::fs::File;
use std::path::PathBuf;

use dp_mcmc::polars::prelude::*;
use dp_mcmc::rng::chain_rng;
use rand::RngExt;

/// Rows per row group (and per batch in memory).
const GROUP: usize = 1 << 20;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let (mut rows, mut d, mut seed) = (10_000_000usize, 10usize, 1u64);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| -> Result<String, String> {
            args.next().ok_or_else(|| format!("{flag} needs a value"))
        };
        match a.as_str() {
            "--rows" => rows = parse(&value("--rows")?, "--rows")?,
            "--d" => d = parse(&value("--d")?, "--d")?,
            "--seed" => seed = parse(&value("--seed")?, "--seed")?,
            other if other.starts_with("--") => return Err(format!("unknown flag {other}")),
            path => out = Some(PathBuf::from(path)),
        }
    }
    let out = out.ok_or("usage: synthetic_table OUT.parquet [--rows N] [--d D] [--seed S]")?;
    if rows == 0 || d == 0 {
        return Err("--rows and --d must be at least 1".into());
    }
    let theta: Vec<f64> = std::iter::once(-1.0)
        .chain((1..=d).map(|j| if j % 2 == 0 { 1.0 } else { -1.0 } / (d as f64).sqrt()))
        .collect();
    let names: Vec<String> = (1..=d).map(|j| format!("x{j}")).collect();
    let file = File::create(&out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let mut writer: Option<polars::io::parquet::write::BatchedWriter<File>> = None;
    let mut file = Some(file);
    for (g, start) in (0..rows).step_by(GROUP).enumerate() {
        let len = GROUP.min(rows - start);
        let mut rng = chain_rng(seed, g as u64);
        let mut x = vec![Vec::with_capacity(len); d];
        let mut y = Vec::with_capacity(len);
        for _ in 0..len {
            let mut eta = theta[0];
            for (j, col) in x.iter_mut().enumerate() {
                let v: f64 = 2.0 * rng.random::<f64>() - 1.0;
                eta += theta[j + 1] * v;
                col.push(v);
            }
            let p = 1.0 / (1.0 + (-eta).exp());
            y.push(i64::from(rng.random::<f64>() < p));
        }
        let mut columns = vec![Column::new("y".into(), y)];
        columns.extend(
            names
                .iter()
                .zip(x)
                .map(|(n, v)| Column::new(n.as_str().into(), v)),
        );
        let df = DataFrame::new(len, columns).map_err(|e| e.to_string())?;
        if writer.is_none() {
            let f = file.take().expect("the file is opened once");
            writer = Some(
                ParquetWriter::new(f)
                    .batched(df.schema())
                    .map_err(|e| e.to_string())?,
            );
        }
        writer
            .as_mut()
            .expect("created above")
            .write_batch(&df)
            .map_err(|e| e.to_string())?;
        eprintln!("{} / {rows} rows", start + len);
    }
    writer
        .expect("at least one row group")
        .finish()
        .map_err(|e| e.to_string())?;
    let bounds: Vec<String> = names.iter().map(|n| format!("{n}=-1:1")).collect();
    println!(
        "{{\"rows\":{rows},\"d\":{d},\"seed\":{seed},\"theta\":{:?},\"features\":\"{}\",\"bounds\":\"{}\"}}",
        theta,
        names.join(","),
        bounds.join(",")
    );
    Ok(())
}

fn parse<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag} takes a whole number, not {v:?}"))
}
