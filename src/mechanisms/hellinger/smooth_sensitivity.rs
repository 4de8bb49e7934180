//! Local and smooth sensitivity of the utility `H(BI(x), ·)`, and γ(ε, δ) of Theorem 4.1.
//!
//! # Local sensitivity in closed form
//! The paper defines `Δ_l(x') = max_{x'' adj x', r ∈ R_post} |H(BI(x'), r) − H(BI(x''), r)|`.
//! Hellinger is a metric, so by the triangle inequality every term is `≤ H(BI(x'), BI(x''))`,
//! and `r = BI(x')` attains it: `Δ_l(x') = max_{x'' adj x'} H(BI(x'), BI(x''))`. A neighbour
//! moves one row from category `i` to `j`; with `a = α + c'` the two posteriors have the same
//! total, so the log-affinity is `g(a_i) + g(a_j + 1)` with
//! `g(a) = ln Γ(a − ½) − ½ ln Γ(a) − ½ ln Γ(a − 1)`. The tests check this against the
//! brute-force maximum over `r`.
//!
//! # Distance between data sets (ambiguity)
//! Equation (1) says `d` is "the ℓ1 distance between two histograms", but a replace-one
//! neighbour is at histogram ℓ1 distance 2, and smooth sensitivity (Nissim, Raskhodnikova,
//! Smith 2007) needs `S(x) ≤ e^γ S(y)` for *neighbours*. We use the number of changed rows,
//! `d = ‖c − c'‖₁ / 2`: it makes `S` larger (pessimistic) and γ-smooth with respect to the
//! paper's adjacency (the paper's `Σ [x_i = x'_i] ≤ 1` is a typo for `Σ [x_i ≠ x'_i] ≤ 1`).

use statrs::function::gamma::ln_gamma;

use crate::error::{Error, Result, check};
use crate::mechanisms::hellinger::candidates::ln_candidate_count;
use crate::mechanisms::hellinger::distance::DistanceMeasure;
use crate::mechanisms::hellinger::model::DirichletMultinomial;

/// Which data sets `x'` the maximum of equation (1) ranges over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SensitivityScope {
    /// Every data set of size n, `d` = rows changed: the smooth sensitivity of Nissim et al.,
    /// γ-smooth, as Theorem 4.1 needs (default).
    #[default]
    AllDataSets,
    /// The paper's Dirichlet wording, read literally: `x` and its neighbours only, with `d`
    /// the histogram ℓ1 distance (2 for a neighbour). Not γ-smooth in general, so Theorem 4.1
    /// does not cover it; offered to reproduce the paper's numbers. See the crate's report of
    /// the exact privacy check for what it does to (ε, δ).
    PaperNeighbours,
    /// What the authors' experiment code computes (`_set_SS` in the public repository
    /// `JiawenUB/DP-Bayesian-Inference`, July 2018): every data set of size n, with `d` the
    /// histogram ℓ1 distance (their `Hamming_Distance`, 2 per changed row) and
    /// `γ = ln(1 − ε / (2 ln(δ / (2n))))` (their `beta`, with `n` where Theorem 4.1 has
    /// `n + 1`). The discount `e^{−γ ℓ1} = e^{−2γ·rows}` makes `S` only 2γ-smooth, so
    /// Theorem 4.1 does not cover it. One difference remains: their local sensitivity also
    /// moves a row out of a category with count 0 when its prior parameter exceeds 1 (a data
    /// set that does not exist); ours does not. Offered to reproduce the paper's figures.
    AuthorsCode,
}

impl SensitivityScope {
    /// γ this scope uses for `n` rows and `k` categories: [`gamma_for`] for
    /// [`SensitivityScope::AllDataSets`] and [`SensitivityScope::PaperNeighbours`], the
    /// authors' `ln(1 − ε / (2 ln(δ / (2n))))` for [`SensitivityScope::AuthorsCode`].
    ///
    /// # Errors
    /// As [`gamma`].
    pub fn gamma(&self, epsilon: f64, delta: f64, n: u64, k: usize) -> Result<f64> {
        match self {
            SensitivityScope::AuthorsCode => gamma(epsilon, delta, (n as f64).ln()),
            _ => gamma_for(epsilon, delta, n, k),
        }
    }
}

