//! Simulation-based calibration of the noise-aware method (docs/NOISE-AWARE.md, "Calibration"):
//! for each model, n, d and ε, data sets are generated from a known θ with public bounds, the
//! whole private pipeline runs (releases and posterior), and the rank of each θ_i among its
//! posterior draws and whether the 50 % and 90 % intervals cover it are recorded.
//!
//! `cargo run --release --example calibration -- OUT [--quick] [--models logistic,poisson]
//! [--designs uniform,survey,rare] [--n 10000] [--d 5] [--eps 1,8]` (or
//! `bash scripts/calibration.sh`): one CSV row per (cell, replication, parameter) in `OUT/rows.csv`,
//! appended as the cells finish (an interrupted run resumes after the last finished cell),
//! progress on stderr; then `OUT/table.md` (coverage per cell) and `OUT/ranks.svg` (rank
//! histograms per model). Each cell holds at least 200 intervals (replications × parameters).
//!
//! θ is drawn per replication from N(0, 0.5²) (intercept of Poisson: N(1, 0.5²), redrawn
//! until the largest mean over the box is at most 12; linear: σ = 0.5), a public generating
//! distribution narrower than the default inference prior (N(0, 2.5²) per coefficient in the
//! internal coordinates of the declared bounds, docs/NOISE-AWARE.md, "Priors"): the intervals'
//! coverage of the generating θ is the frequentist check, and the ranks are uniform as far as the
//! prior is negligible against the likelihood (n ≥ 1 000).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use dp_mcmc::noise_aware::{GlmData, GlmKind, INDEFINITE_WARNING, NoiseAware, Prior};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::RunSetters;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

const BINS: usize = 20;

/// Largest Poisson mean over the covariate box a generating θ may have: P(Y > 30 | μ = 12) ≈
/// 1e-5, so the declared cap of 30 censors almost no count. (Without it, at d = 10 a quarter of
/// the data sets had means up to 60 censored at 30, and even the non-private Laplace posterior
/// covered only 84 % at n = 100 000: a misspecified simulation, not the method.)
const MAX_POISSON_MEAN: f64 = 12.0;

#[derive(Clone, Copy)]
struct Cell {
    model: &'static str,
    /// `uniform` (covariates uniform on their declared [0, 1]), `survey` (see [`covariate`]) or
    /// `rare` (logistic only, see [`rare_covariate`]).
    design: &'static str,
    n: usize,
    d: usize,
    eps: f64,
}

impl Cell {
    /// The cell's key in `rows.csv`: the model (with `/survey` for the survey design), n, d, ε.
    fn key(&self) -> String {
        let model = if self.design == "uniform" {
            self.model.to_string()
        } else {
            format!("{}/{}", self.model, self.design)
        };
        format!("{model},{},{},{}", self.n, self.d, self.eps)
    }
    fn kind(&self) -> GlmKind {
        match self.model {
            "logistic" => GlmKind::Logistic,
            "poisson" => GlmKind::Poisson,
            _ => GlmKind::Linear,
        }
    }
    /// Covariates per row (the intercept included): `d` parameters (linear: `d − 1` + ln σ;
    /// gaussian-mean: the mean alone + ln σ).
    fn p(&self) -> usize {
        match self.model {
            "linear" => self.d - 1,
            "gaussian-mean" => 1,
            _ => self.d,
        }
    }
    fn params(&self) -> usize {
        self.p() + usize::from(self.kind() == GlmKind::Linear)
    }
}

/// Covariate `i` (from 1) of a survey-like design: its declared bounds, a draw, and its
/// generating distribution's spread (the effect sizes are drawn per spread). The kinds cycle:
/// binary indicators with prevalence 0.5, 0.2, 0.05 and 0.01; a calendar year 1997-2002
/// declared as such (a box far from 0); a covariate concentrated around 50 ± 5 in a generous
/// declared box [0, 100]; one correlated (0.8) with the previous continuous covariate.
fn covariate(i: usize, prev: f64, rng: &mut dp_mcmc::rng::ChainRng) -> ((f64, f64), f64, f64) {
    let normal = |rng: &mut dp_mcmc::rng::ChainRng| -> f64 { StandardNormal.sample(rng) };
    match (i - 1) % 7 {
        k @ 0..=3 => {
            let prevalence = [0.5, 0.2, 0.05, 0.01][k];
            let x = f64::from(rng.random::<f64>() < prevalence);
            ((0.0, 1.0), x, 1.0)
        }
        4 => (
            (1997.0, 2002.0),
            f64::from(rng.random_range(1997..=2002u32)),
            1.7,
        ),
        5 => (
            (0.0, 100.0),
            (50.0 + 5.0 * normal(rng)).clamp(0.0, 100.0),
            5.0,
        ),
        _ => {
            // correlated with the concentrated covariate before it (or 50 if none)
            let z = (prev - 50.0) / 5.0;
            let x = 50.0 + 5.0 * (0.8 * z + 0.6 * normal(rng));
            ((0.0, 100.0), x.clamp(0.0, 100.0), 5.0)
        }
    }
}

