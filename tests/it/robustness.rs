//! Robustness sweep: every public builder and loader, fed odd inputs (zero
//! chains, zero and huge counts, NaN, ±∞, negative, huge and tiny numbers, empty, ragged and
//! non-numeric data, mismatched dimensions), returns `Ok` or a typed `Err`; it never panics.
//!
//! Each call runs under `catch_unwind`, so one panic reports the input that caused it and the
//! sweep goes on. The inputs are a fixed list of odd values per parameter, varied one at a
//! time around a valid configuration, plus combinations drawn from a seeded generator.
//! Sampler runs are kept cheap: a 40-row model, a few iterations, `max_time` and a small
//! `max_trace_bytes` (so huge iteration counts fail up front or stop at the time bound).
//!
//! The last tests check the bounded-memory tools: thinning, the up-front trace-memory check,
//! and traces that grow with the chain (so `max_time` bounds memory).

use crate::common::{odd_csvs, temp_dir, temp_file};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use crate::budget_queries::MaxIterations;
use dp_mcmc::Result;
use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
use dp_mcmc::accounting::{
    Accountant, AccountantKind, BarkerRdp, Fourier, Pld, PrivacyEvent, Rdp, Releases, WorBound,
    Zcdp, ZcdpConversion, barker_rd_approx, cks_zcdp_delta, cks_zcdp_epsilon,
    discrete_gaussian_delta, discrete_gaussian_rho, gaussian_mu, gaussian_rdp, pld_delta,
    pld_epsilon, poisson_subsampled_gaussian_rdp, wor_subsampled_gaussian_rdp, zcdp_rho_budget,
};
use dp_mcmc::models::{
    BananaModel, BananaParams, CircleModel, ColumnData, CustomModel, Experiment, GaussianModel,
    LogisticModel, Model, RowData, block_correlated_cov, generate_gaussian,
};
use dp_mcmc::nalgebra;
use dp_mcmc::noise::Noise;
use dp_mcmc::rng::ChainRng;
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::Gradient;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::{
    ClipDistance, DpBarker, DpHmc, DpPenalty, Hmc, MinibatchPenalty, ProposalKind, Run, Rwmh,
    StepSize,
};
use rand::RngExt;

/// Odd floating-point inputs.
const ODD_F64: [f64; 11] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    0.0,
    5e-324,
    1e-300,
    1e300,
    f64::MAX,
    0.5,
    1.0,
];

/// Odd counts.
const ODD_USIZE: [usize; 7] = [0, 1, 2, 7, 1 << 40, usize::MAX - 1, usize::MAX];

/// Odd u64 counts.
const ODD_U64: [u64; 6] = [0, 1, 2, 40, 1 << 53, u64::MAX];

/// Collects panics (with the input that caused them) instead of stopping at the first.
#[derive(Default)]
struct Sweep {
    calls: usize,
    errors: usize,
    panics: Vec<String>,
}

thread_local! {
    /// Set while a sweep call runs: its panics are reported by the sweep, not by the hook.
    static IN_SWEEP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that stays quiet inside sweep calls (the sweep reports those
/// with their input) and prints every other panic as usual.
fn quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_SWEEP.with(std::cell::Cell::get) {
                default(info);
            }
        }));
    });
}

impl Sweep {
    /// Runs `f`; a panic is recorded under `what`. `Err` must carry a message.
    fn call<T>(&mut self, what: impl AsRef<str>, f: impl FnOnce() -> Result<T>) -> Option<T> {
        quiet_hook();
        self.calls += 1;
        if std::env::var_os("ROBUSTNESS_TRACE").is_some() {
            eprintln!("> {}", what.as_ref());
        }
        IN_SWEEP.with(|f| f.set(true));
        let t0 = std::time::Instant::now();
        let out = catch_unwind(AssertUnwindSafe(f));
        IN_SWEEP.with(|f| f.set(false));
        if std::env::var_os("ROBUSTNESS_TRACE").is_some() && t0.elapsed().as_secs_f64() > 0.05 {
            eprintln!("SLOW {:.2}s {}", t0.elapsed().as_secs_f64(), what.as_ref());
        }
        match out {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) => {
                self.errors += 1;
                if e.to_string().trim().is_empty() {
                    self.panics
                        .push(format!("{}: error without a message", what.as_ref()));
                }
                None
            }
            Err(p) => {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                self.panics
                    .push(format!("{}: PANIC: {msg:?}", what.as_ref()));
                None
            }
        }
    }

    /// Runs an infallible `f` (a panic is recorded).
    fn plain<T>(&mut self, what: impl AsRef<str>, f: impl FnOnce() -> T) -> Option<T> {
        self.call(what, || Ok(f()))
    }

    fn finish(self, name: &str) {
        eprintln!(
            "{name}: {} calls, {} typed errors, {} panics",
            self.calls,
            self.errors,
            self.panics.len()
        );
        assert!(
            self.panics.is_empty(),
            "{name}: {} of {} calls panicked:\n{}",
            self.panics.len(),
            self.calls,
            self.panics.join("\n")
        );
    }
}

fn rng(seed: u64) -> ChainRng {
    chain_rng(seed, 0)
}

fn pick<T: Copy>(r: &mut ChainRng, xs: &[T]) -> T {
    xs[r.random_range(0..xs.len())]
}

/// A 1-d normal-mean model on 40 rows with a gradient (so every sampler can run).
fn small_model() -> CustomModel {
    let rows: Vec<Vec<f64>> = (0..40).map(|i| vec![(i % 7) as f64 / 7.0 - 0.4]).collect();
    CustomModel::new(RowData::from_rows(&rows).unwrap(), 1, |t, x| {
        -0.5 * (x[0] - t[0]).powi(2)
    })
    .unwrap()
    .with_gradient(|t, x, g| g[0] = x[0] - t[0])
    .with_gaussian_prior(100.0)
    .unwrap()
}

/// Applied to every sampler run: a time bound and a small trace-memory limit.
macro_rules! bounded {
    ($b:expr) => {
        $b.max_time(Duration::from_millis(50))
            .max_trace_bytes(16 << 20)
            .progress(false)
    };
}

/// Run settings varied around a valid run of `$base` (a builder with `.start` set).
macro_rules! sweep_run_settings {
    ($sw:expr, $name:expr, $base:expr, $model:expr, $private:expr) => {{
        let base = $base;
        let model = $model;
        for &c in &ODD_USIZE {
            $sw.call(format!("{} chains({c:?})", $name), || {
                bounded!(base.clone().chains(c).iterations(3)).run(model)
            });
            if $private {
                $sw.call(format!("{} chains({c:?}) eps", $name), || {
                    bounded!(base.clone().chains(c).epsilon(1.0).delta(1e-3)).run(model)
                });
            }
        }
        for &k in &ODD_USIZE {
            $sw.call(format!("{} iterations({k:?})", $name), || {
                bounded!(base.clone().chains(2).iterations(k)).run(model)
            });
            $sw.call(format!("{} iterations({k:?}) thin 1e9", $name), || {
                bounded!(base.clone().chains(2).iterations(k).thin(1_000_000_000)).run(model)
            });
            $sw.call(format!("{} thin({k:?})", $name), || {
                bounded!(base.clone().chains(2).iterations(5).thin(k)).run(model)
            });
        }
        if $private {
            for &e in &ODD_F64 {
                for &d in &[f64::NAN, 0.0, 1e-300, 1e-6, 0.5, 1.0, -1.0] {
                    $sw.call(format!("{} epsilon({e:?}) delta({d:?})", $name), || {
                        bounded!(base.clone().chains(2).epsilon(e).delta(d)).run(model)
                    });
                }
            }
            $sw.call(format!("{} epsilon without delta", $name), || {
                bounded!(base.clone().epsilon(1.0)).run(model)
            });
            $sw.call(format!("{} per-chain budget, 0 chains", $name), || {
                bounded!(
                    base.clone()
                        .chains(0)
                        .per_chain_budget(true)
                        .epsilon(1.0)
                        .delta(1e-3)
                )
                .run(model)
            });
        }
        for start in [vec![], vec![f64::NAN], vec![0.0, 0.0], vec![f64::INFINITY]] {
            $sw.call(format!("{} start({start:?})", $name), || {
                bounded!(base.clone().iterations(2).start(start.clone())).run(model)
            });
        }
        $sw.call(format!("{} starts: wrong count", $name), || {
            bounded!(
                base.clone()
                    .chains(3)
                    .iterations(2)
                    .starts(vec![vec![0.0]; 2])
            )
            .run(model)
        });
        $sw.call(format!("{} max_trace_bytes(0)", $name), || {
            bounded!(base.clone().iterations(2))
                .max_trace_bytes(0)
                .run(model)
        });
        $sw.call(format!("{} threads(0)", $name), || {
            bounded!(base.clone().iterations(2).threads(0)).run(model)
        });
        $sw.call(format!("{} threads_per_chain(0)", $name), || {
            bounded!(base.clone().iterations(2).threads_per_chain(0)).run(model)
        });
        $sw.call(format!("{} threads_per_chain(max)", $name), || {
            bounded!(base.clone().iterations(2).threads_per_chain(usize::MAX)).run(model)
        });
        $sw.call(format!("{} max_time(0)", $name), || {
            base.clone()
                .iterations(100_000)
                .max_time(Duration::ZERO)
                .progress(false)
                .run(model)
        });
        $sw.call(format!("{} secure rng", $name), || {
            bounded!(base.clone().iterations(2).secure_rng(true)).run(model)
        });
    }};
}

