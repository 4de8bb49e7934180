//! [`Fourier`]: the Fourier accountant ([`FourierAccountant`], Koskela et al.) behind the
//! [`Accountant`] trait.

use crate::accounting::accountant::{Accountant, inner_gaussian, unsupported, walk, wor_rate};
use crate::accounting::accountant_kind::AccountantKind;
use crate::accounting::algorithm2::{capped, check_query};
use crate::accounting::event::PrivacyEvent;
use crate::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
use crate::accounting::releases::Releases;
use crate::error::{Error, Result, check};

/// Fourier accountant over privacy events.
///
/// Supports `PoissonSampled{q, Gaussian}` (add/remove relation; FA `get_delta_R`) and
/// `SampledWithoutReplacement{n, b, Gaussian}` (substitute relation, q = b/n; FA `get_delta_S`
/// with σ = the event's noise multiplier, i.e. the statistic's substitute sensitivity used as
/// the pair's per-record bound: conservative, the thesis' call, THESIS-NOTES §7), plus `NoOp`,
/// `Composed`, `SelfComposed`. All events of one accountant must share one relation. Bare
/// `Gaussian` events are rejected (use [`Pld`](crate::accounting::Pld)). Grid: nx = 1e6, L = 20 (the
/// thesis' defaults); where that grid cannot answer, `epsilon`/`delta` refine it
/// ([`FourierAccountant::delta_adaptive`]). FA's discretisation error is not bounded
/// rigorously (THESIS-NOTES §9).
///
/// Clones share the engines' cached spectra, so the many evaluations of Algorithm 2 compute each
/// single-step spectrum once.
#[derive(Clone, Debug)]
pub struct Fourier {
    nx: usize,
    window: f64,
    poisson: FourierAccountant,
    without_replacement: FourierAccountant,
    relation: Option<FourierRelation>,
    parts: Vec<SubsampledGaussian>,
}

impl Default for Fourier {
    fn default() -> Self {
        Fourier {
            nx: 1_000_000,
            window: 20.0,
            poisson: FourierAccountant::new(FourierRelation::AddRemovePoisson),
            without_replacement: FourierAccountant::new(
                FourierRelation::SubstituteWithoutReplacement,
            ),
            relation: None,
            parts: Vec::new(),
        }
    }
}

impl Fourier {
    /// An empty Fourier accountant with the thesis' grid (nx = 1e6, L = 20).
    ///
    /// # Examples
    /// ```
    /// use dp_mcmc::accounting::{Accountant, Fourier, PrivacyEvent};
    /// let mut acc = Fourier::new().nx(200_000);
    /// acc.compose(&PrivacyEvent::gaussian(2.0).poisson(0.01).repeat(10_000))?;
    /// // fourier-accountant 0.12.11 test suite, get_delta_R: 0.0102249...
    /// assert!((acc.delta(1.0)? - 0.010224911209191894).abs() < 1e-6);
    /// // a bare Gaussian is not a subsampled event: rejected
    /// assert!(acc.compose(&PrivacyEvent::gaussian(1.0)).is_err());
    /// # Ok::<(), dp_mcmc::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Grid size (default 1 000 000).
    #[must_use]
    pub fn nx(mut self, nx: usize) -> Self {
        self.nx = nx;
        self.rebuild_engines()
    }

    /// Window L of the privacy-loss grid [−L, L] (default 20).
    #[must_use]
    pub fn window(mut self, l: f64) -> Self {
        self.window = l;
        self.rebuild_engines()
    }

    /// Use `engine` (its grid and its cache of spectra) for the events of its relation; the
    /// other relation gets the same grid.
    #[must_use]
    pub fn with_engine(mut self, engine: FourierAccountant) -> Self {
        self.nx = engine.grid_size();
        self.window = engine.window_size();
        self = self.rebuild_engines();
        match engine.relation() {
            FourierRelation::AddRemovePoisson => self.poisson = engine,
            FourierRelation::SubstituteWithoutReplacement => self.without_replacement = engine,
        }
        self
    }

    fn rebuild_engines(mut self) -> Self {
        self.poisson = FourierAccountant::new(FourierRelation::AddRemovePoisson)
            .nx(self.nx)
            .window(self.window);
        self.without_replacement =
            FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement)
                .nx(self.nx)
                .window(self.window);
        self
    }

    fn engine(&self, relation: FourierRelation) -> &FourierAccountant {
        match relation {
            FourierRelation::AddRemovePoisson => &self.poisson,
            FourierRelation::SubstituteWithoutReplacement => &self.without_replacement,
        }
    }

    /// Whether nothing has been composed.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The composed parts (σ, q, steps).
    pub fn parts(&self) -> &[SubsampledGaussian] {
        &self.parts
    }

    /// The relation of the composed events, if any.
    pub fn relation(&self) -> Option<FourierRelation> {
        self.relation
    }

    fn accountant(&self) -> Result<&FourierAccountant> {
        let rel = self.relation.ok_or_else(|| Error::Numerical {
            what: "Fourier accountant",
            reason: "no events composed".into(),
        })?;
        Ok(self.engine(rel))
    }

    fn collect(
        &self,
        event: &PrivacyEvent,
    ) -> Result<(Option<FourierRelation>, Vec<SubsampledGaussian>)> {
        let mut rel = self.relation;
        let mut parts: Vec<SubsampledGaussian> = Vec::new();
        walk(event, 1.0, &mut |e, c| {
            let (r, q, inner) = match e {
                PrivacyEvent::PoissonSampled { q, event } => (
                    FourierRelation::AddRemovePoisson,
                    check::rate("q", *q)?,
                    event,
                ),
                PrivacyEvent::PoissonSubstitute { q, event } => (
                    FourierRelation::SubstituteWithoutReplacement,
                    check::rate("q", *q)?,
                    event,
                ),
                PrivacyEvent::SampledWithoutReplacement {
                    n,
                    batch_size,
                    event,
                } => (
                    FourierRelation::SubstituteWithoutReplacement,
                    wor_rate(*n, *batch_size)?,
                    event,
                ),
                other => return Err(unsupported("Fourier", other)),
            };
            let sigma = inner_gaussian(inner).ok_or_else(|| unsupported("Fourier", inner))??;
            if rel.is_some_and(|x| x != r) {
                return Err(Error::UnsupportedEvent {
                    accountant: "Fourier",
                    event: format!("{e} (mixes add/remove-Poisson and substitute-WOR events)"),
                });
            }
            rel = Some(r);
            if c >= 1.0 {
                parts.push(SubsampledGaussian::new(sigma, q, c as u64)?);
            }
            Ok(())
        })?;
        Ok((rel, parts))
    }
}

