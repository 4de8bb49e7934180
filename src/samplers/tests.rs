//! Kernel tests: invariance of the exact posterior (BlackJAX style), reproducibility, errors.

use super::*;
use crate::models::Model;
use crate::models::testing::{IsotropicGaussian as IsoGauss, check_normal_draws};
use crate::rng::chain_rng;

/// Chains started at exact posterior draws; after `steps` steps the last positions must
/// still follow the posterior (`testing::check_normal_draws`: each coordinate's
/// mean within 5 Monte-Carlo s.e. and a Kolmogorov-Smirnov test at α = 1e-6).
fn assert_invariant(run: &Run, mean: &[f64], var: f64) {
    if let Err(e) = check_normal_draws(&run.last_draws(), mean, var) {
        panic!("{e}");
    }
}

const CHAINS: usize = 400;

#[test]
fn rwmh_keeps_the_posterior() {
    let model = IsoGauss::generate(500, 2, 1);
    let (mean, var) = model.posterior();
    let run = Rwmh::builder()
        .proposal_sd(var.sqrt())
        .chains(CHAINS)
        .iterations(30)
        .seed(5)
        .starts(model.posterior_draws(CHAINS, 5))
        .run(&model)
        .unwrap();
    assert_invariant(&run, &mean, var);
    let acc = run.acceptance().iter().sum::<f64>() / CHAINS as f64;
    assert!(acc > 0.3 && acc < 0.9, "acceptance {acc}");
}

#[test]
fn dp_penalty_is_exact_without_clipping() {
    // b = 20 never binds here (|r_j| ≤ Δ·|x_j − mid| with |x_j − mid| < 20), so DP penalty
    // targets the exact posterior; τ = 0.05 gives noise sd ≈ 0.05·√500·40Δ ≈ 1 at Δ ≈ 0.02.
    let model = IsoGauss::generate(500, 2, 2);
    let (mean, var) = model.posterior();
    for kind in [
        ProposalKind::Full,
        ProposalKind::OneComponent,
        ProposalKind::GuidedWalk,
    ] {
        let run = DpPenalty::builder()
            .tau(0.05)
            .clip_bound(20.0)
            .proposal_sd(var.sqrt())
            .proposal(kind)
            .chains(CHAINS)
            .iterations(30)
            .seed(7)
            .starts(model.posterior_draws(CHAINS, 7))
            .run(&model)
            .unwrap();
        assert_invariant(&run, &mean, var);
        let clip = run.clip_fraction().iter().sum::<f64>();
        assert_eq!(clip, 0.0, "{kind:?}: clipping bound");
        let acc = run.acceptance().iter().sum::<f64>() / CHAINS as f64;
        assert!(acc > 0.1, "{kind:?}: acceptance {acc}");
    }
}

#[test]
fn hmc_and_dp_hmc_keep_the_posterior() {
    let model = IsoGauss::generate(500, 2, 3);
    let (mean, var) = model.posterior();
    let eta = 0.3 * var.sqrt();
    let run = Hmc::builder()
        .step_size(eta)
        .leapfrog_steps(5)
        .chains(CHAINS)
        .iterations(10)
        .seed(11)
        .starts(model.posterior_draws(CHAINS, 11))
        .run(&model)
        .unwrap();
    assert_invariant(&run, &mean, var);
    let acc = run.acceptance().iter().sum::<f64>() / CHAINS as f64;
    assert!(acc > 0.5, "HMC acceptance {acc}");
    // DP HMC with fresh gradients and no binding clip is exact: the noisy gradient only changes
    // the proposal (symmetric given fresh noise), the penalty test corrects the ratio noise.
    let run = DpHmc::builder()
        .tau_l(0.005)
        .tau_g(0.001)
        .clip_bound(20.0)
        .grad_clip_bound(20.0)
        .step_size(eta)
        .leapfrog_steps(5)
        .chains(CHAINS)
        .iterations(10)
        .seed(13)
        .starts(model.posterior_draws(CHAINS, 13))
        .run(&model)
        .unwrap();
    assert_invariant(&run, &mean, var);
    // The test must move the chains: with τ_l = 0.005 the ratio noise sd is ≈ 0.005·√500·40Δ
    // ≈ 0.3 at Δ ≈ 0.07, and τ_g = 0.001 gives gradient noise sd 2τ_g√n·b_g ≈ 0.9 against
    // gradients of size ≈ √n, so most proposals are accepted.
    let acc = run.acceptance().iter().sum::<f64>() / CHAINS as f64;
    assert!(acc > 0.3, "DP HMC acceptance {acc}");
}