fn check_run(run: &Run) {
    // Frames of a finished run build (no panic) and have consistent sizes.
    let draws = run.draws().expect("draws frame");
    let saved: usize = run.chains.iter().map(|c| c.draws.len()).sum();
    assert_eq!(draws.height() * run.dim().max(1), saved);
    run.stats().expect("stats frame");
    run.chain_summary().expect("chain summary");
}

#[test]
fn samplers_never_panic() {
    let model = small_model();
    let mut sw = Sweep::default();
    let start = vec![0.1];

    // DP penalty.
    let base = DpPenalty::builder()
        .tau(0.5)
        .clip_bound(2.0)
        .proposal_sd(0.1)
        .start(start.clone());
    for &x in &ODD_F64 {
        sw.call(format!("dp-penalty tau({x:?})"), || {
            bounded!(base.clone().tau(x).iterations(3)).run(&model)
        });
        sw.call(format!("dp-penalty tau({x:?}) eps"), || {
            bounded!(base.clone().tau(x).epsilon(1.0).delta(1e-3)).run(&model)
        });
        sw.call(format!("dp-penalty clip_bound({x:?})"), || {
            bounded!(base.clone().clip_bound(x).iterations(3)).run(&model)
        });
        sw.call(format!("dp-penalty proposal_sd({x:?})"), || {
            bounded!(base.clone().proposal_sd(x).iterations(3)).run(&model)
        });
    }
    for sd in [vec![], vec![0.1, 0.1], vec![f64::NAN]] {
        sw.call(format!("dp-penalty proposal_sd({sd:?})"), || {
            bounded!(
                base.clone()
                    .proposal_sd(StepSize::PerCoordinate(sd.clone()))
                    .iterations(3)
            )
            .run(&model)
        });
    }
    for kind in [
        ProposalKind::Full,
        ProposalKind::OneComponent,
        ProposalKind::GuidedWalk,
    ] {
        for m in [
            AccountantKind::Zcdp,
            AccountantKind::Pld,
            AccountantKind::Rdp,
            AccountantKind::Fourier,
        ] {
            sw.call(format!("dp-penalty {kind:?} {m:?}"), || {
                bounded!(
                    base.clone()
                        .proposal(kind)
                        .accountant(m)
                        .epsilon(1.0)
                        .delta(1e-3)
                )
                .run(&model)
            });
        }
    }
    for lattice in [-20, i32::MIN, i32::MAX, 0, 60] {
        sw.call(format!("dp-penalty discrete({lattice:?})"), || {
            bounded!(base.clone().noise(Noise::discrete(lattice)).iterations(3)).run(&model)
        });
        sw.call(format!("dp-penalty discrete({lattice:?}) eps"), || {
            bounded!(
                base.clone()
                    .noise(Noise::discrete(lattice))
                    .epsilon(1.0)
                    .delta(1e-3)
            )
            .run(&model)
        });
    }
    sweep_run_settings!(sw, "dp-penalty", base.clone(), &model, true);

    // DP HMC.
    let base = DpHmc::builder()
        .tau_l(0.5)
        .tau_g(0.5)
        .leapfrog_steps(3)
        .step_size(0.01)
        .start(start.clone());
    for &x in &ODD_F64 {
        for (name, b) in [
            ("tau_l", base.clone().tau_l(x)),
            ("tau_g", base.clone().tau_g(x)),
            ("step_size", base.clone().step_size(x)),
            ("clip_bound", base.clone().clip_bound(x)),
            ("grad_clip_bound", base.clone().grad_clip_bound(x)),
            ("mass", base.clone().mass(vec![x])),
        ] {
            sw.call(format!("dp-hmc {name}({x:?})"), || {
                bounded!(b.clone().iterations(2)).run(&model)
            });
            sw.call(format!("dp-hmc {name}({x:?}) eps"), || {
                bounded!(b.clone().epsilon(1.0).delta(1e-3)).run(&model)
            });
        }
    }
    for &l in &ODD_USIZE {
        for g in [Gradient::Fresh, Gradient::Reuse] {
            sw.call(format!("dp-hmc leapfrog_steps({l:?}) {g:?}"), || {
                bounded!(
                    base.clone()
                        .leapfrog_steps(l)
                        .gradient(g)
                        .chains(3)
                        .epsilon(2.0)
                        .delta(1e-3)
                )
                .run(&model)
            });
            sw.call(
                format!("dp-hmc leapfrog_steps({l:?}) {g:?} budget()"),
                || {
                    base.clone()
                        .leapfrog_steps(l)
                        .gradient(g)
                        .chains(3)
                        .epsilon(2.0)
                        .delta(1e-3)
                        .budget(40)
                },
            );
        }
    }
    sw.call("dp-hmc mass of wrong length", || {
        bounded!(base.clone().mass(vec![1.0, 1.0]).iterations(2)).run(&model)
    });
    sweep_run_settings!(sw, "dp-hmc", base.clone(), &model, true);

    // Minibatch penalty (RDP: the Fourier accountant is exercised once per budget below).
    let base = MinibatchPenalty::builder()
        .tau(0.7)
        .clip_bound(1.0)
        .batch_size(10)
        .proposal_sd(0.1)
        .accountant(AccountantKind::Rdp)
        .start(start.clone());
    for &b in &ODD_USIZE {
        sw.call(format!("minibatch batch_size({b:?})"), || {
            bounded!(base.clone().batch_size(b).iterations(3)).run(&model)
        });
        sw.call(format!("minibatch batch_size({b:?}) eps"), || {
            bounded!(base.clone().batch_size(b).epsilon(1.0).delta(1e-3)).run(&model)
        });
    }
    for &x in &ODD_F64 {
        sw.call(format!("minibatch tau({x:?})"), || {
            bounded!(base.clone().tau(x).epsilon(1.0).delta(1e-3)).run(&model)
        });
        sw.call(format!("minibatch clip_bound({x:?})"), || {
            bounded!(base.clone().clip_bound(x).iterations(3)).run(&model)
        });
    }
    for e in [1.0, 1e300] {
        sw.call(format!("minibatch fourier eps {e:?}"), || {
            bounded!(
                base.clone()
                    .accountant(AccountantKind::Fourier)
                    .epsilon(e)
                    .delta(1e-3)
            )
            .run(&model)
        });
    }
    sw.call("minibatch discrete, thesis compatible, fpc", || {
        bounded!(
            base.clone()
                .noise(Noise::discrete(-20))
                .thesis_compatible(true)
                .finite_population_correction(true)
                .epsilon(1.0)
                .delta(1e-3)
        )
        .run(&model)
    });
    sweep_run_settings!(sw, "minibatch", base.clone(), &model, true);

    // DP Barker.
    let base = DpBarker::builder()
        .batch_size(20)
        .proposal_sd(0.1)
        .start(start.clone());
    for &b in &ODD_USIZE {
        sw.call(format!("dp-barker batch_size({b:?}) eps"), || {
            bounded!(base.clone().batch_size(b).epsilon(1.0).delta(1e-3)).run(&model)
        });
    }
    for &x in &ODD_F64 {
        sw.call(format!("dp-barker proposal_sd({x:?})"), || {
            bounded!(base.clone().proposal_sd(x).iterations(3)).run(&model)
        });
    }
    sweep_run_settings!(sw, "dp-barker", base.clone(), &model, true);

    // Non-private baselines.
    let base = Rwmh::builder().proposal_sd(0.1).start(start.clone());
    for &x in &ODD_F64 {
        for d in [ClipDistance::L2, ClipDistance::AbsSumThesis] {
            sw.call(format!("rwmh clip_bound({x:?}) {d:?}"), || {
                bounded!(base.clone().clip_bound(x).clip_distance(d).iterations(3)).run(&model)
            });
        }
        sw.call(format!("rwmh proposal_sd({x:?})"), || {
            bounded!(base.clone().proposal_sd(x).iterations(3)).run(&model)
        });
    }
    sw.call("rwmh without iterations", || {
        bounded!(base.clone()).run(&model)
    });
    sweep_run_settings!(sw, "rwmh", base.clone(), &model, false);
    let base = Hmc::builder()
        .step_size(0.05)
        .leapfrog_steps(3)
        .start(start.clone());
    for &x in &ODD_F64 {
        sw.call(format!("hmc step_size({x:?})"), || {
            bounded!(base.clone().step_size(x).iterations(3)).run(&model)
        });
        sw.call(format!("hmc clip_bound({x:?})"), || {
            bounded!(base.clone().clip_bound(x).iterations(3)).run(&model)
        });
        sw.call(format!("hmc mass({x:?})"), || {
            bounded!(base.clone().mass(vec![x]).iterations(3)).run(&model)
        });
    }
    for &l in &ODD_USIZE {
        sw.call(format!("hmc leapfrog_steps({l:?})"), || {
            bounded!(base.clone().leapfrog_steps(l).iterations(3)).run(&model)
        });
    }
    sweep_run_settings!(sw, "hmc", base.clone(), &model, false);

    // A model without gradients under HMC; a model of another dimension.
    let no_grad =
        CustomModel::new(RowData::from_rows(&[vec![0.0]]).unwrap(), 1, |_, _| 0.0).unwrap();
    sw.call("hmc without gradients", || {
        bounded!(base.clone().iterations(2)).run(&no_grad)
    });
    let wide = CustomModel::new(RowData::from_rows(&[vec![0.0]]).unwrap(), 3, |_, _| 0.0).unwrap();
    sw.call("rwmh start of the wrong dimension", || {
        bounded!(Rwmh::builder().start(vec![0.0]).iterations(2)).run(&wide)
    });

    // Seeded random combinations of odd settings (run settings × sampler parameters).
    let mut r = rng(12);
    for i in 0..120 {
        let chains = pick(&mut r, &[0, 1, 2, 3, usize::MAX]);
        let thin = pick(&mut r, &[0, 1, 3, usize::MAX]);
        let iterations = pick(&mut r, &[None, Some(0), Some(4), Some(1 << 40)]);
        let eps = pick(&mut r, &ODD_F64);
        let delta = pick(&mut r, &[1e-3, 0.0, f64::NAN, 1e-300, 0.99]);
        let x = pick(&mut r, &ODD_F64);
        let which = r.random_range(0..6);
        let what = format!(
            "combo {i}: sampler {which} chains {chains} thin {thin} iterations {iterations:?} \
             eps {eps:?} delta {delta:?} x {x:?}"
        );
        macro_rules! go {
            ($b:expr) => {{
                let mut b = bounded!($b.chains(chains).thin(thin).start(vec![0.1]));
                match iterations {
                    Some(k) => b = b.iterations(k),
                    None => b = b.epsilon(eps).delta(delta),
                }
                if let Some(run) = sw.call(&what, || b.run(&model)) {
                    check_run(&run);
                }
            }};
        }
        match which {
            0 => go!(DpPenalty::builder().tau(x).proposal_sd(0.1)),
            1 => go!(DpHmc::builder().tau_g(x).leapfrog_steps(2).step_size(0.01)),
            2 => go!(MinibatchPenalty::builder()
                .batch_size(10)
                .clip_bound(x)
                .accountant(AccountantKind::Rdp)),
            3 => go!(DpBarker::builder().batch_size(20).proposal_sd(x)),
            4 => go!(Rwmh::builder().proposal_sd(x)),
            _ => go!(Hmc::builder().step_size(x).leapfrog_steps(2)),
        }
    }
    sw.finish("samplers");
}