fn merge(into: &mut Vec<SubsampledGaussian>, new: Vec<SubsampledGaussian>) {
    for p in new {
        match into.iter_mut().find(|x| x.sigma == p.sigma && x.q == p.q) {
            Some(x) => x.steps += p.steps,
            None => into.push(p),
        }
    }
}

impl Accountant for Fourier {
    fn name(&self) -> &'static str {
        AccountantKind::Fourier.label()
    }
    fn check(&self, event: &PrivacyEvent) -> Result<()> {
        self.collect(event).map(|_| ())
    }
    fn compose(&mut self, event: &PrivacyEvent) -> Result<()> {
        let (rel, parts) = self.collect(event)?;
        if !parts.is_empty() {
            self.relation = rel;
            merge(&mut self.parts, parts);
        }
        Ok(())
    }
    fn boxed(&self) -> Box<dyn Accountant> {
        Box::new(self.clone())
    }
    /// Algorithm 2 as [`algorithm2::search`](crate::accounting::algorithm2::search), faster
    /// for the common case (nothing composed yet, every iteration one subsampled Gaussian, as
    /// the minibatch penalty): δ(ε) of k steps from the cached single-step spectrum
    /// ([`FourierPld::delta`](crate::accounting::fourier::FourierPld::delta)), the thesis'
    /// evaluation (`get_delta_S(ε, σ, q, ⌊k⌋)`, low 0, high 1024).
    fn max_iterations(
        &self,
        releases: &Releases,
        chains: u64,
        epsilon: f64,
        delta: f64,
    ) -> Result<Option<u64>> {
        let (eps, delta, chains) = check_query(epsilon, delta, chains)?;
        let single = if self.is_empty() && releases.is_homogeneous() {
            match self.collect(&releases.iteration)? {
                (Some(rel), parts) if parts.len() == 1 => Some((rel, parts[0])),
                _ => None,
            }
        } else {
            None
        };
        let Some((rel, part)) = single else {
            return crate::accounting::algorithm2::search(self, releases, chains, eps, delta);
        };
        let pld = self.engine(rel).pld(part.sigma, part.q)?;
        let per_iteration = part.steps.saturating_mul(chains);
        let f = |x: f64| -> Result<f64> {
            let k = x.floor();
            if k < 1.0 {
                Ok(0.0)
            } else {
                pld.delta(eps, (k as u64).saturating_mul(per_iteration))
            }
        };
        capped(f, delta, 0.0, 1024.0)
    }
    fn epsilon(&self, delta: f64) -> Result<f64> {
        let d = check::delta("delta", delta)?;
        if self.is_empty() {
            return Ok(0.0);
        }
        Ok(self.accountant()?.epsilon_adaptive(d, &self.parts)?.value)
    }
    fn delta(&self, epsilon: f64) -> Result<f64> {
        let e = check::non_negative("epsilon", epsilon)?;
        if self.is_empty() {
            return Ok(0.0);
        }
        Ok(self.accountant()?.delta_adaptive(e, &self.parts)?.value)
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference literals keep their source's digits
mod tests {
    use super::*;
    use crate::accounting::accountant::conformance;

    #[test]
    fn pld_delegates_subsampled_events() {
        use crate::accounting::Pld;
        let e = PrivacyEvent::gaussian(2.0).poisson(0.01).repeat(10_000);
        let mut pld = Pld::new();
        pld.compose(&e).unwrap();
        let mut fa = Fourier::new();
        fa.compose(&e).unwrap();
        let (a, b) = (pld.delta(1.0).unwrap(), fa.delta(1.0).unwrap());
        assert_eq!(a, b);
        // FA 0.12.11's test suite (nx 1e6, L 20):
        // get_delta_R(ε=1, σ=2, q=0.01, 1e4) = 0.010224911209191894
        assert!((a - 0.010224911209191894).abs() < 1e-12, "{a}");
        // mixing bare Gaussians with subsampled events is rejected, state unchanged
        assert!(pld.compose(&PrivacyEvent::gaussian(1.0)).is_err());
        assert_eq!(pld.delta(1.0).unwrap(), a);
        // mixing relations too
        assert!(
            pld.compose(&PrivacyEvent::gaussian(1.0).without_replacement(100, 1))
                .is_err()
        );
    }

    #[test]
    fn conformance_fourier() {
        conformance(
            || Fourier::new().nx(100_000),
            PrivacyEvent::gaussian(2.0).poisson(0.01).repeat(1000),
            PrivacyEvent::gaussian(1.0),
            1e-6,
        );
    }
}
