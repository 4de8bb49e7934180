//! The correction distribution V_corr of DP Barker (Heikkilä et al. 2019): a 100-component
//! Gaussian mixture with `N(0, 2) + V_corr ≈ Logistic(0, 1)`, the table the thesis used
//! (`X_corr_1000_10_2.0_torch.pickle`, THESIS-NOTES §8), shipped as `data/xcorr_1000_10_2.0.csv`.

use std::sync::OnceLock;

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use crate::rng::ChainRng;

const TABLE: &str = include_str!("../../data/xcorr_1000_10_2.0.csv");

/// One mixture component: mean, standard deviation and weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Component {
    /// Mean μ_k.
    pub mean: f64,
    /// Standard deviation σ_k.
    pub sd: f64,
    /// Weight π_k.
    pub weight: f64,
}

/// The V_corr mixture for noise variance C = 2.
#[derive(Clone, Debug)]
pub struct VCorr {
    components: Vec<Component>,
    cumulative: Vec<f64>,
}

/// The shipped mixture (parsed once).
pub fn vcorr() -> &'static VCorr {
    static V: OnceLock<VCorr> = OnceLock::new();
    V.get_or_init(|| {
        let components: Vec<Component> = TABLE
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: Vec<f64> = l
                    .split(',')
                    .map(|x| {
                        x.trim()
                            .parse()
                            .expect("the shipped V_corr table is numeric (compile-time data)")
                    })
                    .collect();
                Component {
                    mean: v[0],
                    sd: v[1],
                    weight: v[2],
                }
            })
            .collect();
        let mut acc = 0.0;
        let cumulative = components
            .iter()
            .map(|c| {
                acc += c.weight;
                acc
            })
            .collect();
        VCorr {
            components,
            cumulative,
        }
    })
}

impl VCorr {
    /// The components.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// Mixture variance `Σπ(σ² + μ²) − (Σπμ)²`.
    pub fn variance(&self) -> f64 {
        let m: f64 = self.components.iter().map(|c| c.weight * c.mean).sum();
        self.components
            .iter()
            .map(|c| c.weight * (c.sd * c.sd + c.mean * c.mean))
            .sum::<f64>()
            - m * m
    }

    /// Density of `N(0, noise_var) + V_corr` at `x`.
    pub fn convolved_density(&self, x: f64, noise_var: f64) -> f64 {
        self.components
            .iter()
            .map(|c| {
                let v = c.sd * c.sd + noise_var;
                c.weight * (-(x - c.mean).powi(2) / (2.0 * v)).exp()
                    / (2.0 * std::f64::consts::PI * v).sqrt()
            })
            .sum()
    }

    /// CDF of `N(0, noise_var) + V_corr` at `x` (`noise_var = 0`: V_corr itself).
    pub fn convolved_cdf(&self, x: f64, noise_var: f64) -> f64 {
        self.components
            .iter()
            .map(|c| {
                let s = (c.sd * c.sd + noise_var).sqrt();
                c.weight
                    * 0.5
                    * crate::accounting::special::erfc(
                        -(x - c.mean) / (s * std::f64::consts::SQRT_2),
                    )
            })
            .sum()
    }

    /// One draw: component `k` with probability π_k, then `μ_k + σ_k·N(0,1)`.
    pub fn sample(&self, rng: &mut ChainRng) -> f64 {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let u = rng.random::<f64>() * total;
        let k = self
            .cumulative
            .partition_point(|&c| c <= u)
            .min(self.components.len() - 1);
        let z: f64 = StandardNormal.sample(rng);
        self.components[k].mean + self.components[k].sd * z
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::chain_rng;

    // Values computed with numpy/scipy from the shipped mixture (THESIS-NOTES §8, data/README.md).
    #[test]
    fn moments_density_and_cdf_match_the_thesis_mixture() {
        let v = vcorr();
        assert_eq!(v.components().len(), 100);
        let wsum: f64 = v.components().iter().map(|c| c.weight).sum();
        assert!((wsum - 1.0).abs() < 1e-15);
        assert!((v.variance() - 1.3017732207105184).abs() < 1e-12);
        for (x, d) in [
            (0.0, 0.24552856792854363),
            (1.0, 0.1972960428122876),
            (2.0, 0.10682261554536715),
            (5.0, 0.006702252042020308),
        ] {
            assert!(
                (v.convolved_density(x, 2.0) - d).abs() < 1e-12,
                "density at {x}"
            );
        }
        for (x, p) in [
            (0.5, 0.6205359672053514),
            (1.0, 0.7286479356410216),
            (2.0, 0.8803943849356829),
            (4.0, 0.9819672279135495),
        ] {
            let got = v.convolved_cdf(x, 2.0);
            assert!((got - p).abs() < 1e-12, "cdf at {x}: {got} vs {p}");
        }
    }

    #[test]
    fn convolution_is_close_to_logistic() {
        // Deterministic grid over [-10, 10]: the fit is within 0.005 of the logistic CDF
        // (largest gap ≈ 0.0024 at |x| ≈ 1).
        let v = vcorr();
        let worst = (0..=2000)
            .map(|i| -10.0 + i as f64 * 0.01)
            .map(|x| (v.convolved_cdf(x, 2.0) - 1.0 / (1.0 + (-x).exp())).abs())
            .fold(0.0, f64::max);
        assert!(worst < 0.005, "max |CDF − logistic| = {worst}");
    }

    #[test]
    fn sampler_follows_the_mixture_cdf() {
        // One-sample KS test of 20 000 draws against the mixture's own CDF, α = 1e-6
        // (asymptotic critical value √(ln(2/α)/(2m)) = 0.0269).
        let v = vcorr();
        let mut rng = chain_rng(2024, 0);
        let m = 20_000;
        let mut xs: Vec<f64> = (0..m).map(|_| v.sample(&mut rng)).collect();
        xs.sort_by(f64::total_cmp);
        let d = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = v.convolved_cdf(x, 0.0);
                (f - i as f64 / m as f64)
                    .abs()
                    .max(((i + 1) as f64 / m as f64 - f).abs())
            })
            .fold(0.0, f64::max);
        let crit = ((2.0f64 / 1e-6).ln() / (2.0 * m as f64)).sqrt();
        assert!(d < crit, "KS D = {d} ≥ {crit} (m = {m})");
    }
}