#[test]
fn accounting_never_panics() {
    let mut sw = Sweep::default();
    let methods = [
        AccountantKind::Zcdp,
        AccountantKind::Pld,
        AccountantKind::Rdp,
        AccountantKind::Fourier,
    ];
    // Algorithm 2 builders, one odd value at a time around a valid budget.
    for &x in &ODD_F64 {
        for m in methods {
            sw.call(format!("dp_penalty tau({x:?}) {m:?}"), || {
                MaxIterations::dp_penalty(x, 1000)
                    .epsilon(1.0)
                    .method(m)
                    .compute()
            });
            sw.call(format!("dp_penalty epsilon({x:?}) {m:?}"), || {
                MaxIterations::dp_penalty(0.1, 1000)
                    .epsilon(x)
                    .method(m)
                    .compute()
            });
            sw.call(format!("dp_penalty delta({x:?}) {m:?}"), || {
                MaxIterations::dp_penalty(0.1, 1000)
                    .epsilon(1.0)
                    .delta(x)
                    .method(m)
                    .compute()
            });
            for g in [Gradient::Fresh, Gradient::Reuse] {
                sw.call(format!("dp_hmc tau_l({x:?}) {m:?} {g:?}"), || {
                    MaxIterations::dp_hmc(x, 0.4, 10, 1000)
                        .epsilon(1.0)
                        .method(m)
                        .gradient(g)
                        .compute()
                });
                sw.call(format!("dp_hmc epsilon({x:?}) {m:?} {g:?}"), || {
                    MaxIterations::dp_hmc(0.1, 0.4, 10, 1000)
                        .epsilon(x)
                        .method(m)
                        .gradient(g)
                        .compute()
                });
            }
        }
        sw.call(format!("minibatch tau({x:?}) rdp"), || {
            MaxIterations::minibatch_penalty(x, 100, 1000)
                .epsilon(1.0)
                .method(AccountantKind::Rdp)
                .compute()
        });
        sw.call(format!("minibatch epsilon({x:?}) rdp"), || {
            MaxIterations::minibatch_penalty(0.7, 100, 1000)
                .epsilon(x)
                .method(AccountantKind::Rdp)
                .thesis_compatible(true)
                .compute()
        });
        sw.call(format!("dp_barker epsilon({x:?})"), || {
            MaxIterations::dp_barker(100, 1000).epsilon(x).compute()
        });
        sw.call(format!("dp_barker delta({x:?})"), || {
            MaxIterations::dp_barker(100, 1000)
                .epsilon(1.0)
                .delta(x)
                .compute()
        });
        // rdp-exact shares the scan of the batch/n sweep below; only its per-step curve differs
        sw.call(format!("dp_barker rdp-exact epsilon({x:?})"), || {
            MaxIterations::dp_barker(100, 1000)
                .epsilon(x)
                .method(AccountantKind::RdpExact)
                .compute()
        });
        sw.call(format!("dp_barker pld epsilon({x:?})"), || {
            MaxIterations::dp_barker(100, 1000)
                .epsilon(x)
                .method(AccountantKind::Pld)
                .compute()
        });
    }
    let small_fa = FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement).nx(10_000);
    for e in [f64::NAN, 0.5, 4.0, 1e300] {
        sw.call(format!("minibatch fourier epsilon({e:?})"), || {
            MaxIterations::minibatch_penalty(0.7, 100, 1000)
                .epsilon(e)
                .fourier_accountant(small_fa.clone())
                .compute()
        });
    }
    sw.call("minibatch fourier with the wrong relation", || {
        MaxIterations::minibatch_penalty(0.7, 100, 1000)
            .epsilon(1.0)
            .fourier_accountant(FourierAccountant::new(FourierRelation::AddRemovePoisson))
            .compute()
    });
    for &n in &ODD_U64 {
        sw.call(format!("dp_penalty n({n:?})"), || {
            MaxIterations::dp_penalty(0.1, n).epsilon(1.0).compute()
        });
        sw.call(format!("dp_hmc n({n:?})"), || {
            MaxIterations::dp_hmc(0.1, 0.4, 10, n)
                .epsilon(1.0)
                .compute()
        });
        for &b in &ODD_U64 {
            sw.call(format!("minibatch batch({b:?}) n({n:?})"), || {
                MaxIterations::minibatch_penalty(0.7, b, n)
                    .epsilon(1.0)
                    .method(AccountantKind::Rdp)
                    .compute()
            });
            sw.call(format!("dp_barker batch({b:?}) n({n:?})"), || {
                MaxIterations::dp_barker(b, n).epsilon(1.0).compute()
            });
            // n = 2^53 with a tiny per-step loss takes Algorithm 2 to its cap (10–25 s per
            // call with the PLD): left to the RDP sweep above
            if n == 1 << 53 {
                continue;
            }
            sw.call(format!("dp_barker pld batch({b:?}) n({n:?})"), || {
                MaxIterations::dp_barker(b, n)
                    .epsilon(1.0)
                    .method(AccountantKind::Pld)
                    .compute()
            });
        }
    }
    for l in [0, 1, u32::MAX] {
        sw.call(format!("dp_hmc leapfrog({l:?})"), || {
            MaxIterations::dp_hmc(0.1, 0.4, l, 1000)
                .epsilon(1.0)
                .compute()
        });
    }

    // Accountants on odd events.
    let mut events = vec![
        PrivacyEvent::NoOp,
        PrivacyEvent::NonPrivate,
        PrivacyEvent::Composed(vec![]),
    ];
    for &x in &ODD_F64 {
        events.push(PrivacyEvent::gaussian(x));
        events.push(PrivacyEvent::Zcdp { rho: x });
        events.push(PrivacyEvent::gaussian(1.0).poisson(x));
        events.push(PrivacyEvent::gaussian(x).poisson(0.01).repeat(1000));
    }
    for &c in &ODD_U64 {
        events.push(PrivacyEvent::gaussian(1.0).repeat(c));
        events.push(PrivacyEvent::gaussian(2.0).poisson(0.01).repeat(c));
        events.push(PrivacyEvent::gaussian(1.0).without_replacement(1000, c));
        events.push(
            PrivacyEvent::gaussian(1.0)
                .without_replacement(c, 10)
                .repeat(10),
        );
    }
    events.push(PrivacyEvent::compose(vec![
        PrivacyEvent::gaussian(1.0),
        PrivacyEvent::gaussian(1.0).poisson(0.1),
    ]));
    let queries = [
        f64::NAN,
        -1.0,
        0.0,
        1e-300,
        1e-6,
        0.5,
        1.0,
        1e300,
        f64::INFINITY,
    ];
    for (i, e) in events.iter().enumerate() {
        let mut z = Zcdp::new();
        let mut r = Rdp::new();
        let mut p = Pld::new();
        let mut f = Fourier::new().nx(2_000);
        let subsampled = {
            let text = format!("{e:?}");
            text.contains("Sampled")
        };
        sw.call(format!("zcdp compose event {i} {e:?}"), || {
            z.compose(e).map(|_| ())
        });
        sw.call(format!("rdp compose event {i} {e:?}"), || {
            r.compose(e).map(|_| ())
        });
        sw.call(format!("pld compose event {i} {e:?}"), || {
            p.compose(e).map(|_| ())
        });
        sw.call(format!("fourier compose event {i} {e:?}"), || {
            f.compose(e).map(|_| ())
        });
        for &q in &queries {
            sw.call(format!("zcdp event {i} epsilon({q:?})"), || z.epsilon(q));
            sw.call(format!("zcdp event {i} delta({q:?})"), || z.delta(q));
            sw.call(format!("rdp event {i} epsilon({q:?})"), || r.epsilon(q));
            sw.call(format!("rdp event {i} delta({q:?})"), || r.delta(q));
            // The PLD accountant hands subsampled events to the Fourier accountant at nx = 1e6
            // (about 1 s per query in a debug build): query a few of those only.
            if !subsampled || q.is_nan() || (q == 0.5 && i % 7 == 0) {
                sw.call(format!("pld event {i} epsilon({q:?})"), || p.epsilon(q));
                sw.call(format!("pld event {i} delta({q:?})"), || p.delta(q));
            }
        }
        for q in [f64::NAN, 1e-6, 0.5, 1e300] {
            sw.call(format!("fourier event {i} epsilon({q:?})"), || f.epsilon(q));
            sw.call(format!("fourier event {i} delta({q:?})"), || f.delta(q));
        }
    }
    for &nx in &[0usize, 1, 3, 4, (1 << 27) + 2, usize::MAX - 1] {
        sw.call(format!("fourier nx({nx:?})"), || {
            FourierAccountant::new(FourierRelation::AddRemovePoisson)
                .nx(nx)
                .delta(1.0, &[SubsampledGaussian::new(1.0, 0.01, 10)?])
        });
    }
    for &l in &ODD_F64 {
        sw.call(format!("fourier window({l:?})"), || {
            FourierAccountant::new(FourierRelation::AddRemovePoisson)
                .nx(1000)
                .window(l)
                .epsilon(1e-5, &[SubsampledGaussian::new(1.0, 0.01, 10)?])
        });
        sw.call(format!("subsampled gaussian sigma({l:?})"), || {
            SubsampledGaussian::new(l, 0.5, 10)
        });
        sw.call(format!("minibatch_penalty part tau({l:?})"), || {
            SubsampledGaussian::minibatch_penalty(l, 10, 100, 5)
        });
    }
    for (b, n) in [(0, 100), (101, 100), (10, 0), (usize::MAX, usize::MAX)] {
        sw.call(
            format!("minibatch_penalty part batch {b:?} n {n:?}"),
            || SubsampledGaussian::minibatch_penalty(0.7, b, n, 5),
        );
    }
    for orders in [
        vec![],
        vec![1.0],
        vec![0.5],
        vec![f64::NAN],
        vec![f64::INFINITY],
        vec![1e300],
        vec![2.0, 2.0],
    ] {
        sw.call(format!("rdp with_orders({orders:?})"), || {
            let mut r = Rdp::with_orders(orders.clone())?;
            r.compose(&PrivacyEvent::gaussian(1.0).repeat(10))?;
            r.epsilon(1e-5)
        });
    }
    // Closed forms.
    for &x in &ODD_F64 {
        for &y in &ODD_F64 {
            sw.call(format!("pld_delta({x:?}, {y:?})"), || pld_delta(x, y));
            sw.call(format!("pld_epsilon({x:?}, {y:?})"), || pld_epsilon(x, y));
            sw.call(format!("cks_zcdp_delta({x:?}, {y:?})"), || {
                cks_zcdp_delta(x, y)
            });
            sw.call(format!("cks_zcdp_epsilon({x:?}, {y:?})"), || {
                cks_zcdp_epsilon(x, y)
            });
            sw.call(format!("zcdp_rho_budget({x:?}, {y:?})"), || {
                zcdp_rho_budget(x, y)
            });
            sw.call(format!("gaussian_rdp({x:?}, {y:?})"), || gaussian_rdp(x, y));
            sw.call(format!("poisson rdp(0.01, {x:?}, {y:?})"), || {
                poisson_subsampled_gaussian_rdp(0.01, x, y)
            });
            sw.call(format!("poisson rdp({x:?}, 1, {y:?})"), || {
                poisson_subsampled_gaussian_rdp(x, 1.0, y)
            });
            sw.call(format!("discrete_gaussian_delta({x:?}, 3, {y:?})"), || {
                discrete_gaussian_delta(x, 3, y)
            });
            sw.call(
                format!("Zcdp CKS20 max_iterations(Zcdp {{ rho: {x:?} }}, 2, {y:?}, 1e-6)"),
                || {
                    let r = Releases::per_iteration(PrivacyEvent::Zcdp { rho: x });
                    Zcdp::new()
                        .conversion(ZcdpConversion::Cks20)
                        .max_iterations(&r, 2, y, 1e-6)
                },
            );
        }
        sw.call(format!("gaussian_mu({x:?})"), || gaussian_mu(x));
        sw.call(format!("barker_rd_approx({x:?}, 100)"), || {
            barker_rd_approx(x, 100)
        });
        for &m in &ODD_U64 {
            sw.call(format!("discrete_gaussian_rho({m:?}, {x:?})"), || {
                discrete_gaussian_rho(m, x)
            });
        }
        for a in [0u32, 1, 2, 50, u32::MAX] {
            for bound in [WorBound::Theorem9, WorBound::ThesisCode] {
                sw.call(format!("wor rdp(0.1, {x:?}, {a:?}, {bound:?})"), || {
                    wor_subsampled_gaussian_rdp(0.1, x, a, bound)
                });
                sw.call(format!("wor rdp({x:?}, 1, {a:?}, {bound:?})"), || {
                    wor_subsampled_gaussian_rdp(x, 1.0, a, bound)
                });
            }
        }
    }
    for c in [0u64, 1, u64::MAX] {
        for acc in [
            Box::new(Zcdp::new().conversion(ZcdpConversion::Cks20)) as Box<dyn Accountant>,
            Box::new(Pld::new()),
            Box::new(Rdp::new()),
        ] {
            sw.call(
                format!("{} max_iterations chains {c:?}", acc.name()),
                || {
                    let r = Releases::per_iteration(PrivacyEvent::gaussian(10.0))
                        .with_once_per_chain(PrivacyEvent::gaussian(30.0));
                    acc.max_iterations(&r, c, 1.0, 1e-6)
                },
            );
        }
    }
    for &b in &ODD_U64 {
        for &n in &ODD_U64 {
            sw.call(format!("BarkerRdp::new({b:?}, {n:?})"), || {
                BarkerRdp::new(b, n)?.epsilon(10.0, 1e-6)
            });
        }
    }
    for &k in &ODD_F64 {
        for d in [f64::NAN, 0.0, 1e-300, 0.5, 1.0] {
            sw.call(format!("BarkerRdp epsilon({k:?}, {d:?})"), || {
                BarkerRdp::new(100, 1000)?.epsilon(k, d)
            });
        }
    }
    sw.finish("accounting");
}