#[test]
fn same_seed_same_run_any_thread_count() {
    let model = IsoGauss::generate(300, 3, 4);
    let b = DpPenalty::builder()
        .tau(0.1)
        .clip_bound(3.0)
        .proposal_sd(0.02)
        .gwmh()
        .chains(3)
        .iterations(200)
        .seed(42)
        .start(vec![0.0, 0.5, 1.0]);
    let a1 = b.clone().threads(1).run(&model).unwrap();
    let a2 = b.clone().threads(2).run(&model).unwrap();
    for (c1, c2) in a1.chains.iter().zip(&a2.chains) {
        assert_eq!(c1.draws, c2.draws);
        // Debug output compares NaN fields (batch_var) bitwise-equal too.
        assert_eq!(format!("{:?}", c1.stats), format!("{:?}", c2.stats));
    }
    let other = b.seed(43).threads(2).run(&model).unwrap();
    assert_ne!(other.chains[0].draws, a1.chains[0].draws);
    // the stochastic-gradient samplers: each chain's batches and noise from its own stream
    let sgld = DpSgld::builder()
        .step_size(1e-3)
        .sampling_rate(0.2)
        .iterations(100)
        .chains(3)
        .seed(42);
    let sgnht = DpSgnht::builder()
        .step_size(1e-2)
        .sampling_rate(0.2)
        .iterations(100)
        .chains(3)
        .seed(42);
    let start = vec![0.0, 0.5, 1.0];
    let runs = |threads: usize| {
        [
            sgld.clone()
                .threads(threads)
                .start(start.clone())
                .run(&model)
                .unwrap(),
            sgnht
                .clone()
                .threads(threads)
                .start(start.clone())
                .run(&model)
                .unwrap(),
        ]
    };
    for (r1, r2) in runs(1).iter().zip(&runs(2)) {
        for (c1, c2) in r1.chains.iter().zip(&r2.chains) {
            assert_eq!(c1.draws, c2.draws);
        }
        assert_ne!(r1.chains[0].draws, r1.chains[1].draws);
    }
}

/// Threads inside one chain: pools of 1, 2 and 3 threads (one chain, so the automatic
/// threads per chain are the pool's) give bit-identical runs. `n` crosses
/// `split::PARALLEL_MIN_CHUNKS`, so the passes really are split.
fn assert_same_run_any_pass_threads(what: &str, pools: &[usize], run: impl Fn(usize) -> Run) {
    let base = run(1);
    assert!(base.acceptance()[0] > 0.0, "{what}: the chain must move");
    for &threads in pools {
        let other = run(threads);
        assert_eq!(
            base.chains[0].draws, other.chains[0].draws,
            "{what}, {threads} threads"
        );
        // Debug output compares NaN fields (batch_var) bitwise-equal too.
        let stats = |r: &Run| format!("{:?}", r.chains[0].stats);
        assert_eq!(stats(&base), stats(&other), "{what}, {threads} threads");
    }
}

#[test]
fn same_run_any_thread_count_inside_a_chain() {
    use crate::models::{BananaModel, BananaParams};
    let n = (split::PARALLEL_MIN_CHUNKS + 20) * pass::CHUNK;
    assert!(split::Split::new(n, 2).groups() > 2);
    // per-row cache (no closed-form ratio), row-major gradients
    let iso = IsoGauss::generate(n, 2, 8);
    let (mean, var) = iso.posterior();
    let sd = var.sqrt();
    // closed-form ratio, column-major gradients
    let params = BananaParams::thesis(2, 20.0);
    let banana = BananaModel::new(params.generate(&[0.0, 3.0], n, 9).unwrap(), params).unwrap();
    let penalty = DpPenalty::builder()
        .tau(0.1)
        .clip_bound(2.0)
        .proposal_sd(vec![sd, sd])
        .chains(1)
        .iterations(12)
        .seed(3)
        .start(mean.clone())
        .progress(false);
    assert_same_run_any_pass_threads("DP penalty, cached", &[2, 3], |t| {
        penalty.clone().threads(t).run(&iso).unwrap()
    });
    assert_same_run_any_pass_threads("DP penalty, discrete noise", &[2, 3], |t| {
        let b = penalty.clone().noise(Noise::discrete(-20));
        b.threads(t).run(&iso).unwrap()
    });
    assert_same_run_any_pass_threads("DP penalty, closed-form ratio", &[2, 3], |t| {
        let b = penalty.clone().proposal_sd(vec![2e-3, 2e-3]);
        b.start(vec![0.0, 3.0]).threads(t).run(&banana).unwrap()
    });
    let hmc = DpHmc::builder()
        .tau_l(0.1)
        .tau_g(0.1)
        .clip_bound(2.0)
        .grad_clip_bound(2.0)
        .leapfrog_steps(2)
        .chains(1)
        .iterations(5)
        .seed(4)
        .progress(false);
    assert_same_run_any_pass_threads("DP HMC, cached, row gradients", &[2, 3], |t| {
        let b = hmc.clone().step_size(0.3 * sd).start(mean.clone());
        b.threads(t).run(&iso).unwrap()
    });
    assert_same_run_any_pass_threads("DP HMC, column gradients", &[2, 3], |t| {
        let b = hmc.clone().step_size(5e-4).start(vec![0.0, 3.0]);
        b.threads(t).run(&banana).unwrap()
    });
    // an explicit count of threads per chain, more than the pool has
    assert_same_run_any_pass_threads("threads_per_chain(5)", &[2], |t| {
        let b = penalty
            .clone()
            .proposal_sd(vec![2e-3, 2e-3])
            .start(vec![0.0, 3.0]);
        b.threads_per_chain(5).threads(t).run(&banana).unwrap()
    });
}

