//! The certified intervals against exact values and independent references.

use crate::accounting::{Accountant, CertifiedPld, PrivacyEvent, Rdp, pld_delta, pld_epsilon};

fn acc(event: &PrivacyEvent, tol: f64) -> CertifiedPld {
    let mut a = CertifiedPld::new().tolerance(tol).max_points(1 << 18);
    a.compose(event).unwrap();
    a
}

/// Compositions of Gaussians: the interval contains the closed form N(μ, 2μ) (thesis
/// Theorem 6) for δ(ε) and ε(δ), and is not wider than asked where the budget allows.
#[test]
fn gaussian_contains_closed_form() {
    for (sigma, k) in [(1.0, 1u64), (2.0, 10), (20.0, 1000)] {
        let a = acc(&PrivacyEvent::gaussian(sigma).repeat(k), 1e-2);
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

/// Laplace, sensitivity 1, scale b: δ(ε) = max(0, 1 − e^{(ε − 1/b)/2}) (derived in
/// `pld/loss.rs`' model: L > ε ⇔ X < (1 − bε)/2; also dp_accounting's
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
