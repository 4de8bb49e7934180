//! The candidate set R_post (all posteriors `Dir(α + r)` with `Σ r = n`), its size
//! C(n+k−1, k−1), and allocation-free enumeration of the count vectors.

use statrs::function::gamma::ln_gamma;

/// `ln |R_post| = ln C(n+k−1, k−1)`.
///
/// The paper writes `C(n+1, m−1)` for the Dirichlet case; the number of count vectors of `k`
/// non-negative integers summing to `n` is `C(n+k−1, k−1)` (stars and bars), which agrees
/// with the paper's `n + 1` for the Beta case.
pub fn ln_candidate_count(n: u64, k: usize) -> f64 {
    ln_gamma(n as f64 + k as f64) - ln_gamma(k as f64) - ln_gamma(n as f64 + 1.0)
}

/// `|R_post| = C(n+k−1, k−1)` exactly, or `None` if it does not fit in a `u128`.
///
/// ```
/// use dp_mcmc::mechanisms::hellinger::candidate_count;
/// assert_eq!(candidate_count(300, 2), Some(301));
/// assert_eq!(candidate_count(10, 3), Some(66));
/// ```
pub fn candidate_count(n: u64, k: usize) -> Option<u128> {
    // C(n+j, j) for j = 1..k-1, each step exact: C(n+j, j) = C(n+j-1, j-1) (n+j) / j.
    let mut c: u128 = 1;
    for j in 1..k as u128 {
        c = c.checked_mul(n as u128 + j)? / j;
    }
    Some(c)
}

/// Call `f` with every count vector `r` of length `k` with `Σ r = n`, in lexicographic order
/// of `r`; one buffer, no allocation per candidate. For tests and small `n`.
pub fn for_each_candidate(n: u64, k: usize, mut f: impl FnMut(&[u64])) {
    if k == 0 {
        return;
    }
    let mut r = vec![0u64; k];
    fill(&mut r, 0, n, &mut f);
}

fn fill(r: &mut [u64], j: usize, rest: u64, f: &mut impl FnMut(&[u64])) {
    let k = r.len();
    if j == k - 1 {
        r[j] = rest;
        f(r);
        return;
    }
    for v in 0..=rest {
        r[j] = v;
        fill(r, j + 1, rest - v, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumeration_matches_count() {
        for (n, k) in [(0, 2), (5, 2), (7, 3), (6, 4)] {
            let mut m = 0u128;
            for_each_candidate(n, k, |r| {
                assert_eq!(r.iter().sum::<u64>(), n);
                m += 1;
            });
            assert_eq!(Some(m), candidate_count(n, k));
            let ln = ln_candidate_count(n, k);
            assert!((ln - (m as f64).ln()).abs() < 1e-10);
        }
        assert_eq!(candidate_count(u64::MAX, 4), None);
    }
}
