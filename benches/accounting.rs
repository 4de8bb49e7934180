//! Accountant benchmarks (bench binary): `cargo bench --bench accounting [-- SECTION] [OPTIONS]`.
//!
//! Section `fourier`: the Fourier accountant at the thesis' settings (nx = 1e6, L = 20,
//! σ = √0.7, q = 0.01) against the thesis' Python timings: 0.37 s per δ evaluation, 4.8 s per
//! Algorithm 2 search. Section `pld`: the certified PLD accountant on the workloads of the
//! comparison with Google's dp_accounting (`scripts/bench-pld.sh`, which reads `pld --json`).
//! No section: both. Options of `pld`: `--json` (one JSON object per line), `--runs N`
//! (median of N, default 3), `--tolerance-matched T`, `--only NAME`.

use std::time::{Duration, Instant};

use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};

mod certified_pld;

const THESIS_DELTA_S: f64 = 0.37;
const THESIS_SEARCH_S: f64 = 4.8;

/// Median wall time of `runs` calls of `f` (its result is kept alive through `black_box`).
fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn row(what: &str, t: Duration, thesis: Option<f64>) {
    let s = t.as_secs_f64();
    match thesis {
        Some(th) => println!("| {what:<58} | {:>10.4} | {:>8.1}x |", s, th / s),
        None => println!("| {what:<58} | {:>10.4} | {:>9} |", s, "-"),
    }
}

const USAGE: &str = "usage: cargo bench --bench accounting -- [fourier | pld] [--json] \
[--runs N] [--tolerance-matched T] [--only NAME]";

/// The parsed command line: which sections, and the `pld` section's options.
fn parse_args() -> Result<(bool, bool, certified_pld::Options), String> {
    let mut opts = certified_pld::Options {
        json: false,
        runs: 3,
        matched_tolerance: certified_pld::MATCHED_TOLERANCE,
        only: None,
    };
    let (mut fourier, mut pld) = (false, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--bench" => {} // appended by `cargo bench`
            "fourier" => fourier = true,
            "pld" => pld = true,
            "--json" => opts.json = true,
            "--runs" => {
                opts.runs = value("--runs")?
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or("--runs must be an integer >= 1")?
            }
            "--tolerance-matched" => {
                opts.matched_tolerance = value("--tolerance-matched")?
                    .parse()
                    .ok()
                    .filter(|t: &f64| t.is_finite() && *t > 0.0)
                    .ok_or("--tolerance-matched must be a number > 0")?
            }
            "--only" => opts.only = Some(value("--only")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if !fourier && !pld {
        (fourier, pld) = (true, true);
    }
    Ok((fourier, pld, opts))
}

fn main() -> dp_mcmc::Result<()> {
    let (fourier, pld, opts) = match parse_args() {
        Ok(parsed) => parsed,
        Err(msg) => {
            eprintln!("{msg}\n{USAGE}");
            std::process::exit(2);
        }
    };
    if fourier {
        fourier_section()?;
    }
    if pld {
        certified_pld::run(&opts)?;
    }
    Ok(())
}

fn fourier_section() -> dp_mcmc::Result<()> {
    let (tau, batch, n) = (0.7, 1000, 100_000);
    let part = SubsampledGaussian::minibatch_penalty(tau, batch, n, 828)?;
    let (sigma, q) = (part.sigma, part.q);
    let s_rel = FourierRelation::SubstituteWithoutReplacement;
    let r_rel = FourierRelation::AddRemovePoisson;
    println!(
        "Fourier accountant, nx = 1e6, L = 20, sigma = sqrt({tau}), q = {q}, rayon threads = {}",
        rayon::current_num_threads()
    );
    println!(
        "| {:<58} | {:>10} | {:>9} |",
        "workload", "seconds", "speed-up"
    );
    println!("|{:-<60}|{:-<12}|{:-<11}|", "", "", "");

    // δ with a fresh accountant each time (PLD evaluation, FFT, weights FFT, power sum).
    for (name, rel) in [("S", s_rel), ("R", r_rel)] {
        let t = median(5, || FourierAccountant::new(rel).delta(4.0, &[part]));
        row(
            &format!("delta_{name}(eps 4, k 828), fresh accountant"),
            t,
            Some(THESIS_DELTA_S),
        );
    }
    // δ from the cached spectrum: new k (weights cached), new ε (weights recomputed).
    let fa = FourierAccountant::new(s_rel);
    let pld = fa.pld(sigma, q)?;
    pld.delta(4.0, 828)?;
    let mut k = 800;
    let t = median(21, || {
        k += 1;
        pld.delta(4.0, k)
    });
    row("delta_S, cached spectrum, new k", t, Some(THESIS_DELTA_S));
    let mut eps = 3.0;
    let t = median(11, || {
        eps += 0.01;
        pld.delta(eps, 828)
    });
    row("delta_S, cached spectrum, new eps", t, Some(THESIS_DELTA_S));
    let t = median(5, || FourierAccountant::new(s_rel).epsilon(1e-6, &[part]));
    row("epsilon_S(1e-6, k 828), fresh accountant", t, None);

    // One Algorithm 2 search (easy-2d, eps 4 -> 828).
    let t = median(5, || {
        FourierAccountant::new(s_rel)
            .pld(sigma, q)
            .and_then(|p| p.max_steps(4.0, 1e-6))
    });
    row(
        "max_steps(eps 4, delta 1e-6) = 828, fresh accountant",
        t,
        Some(THESIS_SEARCH_S),
    );
    let mut eps = 3.9;
    let t = median(5, || {
        eps += 0.01;
        pld.max_steps(eps, 1e-6)
    });
    row(
        "max_steps, cached spectrum (new eps)",
        t,
        Some(THESIS_SEARCH_S),
    );

    // Figure 6.1 grid: eps = linspace(0.5, 6, 50), n 1e5, delta 1e-6, b 1000, tau 0.7.
    let t0 = Instant::now();
    let fig = FourierAccountant::new(s_rel);
    let pld = fig.pld(sigma, q)?;
    let ks: Vec<u64> = (0..50)
        .map(|i| pld.max_steps(0.5 + i as f64 * (5.5 / 49.0), 1e-6))
        .collect::<dp_mcmc::Result<_>>()?;
    let t = t0.elapsed();
    row(
        "Figure 6.1 FA series (50 eps), fresh accountant",
        t,
        Some(50.0 * THESIS_SEARCH_S),
    );
    println!(
        "\nFigure 6.1 FA iterations: eps 0.5 -> {}, eps 6 -> {} (thesis 1817); all: {ks:?}",
        ks[0], ks[49]
    );
    Ok(())
}