#[test]
fn models_never_panic() {
    let mut sw = Sweep::default();
    let ragged = vec![vec![1.0, 2.0], vec![3.0]];
    let datasets: Vec<(&str, Vec<Vec<f64>>)> = vec![
        ("empty", vec![]),
        ("no columns", vec![vec![]]),
        ("one row", vec![vec![0.5, 1.0]]),
        ("ragged", ragged.clone()),
        ("nan", vec![vec![f64::NAN, 0.0]]),
        ("inf", vec![vec![f64::INFINITY, 0.0]]),
        ("huge", vec![vec![1e308, -1e308], vec![f64::MAX, 0.0]]),
    ];
    for (name, rows) in &datasets {
        sw.call(format!("RowData::from_rows({name})"), || {
            RowData::from_rows(rows)
        });
        sw.call(format!("ColumnData::from_columns({name})"), || {
            ColumnData::from_columns(rows.clone())
        });
        let flat: Vec<f64> = rows.concat();
        for &c in &[0usize, 1, 2, 3, usize::MAX] {
            sw.call(format!("RowData::from_row_major({name}, {c:?})"), || {
                RowData::from_row_major(flat.clone(), c)
            });
            sw.call(format!("ColumnData::from_row_major({name}, {c:?})"), || {
                ColumnData::from_row_major(&flat, c)
            });
        }
        for exp in Experiment::ALL {
            sw.call(format!("{exp:?}.model_from_data({name})"), || {
                exp.model_from_data(ColumnData::from_columns(rows.clone())?)
            });
        }
    }
    // Custom models.
    let data = RowData::from_rows(&[vec![0.1], vec![0.2]]).unwrap();
    for &d in &[0usize, 1, 2, usize::MAX] {
        sw.call(format!("CustomModel::new(dim {d:?})"), || {
            CustomModel::new(data.clone(), d, |_, _| 0.0)
        });
    }
    let cm = CustomModel::new(data.clone(), 1, |t, x| -(x[0] - t[0]).powi(2)).unwrap();
    for &x in &ODD_F64 {
        sw.call(format!("CustomModel prior var {x:?}"), || {
            cm.clone().with_gaussian_prior(x)
        });
        sw.call(format!("CustomModel tempering {x:?}"), || {
            cm.clone().with_tempering(x)
        });
        sw.call(format!("CustomModel log-lik at theta {x:?}"), || {
            let mut r = vec![0.0; 2];
            cm.log_lik_ratio_rows(&[0.0], &[x], 0, &mut r);
            Ok(r)
        });
    }
    for names in [vec![], vec!["a", "b"], vec!["a"]] {
        sw.call(format!("CustomModel names {names:?}"), || {
            cm.clone().with_param_names(&names)
        });
    }
    // Banana.
    for &d in &[0usize, 1, 2, 3] {
        for &a in &ODD_F64 {
            let p = BananaParams::thesis(d, a);
            sw.call(format!("banana d {d:?} a {a:?} validate"), || p.validate());
            sw.call(format!("banana d {d:?} a {a:?} generate"), || {
                p.generate(&vec![0.0; d], 10, 1)
            });
        }
    }
    let p = BananaParams::thesis(2, 20.0);
    for &t in &ODD_F64 {
        sw.call(format!("banana tempering {t:?}"), || {
            BananaModel::new(p.generate(&[0.0, 3.0], 10, 1)?, p.clone().with_tempering(t))
        });
    }
    for theta in [
        vec![],
        vec![f64::NAN, 0.0],
        vec![0.0; 3],
        vec![1e308, 1e308],
    ] {
        for &n in &[0usize, 1, usize::MAX] {
            sw.call(format!("banana generate({theta:?}, {n:?})"), || {
                p.generate(&theta, n, 1)
            });
        }
    }
    for (name, rows) in &datasets {
        sw.call(format!("BananaModel::new({name})"), || {
            BananaModel::new(ColumnData::from_columns(rows.clone())?, p.clone())
        });
    }
    let bm = BananaModel::new(p.generate(&[0.0, 3.0], 10, 1).unwrap(), p.clone()).unwrap();
    for theta in [
        vec![],
        vec![f64::NAN, 0.0],
        vec![0.0; 3],
        vec![1e308, 1e308],
    ] {
        sw.call(format!("banana posterior log_density({theta:?})"), || {
            bm.posterior().log_density(&theta)
        });
    }
    // Gaussian.
    for &d in &[0usize, 1, 2, usize::MAX - 1, usize::MAX] {
        for &rho in &ODD_F64 {
            sw.call(format!("block_correlated_cov({d:?}, {rho:?})"), || {
                block_correlated_cov(d, rho)
            });
        }
    }
    let cov = block_correlated_cov(2, 0.5).unwrap();
    let bad_covs = [
        nalgebra::DMatrix::from_element(2, 2, f64::NAN),
        nalgebra::DMatrix::from_element(2, 2, 1.0), // singular
        nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]), // not PD
        nalgebra::DMatrix::identity(3, 3),
        nalgebra::DMatrix::zeros(0, 0),
        nalgebra::DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
    ];
    for (i, c) in bad_covs.iter().enumerate() {
        sw.call(format!("generate_gaussian bad cov {i}"), || {
            generate_gaussian(&[0.0, 0.0], c, 5, 1)
        });
        sw.call(format!("GaussianModel::new bad cov {i}"), || {
            GaussianModel::new(
                generate_gaussian(&[0.0, 0.0], &cov, 5, 1)?,
                c.clone(),
                100.0,
            )
        });
    }
    for &n in &[0usize, 1, usize::MAX] {
        sw.call(format!("generate_gaussian n {n:?}"), || {
            generate_gaussian(&[0.0, 0.0], &cov, n, 1)
        });
    }
    for theta in [vec![], vec![f64::NAN, 0.0], vec![0.0; 3]] {
        sw.call(format!("generate_gaussian theta {theta:?}"), || {
            generate_gaussian(&theta, &cov, 5, 1)
        });
    }
    let gdata = generate_gaussian(&[0.0, 0.0], &cov, 5, 1).unwrap();
    for &x in &ODD_F64 {
        sw.call(format!("GaussianModel prior var {x:?}"), || {
            GaussianModel::new(gdata.clone(), cov.clone(), x)?.posterior()
        });
        sw.call(format!("GaussianModel tempering {x:?}"), || {
            GaussianModel::new(gdata.clone(), cov.clone(), 100.0)?
                .with_tempering(x)?
                .posterior()
        });
    }
    // Circle.
    for radii in [vec![], vec![f64::NAN], vec![1.0], vec![1e300, -1e300]] {
        for &a in &ODD_F64 {
            sw.call(format!("CircleModel::new({radii:?}, {a:?})"), || {
                CircleModel::new(&radii, a)
            });
        }
    }
    for &n in &[0usize, 1, usize::MAX] {
        sw.call(format!("CircleModel::generate_radii({n:?})"), || {
            CircleModel::generate_radii(n, 1)
        });
    }
    // Logistic regression.
    let x = ColumnData::from_columns(vec![vec![1.0, 1.0, 1.0], vec![0.3, -1.0, 2.0]]).unwrap();
    for y in [
        vec![],
        vec![0.0, 1.0],
        vec![0.0, 1.0, 2.0],
        vec![0.0, f64::NAN, 1.0],
        vec![1.0, 0.0, 1.0],
    ] {
        for &v in &ODD_F64 {
            sw.call(format!("LogisticModel::new(y {y:?}, prior {v:?})"), || {
                LogisticModel::new(x.clone(), &y, v)
            });
        }
    }
    // Experiment presets: evaluations at odd points.
    let exp = Experiment::Circle.model().unwrap();
    for theta in [vec![], vec![f64::NAN, 0.0], vec![0.0; 3]] {
        sw.call(format!("experiment log_density({theta:?})"), || {
            match exp.exact_posterior() {
                Some(p) => p.log_density(&theta).map(|_| ()),
                None => Ok(()),
            }
        });
    }
    sw.plain("experiment start_points(0)", || exp.start_points(0));
    sw.finish("models");
}

