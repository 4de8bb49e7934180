//! Discrete-noise benchmarks (bench binary, no harness): `cargo bench --bench noise`.
//!
//! Reports the cost of one exact discrete Gaussian draw (at the σ² of a typical easy-2d DP
//! penalty step with h = 2⁻²⁰, and at small σ²), of one lattice release (rounding + σ² snap +
//! draw), of one continuous `StandardNormal` draw for comparison, and the time per easy-2d
//! DP penalty iteration with continuous vs discrete noise (target overhead < 5 %).

mod common;

use std::hint::black_box;
use std::time::Instant;

use common::time;

use dp_mcmc::experiments::{SamplerKind, tuned_as};
use dp_mcmc::models::{Experiment, Model};
use dp_mcmc::noise::{DiscreteGaussian, Lattice, Noise};
use dp_mcmc::rng::chain_rng;
use dp_mcmc::samplers::Kernel;
use rand_distr::{Distribution, StandardNormal};

fn main() {
    println!("== exact discrete Gaussian draws ==");
    let mut rng = chain_rng(1, 0);
    // easy-2d DP penalty, h = 2^-20: c = 2bΔ ≈ 2·2·0.0113 ≈ 0.045 → m ≈ 47 000 lattice units,
    // s² = τ²n·m² ≈ 1000·(4.7e4)² ≈ 2.2e12 (an integer: h ≤ 1).
    for (label, num, den) in [
        (
            "σ² = 2.2e12 (easy-2d step, h = 2^-20)",
            2_200_000_000_000u64,
            1u64,
        ),
        ("σ² = 1000", 1000, 1),
        ("σ² = 5/2", 5, 2),
    ] {
        let g = DiscreteGaussian::new(num, den).expect("valid σ²");
        let t = time(7, 200_000, || {
            black_box(g.sample(&mut rng).expect("no overflow at this σ²"));
        });
        println!("{label:<42} {:>8.1} ns/draw", t * 1e9);
    }
    let t = time(7, 200_000, || {
        let z: f64 = StandardNormal.sample(&mut rng);
        black_box(z);
    });
    println!(
        "{:<42} {:>8.1} ns/draw",
        "continuous StandardNormal (f64)",
        t * 1e9
    );
    let lattice = Lattice::new(-20).expect("valid lattice");
    let release = time(7, 200_000, || {
        black_box(
            lattice
                .release(black_box(3.21), 0.045, 1000.0, &mut rng)
                .expect("in range"),
        );
    });
    println!(
        "{:<42} {:>8.1} ns/release",
        "lattice release (round + snap + draw)",
        release * 1e9
    );

    println!("\n== easy-2d DP penalty iteration (n = 1e5, tuned: τ 0.1, b 2, sd 0.008) ==");
    let model = Experiment::EasyBanana2d.model().expect("easy-2d model");
    let tuned: dp_mcmc::samplers::DpPenalty =
        tuned_as(Experiment::EasyBanana2d, SamplerKind::DpPenalty)
            .expect("tuned DP penalty exists for easy-2d");
    let theta0 = model.start_points(1).remove(0);
    let cont = tuned.kernel(&model).expect("valid settings");
    let disc = tuned
        .clone()
        .noise(Noise::discrete(-20))
        .kernel(&model)
        .expect("valid settings");
    // Alternate single steps of the two kernels (each on its own chain), so both see the same
    // machine load, and compare the medians of the per-step times (robust to load spikes).
    let mut rng_c = chain_rng(2, 0);
    let mut rng_d = chain_rng(2, 1);
    let mut sc = cont.init(&model, &theta0, &mut rng_c).expect("valid start");
    let mut sd = disc.init(&model, &theta0, &mut rng_d).expect("valid start");
    for _ in 0..100 {
        cont.step(&model, &mut sc, &mut rng_c);
        disc.step(&model, &mut sd, &mut rng_d);
    }
    let steps = 4000;
    let (mut tc, mut td) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    for _ in 0..steps {
        let t = Instant::now();
        black_box(cont.step(&model, &mut sc, &mut rng_c));
        tc.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        black_box(disc.step(&model, &mut sd, &mut rng_d));
        td.push(t.elapsed().as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (tc, td) = (median(&mut tc), median(&mut td));
    println!(
        "continuous noise   {:>9.1} µs/iteration (median of {steps})",
        tc * 1e6
    );
    println!(
        "discrete noise     {:>9.1} µs/iteration (median of {steps})",
        td * 1e6
    );
    println!(
        "overhead           {:>9.2} % measured; {:.2} % from the release cost alone (target < 5 %)",
        100.0 * (td / tc - 1.0),
        100.0 * release / tc,
    );
    println!(
        "                   (n = {} rows per iteration; machine load makes the measured figure noisy)",
        model.n_rows()
    );
}
