//! The privacy ledger on a run: what each chain released, the total, and the
//! (ε, δ) reached, also when `max_time` stops the chains early.

use std::time::Duration;

use dp_mcmc::accounting::{Accountant, Pld, PrivacyEvent};
use dp_mcmc::models::{Experiment, Model};
use dp_mcmc::samplers::Gradient;
use dp_mcmc::samplers::RunSetters;
use dp_mcmc::samplers::{DpHmc, DpPenalty, PrivacyCost};

#[test]
fn ledger_lists_every_chain_and_composes_to_the_guarantee() {
    // DP HMC with gradient re-use: each chain also releases its initial gradient once, so the
    // whole-release count is not a plain ⌊K/C⌋ and the ledger must show the once-per-chain
    // event of every chain.
    let model = Experiment::EasyBanana2d.model().unwrap();
    let n = model.n_rows() as u64;
    let sampler = DpHmc::builder()
        .gradient(Gradient::Reuse)
        .epsilon(2.0)
        .delta(1e-6)
        .chains(3)
        .seed(5)
        .progress(false)
        .start(vec![0.0, 3.0]);
    let dp_mcmc::samplers::IterationBudget {
        iterations: k,
        spent: planned,
        ..
    } = sampler.budget(n as usize).unwrap();
    let run = sampler.clone().iterations(2).run(&model).unwrap(); // fixed-k run: cheap
    assert_eq!(run.privacy.as_ref().unwrap().ledger.chains.len(), 3);

    // the planned budget run's ledger, without running k steps: the plan is what `run` uses
    let releases = sampler.releases(n).unwrap();
    assert!(!releases.is_homogeneous());
    let mut pld = Pld::new();
    pld.compose(&releases.for_chains(k as u64, 3)).unwrap();
    assert!(pld.delta(2.0).unwrap() <= 1e-6, "k = {k} overspends");
    let mut more = Pld::new();
    more.compose(&releases.for_chains(k as u64 + 1, 3)).unwrap();
    assert!(
        more.delta(2.0).unwrap() > 1e-6,
        "k + 1 = {} also fits",
        k + 1
    );
    assert_eq!((planned.epsilon, planned.delta), (2.0, 1e-6));

    // a fixed-iteration run: every chain ran 2 iterations; the total is the three chains
    let ledger = &run.privacy.as_ref().unwrap().ledger;
    assert!(!ledger.stopped_early());
    for c in &ledger.chains {
        assert_eq!(c.iterations, 2);
        assert_eq!(c.event, releases.for_chain(2));
    }
    let mut total = Pld::new();
    total.compose(ledger.total.as_ref().unwrap()).unwrap();
    let mut expected = Pld::new();
    expected.compose(&releases.for_chains(2, 3)).unwrap();
    assert!((total.mu() / expected.mu() - 1.0).abs() < 1e-12); // summed in another order
    let spent = run.privacy.as_ref().unwrap();
    assert!((total.epsilon(spent.delta).unwrap() - spent.epsilon).abs() < 1e-12);
}

#[test]
fn early_stop_reports_what_was_really_spent() {
    // ε = 200 allows tens of thousands of iterations; a 1 µs time bound stops every chain at
    // its first time check (256 steps), so the run spent far less than planned.
    let model = Experiment::EasyBanana2d.model().unwrap();
    let sampler = DpPenalty::builder()
        .tau(0.1)
        .proposal_sd(0.002)
        .epsilon(200.0)
        .delta(1e-6)
        .chains(2)
        .seed(1)
        .progress(false)
        .max_time(Duration::from_micros(1))
        .start(vec![0.0, 3.0]);
    let run = sampler.run(&model).unwrap();
    let spent = run.privacy.as_ref().unwrap();
    let ledger = &spent.ledger;
    assert!(ledger.stopped_early());
    assert!(ledger.planned_iterations as usize == run.iterations);
    for (c, trace) in ledger.chains.iter().zip(&run.chains) {
        assert!(trace.stopped_early);
        assert_eq!(c.iterations, trace.totals().steps);
        assert!(c.iterations < ledger.planned_iterations);
    }
    // ε reached: the accountant on what the chains released, below the planned 200
    let mut pld = Pld::new();
    pld.compose(ledger.total.as_ref().unwrap()).unwrap();
    let reached = pld.epsilon(1e-6).unwrap();
    assert_eq!(spent.epsilon, reached);
    assert!(reached < 200.0 && reached > 0.0, "{reached}");
    // the report says so
    assert!(
        run.to_string()
            .contains("spent by the iterations the chains ran")
    );
    // and the total is exactly the chains' iterations of one Gaussian release each
    let steps: u64 = ledger.chains.iter().map(|c| c.iterations).sum();
    let mut by_count = Pld::new();
    by_count
        .compose(&PrivacyEvent::gaussian(0.1 * (model.n_rows() as f64).sqrt()).repeat(steps))
        .unwrap();
    assert!((by_count.mu() / pld.mu() - 1.0).abs() < 1e-12);
}