#[test]
fn mechanisms_never_panic() {
    use dp_mcmc::mechanisms::hellinger::{
        DirichletMultinomial, HellingerMechanism, LaplaceBaseline, SensitivityScope, gamma,
        hellinger_beta, hellinger_dirichlet, ln_beta, local_sensitivity, smooth_sensitivity,
    };
    use dp_mcmc::mechanisms::{
        ExponentialMechanism, LaplaceMechanism, RandomizedResponse, RandomizedWeightedMajority,
    };
    let mut sw = Sweep::default();
    let mut r = chain_rng(5, 0);
    for &a in &ODD_F64 {
        for &b in &ODD_F64 {
            sw.call(format!("RandomizedResponse::new({a:?}, {b:?})"), || {
                RandomizedResponse::new(a, b)
            });
            sw.call(format!("LaplaceMechanism::new({a:?}, {b:?})"), || {
                let m = LaplaceMechanism::new(a, b)?;
                m.release_vec(&[0.0, f64::NAN, f64::INFINITY], &mut r)
            });
            sw.call(format!("ExponentialMechanism::new({a:?}, {b:?})"), || {
                let m = ExponentialMechanism::new(a, b)?;
                m.select(&[0.0, 1.0], &mut r)
            });
            sw.call(format!("hellinger_beta({a:?}, {b:?}, 1, 1)"), || {
                hellinger_beta(a, b, 1.0, 1.0)
            });
            sw.call(
                format!("DirichletMultinomial::beta_binomial({a:?}, {b:?})"),
                || DirichletMultinomial::beta_binomial(a, b),
            );
            sw.call(format!("gamma({a:?}, {b:?}, 3)"), || gamma(a, b, 3.0));
            sw.call(
                format!("HellingerMechanism::new(eps {a:?}, delta {b:?})"),
                || {
                    HellingerMechanism::new(DirichletMultinomial::beta_binomial(1.0, 1.0)?, a, b)?
                        .release(&[3, 2], &mut r)
                },
            );
        }
        sw.call(format!("RandomizedResponse::with_epsilon({a:?})"), || {
            RandomizedResponse::with_epsilon(a)
        });
        sw.call(format!("RandomizedWeightedMajority::new({a:?})"), || {
            RandomizedWeightedMajority::new(a)?.run_seeded(&[vec![0.0, 1.0]], 1)
        });
        sw.call(format!("LaplaceBaseline::new(eps {a:?})"), || {
            LaplaceBaseline::new(DirichletMultinomial::beta_binomial(1.0, 1.0)?, a)?
                .release(&[3, 2], &mut r)
        });
    }
    sw.call("RandomizedResponse estimate of nothing", || {
        RandomizedResponse::fair().estimate_proportion(&[])
    });
    let em = ExponentialMechanism::new(1.0, 1.0).unwrap();
    for u in [
        vec![],
        vec![f64::NAN],
        vec![f64::INFINITY, 0.0],
        vec![f64::NEG_INFINITY; 3],
        vec![f64::MAX, -f64::MAX],
    ] {
        sw.call(format!("exponential select({u:?})"), || {
            em.select(&u, &mut r)
        });
        sw.call(format!("exponential probabilities({u:?})"), || {
            em.probabilities(&u)
        });
        sw.call(format!("sample_log_weights({u:?})"), || {
            dp_mcmc::mechanisms::exponential::sample_log_weights(&u, &mut r)
        });
    }
    for (e, h) in [(0usize, 0usize), (1, 1), (0, 10), (10, 0), (usize::MAX, 1)] {
        sw.call(format!("no_regret({e:?}, {h:?})"), || {
            RandomizedWeightedMajority::no_regret(e, h)
        });
    }
    for (e, d, h) in [(1.0, 1e-5, 0usize), (f64::NAN, 0.5, 10), (1.0, 2.0, 10)] {
        sw.call(format!("rwm private({e:?}, {d:?}, {h:?})"), || {
            RandomizedWeightedMajority::private(e, d, h)
        });
    }
    let rwm = RandomizedWeightedMajority::new(0.5).unwrap();
    for losses in [
        vec![],
        vec![vec![]],
        vec![vec![0.0, 1.0], vec![1.0]],
        vec![vec![f64::NAN, 1.0]],
        vec![vec![-5.0, 1e308]],
    ] {
        sw.call(format!("rwm run({losses:?})"), || {
            rwm.run_seeded(&losses, 1)
        });
    }
    // Hellinger mechanism and the Dirichlet-Multinomial model.
    for prior in [
        vec![],
        vec![1.0],
        vec![f64::NAN, 1.0],
        vec![-1.0, 1.0],
        vec![1e300, 1.0],
    ] {
        sw.call(format!("DirichletMultinomial::new({prior:?})"), || {
            DirichletMultinomial::new(prior.clone())
        });
        sw.call(format!("ln_beta({prior:?})"), || ln_beta(&prior));
        sw.call(format!("hellinger_dirichlet({prior:?})"), || {
            hellinger_dirichlet(&prior, &[1.0, 1.0])
        });
    }
    for &k in &[0usize, 1, 2, 3, usize::MAX] {
        sw.call(format!("DirichletMultinomial::balanced({k:?})"), || {
            DirichletMultinomial::balanced(k, 1.0)
        });
    }
    let bb = DirichletMultinomial::beta_binomial(2.0, 3.0).unwrap();
    for (ones, n) in [(0u64, 0u64), (5, 3), (u64::MAX, u64::MAX), (3, 5)] {
        sw.call(format!("beta_counts({ones:?}, {n:?})"), || {
            bb.beta_counts(ones, n)
        });
    }
    let mech = HellingerMechanism::new(bb.clone(), 1.0, 1e-6).unwrap();
    for counts in [
        vec![],
        vec![1],
        vec![1, 2, 3],
        vec![0, 0],
        vec![u64::MAX, 1],
        vec![1 << 40, 1 << 40],
    ] {
        sw.call(format!("hellinger release({counts:?})"), || {
            mech.release(&counts, &mut r)
        });
        sw.call(format!("hellinger output_distribution({counts:?})"), || {
            mech.output_distribution(&counts)
        });
        sw.call(format!("hellinger posterior({counts:?})"), || {
            bb.posterior(&counts)
        });
        sw.call(format!("local_sensitivity({counts:?})"), || {
            local_sensitivity(&bb, &counts)
        });
        for g in [f64::NAN, 0.0, 0.1, f64::INFINITY] {
            sw.call(format!("smooth_sensitivity({counts:?}, {g:?})"), || {
                smooth_sensitivity(&bb, &counts, g)
            });
        }
        sw.call(format!("laplace baseline release({counts:?})"), || {
            LaplaceBaseline::new(bb.clone(), 1.0)?.release(&counts, &mut r)
        });
    }
    for max in [0u128, 1, u128::MAX] {
        sw.call(format!("hellinger max_candidates({max:?})"), || {
            mech.clone()
                .max_candidates(max)
                .sensitivity_scope(SensitivityScope::AllDataSets)
                .release(&[30, 20], &mut r)
        });
    }
    for p in [
        vec![],
        vec![0.5],
        vec![f64::NAN, 0.5],
        vec![0.9, 0.9],
        vec![-0.1, 1.1],
    ] {
        for &n in &ODD_U64 {
            sw.call(format!("counts_from_proportions({p:?}, {n:?})"), || {
                bb.counts_from_proportions(&p, n)
            });
        }
    }
    sw.finish("mechanisms");
}

