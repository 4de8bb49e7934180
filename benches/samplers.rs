//! Sampler benchmarks (bench binary, no harness): `cargo bench --bench samplers`.
//!
//! Reports the time per iteration of DP penalty (full, OCU, GWMH), DP HMC, minibatch DP
//! penalty and DP Barker on the thesis' easy-2d (n = 1e5) and gauss-30d (n = 2e5) data, as
//! ratios: to one bare pass computing the same per-row log-likelihood ratios (or gradients),
//! and to the thesis' own code measured on this machine at ε = 4 (DP penalty 1.3 ms/iter on
//! easy-2d and 31 ms on gauss-30d, DP HMC 29 ms on easy-2d).
//!
//! `cargo bench --bench samplers -- big-data` runs only the big-data section instead: one
//! chain on n = 1e7 rows with its data passes on 1 vs 2 threads (`big_data/mod.rs`).

mod big_data;
mod common;

use std::hint::black_box;

use common::time;

use dp_mcmc::models::{Experiment, ExperimentModel, Model};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::pass::CHUNK;
use dp_mcmc::samplers::{DpBarker, DpHmc, DpPenalty, Kernel, MinibatchPenalty};

/// Time per step of `kernel` on `model` from `theta0`.
fn time_kernel<K: Kernel>(
    kernel: &K,
    model: &ExperimentModel,
    theta0: &[f64],
    iters: usize,
) -> f64 {
    let mut rng = chain_rng(1, 0);
    let mut state = kernel
        .init(model, theta0, &mut rng)
        .expect("valid settings");
    for _ in 0..iters / 10 + 1 {
        kernel.step(model, &mut state, &mut rng);
    }
    time(5, iters, || {
        black_box(kernel.step(model, &mut state, &mut rng));
    })
}

/// One bare pass computing `r_j = ℓ_j(θ') − ℓ_j(θ)` for every row (summed, nothing else).
fn bare_ratio_pass(model: &ExperimentModel, theta: &[f64], theta_new: &[f64]) -> f64 {
    let mut buf = vec![0.0; CHUNK];
    let n = model.n_rows();
    time(5, 50, || {
        let mut s = 0.0;
        let mut start = 0;
        while start < n {
            let len = CHUNK.min(n - start);
            model.log_lik_ratio_rows(theta, theta_new, start, &mut buf[..len]);
            s += lane_sum(&buf[..len]);
            start += len;
        }
        black_box(s);
    })
}

/// Sum with four lanes (vectorisable), so the bare pass is not bound by add latency.
fn lane_sum(x: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let mut it = x.chunks_exact(4);
    for c in &mut it {
        for k in 0..4 {
            acc[k] += c[k];
        }
    }
    acc.iter().sum::<f64>() + it.remainder().iter().sum::<f64>()
}

/// One bare pass computing every per-row gradient (column-major, summed).
fn bare_grad_pass(model: &ExperimentModel, theta: &[f64]) -> f64 {
    let d = model.dim();
    let mut buf = vec![0.0; CHUNK * d];
    let n = model.n_rows();
    time(5, 20, || {
        let mut s = 0.0;
        let mut start = 0;
        while start < n {
            let len = CHUNK.min(n - start);
            model
                .grad_log_lik_cols(theta, start, &mut buf[..len * d])
                .expect("banana has column-major gradients");
            s += lane_sum(&buf[..len * d]);
            start += len;
        }
        black_box(s);
    })
}

fn row(name: &str, t: f64, bare: f64, thesis: Option<f64>) {
    let speedup = thesis.map_or("-".to_string(), |th| format!("{:.0}x", th / t));
    println!(
        "{name:<34} {:>10.1} µs/iter   {:>6.2}x bare pass   {:>8} vs thesis",
        t * 1e6,
        t / bare,
        speedup
    );
}

fn main() {
    if big_data::selected() {
        big_data::run();
        return;
    }
    println!("dp-mcmc sampler benchmarks (release, 1 thread, median of 5)\n");
    for (exp, thesis_pen, thesis_hmc) in [
        (Experiment::EasyBanana2d, Some(1.3e-3), Some(29e-3)),
        (Experiment::Gauss30d, Some(31e-3), None),
    ] {
        let model = exp.model().expect("preset model");
        let d = model.dim();
        let theta0 = model.start_point(0);
        println!("== {} (n = {}, d = {d})", exp.key(), model.n_rows());
        let mut theta_new = theta0.clone();
        theta_new.iter_mut().for_each(|t| *t += 1e-3);
        let bare = bare_ratio_pass(&model, &theta0, &theta_new);
        println!(
            "{:<34} {:>10.1} µs",
            "bare pass (all coordinates)",
            bare * 1e6
        );
        let mut one = theta0.clone();
        one[d - 1] += 1e-3;
        let bare_one = bare_ratio_pass(&model, &theta0, &one);
        println!(
            "{:<34} {:>10.1} µs",
            "bare pass (one coordinate)",
            bare_one * 1e6
        );

        let pen = DpPenalty::builder()
            .tau(0.1)
            .clip_bound(2.0)
            .proposal_sd(0.008);
        let k = pen.kernel(&model).expect("valid");
        row(
            "DP penalty (full update)",
            time_kernel(&k, &model, &theta0, 200),
            bare,
            thesis_pen,
        );
        let k = pen.clone().ocu().kernel(&model).expect("valid");
        row(
            "DP penalty OCU",
            time_kernel(&k, &model, &theta0, 500),
            bare_one,
            thesis_pen,
        );
        let k = pen.clone().gwmh().kernel(&model).expect("valid");
        row(
            "DP penalty GWMH",
            time_kernel(&k, &model, &theta0, 500),
            bare_one,
            thesis_pen,
        );

        let hmc = DpHmc::builder()
            .tau_l(0.1)
            .tau_g(0.4)
            .leapfrog_steps(10)
            .step_size(0.0005)
            .clip_bound(2.0)
            .grad_clip_bound(1.0);
        let k = hmc.kernel(&model).expect("valid");
        let bare_hmc = 11.0 * bare_grad_pass(&model, &theta0) + bare;
        row(
            "DP HMC (L = 10, fresh gradients)",
            time_kernel(&k, &model, &theta0, 20),
            bare_hmc,
            thesis_hmc,
        );

        let mb = MinibatchPenalty::builder()
            .tau(0.7)
            .clip_bound(1.0)
            .batch_size(1000)
            .proposal_sd(0.001);
        let k = mb.kernel(&model).expect("valid");
        let t_mb = time_kernel(&k, &model, &theta0, 2000);
        let t_pen = time_kernel(&pen.kernel(&model).expect("valid"), &model, &theta0, 200);
        println!(
            "{:<34} {:>10.1} µs/iter   {:>6.3}x a full-data DP penalty iteration",
            "minibatch DP penalty (b = 1000)",
            t_mb * 1e6,
            t_mb / t_pen
        );
        let _ = DpBarker::builder();
        println!();
    }
}