/// γ of Theorem 4.1 for a candidate set of size `|R|` given by its log:
/// `γ = ln(1 − ε / (2 ln(δ / (2|R|)))) = ln(1 + ε / (2 ln(2|R|/δ)))`.
///
/// # Ambiguity
/// Theorem 4.1 writes `n + 1` for both models. `n + 1 = |R_post|` for Beta-Binomial, and the
/// `(n+1)` comes from the union bound over the range in the proof of the smooth-sensitivity
/// exponential mechanism; for Dirichlet-Multinomial we therefore use `|R| = C(n+k−1, k−1)`,
/// which makes γ smaller, hence `S` larger (pessimistic). For k = 2 this is exactly the
/// paper's γ.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::smooth_sensitivity::gamma;
/// # fn main() -> dp_mcmc::Result<()> {
/// let g = gamma(0.8, 1e-8, 301f64.ln())?; // Beta-Binomial, n = 300
/// let paper = (1.0 - 0.8 / (2.0 * (1e-8f64 / (2.0 * 301.0)).ln())).ln();
/// assert!(g <= paper && (g - paper).abs() < 1e-13); // rounded down, never up
/// assert!(gamma(0.8, 0.0, 1.0).is_err()); // names `delta`
/// # Ok(()) }
/// ```
///
/// # Errors
/// `epsilon ≤ 0`, `delta ∉ (0, 1)`, negative or non-finite `ln_range_size`.
pub fn gamma(epsilon: f64, delta: f64, ln_range_size: f64) -> Result<f64> {
    check::positive("epsilon", epsilon)?;
    check::delta("delta", delta)?;
    check::non_negative("ln_range_size", ln_range_size)?;
    let l = 2f64.ln() + ln_range_size - delta.ln();
    // Rounded down by a relative 1e-12 so that float rounding never overstates γ (a smaller γ
    // means a larger S, i.e. more noise).
    Ok((epsilon / (2.0 * l)).ln_1p() * (1.0 - 1e-12))
}

/// γ for the Dirichlet-Multinomial (k = 2: Beta-Binomial) candidate set of `n` rows.
///
/// # Errors
/// As [`gamma`].
pub fn gamma_for(epsilon: f64, delta: f64, n: u64, k: usize) -> Result<f64> {
    gamma(epsilon, delta, ln_candidate_count(n, k))
}

/// `g(a) = ln Γ(a − ½) − ½ ln Γ(a) − ½ ln Γ(a − 1)` for `a > 1`: the log-affinity contribution
/// of one category whose parameter drops from `a` to `a − 1`.
fn g(a: f64) -> f64 {
    ln_gamma(a - 0.5) - 0.5 * ln_gamma(a) - 0.5 * ln_gamma(a - 1.0)
}

/// Tables `G_i[c] = g(α_i + c)` for `c = 1..=n` (index 0 unused), shared by the local and
/// smooth sensitivity of one model and data size.
#[derive(Debug, Clone)]
pub struct SensitivityTables {
    n: u64,
    g: Vec<Vec<f64>>,
    min_g: f64,
    /// Bound on the float error of a log-affinity `g_i + g_j` (ln Γ values cancel).
    la_err: f64,
    /// The distance the utility uses (Hellinger unless reproducing the authors' code).
    measure: DistanceMeasure,
    /// `Σα + n`, the common total of every posterior compared.
    total: f64,
}

