//! Certified PLD side of the comparison with Google's dp_accounting (`scripts/bench-pld.sh`).
//!
//! The workloads of `scripts/bench_dp_accounting.py`: (a) 10 000 self-compositions of the
//! Poisson-subsampled Gaussian (σ = 1, q = 0.01); (b) 100 different Poisson-subsampled
//! Gaussians (σ_i = 0.8 + 0.01·i, i = 0..99, q = 0.01), each composed once. Each is timed as
//! build + compose + ε(δ = 1e-5) + δ(ε = 1), the median of `runs` runs.

use std::time::Instant;

use dp_mcmc::accounting::{Accountant, CertifiedPld, Interval, PrivacyEvent};

/// ε is queried at this δ.
pub const DELTA_QUERY: f64 = 1e-5;
/// δ is queried at this ε.
pub const EPSILON_QUERY: f64 = 1.0;
/// The accountant's default relative width (`CertifiedPld::new()`).
pub const DEFAULT_TOLERANCE: f64 = 2e-3;
/// Relative width no wider than dp_accounting's interval at value_discretization_interval
/// 1e-5 on workload (a): 0.9 × min(width/upper) over its ε and δ answers, measured on
/// 2026-11-24 (ε [6.13771, 6.18771]: 8.08e-3; δ [0.22886, 0.23914]: 4.3e-2) with
/// dp-accounting 0.6.0. `scripts/bench-pld.sh` recomputes it from the run it makes.
pub const MATCHED_TOLERANCE: f64 = 7.27e-3;
/// The δ query's own matched width on workload (a): 0.9 × 4.3e-2 (each answer is compared
/// with dp_accounting's interval for the same answer).
pub const MATCHED_DELTA_TOLERANCE: f64 = 3.87e-2;
/// Workload (b), matched per answer to dp_accounting's interval at its default vdi 1e-4
/// (ε [0.80579, 0.81079]: 6.2e-3; δ [3.1857e-6, 3.2763e-6]: 2.8e-2), times 0.9.
pub const MATCHED_HETEROGENEOUS: (f64, f64) = (5.5e-3, 2.5e-2);

/// One workload: its name (as in the Python script) and its event.
pub fn workloads() -> Vec<(&'static str, PrivacyEvent)> {
    let hetero = (0..100)
        .map(|i| PrivacyEvent::gaussian(0.8 + 0.01 * f64::from(i)).poisson(0.01))
        .collect();
    vec![
        (
            "poisson_gaussian_x10000",
            PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(10_000),
        ),
        ("heterogeneous_x100", PrivacyEvent::compose(hetero)),
    ]
}

/// Result of one workload at one tolerance.
pub struct Measured {
    pub workload: &'static str,
    pub tolerance: f64,
    /// Tolerance of the δ query (the same as `tolerance` unless matched per answer).
    pub delta_tolerance: f64,
    pub epsilon: Interval,
    pub delta: Interval,
    /// Median wall seconds of build + compose + both queries.
    pub seconds: f64,
    pub runs: usize,
}

/// Build, compose and query `runs` times; the median time and the last run's intervals.
pub fn measure(
    workload: &'static str,
    event: &PrivacyEvent,
    tolerance: f64,
    delta_tolerance: f64,
    runs: usize,
) -> dp_mcmc::Result<Measured> {
    let runs = runs.max(1);
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let mut acc = CertifiedPld::new().tolerance(tolerance);
        acc.compose(event)?;
        let eps = acc.epsilon_interval(DELTA_QUERY)?;
        let delta = if delta_tolerance == tolerance {
            acc.delta_interval(EPSILON_QUERY)?
        } else {
            let mut acc = CertifiedPld::new().tolerance(delta_tolerance);
            acc.compose(event)?;
            acc.delta_interval(EPSILON_QUERY)?
        };
        times.push(t.elapsed().as_secs_f64());
        last = Some(std::hint::black_box((eps, delta)));
    }
    times.sort_by(f64::total_cmp);
    let (epsilon, delta) = last.expect("runs >= 1");
    Ok(Measured {
        workload,
        tolerance,
        delta_tolerance,
        epsilon,
        delta,
        seconds: times[runs / 2],
        runs,
    })
}