#[test]
fn bad_input_is_a_named_error() {
    let model = IsoGauss::generate(50, 2, 5);
    let base = DpPenalty::builder().iterations(5).start(vec![0.0, 0.0]);
    let msg = |r: crate::Result<Run>| r.unwrap_err().to_string();
    assert!(msg(base.clone().clip_bound(0.0).run(&model)).contains("clip_bound"));
    assert!(msg(base.clone().tau(f64::NAN).run(&model)).contains("tau"));
    assert!(msg(base.clone().start(vec![0.0]).run(&model)).contains("start"));
    assert!(msg(base.clone().proposal_sd(vec![0.1]).run(&model)).contains("proposal_sd"));
    assert!(msg(base.clone().chains(0).run(&model)).contains("chains"));
    // a privacy budget replaces the fixed count; half a budget is an error naming the other half
    assert!(msg(base.clone().epsilon(1.0).run(&model)).contains("delta"));
    assert!(msg(base.clone().delta(1e-5).run(&model)).contains("epsilon"));
    let tiny = DpPenalty::builder()
        .tau(0.001)
        .epsilon(0.01)
        .delta(1e-9)
        .start(vec![0.0, 0.0]);
    assert!(matches!(
        tiny.run(&model),
        Err(crate::Error::BudgetTooSmall(_))
    ));
    assert!(
        msg(DpHmc::builder()
            .mass(vec![1.0, -1.0])
            .iterations(1)
            .start(vec![0.0, 0.0])
            .run(&model))
        .contains("mass")
    );
    let sgld = DpSgld::builder().iterations(5).start(vec![0.0, 0.0]);
    assert!(msg(sgld.clone().step_size(-1.0).run(&model)).contains("step_size"));
    assert!(msg(sgld.clone().sampling_rate(0.0).run(&model)).contains("sampling_rate"));
    assert!(msg(sgld.clone().noise_multiplier(f64::NAN).run(&model)).contains("noise_multiplier"));
    assert!(msg(sgld.clone().clip_bound(0.0).run(&model)).contains("clip_bound"));
    assert!(msg(sgld.clone().start(vec![0.0]).run(&model)).contains("start"));
    // a model tempered above the bound the charge assumes (IsoGauss: T = 1)
    assert!(msg(sgld.tempering(0.5).run(&model)).contains("tempering"));
    let sgnht = DpSgnht::builder().iterations(5).start(vec![0.0, 0.0]);
    assert!(msg(sgnht.clone().diffusion(-1.0).run(&model)).contains("diffusion"));
}

#[test]
fn whole_release_budget_divides_between_chains() {
    let model = IsoGauss::generate(1000, 2, 6);
    let per_chain = DpPenalty::builder()
        .tau(0.1)
        .epsilon(4.0)
        .delta(1e-6)
        .chains(1)
        .start(vec![0.0, 0.0]);
    let k1 = per_chain.budget(model.n_rows()).unwrap().iterations;
    let k4 = per_chain
        .clone()
        .chains(4)
        .budget(model.n_rows())
        .unwrap()
        .iterations;
    let k4pc = per_chain
        .clone()
        .chains(4)
        .per_chain_budget(true)
        .budget(model.n_rows())
        .unwrap()
        .iterations;
    assert_eq!(k4pc, k1);
    assert!(k4 <= k1 / 4 && k4 + 1 > k1 / 4, "k1 = {k1}, k4 = {k4}");
}