/// Covariate `i` (from 1) of the rare-outcome design (a credit-default table's shape: a few
/// per cent of positive responses, decided mostly by one skewed covariate): the first is
/// concentrated low in its declared box [0, 1] (0.3 ± 0.18, like a balance against its limit)
/// with a strong effect (2.5 ± 0.5 on η per its sd), the others alternate binary indicators
/// (prevalence 0.3) and uniform covariates on [0, 1] with N(0, 0.5²) effects. Its bounds, a
/// draw, and its generating distribution's spread.
fn rare_covariate(i: usize, rng: &mut dp_mcmc::rng::ChainRng) -> ((f64, f64), f64, f64) {
    let z: f64 = StandardNormal.sample(rng);
    match (i, i % 2) {
        (1, _) => ((0.0, 1.0), (0.3 + 0.18 * z).clamp(0.0, 1.0), 0.18),
        (_, 0) => ((0.0, 1.0), f64::from(rng.random::<f64>() < 0.3), 1.0),
        _ => ((0.0, 1.0), rng.random::<f64>(), 1.0),
    }
}

/// One simulated data set of `cell` and its generating θ (in the model's units).
fn simulate(cell: &Cell, seed: u64) -> (GlmData, Vec<f64>) {
    let mut rng = chain_rng(seed, 0);
    let p = cell.p();
    let survey = cell.design == "survey";
    let rare = cell.design == "rare";
    let normal = |rng: &mut dp_mcmc::rng::ChainRng| -> f64 { StandardNormal.sample(rng) };
    // rows first (the survey design's centres set the intercept's meaning)
    let (mut rows, mut bounds, mut spread) =
        (Vec::with_capacity(cell.n * p), Vec::new(), Vec::new());
    for j in 0..cell.n {
        rows.push(1.0);
        let mut prev = 50.0;
        for i in 1..p {
            let (b, x, s) = if survey {
                covariate(i, prev, &mut rng)
            } else if rare {
                rare_covariate(i, &mut rng)
            } else {
                ((0.0, 1.0), rng.random::<f64>(), 1.0)
            };
            if (i - 1) % 7 >= 5 {
                prev = x;
            }
            if j == 0 {
                bounds.push(b);
                spread.push(s);
            }
            rows.push(x);
        }
    }
    // effects: N(0, 0.5²) per spread of the covariate, the intercept at the covariates'
    // typical values (survey) or at 0 (uniform); Poisson: redrawn until the largest mean over
    // the rows is at most MAX_POISSON_MEAN
    let centre = |i: usize| {
        if rare {
            // the strong covariate's centre, an indicator's prevalence, a uniform's mean
            match (i, i % 2) {
                (1, _) | (_, 0) => 0.3,
                _ => 0.5,
            }
        } else if survey {
            [0.5, 0.2, 0.05, 0.01, 1999.5, 50.0, 50.0][(i - 1) % 7]
        } else {
            0.0
        }
    };
    let beta = loop {
        let mut beta: Vec<f64> = vec![0.5 * normal(&mut rng)];
        for i in 1..p {
            beta.push(0.5 * normal(&mut rng) / spread[i - 1]);
        }
        if cell.kind() == GlmKind::Poisson {
            beta[0] += 1.0;
        }
        if rare {
            // a few per cent positive at the typical row, one strong covariate
            beta[0] = -5.5 + 0.5 * normal(&mut rng);
            if p > 1 {
                beta[1] = (2.5 + 0.5 * normal(&mut rng)) / spread[0];
            }
        }
        // shift the intercept so that η is beta[0] at the covariates' typical values
        beta[0] -= (1..p).map(|i| beta[i] * centre(i)).sum::<f64>();
        if cell.kind() != GlmKind::Poisson {
            break beta;
        }
        let max_eta = rows
            .chunks_exact(p)
            .map(|r| r.iter().zip(&beta).map(|(a, b)| a * b).sum::<f64>())
            .fold(f64::NEG_INFINITY, f64::max);
        if max_eta.exp() <= MAX_POISSON_MEAN {
            break beta;
        }
    };
    let sigma = 0.5f64;
    // a survey's linear response in large units: 300 + 40 (η + σ ε)
    let (ya, yb) = if survey && cell.kind() == GlmKind::Linear {
        (300.0, 40.0)
    } else {
        (0.0, 1.0)
    };
    let mut y = Vec::with_capacity(cell.n);
    for row in rows.chunks_exact(p) {
        let eta: f64 = row.iter().zip(&beta).map(|(a, b)| a * b).sum();
        let u: f64 = rng.random();
        y.push(match cell.kind() {
            GlmKind::Logistic => f64::from(u < 1.0 / (1.0 + (-eta).exp())),
            GlmKind::Poisson => {
                let mu = eta.exp();
                let (mut k, mut pk) = (0.0, (-mu).exp());
                let mut cdf = pk;
                while u > cdf && k < 30.0 {
                    k += 1.0;
                    pk *= mu / k;
                    cdf += pk;
                }
                k
            }
            GlmKind::Linear => ya + yb * (eta + sigma * normal(&mut rng)).clamp(-5.0, 5.0),
        });
    }
    let mut all_bounds = vec![(1.0, 1.0)];
    all_bounds.extend(bounds);
    let mut names: Vec<String> = (0..p).map(|i| format!("b{i}")).collect();
    let mut theta: Vec<f64> = beta.iter().map(|b| b * yb).collect();
    if cell.kind() == GlmKind::Linear {
        theta[0] += ya;
        names.push("log_sigma".into());
        theta.push((sigma * yb).ln());
    }
    let y_bounds = match cell.kind() {
        GlmKind::Logistic => (0.0, 1.0),
        GlmKind::Poisson => (0.0, 30.0),
        GlmKind::Linear => (ya - 5.0 * yb, ya + 5.0 * yb),
    };
    // the binary indicators are declared so, as a codebook would (public structure)
    let binary: Vec<String> = (1..p)
        .filter(|&i| (survey && (i - 1) % 7 <= 3) || (rare && i > 1 && i % 2 == 0))
        .map(|i| names[i].clone())
        .collect();
    let binary: Vec<&str> = binary.iter().map(String::as_str).collect();
    let data = GlmData::new(
        cell.kind(),
        rows,
        y,
        all_bounds,
        y_bounds,
        1.0,
        names.clone(),
    )
    .and_then(|d| d.with_prior(Prior::default()))
    .and_then(|d| d.binary(&binary))
    .expect("valid");
    (data, theta)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("calibration-out", String::as_str));
    let quick = args.iter().any(|a| a == "--quick");
    // --models a,b: only these models (default: all four)
    let models: Vec<String> = args
        .iter()
        .position(|a| a == "--models")
        .and_then(|i| args.get(i + 1))
        .map_or_else(
            || {
                vec![
                    "logistic".into(),
                    "poisson".into(),
                    "linear".into(),
                    "gaussian-mean".into(),
                ]
            },
            |m| m.split(',').map(str::to_string).collect(),
        );
    std::fs::create_dir_all(&out).expect("output directory");
    let rows_path = out.join("rows.csv");
    let done: BTreeSet<String> = std::fs::read_to_string(&rows_path)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() > 4).then(|| f[..4].join(","))
        })
        .collect();
    let new_file = !rows_path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&rows_path)
        .expect("rows.csv");
    if new_file {
        writeln!(
            file,
            "model,n,d,epsilon,rep,param,rank,draws,in50,in90,max_rhat,floored,indefinite,converged,sd"
        )
        .unwrap();
    }
    let (ns, ds, epss): (Vec<usize>, Vec<usize>, Vec<f64>) = if quick {
        (vec![1_000, 10_000], vec![2, 5], vec![1.0, 4.0])
    } else {
        (
            vec![1_000, 10_000, 100_000],
            vec![2, 5, 10],
            vec![0.5, 1.0, 2.0, 4.0, 8.0],
        )
    };
    // --n, --d, --eps a,b: only these values
    let ns = list_arg(&args, "--n").unwrap_or(ns);
    let ds = list_arg(&args, "--d").unwrap_or(ds);
    let epss = list_arg(&args, "--eps").unwrap_or(epss);
    // --designs a,b: only these designs (default: both)
    let designs: Vec<String> = args
        .iter()
        .position(|a| a == "--designs")
        .and_then(|i| args.get(i + 1))
        .map_or_else(
            || vec!["uniform".into(), "survey".into(), "rare".into()],
            |m| m.split(',').map(str::to_string).collect(),
        );
    let mut cells = Vec::new();
    for design in ["uniform", "survey", "rare"] {
        if !designs.iter().any(|m| m == design) {
            continue;
        }
        for model in ["logistic", "poisson", "linear", "gaussian-mean"] {
            if !models.iter().any(|m| m == model) {
                continue;
            }
            for &n in &ns {
                for &d in &ds {
                    // a Gaussian mean has d = 2; the survey design needs its covariates
                    if (model == "gaussian-mean" && d != 2)
                        || (design == "survey" && model != "gaussian-mean" && d < 5)
                        || (design == "rare" && model != "logistic")
                    {
                        continue;
                    }
                    for &eps in &epss {
                        cells.push(Cell {
                            model,
                            design,
                            n,
                            d,
                            eps,
                        });
                    }
                }
            }
        }
    }
    let total = cells.len();
    let t0 = std::time::Instant::now();
    for (i, cell) in cells.iter().enumerate() {
        if done.contains(&cell.key()) {
            continue;
        }
        let reps = 200usize
            .div_ceil(cell.params())
            .max(if quick { 40 } else { 50 });
        let reps = if quick { reps.min(60) } else { reps };
        let lines: Vec<String> = (0..reps as u64)
            .into_par_iter()
            .map(|rep| {
                let seed = 1_000_003 * (i as u64 + 1) + rep;
                let (data, theta) = simulate(cell, seed);
                let fit = NoiseAware::new()
                    .epsilon(cell.eps)
                    .delta(1e-6)
                    .seed(seed)
                    .run(&data);
                let mut out = String::new();
                match fit {
                    Ok(fit) if !fit.report.converged => {
                        // refused (not converged): counted, never scored as coverage
                        for j in 0..theta.len() {
                            out.push_str(&format!(
                                "{},{rep},{j},0,0,0,0,{:.4},{:.3},{:.3},0,NaN\n",
                                cell.key(),
                                fit.report.max_rhat,
                                fit.report.floored_share,
                                fit.report.indefinite_share.unwrap_or(0.0)
                            ));
                        }
                    }
                    Ok(fit) => {
                        let d = theta.len();
                        for (j, t) in theta.iter().enumerate() {
                            let mut v: Vec<f64> = fit
                                .run
                                .chains
                                .iter()
                                .flat_map(|c| c.draws.iter().skip(j).step_by(d).copied())
                                .collect();
                            v.sort_by(f64::total_cmp);
                            let rank = v.partition_point(|x| x < t);
                            let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
                            let in50 = q(0.25) <= *t && *t <= q(0.75);
                            let in90 = q(0.05) <= *t && *t <= q(0.95);
                            let mean = v.iter().sum::<f64>() / v.len() as f64;
                            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                                / (v.len() - 1) as f64)
                                .sqrt();
                            out.push_str(&format!(
                                "{},{rep},{j},{rank},{},{},{},{:.4},{:.3},{:.3},1,{sd:.6e}\n",
                                cell.key(),
                                v.len(),
                                u8::from(in50),
                                u8::from(in90),
                                fit.report.max_rhat,
                                fit.report.floored_share,
                                fit.report.indefinite_share.unwrap_or(0.0)
                            ));
                        }
                    }
                    Err(e) => eprintln!("{} rep {rep}: {e}", cell.key()),
                }
                out
            })
            .collect();
        for l in lines {
            file.write_all(l.as_bytes()).unwrap();
        }
        file.flush().unwrap();
        eprintln!(
            "[{}/{total}] {} done ({reps} data sets) at {:.0} s",
            i + 1,
            cell.key(),
            t0.elapsed().as_secs_f64()
        );
    }
    summarise(&out);
}

