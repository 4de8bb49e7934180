//! Evaluation of the noise-aware fit on the shipped RAND HIE data (logistic "any visit"):
//! against the non-private Laplace posterior, 20 seeds per ε. `cargo run --release --example
//! noise_aware_eval [seeds] [--one-hot] [--single]` (`--one-hot`: the three health indicators
//! declared one-hot, as the codebook has them; `--single`: one release of the score and the
//! information at the public point θ = 0 instead of the Newton path, the quadratic
//! approximate sufficient statistics of PASS-GLM with a Taylor expansion at 0).
use dp_mcmc::noise_aware::{GlmData, GlmKind, NoiseAware};
use dp_mcmc::samplers::RunSetters;

fn main() -> dp_mcmc::Result<()> {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let text = std::fs::read_to_string("data/randhie.csv").expect("run from the repository root");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cols = [
        "lncoins", "idp", "lpi", "fmde", "physlm", "disea", "hlthg", "hlthf", "hlthp",
    ];
    let upper = [
        4.6151206,
        1.0,
        1500f64.ln(),
        8.2940497,
        1.0,
        60.0,
        1.0,
        1.0,
        1.0,
    ];
    let idx: Vec<usize> = cols
        .iter()
        .map(|c| header.iter().position(|h| h == c).unwrap())
        .collect();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for line in lines {
        let v: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
        y.push(if v[0] > 0.0 { 1.0 } else { 0.0 });
        x.push(1.0);
        for (i, u) in idx.iter().zip(upper) {
            x.push(v[*i].clamp(0.0, u) / u);
        }
    }
    let mut bounds = vec![(1.0, 1.0)];
    bounds.extend(std::iter::repeat_n((0.0, 1.0), cols.len()));
    let names: Vec<String> = std::iter::once("intercept".to_string())
        .chain(cols.iter().map(|c| c.to_string()))
        .collect();
    let mut data = GlmData::new(GlmKind::Logistic, x, y, bounds, (0.0, 1.0), 10.0, names)?;
    if std::env::args().any(|a| a == "--one-hot") {
        // the codebook's self-rated health: at most one of good, fair, poor (excellent is the
        // reference)
        data = data.one_hot(&["hlthg", "hlthf", "hlthp"])?;
        println!("declared one-hot: hlthg, hlthf, hlthp");
    }
    let single = std::env::args().any(|a| a == "--single");
    if single {
        println!("one release at θ = 0 (PASS-GLM's quadratic statistics, Taylor at 0)");
    }
    let d = data.dim();
    let (mode, cov) = data.laplace_nonprivate()?;
    let sd: Vec<f64> = (0..d).map(|i| cov[i * d + i].sqrt()).collect();
    println!("n = {}, d = {d}; non-private sds {:?}", data.n_rows(), sd);
    println!(
        "| ε | |Δmean|/sd median | p90 | sd ratio median | coverage of NP mean (90 %) | max R-hat (max) | min ESS | s/run |"
    );
    for eps in [0.5, 1.0, 2.0, 4.0, 8.0] {
        let (mut dist, mut ratio, mut cover, mut rhat, mut ess, mut secs) =
            (vec![], vec![], 0usize, 0f64, f64::INFINITY, 0.0);
        let mut failed = 0;
        for s in 0..seeds {
            let mut builder = NoiseAware::new().epsilon(eps).delta(1e-6).seed(1000 + s);
            if single {
                builder = builder.schedule(vec![(0.4, 0.6)]);
            }
            let fit = match builder.run(&data) {
                Ok(f) => f,
                Err(e) => {
                    failed += 1;
                    eprintln!("ε {eps} seed {s}: {e}");
                    continue;
                }
            };
            secs += fit.run.wall_seconds;
            if std::env::var("VERBOSE").is_ok() {
                let r = &fit.report;
                let fp: Vec<String> = r
                    .final_point
                    .iter()
                    .zip(&mode)
                    .zip(&sd)
                    .map(|((a, b), s)| format!("{:.1}", (a - b) / s))
                    .collect();
                eprintln!(
                    "ε {eps} s {s}: pooled {:?} last step {:.2} acc {:?} final-point error (sds) {:?} zs {:?}",
                    r.pooled,
                    r.last_step_whitened,
                    r.acceptance
                        .iter()
                        .map(|a| format!("{a:.2}"))
                        .collect::<Vec<_>>(),
                    fp,
                    r.rounds
                        .iter()
                        .map(|x| format!(
                            "{:.1}/{:.1}",
                            x.info_noise_multiplier, x.score_noise_multiplier
                        ))
                        .collect::<Vec<_>>()
                );
            }
            rhat = rhat.max(fit.report.max_rhat);
            ess = ess.min(fit.report.min_ess_bulk);
            for i in 0..d {
                let mut v: Vec<f64> = fit
                    .run
                    .chains
                    .iter()
                    .flat_map(|c| c.draws.iter().skip(i).step_by(d).copied())
                    .collect();
                let m = v.iter().sum::<f64>() / v.len() as f64;
                let s2 = v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
                v.sort_by(f64::total_cmp);
                let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
                dist.push((m - mode[i]).abs() / sd[i]);
                ratio.push(s2.sqrt() / sd[i]);
                if q(0.05) <= mode[i] && mode[i] <= q(0.95) {
                    cover += 1;
                }
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let p90 = |v: &Vec<f64>| v[(v.len() as f64 * 0.9) as usize];
        let nd = dist.len();
        let md = med(&mut dist);
        println!(
            "| {eps} | {md:.2} | {:.2} | {:.2} | {:.3} | {rhat:.4} | {ess:.0} | {:.3} |{}",
            p90(&dist),
            med(&mut ratio),
            cover as f64 / nd as f64,
            secs / (seeds - failed) as f64,
            if failed > 0 {
                format!(" {failed} failed")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