#[test]
fn diagnostics_never_panic() {
    use dp_mcmc::diagnostics::*;
    let mut sw = Sweep::default();
    let long: Vec<f64> = (0..50).map(|i| (i as f64 * 0.7).sin()).collect();
    let chain_sets: Vec<(&str, Vec<Vec<f64>>)> = vec![
        ("no chains", vec![]),
        ("one empty chain", vec![vec![]]),
        ("length 1", vec![vec![1.0]]),
        ("length 2", vec![vec![1.0, 2.0]; 2]),
        ("length 3", vec![vec![1.0, 2.0, 3.0]; 2]),
        ("ragged", vec![long.clone(), long[..20].to_vec()]),
        ("nan", vec![vec![f64::NAN; 10]; 2]),
        ("inf", vec![vec![f64::INFINITY, 0.0, 1.0, 2.0]; 2]),
        ("constant", vec![vec![3.0; 10]; 4]),
        ("huge", vec![vec![1e308, -1e308, f64::MAX, 0.0, 1.0]; 2]),
        ("long", vec![long.clone(); 3]),
    ];
    for (name, chains) in &chain_sets {
        let c: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        sw.call(format!("rhat({name})"), || rhat(&c));
        sw.call(format!("rhat_split({name})"), || rhat_split(&c));
        sw.call(format!("rhat_folded({name})"), || rhat_folded(&c));
        sw.call(format!("ess_bulk({name})"), || ess_bulk(&c));
        sw.call(format!("ess_tail({name})"), || ess_tail(&c));
        sw.call(format!("ess_mean({name})"), || ess_mean(&c));
        sw.call(format!("ess_median({name})"), || ess_median(&c));
        sw.call(format!("mcse_mean({name})"), || mcse_mean(&c));
        sw.call(format!("mcse_sd({name})"), || mcse_sd(&c));
        sw.call(format!("mcse_median({name})"), || mcse_median(&c));
        sw.call(format!("summarize({name})"), || summarize(&c));
        for &p in &ODD_F64 {
            sw.call(format!("ess_quantile({name}, {p:?})"), || {
                ess_quantile(&c, p)
            });
            sw.call(format!("mcse_quantile({name}, {p:?})"), || {
                mcse_quantile(&c, p)
            });
        }
        if let Some(first) = chains.first() {
            sw.call(format!("autocorr({name})"), || autocorr(first));
            for &d in &[0usize, 1, 2, 3, usize::MAX] {
                sw.call(format!("sample_mean({name}, {d:?})"), || {
                    sample_mean(first, d)
                });
                sw.call(format!("sample_cov({name}, {d:?})"), || {
                    sample_cov(first, d)
                });
                sw.call(format!("mean_error({name}, {d:?})"), || {
                    mean_error(first, &long, d)
                });
                sw.call(format!("cov_error({name}, {d:?})"), || {
                    cov_error(first, &long, d)
                });
                sw.call(format!("kept_half({name}, {d:?})"), || {
                    kept_half(first, d).map(<[f64]>::len)
                });
                sw.call(format!("mmd_thesis({name}, {d:?})"), || {
                    mmd_thesis(first, &long, d, 1)
                });
                sw.call(format!("pooled_median_distance({name}, {d:?})"), || {
                    pooled_median_distance(first, &long, d)
                });
                sw.call(format!("sample_metrics({name}, {d:?})"), || {
                    sample_metrics(first, &long, d, 1)
                });
                for &b in &ODD_F64 {
                    sw.call(format!("mmd({name}, {d:?}, {b:?})"), || {
                        mmd(first, &long, d, b)
                    });
                }
            }
            sw.call(format!("paired_median_distance({name})"), || {
                paired_median_distance(first, &long, 1, &[0, usize::MAX], &[0, 1])
            });
        }
    }
    for &k in &ODD_USIZE {
        sw.plain(format!("burn_in_range({k:?})"), || burn_in_range(k));
    }
    for (a, b, c) in [
        (0u64, 0u64, 0u64),
        (5, 3, 1),
        (u64::MAX, u64::MAX, u64::MAX),
        (1, u64::MAX, 2),
    ] {
        sw.call(format!("acceptance_rate({a:?}, {b:?})"), || {
            acceptance_rate(a, b)
        });
        sw.call(format!("r_clip_fraction({a:?}, {b:?}, {c:?})"), || {
            r_clip_fraction(a, b, c)
        });
        sw.call(format!("grad_clip_fraction({a:?}, {b:?}, {c:?})"), || {
            grad_clip_fraction(a, b, c)
        });
    }
    sw.finish("diagnostics");
}