/// The comma-separated values after `flag`, if given.
fn list_arg<T: std::str::FromStr>(args: &[String], flag: &str) -> Option<Vec<T>> {
    let i = args.iter().position(|a| a == flag)?;
    let list = args.get(i + 1)?;
    Some(
        list.split(',')
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{flag}: cannot read {v:?}"))
            })
            .collect(),
    )
}

/// `table.md` and `ranks.svg` from `rows.csv`.
fn summarise(out: &std::path::Path) {
    let text = std::fs::read_to_string(out.join("rows.csv")).unwrap();
    type Acc = (usize, usize, usize, usize, f64, usize);
    let mut cells: Vec<(String, Acc)> = Vec::new();
    let mut hist: Vec<(String, [usize; BINS])> = Vec::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let key = f[..4].join(",");
        let (rank, draws): (usize, usize) = (f[6].parse().unwrap(), f[7].parse().unwrap());
        let (in50, in90): (usize, usize) = (f[8].parse().unwrap(), f[9].parse().unwrap());
        let floored: f64 = f[11].parse().unwrap();
        // rows written before the GLMs' information share was recorded have no column 12
        let indefinite: f64 = f.get(12).map_or(0.0, |v| v.parse().unwrap());
        let pos = cells.iter().position(|c| c.0 == key).unwrap_or_else(|| {
            cells.push((key.clone(), (0, 0, 0, 0, 0.0, 0)));
            cells.len() - 1
        });
        let c = &mut cells[pos].1;
        // rows written before refusals were recorded have no column 13: converged
        if f.get(13).is_some_and(|v| *v == "0") {
            c.5 += 1;
            continue;
        }
        c.0 += 1;
        c.1 += in50;
        c.2 += in90;
        c.3 += usize::from(floored > 0.0 || indefinite > INDEFINITE_WARNING);
        c.4 = c.4.max(f[10].parse().unwrap());
        let model = f[0].to_string();
        let h = match hist.iter().position(|h| h.0 == model) {
            Some(i) => i,
            None => {
                hist.push((model, [0; BINS]));
                hist.len() - 1
            }
        };
        hist[h].1[(rank * BINS / (draws + 1)).min(BINS - 1)] += 1;
    }
    let mut md = String::from(
        "| model | n | d | ε | intervals | 50 % coverage | 90 % coverage | intervals of runs floored or mostly indefinite | max R-hat | intervals of refused runs |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (key, c) in &cells {
        let f: Vec<&str> = key.split(',').collect();
        let (c50, c90) = (c.1 as f64 / c.0 as f64, c.2 as f64 / c.0 as f64);
        let flag = if f[1] != "1000" && !(0.86..=0.94).contains(&c90) {
            " **miss**"
        } else {
            ""
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.3} | {:.3}{flag} | {} | {:.3} | {} |\n",
            f[0], f[1], f[2], f[3], c.0, c50, c90, c.3, c.4, c.5
        ));
    }
    std::fs::write(out.join("table.md"), md).unwrap();
    // rank histograms, one panel per model (uniform if calibrated)
    let (w, h, pad) = (260.0, 160.0, 30.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        hist.len() as f64 * (w + pad) + pad,
        h + 3.0 * pad
    );
    for (k, (model, bins)) in hist.iter().enumerate() {
        let x0 = pad + k as f64 * (w + pad);
        let total: usize = bins.iter().sum();
        let expect = total as f64 / BINS as f64;
        let top = bins.iter().copied().max().unwrap_or(1) as f64 * 1.2;
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{model} ({total} ranks)</text>\n",
            x0,
            pad - 8.0
        ));
        for (b, &c) in bins.iter().enumerate() {
            let bh = h * c as f64 / top;
            svg.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#4c78a8\"/>\n",
                x0 + b as f64 * w / BINS as f64,
                pad + h - bh,
                w / BINS as f64 - 1.0,
                bh
            ));
        }
        let ey = pad + h - h * expect / top;
        svg.push_str(&format!(
            "<line x1=\"{x0}\" x2=\"{}\" y1=\"{ey:.1}\" y2=\"{ey:.1}\" stroke=\"#e45756\" stroke-dasharray=\"4\"/>\n",
            x0 + w
        ));
        svg.push_str(&format!(
            "<text x=\"{x0}\" y=\"{}\">rank of θ among the draws (0 … 1); dashed: uniform</text>\n",
            pad + h + 16.0
        ));
    }
    svg.push_str("</svg>\n");
    std::fs::write(out.join("ranks.svg"), svg).unwrap();
    eprintln!("wrote {}", out.join("table.md").display());
}
