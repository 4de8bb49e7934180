//! Entries of a Gram matrix `G = Σ_i w_i x_i x_iᵀ` (any row weights `w_i`: `XᵀX`, or a GLM's
//! information) that the **declared** structure of the design determines from other entries.
//!
//! With a constant covariate `c` (value `κ`, an intercept) and the internal images `a_j`, `b_j`
//! of a covariate's declared `0` and upper bound:
//!
//! - an **indicator** `j` (its values are `a_j` or `b_j` only: a one-hot group's members, or a
//!   column declared binary) has `(x_j − a_j)(x_j − b_j) = 0` in every row, so
//!   `G_jj = (a_j + b_j) G_cj/κ − a_j b_j G_cc/κ²`;
//! - two members `j`, `k` of one **one-hot group** (at most one away from `a` in a row) have
//!   `(x_j − a_j)(x_k − a_k) = 0`, so `G_jk = a_k G_cj/κ + a_j G_ck/κ − a_j a_k G_cc/κ²`.
//!
//! Both hold for every row the declarations allow, whatever the weights, so a release need
//! not carry these entries: they are computed from the released ones (post-processing), and a
//! posterior over the released entries alone holds the whole matrix (a linear model's pilot
//! `XᵀX`, `linear.rs`; the GLMs' latent information, `posterior.rs`). On a design with a
//! rare baseline level the weakest direction (the baseline against the intercept) is then
//! determined by the levels' counts alone, with a fraction of the noise of a full release.
//! Without a constant covariate nothing is determined.

use super::data::GlmData;

/// An entry of `svec(G)` (off-diagonal entries times `√2`) as a linear combination of others:
/// `svec(G)[entry] = Σ coef · svec(G)[k]`, every `k` an entry that is not determined.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Determined {
    pub entry: usize,
    pub terms: Vec<(usize, f64)>,
}

/// The index of entry `(a, b)` in `svec` of a `p × p` matrix (row-major upper triangle):
/// rows `0..a` hold `Σ_{r<a} (p − r) = a(2p − a + 1)/2` entries.
pub(crate) fn svec_index(p: usize, a: usize, b: usize) -> usize {
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    a * (2 * p - a + 1) / 2 + (b - a)
}

/// The entries of `svec(Σ w x xᵀ)` determined by `data`'s declared structure (module docs),
/// in increasing order of `entry`; empty without a constant covariate.
pub(crate) fn determined_entries(data: &GlmData) -> Vec<Determined> {
    let p = data.p;
    let Some(c) = (0..p).find(|&i| data.lo[i] == data.hi[i] && data.lo[i] != 0.0) else {
        return Vec::new();
    };
    let kappa = data.lo[c];
    let sqrt2 = std::f64::consts::SQRT_2;
    // G_cj in svec units: svec[(c, j)] = √2 G_cj for j ≠ c
    let cc = svec_index(p, c, c);
    let mut out = Vec::new();
    let mut push = |a: usize, b: usize, ca: f64, cb: f64, ccoef: f64| {
        // G_ab = ca·G_ca/κ + cb·G_cb/κ + ccoef·G_cc/κ², in svec units
        let scale = if a == b { 1.0 } else { sqrt2 };
        let mut terms = vec![(cc, scale * ccoef / (kappa * kappa))];
        let mut add = |j: usize, coef: f64| {
            let k = svec_index(p, c, j);
            match terms.iter_mut().find(|(t, _)| *t == k) {
                Some(t) => t.1 += scale * coef / (kappa * sqrt2),
                None => terms.push((k, scale * coef / (kappa * sqrt2))),
            }
        };
        add(a, ca);
        add(b, cb);
        terms.retain(|&(_, coef)| coef != 0.0);
        out.push(Determined {
            entry: svec_index(p, a, b),
            terms,
        });
    };
    for &j in data.indicators() {
        let (a, b) = (data.lo[j], data.hi[j]);
        push(j, j, 0.5 * (a + b), 0.5 * (a + b), -a * b);
    }
    for group in data.one_hot_groups() {
        for (n, &j) in group.iter().enumerate() {
            for &k in &group[n + 1..] {
                let (aj, ak) = (data.lo[j], data.lo[k]);
                push(j, k, ak, aj, -aj * ak);
            }
        }
    }
    out.sort_by_key(|d| d.entry);
    out
}

