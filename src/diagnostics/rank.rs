//! Rank normalisation (Vehtari et al. 2021): average ranks, Blom's offset, normal quantiles.

use super::chains::Mat;

/// Standard normal quantile Φ⁻¹(p) = −√2 · erfc⁻¹(2p).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p)
}

/// Ranks 1..=S of `x`, ties getting their average rank (scipy `rankdata(method="average")`).
pub(crate) fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && x[idx[j]] == x[idx[i]] {
            j += 1;
        }
        // Positions i..j (0-based) hold ranks i+1..=j; their mean is (i+1+j)/2.
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        i = j;
    }
    ranks
}

/// ArviZ's `_z_scale`: z = Φ⁻¹((r − 3/8)/(S − 2·3/8 + 1)) over all draws of the matrix.
pub(crate) fn z_scale(x: &Mat) -> Mat {
    let c = 3.0 / 8.0;
    let size = x.data.len() as f64;
    let data = average_ranks(&x.data)
        .into_iter()
        .map(|r| normal_quantile((r - c) / (size - 2.0 * c + 1.0)))
        .collect();
    Mat {
        m: x.m,
        n: x.n,
        data,
    }
}

/// `|x − median(x)|` over all draws (ArviZ's folding, before z-scaling).
pub(crate) fn fold(x: &Mat) -> Mat {
    let med = super::chains::median(&x.data);
    x.map(|v| (v - med).abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_average_ties() {
        assert_eq!(
            average_ranks(&[3.0, 1.0, 3.0, 2.0]),
            vec![3.5, 1.0, 3.5, 2.0]
        );
    }

    #[test]
    fn normal_quantile_known_values() {
        // scipy.stats.norm.ppf(0.975) = 1.959963984540054, ppf(0.5) = 0.
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-14);
        assert_eq!(normal_quantile(0.5), 0.0);
        assert!((normal_quantile(0.025) + 1.959963984540054).abs() < 1e-14);
    }
}
