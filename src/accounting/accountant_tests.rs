//! The dp_accounting conformance suite for every accountant, and their ordering.

use super::accountant::conformance;
use crate::accounting::{Accountant, CertifiedPld, Pld, PrivacyEvent, Rdp, Zcdp};

#[test]
fn conformance_zcdp() {
    conformance(
        Zcdp::new,
        PrivacyEvent::gaussian(3.0),
        PrivacyEvent::gaussian(1.0).poisson(0.1),
        1e-9,
    );
}

#[test]
fn conformance_rdp() {
    conformance(
        Rdp::new,
        PrivacyEvent::gaussian(1.0).poisson(0.01).repeat(100),
        PrivacyEvent::NonPrivate,
        1e-9,
    );
    conformance(
        Rdp::new,
        PrivacyEvent::gaussian(1.0)
            .without_replacement(1000, 10)
            .repeat(100),
        PrivacyEvent::gaussian(1.0).poisson(0.1).poisson(0.1),
        1e-9,
    );
}

#[test]
fn conformance_pld() {
    conformance(
        Pld::new,
        PrivacyEvent::gaussian(3.0),
        PrivacyEvent::NonPrivate,
        1e-8,
    );
}

#[test]
fn tight_below_zcdp_and_rdp() {
    let e = PrivacyEvent::gaussian(2.0).repeat(50);
    let (mut z, mut r, mut p) = (Zcdp::new(), Rdp::new(), Pld::new());
    z.compose(&e).unwrap();
    r.compose(&e).unwrap();
    p.compose(&e).unwrap();
    for d in [1e-9, 1e-6, 1e-3] {
        let (ez, er, ep) = (
            z.epsilon(d).unwrap(),
            r.epsilon(d).unwrap(),
            p.epsilon(d).unwrap(),
        );
        assert!(ep <= ez && ep <= er, "δ={d}: pld {ep} zcdp {ez} rdp {er}");
    }
}

#[test]
fn conformance_certified_pld() {
    // delta(epsilon(δ)) returns the upper δ-bound at the upper ε-bound: within the
    // requested relative width (1e-2) of δ, plus the η ≤ 1e-2·δ slack of the two queries.
    let make = || CertifiedPld::new().tolerance(1e-2).max_points(1 << 16);
    conformance(
        make,
        PrivacyEvent::gaussian(3.0),
        PrivacyEvent::NonPrivate,
        5e-2,
    );
    conformance(
        make,
        PrivacyEvent::gaussian(1.0).poisson(0.05).repeat(10),
        PrivacyEvent::gaussian(1.0).poisson(0.1).poisson(0.1),
        5e-2,
    );
}

#[test]
fn laplace_only_in_certified_pld() {
    let e = PrivacyEvent::Laplace {
        noise_multiplier: 1.0,
    };
    let others: Vec<Box<dyn Accountant>> = vec![
        Box::new(Zcdp::new()),
        Box::new(Rdp::new()),
        Box::new(Pld::new()),
    ];
    for a in others {
        let err = a.check(&e).unwrap_err().to_string();
        assert!(err.contains("Laplace"), "{}: {err}", a.name());
    }
    assert!(CertifiedPld::new().supports(&e));
    assert!(!CertifiedPld::new().supports(&PrivacyEvent::Laplace {
        noise_multiplier: 0.0
    }));
}