#[test]
fn kept_half_follows_the_thesis_rule() {
    let trace = ChainTrace {
        draws: (1..=7).map(f64::from).collect(),
        stats: vec![StepInfo::default(); 7],
        ..Default::default()
    };
    // k = 7: keep steps ⌊6/2⌋+1 = 4 … 7.
    assert_eq!(trace.kept_half(1), &[4.0, 5.0, 6.0, 7.0]);
}

#[test]
fn run_frames_have_the_documented_columns() {
    let model = IsoGauss::generate(100, 2, 8);
    let run = Rwmh::builder()
        .proposal_sd(0.1)
        .clip_bound(1.0)
        .chains(2)
        .iterations(25)
        .start(vec![0.0, 0.0])
        .run(&model)
        .unwrap();
    let draws = run.draws().unwrap();
    assert_eq!(draws.shape(), (50, 4));
    let names: Vec<String> = draws
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, ["chain", "draw", "theta_0", "theta_1"]);
    let stats = run.stats().unwrap();
    assert_eq!(stats.height(), 50);
    assert!(
        stats
            .column("grad_clip_fraction_nonprivate")
            .unwrap()
            .null_count()
            == 50
    );
    let summary = run.chain_summary().unwrap();
    assert_eq!(summary.height(), 2);
}

#[test]
fn minibatch_with_the_full_batch_keeps_the_posterior() {
    // b = n with the finite-population correction: σ_b² = 0 and λ = Σ r_j, so with negligible
    // noise (τ = 1e-8) and a non-binding clip the kernel is plain MH: exact.
    let model = IsoGauss::generate(300, 2, 9);
    let (mean, var) = model.posterior();
    let run = MinibatchPenalty::builder()
        .tau(1e-8)
        .clip_bound(20.0)
        .batch_size(300)
        .finite_population_correction(true)
        .proposal_sd(var.sqrt())
        .chains(CHAINS)
        .iterations(30)
        .seed(17)
        .starts(model.posterior_draws(CHAINS, 17))
        .run(&model)
        .unwrap();
    assert_invariant(&run, &mean, var);
    assert_eq!(run.rows_per_iteration(), 300.0);
}

/// The last draws of `run`'s chains are the posterior `N(mean, var·I)`: `assert_invariant`
/// (mean, KS) and each coordinate's sample variance within `5·√(2/N) + 2 %` of `var`.
fn assert_stationary(run: &Run, mean: &[f64], var: f64, what: &str) {
    assert_invariant(run, mean, var);
    let last = run.last_draws();
    let n = last.len() as f64;
    for c in 0..mean.len() {
        let m = last.iter().map(|x| x[c]).sum::<f64>() / n;
        let s2 = last.iter().map(|x| (x[c] - m).powi(2)).sum::<f64>() / (n - 1.0);
        let tol = 5.0 * (2.0 / n).sqrt() + 0.02;
        assert!(
            (s2 / var - 1.0).abs() < tol,
            "{what}: variance ratio {}",
            s2 / var
        );
    }
}

/// DP-SGLD and DP-SGNHT are approximate samplers: with a small step and a clip bound that
/// never binds they must keep the posterior up to their O(step) bias, on full batches (q = 1)
/// and on Poisson half batches. 200 steps from exact draws are five relaxation times of
/// SGLD at η = 0.05·var (`2/(η·precision)` = 40 steps), so a wrong drift (sign, the `T/q`
/// scale) or noise moves the last positions off the posterior. Their stationary variance is
/// within about 1.5 % of the posterior's (ULA: `var/(1 − η/(4 var))` plus the half batches'
/// gradient noise, `η·n(1−q)/(4q)` relative). Besides `check_normal_draws` (mean, KS), each
/// coordinate's sample variance over 1000 chains must be within `5·√(2/N) + 2 %` of the
/// posterior's (χ²: s.d. of the ratio √(2/N) = 4.5 %, plus the bias allowance): a noise 1.5×
/// too large (variance ratio 2.25) or a drift off by a factor 2 (ratio ≈ 0.5) is caught.
#[test]
fn stochastic_gradient_samplers_keep_the_posterior() {
    const CHAINS: usize = 1000;
    let model = IsoGauss::generate(400, 2, 19);
    let (mean, var) = model.posterior();
    let assert_invariant = |run: &Run, what: &str| assert_stationary(run, &mean, var, what);
    for q in [1.0, 0.5] {
        let run = DpSgld::builder()
            .step_size(0.05 * var)
            .clip_bound(20.0)
            .sampling_rate(q)
            .chains(CHAINS)
            .iterations(200)
            .seed(23)
            .starts(model.posterior_draws(CHAINS, 23))
            .run(&model)
            .unwrap();
        assert_invariant(&run, &format!("DP-SGLD, q = {q}"));
        let h = 0.1 * var.sqrt();
        let run = DpSgnht::builder()
            .step_size(h)
            .diffusion(0.08 / h)
            .clip_bound(20.0)
            .sampling_rate(q)
            .chains(CHAINS)
            .iterations(200)
            .seed(29)
            .starts(model.posterior_draws(CHAINS, 29))
            .run(&model)
            .unwrap();
        assert_invariant(&run, &format!("DP-SGNHT, q = {q}"));
    }
}