/// Whether each of the `q` entries of `svec` is one a rule of `determined` fixes.
pub(crate) fn determined_mask(q: usize, determined: &[Determined]) -> Vec<bool> {
    let mut mask = vec![false; q];
    for rule in determined {
        mask[rule.entry] = true;
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise_aware::{GlmData, GlmKind};
    use crate::rng::chain_rng;
    use nalgebra::DMatrix;
    use rand::RngExt;

    /// Every rule holds for `Σ w x xᵀ` of allowed rows with arbitrary positive weights: an
    /// intercept of 2, a one-hot group of three (one declared 0:3), a binary column declared
    /// 0:2, a continuous covariate declared -1:4.
    #[test]
    fn determined_entries_hold_for_any_weights() {
        let mut rng = chain_rng(7, 0);
        let (p, n) = (6, 40);
        let mut x = Vec::with_capacity(n * p);
        for _ in 0..n {
            let level = rng.random_range(0..4usize); // 0: the baseline
            x.push(2.0);
            for l in 1..=3 {
                let hi = if l == 3 { 3.0 } else { 1.0 };
                x.push(if level == l { hi } else { 0.0 });
            }
            x.push(if rng.random::<f64>() < 0.3 { 2.0 } else { 0.0 });
            x.push(-1.0 + 5.0 * rng.random::<f64>());
        }
        let bounds = vec![
            (2.0, 2.0),
            (0.0, 1.0),
            (0.0, 1.0),
            (0.0, 3.0),
            (0.0, 2.0),
            (-1.0, 4.0),
        ];
        let names = ["c", "a", "b", "t", "s", "z", "log_sigma"]
            .map(String::from)
            .to_vec();
        let data = GlmData::new(
            GlmKind::Linear,
            x,
            vec![0.5; n],
            bounds,
            (0.0, 1.0),
            1.0,
            names,
        )
        .unwrap()
        .one_hot(&["a", "b", "t"])
        .unwrap()
        .binary(&["s"])
        .unwrap();
        let rules = determined_entries(&data);
        // three squares of indicators, the binary's square, three pairs of the group
        assert_eq!(rules.len(), 7);
        let (rows, _) = data.internal_rows();
        let mut g = DMatrix::<f64>::zeros(p, p);
        for row in rows.chunks_exact(p) {
            let w = 0.1 + rng.random::<f64>();
            for a in 0..p {
                for b in 0..p {
                    g[(a, b)] += w * row[a] * row[b];
                }
            }
        }
        let v = crate::noise_aware::linalg::svec(&g);
        for rule in &rules {
            assert!(
                rules
                    .iter()
                    .all(|r| rule.terms.iter().all(|t| t.0 != r.entry))
            );
            let got: f64 = rule.terms.iter().map(|&(k, c)| c * v[k]).sum();
            let want = v[rule.entry];
            assert!(
                (got - want).abs() <= 1e-9 * v[0].abs(),
                "{rule:?}: {got} vs {want}"
            );
        }
        // and not without an intercept
        let names = ["a", "b", "log_sigma"].map(String::from).to_vec();
        let plain = GlmData::new(
            GlmKind::Linear,
            vec![1.0, 0.0, 0.0, 1.0],
            vec![0.5; 2],
            vec![(0.0, 1.0); 2],
            (0.0, 1.0),
            1.0,
            names,
        )
        .unwrap()
        .one_hot(&["a", "b"])
        .unwrap();
        assert!(determined_entries(&plain).is_empty());
    }

    #[test]
    fn svec_index_is_svec_order() {
        let p = 5;
        let mut k = 0;
        for a in 0..p {
            for b in a..p {
                assert_eq!(svec_index(p, a, b), k);
                assert_eq!(svec_index(p, b, a), k);
                k += 1;
            }
        }
    }
}