#[test]
fn loaders_never_panic() {
    use dp_mcmc::frame::data::{
        column_data_from_csv, logistic_model, numeric_columns, row_data, row_data_from_csv,
    };
    use dp_mcmc::frame::diagnostics::{param_draws, read_sample_csv, sample_from_frame, summary};
    use dp_mcmc::frame::read_csv;
    let dir = temp_dir("loaders");
    let mut sw = Sweep::default();
    for (name, path) in odd_csvs(&dir) {
        sw.call(format!("read_csv({name})"), || read_csv(&path));
        for cols in [vec![], vec!["x"], vec!["x", "y"], vec!["nope"]] {
            sw.call(format!("row_data_from_csv({name}, {cols:?})"), || {
                row_data_from_csv(&path, &cols)
            });
            sw.call(format!("column_data_from_csv({name}, {cols:?})"), || {
                column_data_from_csv(&path, &cols)
            });
        }
        sw.call(format!("read_csv({name}) + summary"), || {
            let df = read_csv(&path)?;
            param_draws(&df)?;
            summary(&df)
        });
        sw.call(format!("read_sample_csv({name})"), || {
            read_sample_csv(&path)
        });
        if let Some(df) = sw.call(format!("frame of {name}"), || read_csv(&path)) {
            sw.call(format!("numeric_columns({name})"), || {
                numeric_columns(&df, &[])
            });
            sw.call(format!("row_data({name})"), || row_data(&df, &["x"]));
            sw.call(format!("sample_from_frame({name})"), || {
                sample_from_frame(&df)
            });
            for &v in &ODD_F64 {
                sw.call(format!("logistic_model({name}, prior {v:?})"), || {
                    logistic_model(&df, &["x"], "y", v, true)
                });
            }
            sw.call(format!("logistic_model({name}, no features)"), || {
                logistic_model(&df, &[], "y", 1.0, false)
            });
        }
    }
    // Data from a CSV through a model and a sampler run.
    let ok = temp_file(&dir, "model.csv", b"x\n0.1\n-0.2\n0.3\n");
    sw.call("csv -> custom model -> rwmh", || {
        let data = row_data_from_csv(&ok, &["x"])?;
        let model = CustomModel::new(data, 1, |t, x| -0.5 * (x[0] - t[0]).powi(2))?;
        Rwmh::builder()
            .proposal_sd(0.1)
            .iterations(5)
            .start(vec![0.0])
            .progress(false)
            .run(&model)
    });
    let _ = std::fs::remove_dir_all(&dir);
    sw.finish("loaders");
}