/// DP-Fast MH is exact (TunaMH's minibatch test with the penalty correction): 1000 chains
/// started at posterior draws stay at the posterior after 200 steps (mean, KS and the
/// variance test of the stochastic-gradient samplers). The clip bound never binds here, and
/// the noise (σ = 0.4, about 1 on the log scale) is large enough that a missing `−s²/2`
/// correction (acceptance inflated by e^{s²/2}) or a keep probability from the wrong side
/// would move the draws; both mutations fail this test.
#[test]
fn dp_fast_mh_keeps_the_posterior() {
    const CHAINS: usize = 1000;
    let model = IsoGauss::generate(400, 2, 19);
    let (mean, var) = model.posterior();
    for (lambda, cap) in [(100.0, 4000.0), (30.0, 4000.0)] {
        let run = DpFastMh::builder()
            .noise_multiplier(0.4)
            .clip_bound(6.0)
            .lambda(lambda)
            .batch_cap(cap)
            .proposal_sd(0.8 * var.sqrt())
            .chains(CHAINS)
            .iterations(200)
            .seed(31)
            .starts(model.posterior_draws(CHAINS, 31))
            .run(&model)
            .unwrap();
        assert_eq!(run.clip_fraction().iter().sum::<f64>(), 0.0);
        assert!(run.rows_per_iteration() < 400.0, "a minibatch per step");
        assert_stationary(&run, &mean, var, &format!("DP-Fast MH, λ = {lambda}"));
    }
}

#[test]
fn dp_penalty_keeps_the_banana_posterior() {
    // Banana (Theorem 13) with a = 20, n = 2000: the exact posterior is Gaussian in
    // z = (θ1, θ2 + aθ1²). Chains start at exact draws; b = 50 never binds at these step
    // sizes, so DP penalty is exact and the z-marginals must stay N(μ_i, s_i²).
    use crate::models::{BananaModel, BananaParams};
    let params = BananaParams::thesis(2, 20.0);
    let data = params.generate(&[0.0, 3.0], 2000, 4).unwrap();
    let model = BananaModel::new(data, params).unwrap();
    let post = model.posterior();
    let (mu, sd) = (post.z_mean().to_vec(), post.z_std());
    let mut rng = chain_rng(21, 7);
    let starts = post.sample(CHAINS, &mut rng);
    let run = DpPenalty::builder()
        .tau(0.01)
        .clip_bound(50.0)
        .proposal_sd(vec![0.3 * sd[0], 0.3 * sd[1]])
        .chains(CHAINS)
        .iterations(40)
        .seed(23)
        .starts(starts)
        .run(&model)
        .unwrap();
    assert_eq!(run.clip_fraction().iter().sum::<f64>(), 0.0);
    // Map the last draw of each chain to z-space and test standardised z against N(0, 1).
    let z: Vec<Vec<f64>> = run
        .chains
        .iter()
        .map(|c| {
            let t = &c.draws[c.draws.len() - 2..];
            vec![
                (t[0] - mu[0]) / sd[0],
                (t[1] + 20.0 * t[0] * t[0] - mu[1]) / sd[1],
            ]
        })
        .collect();
    let fake = Run {
        chains: z
            .iter()
            .map(|v| ChainTrace {
                draws: v.clone(),
                stats: vec![StepInfo::default()],
                ..Default::default()
            })
            .collect(),
        ..run.clone()
    };
    assert_invariant(&fake, &[0.0, 0.0], 1.0);
}
