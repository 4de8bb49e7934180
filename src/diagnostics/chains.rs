//! Chain-major draw matrices: validation of `&[&[f64]]` input, splitting and basic moments.

use crate::error::{Error, Result};

/// Draws of one scalar parameter as an `m × n` matrix stored chain-major (chain `c`'s
/// draws are `data[c*n .. (c+1)*n]`).
#[derive(Debug, Clone)]
pub(crate) struct Mat {
    pub m: usize,
    pub n: usize,
    pub data: Vec<f64>,
}

impl Mat {
    /// Copy validated chains (one slice per chain, equal lengths, finite values).
    pub fn from_chains(chains: &[&[f64]]) -> Result<Mat> {
        let m = chains.len();
        if m == 0 {
            return Err(Error::InvalidData(
                "no chains given; pass at least one chain of draws".into(),
            ));
        }
        let n = chains[0].len();
        let mut data = Vec::with_capacity(m * n);
        for (c, chain) in chains.iter().enumerate() {
            if chain.len() != n {
                return Err(Error::InvalidData(format!(
                    "chain {c} has {} draws but chain 0 has {n}; all chains need the same number of draws",
                    chain.len()
                )));
            }
            if let Some(d) = chain.iter().position(|x| !x.is_finite()) {
                return Err(Error::InvalidData(format!(
                    "chain {c}, draw {d} is {}; diagnostics need finite draws",
                    chain[d]
                )));
            }
            data.extend_from_slice(chain);
        }
        Ok(Mat { m, n, data })
    }

    /// Row `c` (one chain).
    pub fn chain(&self, c: usize) -> &[f64] {
        &self.data[c * self.n..(c + 1) * self.n]
    }

    /// Same shape, values mapped elementwise.
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Mat {
        Mat {
            m: self.m,
            n: self.n,
            data: self.data.iter().map(|&x| f(x)).collect(),
        }
    }

    /// ArviZ's split: each chain becomes its first `⌊n/2⌋` and its last `⌊n/2⌋` draws (the
    /// middle draw of an odd-length chain is dropped), giving `2m` chains.
    pub fn split(&self) -> Mat {
        let half = self.n / 2;
        let mut data = Vec::with_capacity(2 * self.m * half);
        for c in 0..self.m {
            data.extend_from_slice(&self.chain(c)[..half]);
        }
        for c in 0..self.m {
            data.extend_from_slice(&self.chain(c)[self.n - half..]);
        }
        Mat {
            m: 2 * self.m,
            n: half,
            data,
        }
    }
}

/// Arithmetic mean (NaN for an empty slice).
pub(crate) fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Variance with `ddof` degrees of freedom removed (numpy's two-pass formula).
pub(crate) fn var(x: &[f64], ddof: usize) -> f64 {
    let mu = mean(x);
    x.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / (x.len() as f64 - ddof as f64)
}

/// numpy's median: the middle order statistic, or the mean of the two middle ones.
pub(crate) fn median(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    let k = s.len();
    if k % 2 == 1 {
        s[k / 2]
    } else {
        (s[k / 2 - 1] + s[k / 2]) / 2.0
    }
}

/// Quantile of sorted data as scipy's `mquantiles(alphap=1, betap=1)` (R type 7, numpy's
/// default "linear"), with scipy's arithmetic so results agree to the last bit.
pub(crate) fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len() as f64;
    // scipy: m = alphap + p·(1 − alphap − betap) with alphap = betap = 1, i.e. 1 − p
    // (bit-identical to scipy's 1 + p·(−1)).
    let m = 1.0 - p;
    let aleph = n * p + m;
    let k = aleph.clamp(1.0, (n - 1.0).max(1.0)).floor();
    let gamma = (aleph - k).clamp(0.0, 1.0);
    let k = k as usize;
    if k >= sorted.len() {
        return sorted[sorted.len() - 1];
    }
    (1.0 - gamma) * sorted[k - 1] + gamma * sorted[k]
}

/// Sorted copy.
pub(crate) fn sorted(x: &[f64]) -> Vec<f64> {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_drops_middle_of_odd_chains() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let s = Mat::from_chains(&[&a, &b]).unwrap().split();
        assert_eq!((s.m, s.n), (4, 2));
        assert_eq!(s.data, vec![1.0, 2.0, 6.0, 7.0, 4.0, 5.0, 9.0, 10.0]);
    }

    #[test]
    fn rejects_ragged_nan_and_empty() {
        assert!(Mat::from_chains(&[]).is_err());
        assert!(Mat::from_chains(&[&[1.0, 2.0], &[1.0]]).is_err());
        let e = Mat::from_chains(&[&[1.0, f64::NAN]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("chain 0, draw 1"), "{e}");
    }

    #[test]
    fn type7_quantile_and_median() {
        let s = [1.0, 2.0, 3.0, 4.0];
        // numpy.quantile([1,2,3,4], [0, .05, .5, 1]) = [1, 1.15, 2.5, 4]
        assert_eq!(quantile_sorted(&s, 0.0), 1.0);
        assert!((quantile_sorted(&s, 0.05) - 1.15).abs() < 1e-15);
        assert_eq!(quantile_sorted(&s, 0.5), 2.5);
        assert_eq!(quantile_sorted(&s, 1.0), 4.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&s), 2.5);
    }
}
