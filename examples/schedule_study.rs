//! How the budget schedule of the logistic Newton path was chosen (docs/NOISE-AWARE.md, "The
//! method"): candidate schedules compared on **simulated** data with a public design (never on
//! the data being analysed). The design mimics a survey table: an intercept, two covariates
//! uniform on [0, 1] and seven binary covariates with prevalences 0.5, 0.3, 0.1, 0.05, 0.03,
//! 0.02 and 0.01 (rare categories make the weak directions); θ fixed at a moderate public
//! value; n = 20 000. For each schedule and ε ∈ {1, 2}: the median over parameters and data
//! sets of the DP posterior sd over the non-private Laplace sd ("sd ratio"), the median of
//! |DP mean − non-private mean| / non-private sd, and the share of 90 % intervals containing
//! the non-private mean.
//!
//! `cargo run --release --example schedule_study [data sets]` (default 20).
use dp_mcmc::noise_aware::{GlmData, GlmKind, NoiseAware, SCHEDULE};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::RunSetters;
use rand::RngExt;

const PREVALENCE: [f64; 7] = [0.5, 0.3, 0.1, 0.05, 0.03, 0.02, 0.01];
const THETA: [f64; 10] = [-0.5, 0.8, -0.6, 0.4, -0.3, 0.5, 0.3, -0.4, 0.6, 0.7];

fn simulate(seed: u64) -> GlmData {
    let mut rng = chain_rng(seed, 7);
    let n = 20_000;
    let (mut x, mut y) = (Vec::with_capacity(n * 10), Vec::with_capacity(n));
    for _ in 0..n {
        let mut row = vec![1.0, rng.random::<f64>(), rng.random::<f64>()];
        row.extend(
            PREVALENCE
                .iter()
                .map(|&p| f64::from(rng.random::<f64>() < p)),
        );
        let eta: f64 = row.iter().zip(THETA).map(|(a, b)| a * b).sum();
        y.push(f64::from(rng.random::<f64>() < 1.0 / (1.0 + (-eta).exp())));
        x.extend(row);
    }
    let mut bounds = vec![(1.0, 1.0)];
    bounds.extend(std::iter::repeat_n((0.0, 1.0), 9));
    let names = (0..10).map(|i| format!("b{i}")).collect();
    GlmData::new(GlmKind::Logistic, x, y, bounds, (0.0, 1.0), 10.0, names).expect("valid")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> dp_mcmc::Result<()> {
    let sets: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let candidates: Vec<(&str, Vec<(f64, f64)>)> = vec![
        ("default", SCHEDULE.to_vec()),
        (
            "more information",
            vec![(0.03, 0.03), (0.07, 0.05), (0.20, 0.10), (0.25, 0.27)],
        ),
        (
            "more score",
            vec![(0.03, 0.03), (0.04, 0.08), (0.10, 0.15), (0.15, 0.42)],
        ),
        (
            "flatter",
            vec![(0.03, 0.03), (0.08, 0.08), (0.14, 0.16), (0.18, 0.30)],
        ),
        (
            "later",
            vec![(0.02, 0.02), (0.04, 0.05), (0.14, 0.13), (0.24, 0.36)],
        ),
        (
            "much more score",
            vec![(0.03, 0.03), (0.03, 0.09), (0.08, 0.17), (0.12, 0.45)],
        ),
        (
            "most score",
            vec![(0.02, 0.03), (0.03, 0.10), (0.06, 0.18), (0.09, 0.49)],
        ),
    ];
    let data: Vec<GlmData> = (0..sets).map(simulate).collect();
    let refs: Vec<(Vec<f64>, Vec<f64>)> = data
        .iter()
        .map(|d| {
            let (m, cov) = d.laplace_nonprivate().expect("non-private reference");
            let sd = (0..10).map(|i| cov[i * 10 + i].sqrt()).collect();
            (m, sd)
        })
        .collect();
    println!("| schedule | ε | sd ratio | |Δmean|/sd | coverage of NP mean |");
    println!("|---|---|---|---|---|");
    let only: Option<String> = std::env::args().nth(2);
    for (name, schedule) in &candidates {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        for eps in [1.0, 2.0] {
            let (mut ratio, mut dist, mut cover, mut total) = (vec![], vec![], 0, 0);
            for (k, (d, (m, sd))) in data.iter().zip(&refs).enumerate() {
                let fit = NoiseAware::new()
                    .epsilon(eps)
                    .delta(1e-6)
                    .seed(1000 + k as u64)
                    .schedule(schedule.clone())
                    .run(d)?;
                for j in 0..10 {
                    let mut v: Vec<f64> = fit
                        .run
                        .chains
                        .iter()
                        .flat_map(|c| c.draws.iter().skip(j).step_by(10).copied())
                        .collect();
                    let mean = v.iter().sum::<f64>() / v.len() as f64;
                    let s =
                        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
                    v.sort_by(f64::total_cmp);
                    let q = |p: f64| v[((v.len() - 1) as f64 * p) as usize];
                    ratio.push(s / sd[j]);
                    dist.push((mean - m[j]).abs() / sd[j]);
                    cover += usize::from(q(0.05) <= m[j] && m[j] <= q(0.95));
                    total += 1;
                }
            }
            println!(
                "| {name} | {eps} | {:.2} | {:.2} | {:.3} |",
                median(ratio),
                median(dist),
                cover as f64 / total as f64
            );
        }
    }
    Ok(())
}
