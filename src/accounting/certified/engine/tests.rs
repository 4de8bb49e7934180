//! The certified intervals against exact values and independent references.

use crate::accounting::{Accountant, CertifiedPld, PrivacyEvent, Rdp, pld_delta, pld_epsilon};

fn acc(event: &PrivacyEvent, tol: f64) -> CertifiedPld {
    acc_budget(event, tol, 1 << 18)
}

fn acc_budget(event: &PrivacyEvent, tol: f64, points: usize) -> CertifiedPld {
    let mut a = CertifiedPld::new().tolerance(tol).max_points(points);
    a.compose(event).unwrap();
    a
}

/// Compositions of Gaussians: the interval contains the closed form N(μ, 2μ) (thesis
/// Theorem 6) for δ(ε) and ε(δ), and is not wider than asked where the budget allows.
#[test]
fn gaussian_contains_closed_form() {
    // budget 2^16 points: intervals of ~1 % at k = 1, 10 and ~10 % at k = 1000, fast
    for (sigma, k) in [(1.0, 1u64), (2.0, 10), (20.0, 1000)] {
        let a = acc_budget(&PrivacyEvent::gaussian(sigma).repeat(k), 1e-2, 1 << 16);
        let mu = k as f64 * 0.5 / (sigma * sigma);
        for eps in [0.0, 0.5, 1.0, 2.0, 4.0] {
            let exact = pld_delta(mu, eps).unwrap();
            let iv = a.delta_interval(eps).unwrap();
            eprintln!("gauss σ={sigma} k={k} ε={eps}: {iv:?} exact {exact}");
            assert!(
                iv.contains(exact),
                "σ={sigma} k={k} ε={eps}: {iv:?} vs {exact}"
            );
        }
        for delta in [1e-9, 1e-5, 1e-2] {
            let exact = pld_epsilon(mu, delta).unwrap();
            let iv = a.epsilon_interval(delta).unwrap();
            eprintln!("gauss σ={sigma} k={k} δ={delta}: {iv:?} exact {exact}");
            assert!(
                iv.contains(exact),
                "σ={sigma} k={k} δ={delta}: {iv:?} vs {exact}"
            );
        }
    }
}

/// Subsampling at rate 1 samples every row: Poisson sampling is the Gaussian, the substitute
/// pair the Gaussian with sensitivity 2 (σ/2). Both answer from the closed form, as tight as
/// its rounding, where the mixtures' discretisation gave [0, 1] (σ = 0.3, ε = 1); a rate just
/// below 1 still goes through the engine and agrees.
#[test]
fn full_rate_subsampling_is_the_gaussian() {
    for (sigma, k) in [(0.3, 1u64), (0.6, 1), (2.6, 3), (2.0, 100)] {
        for (event, effective) in [
            (PrivacyEvent::gaussian(sigma).poisson(1.0), sigma),
            (
                PrivacyEvent::gaussian(sigma).poisson_substitute(1.0),
                0.5 * sigma,
            ),
            (
                PrivacyEvent::gaussian(sigma).without_replacement(1000, 1000),
                0.5 * sigma,
            ),
        ] {
            let a = acc(&event.clone().repeat(k), 2e-3);
            assert!(a.closed_form(), "{event:?}");
            let mu = k as f64 * 0.5 / (effective * effective);
            for eps in [0.5, 1.0, 4.0] {
                let exact = pld_delta(mu, eps).unwrap();
                let iv = a.delta_interval(eps).unwrap();
                assert!(
                    iv.contains(exact),
                    "{event:?} k={k} ε={eps}: {iv:?} vs {exact}"
                );
                assert!(iv.upper - iv.lower <= 1e-9 * iv.upper, "{iv:?}");
            }
        }
    }
    let near = acc(
        &PrivacyEvent::gaussian(2.6)
            .poisson_substitute(0.999_999_9)
            .repeat(3),
        2e-3,
    );
    assert!(!near.closed_form());
    let iv = near.delta_interval(1.0).unwrap();
    assert!(
        iv.contains(pld_delta(3.0 * 0.5 / (1.3 * 1.3), 1.0).unwrap()),
        "{iv:?}"
    );
}

/// Laplace, sensitivity 1, scale b: δ(ε) = max(0, 1 − e^{(ε − 1/b)/2}) (derived in
/// `certified/engine/loss.rs`' model: L > ε ⇔ X < (1 − bε)/2; also dp_accounting's
/// `LaplacePrivacyLoss.get_delta_for_epsilon`).
#[test]
fn laplace_contains_closed_form() {
    for b in [0.5, 1.0, 3.0] {
        let a = acc(
            &PrivacyEvent::Laplace {
                noise_multiplier: b,
            },
            1e-3,
        );
        for eps in [0.0, 0.1, 0.5, 1.0, 1.9] {
            let exact = (1.0 - ((eps - 1.0 / b) / 2.0).exp()).max(0.0);
            let iv = a.delta_interval(eps).unwrap();
            eprintln!("laplace b={b} ε={eps}: {iv:?} exact {exact}");
            assert!(iv.contains(exact), "b={b} ε={eps}: {iv:?} vs {exact}");
        }
    }
}