impl SensitivityTables {
    /// Build the tables for `model` and data size `n ≥ 1` (O(k n) ln Γ evaluations).
    ///
    /// ```
    /// use dp_mcmc::mechanisms::hellinger::{DirichletMultinomial, smooth_sensitivity::SensitivityTables};
    /// # fn main() -> dp_mcmc::Result<()> {
    /// let m = DirichletMultinomial::beta_binomial(1.0, 1.0)?;
    /// let t = SensitivityTables::new(&m, 10)?;
    /// assert!(t.local(&[5, 5])? > 0.0);
    /// assert!(SensitivityTables::new(&m, 0).is_err()); // names `n`
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// `n = 0`, or tables beyond 2^30 values (`k·(n+1)`, see [`check::values`]).
    pub fn new(model: &DirichletMultinomial, n: u64) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid("n", n, "must be at least 1 row"));
        }
        check::values("n", u128::from(n) + 1, model.prior().len() as u128)?;
        let g: Vec<Vec<f64>> = model
            .prior()
            .iter()
            .map(|&a| {
                let mut row = vec![f64::NAN; n as usize + 1];
                for (c, slot) in row.iter_mut().enumerate().skip(1) {
                    *slot = g(a + c as f64);
                }
                row
            })
            .collect();
        let min_g = g
            .iter()
            .flat_map(|row| row[1..].iter().copied())
            .fold(f64::INFINITY, f64::min);
        // Each g is three ln Γ values of size ≤ |ln Γ(α_max + n)|, each with relative error
        // ≲ 1e-15 (statrs' Lanczos), so a sum of two g's is off by at most ~6e-15 |ln Γ|; take
        // 64 ulp of the largest |ln Γ| (and at least 64 ulp) as a pessimistic bound.
        let a_max = model.prior().iter().copied().fold(0.0, f64::max) + n as f64;
        let la_err = 64.0 * f64::EPSILON * ln_gamma(a_max).abs().max(1.0);
        Ok(Self {
            n,
            g,
            min_g,
            la_err,
            measure: DistanceMeasure::Hellinger,
            total: model.prior().iter().sum::<f64>() + n as f64,
        })
    }

    /// Measure sensitivities with `measure` instead of the Hellinger distance. For
    /// [`DistanceMeasure::AuthorsGenBetaln`] the local sensitivity is the largest such
    /// "distance" to a neighbour's posterior, as the authors' code computes it; that quantity
    /// is not a metric, so the triangle-inequality argument of the module docs does not apply
    /// and no privacy claim is made for it.
    #[must_use]
    pub fn with_measure(mut self, measure: DistanceMeasure) -> Self {
        self.measure = measure;
        self
    }

    /// Local sensitivity at `counts` (which must sum to the tables' `n`): the largest Hellinger
    /// distance between `Dir(α + c)` and a neighbour's posterior.
    ///
    /// # Errors
    /// Wrong length or counts not summing to `n`.
    pub fn local(&self, counts: &[u64]) -> Result<f64> {
        check::len("counts", counts.len(), self.g.len())?;
        let total: u128 = counts.iter().map(|&c| c as u128).sum();
        if total != self.n as u128 {
            return Err(Error::invalid(
                "counts",
                format!("{counts:?}"),
                format!("must sum to the data size n = {}", self.n),
            ));
        }
        Ok(self.local_unchecked(counts))
    }

    fn local_unchecked(&self, counts: &[u64]) -> f64 {
        let mut min_la = 0.0f64;
        for (i, &ci) in counts.iter().enumerate() {
            if ci == 0 {
                continue;
            }
            let down = self.g[i][ci as usize];
            for (j, &cj) in counts.iter().enumerate() {
                if j != i {
                    // cj + 1 ≤ n because ci ≥ 1 and Σ c = n.
                    min_la = min_la.min(down + self.g[j][cj as usize + 1]);
                }
            }
        }
        self.upper_h(min_la)
    }

    /// Hellinger distance for a computed log-affinity, rounded up by the float error bound
    /// (sensitivities are never understated).
    fn upper_h(&self, la: f64) -> f64 {
        self.measure.from_log_affinity(la - self.la_err, self.total)
    }

    /// An upper bound on the local sensitivity over every data set of size `n`.
    pub fn global_bound(&self) -> f64 {
        self.upper_h(2.0 * self.min_g)
    }

    /// Smooth sensitivity `S(c) = max_{c'} Δ_l(c') e^{−γ d(c, c')}` over all count vectors of
    /// size `n`, with `d` the number of changed rows (module docs).
    ///
    /// Exact, in `O(k² R²)` (`O(R)` for k = 2) instead of `O(|R_post|)`:
    /// * `Δ_l(c') = max_{i≠j, c'_i≥1} H(G_i[c'_i] + G_j[c'_j + 1])` depends on one pair of
    ///   categories, so the maximum over `c'` splits into a maximum over ordered pairs `(i, j)`
    ///   and their new counts `(c'_i, c'_j)`, each at the fewest rows that reach them: with
    ///   `a = c'_i − c_i`, `b = c'_j − c_j` that is `d = max(|a|, |b|, |a + b|)` for k ≥ 3 (the
    ///   other categories absorb `−(a + b)`; feasible whenever `c'_i + c'_j ≤ n`), and
    ///   `d = |a|` with `b = −a` for k = 2;
    /// * `Δ_l ≤ L* =` [`SensitivityTables::global_bound`], so only `d ≤ R = ln(L*/Δ_l(c))/γ`
    ///   can beat `Δ_l(c)`.
    ///
    /// The tests compare it with the unpruned maximum over every data set.
    ///
    /// # Errors
    /// `gamma ≤ 0`, wrong length, counts not summing to `n`.
    pub fn smooth(&self, counts: &[u64], gamma: f64) -> Result<f64> {
        check::positive("gamma", gamma)?;
        let s0 = self.local(counts)?;
        let l_star = self.global_bound();
        let radius = if l_star > s0 && s0 > 0.0 {
            ((l_star / s0).ln() / gamma).floor().min(self.n as f64) as i64
        } else if s0 > 0.0 {
            0
        } else {
            self.n as i64
        };
        let n = self.n as i64;
        let k = counts.len();
        let mut best = s0;
        let mut consider = |la: f64, d: i64| {
            let disc = (-gamma * d as f64).exp();
            if disc * l_star > best {
                best = best.max(self.upper_h(la) * disc);
            }
        };
        for (i, &ci) in counts.iter().enumerate() {
            let ci = ci as i64;
            for (j, &cj) in counts.iter().enumerate() {
                if j == i {
                    continue;
                }
                let cj = cj as i64;
                for ni in (ci - radius).max(1)..=(ci + radius).min(n) {
                    let a = ni - ci;
                    let down = self.g[i][ni as usize];
                    if k == 2 {
                        // c'_j = n − c'_i, and c'_j + 1 ≤ n because c'_i ≥ 1.
                        let nj = n - ni;
                        consider(down + self.g[j][nj as usize + 1], a.abs());
                        continue;
                    }
                    for nj in (cj - radius).max(0)..=(cj + radius).min(n - ni) {
                        let b = nj - cj;
                        let d = a.abs().max(b.abs()).max((a + b).abs());
                        if d <= radius {
                            consider(down + self.g[j][nj as usize + 1], d);
                        }
                    }
                }
            }
        }
        Ok(best)
    }

    /// [`SensitivityTables::smooth`], the paper's neighbours-only variant or the authors' code,
    /// per `scope` (`gamma` from [`SensitivityScope::gamma`]).
    ///
    /// # Errors
    /// As [`SensitivityTables::smooth`].
    pub fn smooth_with(&self, counts: &[u64], gamma: f64, scope: SensitivityScope) -> Result<f64> {
        match scope {
            SensitivityScope::AllDataSets => self.smooth(counts, gamma),
            // Histogram ℓ1 = 2 × rows changed: the same maximum with 2γ per row.
            SensitivityScope::AuthorsCode => self.smooth(counts, 2.0 * gamma),
            SensitivityScope::PaperNeighbours => {
                check::positive("gamma", gamma)?;
                let mut best = self.local(counts)?;
                let discount = (-2.0 * gamma).exp();
                let mut y = counts.to_vec();
                for i in 0..counts.len() {
                    if counts[i] == 0 {
                        continue;
                    }
                    for j in 0..counts.len() {
                        if j != i {
                            y[i] -= 1;
                            y[j] += 1;
                            best = best.max(self.local_unchecked(&y) * discount);
                            y[i] += 1;
                            y[j] -= 1;
                        }
                    }
                }
                Ok(best)
            }
        }
    }
}