/// A JSON number, `null` for ±∞/NaN (an ε no finite bound could be certified for).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:e}")
    } else {
        "null".into()
    }
}

impl Measured {
    /// One JSON object (one line), the format `scripts/bench-pld.sh` reads.
    pub fn json(&self) -> String {
        format!(
            concat!(
                "{{\"side\": \"certified_pld\", \"workload\": \"{}\", \"tolerance\": {}, \"delta_tolerance\": {}, ",
                "\"epsilon_query_delta\": {}, \"epsilon\": {{\"lower\": {}, \"upper\": {}}}, ",
                "\"delta_query_epsilon\": {}, \"delta\": {{\"lower\": {}, \"upper\": {}}}, ",
                "\"seconds\": {}, \"runs\": {}, \"rayon_threads\": {}}}"
            ),
            self.workload,
            num(self.tolerance),
            num(self.delta_tolerance),
            num(DELTA_QUERY),
            num(self.epsilon.lower),
            num(self.epsilon.upper),
            num(EPSILON_QUERY),
            num(self.delta.lower),
            num(self.delta.upper),
            num(self.seconds),
            self.runs,
            rayon::current_num_threads(),
        )
    }

    /// One markdown table row.
    pub fn row(&self) -> String {
        let eps = format!("[{:.6}, {:.6}]", self.epsilon.lower, self.epsilon.upper);
        let delta = format!("[{:.6e}, {:.6e}]", self.delta.lower, self.delta.upper);
        let tol = if self.delta_tolerance == self.tolerance {
            format!("{:.1e}", self.tolerance)
        } else {
            format!("{:.1e}/{:.1e}", self.tolerance, self.delta_tolerance)
        };
        format!(
            "| {:<24} | {tol:>15} | {eps:<20} | {delta:<27} | {:>9.3} |",
            self.workload, self.seconds
        )
    }
}

/// Command-line options of the certified-PLD section (after `cargo bench --bench accounting --`).
pub struct Options {
    pub json: bool,
    pub runs: usize,
    pub matched_tolerance: f64,
    pub only: Option<String>,
}

/// Run the workloads at the default tolerance, and workload (a) also at the matched one.
pub fn run(opts: &Options) -> dp_mcmc::Result<()> {
    if !opts.json {
        println!(
            "\nCertified PLD (ε at δ = {DELTA_QUERY:e}, δ at ε = {EPSILON_QUERY}), median of {} runs, rayon threads = {}",
            opts.runs,
            rayon::current_num_threads()
        );
        println!(
            "| {:<24} | {:>15} | {:<20} | {:<27} | {:>9} |",
            "workload", "tolerance", "epsilon", "delta", "seconds"
        );
        println!(
            "|{:-<26}|{:-<17}|{:-<22}|{:-<29}|{:-<11}|",
            "", "", "", "", ""
        );
    }
    for (name, event) in workloads() {
        if opts.only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let mut tolerances = vec![(DEFAULT_TOLERANCE, DEFAULT_TOLERANCE)];
        if name == "poisson_gaussian_x10000" && opts.matched_tolerance != DEFAULT_TOLERANCE {
            tolerances.push((opts.matched_tolerance, opts.matched_tolerance));
            tolerances.push((opts.matched_tolerance, MATCHED_DELTA_TOLERANCE));
        }
        if name == "heterogeneous_x100" {
            tolerances.push(MATCHED_HETEROGENEOUS);
        }
        for (tol, delta_tol) in tolerances {
            let m = measure(name, &event, tol, delta_tol, opts.runs)?;
            println!("{}", if opts.json { m.json() } else { m.row() });
        }
    }
    Ok(())
}