/// Reference value `value` with its stated tolerance (tests/data/accounting/
/// accounting_vectors.csv, provenance there): the interval widened by the reference's own
/// tolerance must contain it.
fn assert_near_interval(case: &str, iv: crate::accounting::Interval, value: f64, tol: f64) {
    eprintln!("{case}: {iv:?} reference {value} (±{tol})");
    assert!(iv.lower <= iv.upper, "{case}: {iv:?}");
    assert!(
        iv.lower - tol <= value && value <= iv.upper + tol,
        "{case}: {iv:?} vs {value} ± {tol}"
    );
}

/// Poisson-subsampled Gaussian (add/remove, max of both directions) against dp_accounting
/// 0.6.0 at vdi = 1e-5 (cases sub_pld_poi_02, 04, 06; 03 and 11 left out for time), and the WOR substitute pair against the
/// converged Fourier accountant / PRV intervals (cases sub_pld_wor_*).
#[test]
fn subsampled_contain_references() {
    // a small budget keeps the test fast; the intervals are then a few % wide
    let poi = |s: f64, q: f64, k: u64| {
        acc_budget(
            &PrivacyEvent::gaussian(s).poisson(q).repeat(k),
            1e-3,
            1 << 16,
        )
    };
    let wor = |s: f64, n: u64, k: u64| {
        acc(
            &PrivacyEvent::gaussian(s)
                .without_replacement(n, 1)
                .repeat(k),
            1e-3,
        )
    };
    let v = 0.20167073240969863;
    let iv = poi(2.0, 0.1, 1000).delta_interval(2.0).unwrap();
    assert_near_interval("sub_pld_poi_06", iv, v, 1e-4 * v);
    let iv = poi(4.0, 0.01, 10_000).epsilon_interval(1e-5).unwrap();
    assert_near_interval("sub_pld_poi_04", iv, 0.9468683969716251, 1e-3);
    let iv = poi(1.0, 0.01, 10_000).epsilon_interval(1e-5).unwrap();
    assert_near_interval("sub_pld_poi_02", iv, 6.187712729102017, 1e-3);
    // certified upper bound below the RDP bound (sub_rdp_poi_eps_01: 6.7128)
    let mut rdp = Rdp::new();
    rdp.compose(&PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(10_000))
        .unwrap();
    assert!(iv.upper < rdp.epsilon(1e-5).unwrap());

    let v = 0.032962116130830804;
    let iv = wor(1.0, 100, 1000).delta_interval(1.0).unwrap();
    assert_near_interval("sub_pld_wor_03", iv, v, 1e-4 * v);
    let v = 9.331845666228388e-05;
    let iv = wor(1.0, 100, 1).delta_interval(0.1).unwrap();
    assert_near_interval("sub_pld_wor_12", iv, v, 9e-4 * v);
    let iv = wor(0.8366600265340756, 100, 1000)
        .epsilon_interval(1e-6)
        .unwrap();
    assert_near_interval("sub_pld_wor_eps_02", iv, 4.390463290184464, 2e-3);
}

/// upper ≥ lower and both monotone in the number of compositions (each bound is certified,
/// so the upper bound at k is compared with the lower bound at k+…: the true value is
/// monotone, and so must be the computed uppers along a fixed refinement).
#[test]
fn monotone_in_k() {
    let mut last = 0.0;
    for k in [1u64, 10, 100, 1000] {
        let a = acc_budget(
            &PrivacyEvent::gaussian(1.0).poisson(0.05).repeat(k),
            1e-2,
            1 << 15,
        );
        let iv = a.delta_interval(0.5).unwrap();
        assert!(iv.lower <= iv.upper, "k={k}: {iv:?}");
        assert!(iv.upper >= last, "k={k}: upper {} < {last}", iv.upper);
        last = iv.upper;
    }
}

/// Timing and widths at the default budget (run by hand: `cargo test --release --lib
/// pld::tests::default_budget -- --ignored --nocapture`).
#[test]
#[ignore]
fn default_budget() {
    let cases: Vec<(&str, PrivacyEvent, Option<f64>, Option<f64>)> = vec![
        (
            "poisson s1 q0.01 k1e4 eps(1e-5)",
            PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(10_000),
            None,
            Some(1e-5),
        ),
        (
            "poisson s1 q0.01 k1e4 delta(1)",
            PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(10_000),
            Some(1.0),
            None,
        ),
        (
            "q1 s0.8 q1e-3 k1e5 eps(1e-6)",
            PrivacyEvent::gaussian(0.8).poisson(1e-3).repeat(100_000),
            None,
            Some(1e-6),
        ),
        (
            "q2 s1 q1e-4 k1e6 eps(1e-9)",
            PrivacyEvent::gaussian(1.0).poisson(1e-4).repeat(1_000_000),
            None,
            Some(1e-9),
        ),
        (
            "q3 wor s1 q1e-4 k1e6 delta(0.5)",
            PrivacyEvent::gaussian(1.0)
                .without_replacement(10_000, 1)
                .repeat(1_000_000),
            Some(0.5),
            None,
        ),
    ];
    for (name, e, eps, delta) in cases {
        let mut a = CertifiedPld::new();
        a.compose(&e).unwrap();
        let t = std::time::Instant::now();
        let iv = match (eps, delta) {
            (Some(x), _) => a.delta_interval(x).unwrap(),
            (_, Some(d)) => a.epsilon_interval(d).unwrap(),
            _ => unreachable!(),
        };
        eprintln!(
            "{name}: {iv:?} rel width {:.2e} in {:?}",
            iv.width() / iv.upper,
            t.elapsed()
        );
    }
}