#[test]
fn issue_12_reported_failures_are_typed_errors() {
    // `.chains(0)` with a budget divided by zero in every DP builder.
    let model = small_model();
    let msgs = [
        DpPenalty::builder()
            .chains(0)
            .epsilon(4.0)
            .delta(1e-3)
            .start(vec![0.0])
            .run(&model)
            .unwrap_err()
            .to_string(),
        DpHmc::builder()
            .chains(0)
            .epsilon(4.0)
            .delta(1e-3)
            .start(vec![0.0])
            .run(&model)
            .unwrap_err()
            .to_string(),
        MinibatchPenalty::builder()
            .batch_size(10)
            .chains(0)
            .epsilon(4.0)
            .delta(1e-3)
            .start(vec![0.0])
            .run(&model)
            .unwrap_err()
            .to_string(),
        DpBarker::builder()
            .batch_size(20)
            .chains(0)
            .epsilon(4.0)
            .delta(1e-3)
            .start(vec![0.0])
            .run(&model)
            .unwrap_err()
            .to_string(),
        DpPenalty::builder()
            .chains(0)
            .epsilon(4.0)
            .delta(1e-3)
            .budget(100)
            .unwrap_err()
            .to_string(),
    ];
    for m in msgs {
        assert!(m.contains("`chains`"), "{m}");
    }
    // Algorithm 2 beyond its range: named, with the range, and no NaN.
    let e = MaxIterations::dp_penalty(0.1, 1000)
        .epsilon(1e308)
        .compute()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`epsilon` = 1e308") && e.contains("10^15") && !e.contains("NaN"),
        "{e}"
    );
    // Just under the cap the count is computed, pessimistic and maximal; just over, refused.
    let (tau, n) = (1e4, 1_000_000u64);
    let b = MaxIterations::dp_penalty(tau, n)
        .epsilon(20.0)
        .compute()
        .unwrap();
    let mu = 1.0 / (2.0 * tau * tau * n as f64);
    assert!(b.iterations > 500_000_000_000_000 && b.iterations <= 1_000_000_000_000_000);
    assert!(pld_delta(b.iterations as f64 * mu, 20.0).unwrap() <= b.delta);
    assert!(pld_delta((b.iterations + 1) as f64 * mu, 20.0).unwrap() >= b.delta);
    let e = MaxIterations::dp_penalty(tau, n)
        .epsilon(25.0)
        .compute()
        .unwrap_err()
        .to_string();
    assert!(e.contains("`epsilon` = 25") && e.contains("10^15"), "{e}");
    // A fixed iteration count that cannot be stored fails before anything is allocated.
    let e = Rwmh::builder()
        .iterations(1_000_000_000)
        .start(vec![0.0])
        .run(&model)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`thin`") && e.contains("GiB"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Bounded memory: thinning, the up-front trace-memory check, traces that grow with the chain.

#[test]
fn thinning_keeps_every_kth_step_of_the_same_chain() {
    let model = small_model();
    let base = DpPenalty::builder()
        .tau(0.5)
        .proposal_sd(0.3)
        .chains(2)
        .seed(9)
        .iterations(23)
        .start(vec![0.1])
        .progress(false);
    let full = base.clone().run(&model).unwrap();
    let one = base.clone().thin(1).run(&model).unwrap();
    for (a, b) in full.chains.iter().zip(&one.chains) {
        assert_eq!(a.draws, b.draws);
        assert_eq!(format!("{:?}", a.stats), format!("{:?}", b.stats));
    }
    for k in [2usize, 5, 23, 100] {
        let thin = base.clone().thin(k).run(&model).unwrap();
        for (a, t) in full.chains.iter().zip(&thin.chains) {
            // CmdStan's rule: 0-based steps 0, k, 2k, ... are saved, ⌈23/k⌉ of them.
            let steps: Vec<usize> = (0..23).step_by(k).collect();
            assert_eq!(t.stats.len(), steps.len());
            let want: Vec<f64> = steps.iter().map(|&i| a.draws[i]).collect();
            assert_eq!(t.draws, want, "thin {k}: draws are not the kept steps");
            for (s, &i) in t.stats.iter().zip(&steps) {
                assert_eq!(format!("{s:?}"), format!("{:?}", a.stats[i]));
            }
            // Rates and the step count still cover every step, bit for bit.
            assert_eq!(t.len(), 23);
            assert_eq!(t.acceptance().to_bits(), a.acceptance().to_bits());
            assert_eq!(t.clip_fraction().to_bits(), a.clip_fraction().to_bits());
            // The thesis' kept half (steps 12..=23, 1-based) among the saved steps.
            let kept: Vec<f64> = steps
                .iter()
                .filter(|&&i| i >= 11)
                .map(|&i| a.draws[i])
                .collect();
            assert_eq!(t.kept_half(1), kept.as_slice());
        }
        // Frames number the saved steps by their step (1-based): 1, k+1, 2k+1, ...
        let draws = thin.draws().unwrap();
        let numbers: Vec<u32> = draws
            .column("draw")
            .unwrap()
            .u32()
            .unwrap()
            .into_no_null_iter()
            .take(thin.chains[0].stats.len())
            .collect();
        let want: Vec<u32> = (0..23).step_by(k).map(|i| i as u32 + 1).collect();
        assert_eq!(numbers, want);
        assert_eq!(thin.stats().unwrap().height(), draws.height());
        assert_eq!(thin.rows_per_iteration(), full.rows_per_iteration());
    }
}

#[test]
fn traces_that_would_not_fit_are_refused_before_the_run() {
    let model = small_model();
    let base = Rwmh::builder()
        .proposal_sd(0.1)
        .chains(4)
        .start(vec![0.0])
        .progress(false);
    // 4 chains × 10^9 draws × (8 + 56) B ≈ 238 GiB > 8 GiB: refused at once, naming `thin`.
    let t0 = std::time::Instant::now();
    let e = base
        .clone()
        .iterations(1_000_000_000)
        .run(&model)
        .unwrap_err()
        .to_string();
    assert!(t0.elapsed() < Duration::from_secs(1));
    assert!(e.contains("`thin`") && e.contains("8.0 GiB"), "{e}");
    // The same plan with a 10^6 thinning fits (and a time bound ends it early).
    let run = base
        .clone()
        .iterations(1_000_000_000)
        .thin(1_000_000)
        .max_time(Duration::from_millis(100))
        .run(&model)
        .unwrap();
    assert!(run.chains.iter().all(|c| c.stopped_early));
    // A lower limit refuses smaller plans: 4 × 1000 × 64 B = 256 KB > 100 KB.
    assert!(
        base.clone()
            .iterations(1000)
            .max_trace_bytes(100_000)
            .run(&model)
            .is_err()
    );
}

#[test]
fn a_time_bound_bounds_the_memory_of_a_long_plan() {
    // 2^30 planned steps per chain (64 GiB of traces, allowed here by a raised limit): the
    // chains stop at max_time, and the traces hold what they ran, not the plan.
    let model = small_model();
    let run = Rwmh::builder()
        .proposal_sd(0.1)
        .chains(2)
        .iterations(1 << 30)
        .max_trace_bytes(u64::MAX)
        .max_time(Duration::from_millis(200))
        .start(vec![0.0])
        .progress(false)
        .run(&model)
        .unwrap();
    for c in &run.chains {
        assert!(c.stopped_early && c.len() < 1 << 30);
        assert_eq!(c.draws.len(), c.len());
        // Vec growth at most doubles the length (after the 4096-step reserve).
        assert!(
            c.draws.capacity() <= 2 * c.draws.len().max(4096),
            "capacity {} for {} draws",
            c.draws.capacity(),
            c.draws.len()
        );
        assert!(c.stats.capacity() <= 2 * c.stats.len().max(4096));
    }
}