/// Local sensitivity of `H(BI(x), ·)` at the data set with counts `counts`.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::{DirichletMultinomial, local_sensitivity, hellinger_beta};
/// # fn main() -> dp_mcmc::Result<()> {
/// let m = DirichletMultinomial::beta_binomial(1.0, 1.0)?;
/// let ls = local_sensitivity(&m, &[3, 7])?;
/// let h_up = hellinger_beta(4.0, 8.0, 5.0, 7.0)?;
/// let h_down = hellinger_beta(4.0, 8.0, 3.0, 9.0)?;
/// // Rounded up by a bound on the float error, never down.
/// assert!(ls >= h_up.max(h_down) && ls - h_up.max(h_down) < 1e-10);
/// assert!(local_sensitivity(&m, &[3, 7, 1]).is_err());
/// # Ok(()) }
/// ```
///
/// # Errors
/// Wrong number of categories or counts summing to 0.
pub fn local_sensitivity(model: &DirichletMultinomial, counts: &[u64]) -> Result<f64> {
    check::len("counts", counts.len(), model.k())?;
    SensitivityTables::new(model, super::model::total(counts)?)?.local(counts)
}

/// Smooth sensitivity `S(x)` (paper, equation (1)) at `counts` with smoothing `gamma`.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::{DirichletMultinomial, local_sensitivity, smooth_sensitivity};
/// # fn main() -> dp_mcmc::Result<()> {
/// let m = DirichletMultinomial::beta_binomial(1.0, 1.0)?;
/// let s = smooth_sensitivity(&m, &[30, 270], 0.016)?;
/// assert!(s >= local_sensitivity(&m, &[30, 270])?);
/// assert!(smooth_sensitivity(&m, &[30, 270], 0.0).is_err()); // names `gamma`
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`SensitivityTables::smooth`].
pub fn smooth_sensitivity(model: &DirichletMultinomial, counts: &[u64], gamma: f64) -> Result<f64> {
    check::len("counts", counts.len(), model.k())?;
    SensitivityTables::new(model, super::model::total(counts)?)?.smooth(counts, gamma)
}