/// Invariants of the certified bounds: lower ≤ upper; the upper bound of δ(ε) decreases in ε
/// and σ and increases in k and q (each interval contains the truth, which is monotone, so
/// the intervals of neighbours must overlap in the right order: upper(a) ≥ lower(b) whenever
/// the true value at a is at least the one at b).
#[test]
fn monotone_in_epsilon_sigma_q() {
    let d = |sigma: f64, q: f64, k: u64, eps: f64| {
        acc_budget(
            &PrivacyEvent::gaussian(sigma).poisson(q).repeat(k),
            1e-2,
            1 << 16,
        )
        .delta_interval(eps)
        .unwrap()
    };
    let base = d(1.0, 0.05, 100, 1.0);
    assert!(base.lower <= base.upper && base.upper > 0.0, "{base:?}");
    for (name, other, larger) in [
        ("ε up", d(1.0, 0.05, 100, 1.5), false),
        ("σ up", d(1.3, 0.05, 100, 1.0), false),
        ("q up", d(1.0, 0.08, 100, 1.0), true),
        ("k up", d(1.0, 0.05, 150, 1.0), true),
    ] {
        assert!(other.lower <= other.upper, "{name}: {other:?}");
        if larger {
            assert!(other.upper >= base.lower, "{name}: {other:?} vs {base:?}");
            assert!(
                other.upper > base.upper,
                "{name}: upper {other:?} vs {base:?}"
            );
        } else {
            assert!(other.lower <= base.upper, "{name}: {other:?} vs {base:?}");
            assert!(
                other.upper < base.upper,
                "{name}: upper {other:?} vs {base:?}"
            );
        }
    }
}

/// The engine itself (not the closed form, which answers Gaussian compositions first) on
/// Gaussian compositions, whose exact δ(ε) and ε(δ) are known: every interval contains the
/// closed form, from one composition to 10⁴, and the second-order lower bound keeps the
/// default-tolerance interval within its tolerance where the budget allows.
#[test]
fn engine_contains_gaussian_closed_form() {
    use super::super::Query;
    for (sigma, k) in [(1.0, 1u64), (2.0, 10), (20.0, 1000), (30.0, 10_000)] {
        let a = acc_budget(&PrivacyEvent::gaussian(sigma).repeat(k), 2e-3, 1 << 20);
        let mu = k as f64 * 0.5 / (sigma * sigma);
        for eps in [0.0, 0.5, 1.0, 2.0] {
            let exact = pld_delta(mu, eps).unwrap();
            let iv = a.answer(Query::Delta(eps));
            eprintln!("engine gauss σ={sigma} k={k} ε={eps}: {iv:?} exact {exact}");
            assert!(iv.contains(exact), "σ={sigma} k={k} ε={eps}: {iv:?}");
            assert!(
                iv.width() <= 2e-3 * iv.upper,
                "σ={sigma} k={k} ε={eps}: {iv:?}"
            );
        }
        for delta in [1e-9, 1e-5] {
            let exact = pld_epsilon(mu, delta).unwrap();
            let iv = a.answer(Query::Epsilon(delta));
            eprintln!("engine gauss σ={sigma} k={k} δ={delta}: {iv:?} exact {exact}");
            assert!(iv.contains(exact), "σ={sigma} k={k} δ={delta}: {iv:?}");
        }
    }
}

/// A long composition (10⁶ steps of the substitute pair, σ = 1, q = 1e-4) at the default
/// tolerance and budget: the interval of δ(0.5) is within 2 % (the first-order, O(h√k)
/// lower bound alone gave 10 %).
#[test]
fn long_composition_within_two_percent() {
    let mut a = CertifiedPld::new();
    a.compose(
        &PrivacyEvent::gaussian(1.0)
            .without_replacement(10_000, 1)
            .repeat(1_000_000),
    )
    .unwrap();
    let iv = a.delta_interval(0.5).unwrap();
    eprintln!("long composition: {iv:?}");
    assert!(iv.lower > 0.0 && iv.width() <= 0.02 * iv.upper, "{iv:?}");
}
