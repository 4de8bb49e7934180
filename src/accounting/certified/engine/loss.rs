//! The dominating pairs (P, Q) this engine discretises and the probabilities it needs from
//! them: `P(L ∈ (a, b])` and `Q(L ∈ (a, b])` for the privacy loss `L = ln(p(X)/q(X))`.
//!
//! Every pair but the Laplace is a pair of mixtures of `N(m, σ²)` on the real line with a
//! loss monotone in x, so a loss bucket is an x-interval and its masses are differences of
//! normal tails, each taken from the side where it is accurate.

use crate::accounting::special::norm_sf;

/// `ln(1 − q + q·e^u)` without overflow or cancellation.
pub(crate) fn ln_mix(q: f64, u: f64) -> f64 {
    if u > 0.0 {
        u + (q + (1.0 - q) * (-u).exp()).ln()
    } else if q * u.exp_m1() > -0.5 {
        (q * u.exp_m1()).ln_1p()
    } else {
        // both terms positive: no cancellation (and no ln(0) when q = 1)
        ((1.0 - q) + q * u.exp()).ln()
    }
}

/// Relative accuracy assumed for one normal tail (fdlibm's erfc: about 1 ulp; the division
/// by √2 adds another).
const TAIL_REL: f64 = 4e-15;

/// The dominating pair of one mechanism (sensitivity 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Loss {
    /// P = N(0, σ²), Q = N(1, σ²): L ~ N(μ, 2μ), μ = 1/(2σ²) (the same in both directions).
    Gaussian { sigma: f64 },
    /// P = Lap(0, b), Q = Lap(1, b) (the same in both directions).
    Laplace { b: f64 },
    /// Poisson subsampling, remove direction: P = (1−q)N(0,σ²) + qN(1,σ²), Q = N(0,σ²).
    PoissonRemove { sigma: f64, q: f64 },
    /// Poisson subsampling, add direction: P = N(0,σ²), Q = (1−q)N(0,σ²) + qN(1,σ²).
    PoissonAdd { sigma: f64, q: f64 },
    /// Sampling without replacement, substitute relation (the pair the Fourier accountant
    /// and the thesis' minibatch penalty use): P = (1−q)N(0,σ²) + qN(1,σ²),
    /// Q = (1−q)N(0,σ²) + qN(−1,σ²) (its swap has the same loss distribution, by x ↦ −x).
    Substitute { sigma: f64, q: f64 },
    /// A with-replacement batch in which the changed row appears `m ~ Poisson(mean)` times,
    /// substitute relation, noise multiplier `sigma` relative to one appearance: the
    /// public-label mixture over `m ≥ 1` (weights `Pois(m; mean)/q`) of `Substitute { σ/m, q }`,
    /// `q = 1 − e^{−mean}` (docs/ACCOUNTING.md, "DP-Fast MH"). The labels beyond the last
    /// one carried (`multiplicity_parts`) are put at `L = +∞` (pessimistic).
    SubstituteMultiple { sigma: f64, mean: f64 },
    /// One DP Barker step on a batch of `batch_size` rows drawn without replacement from `n`:
    /// known through its privacy profile only (the supremum over the feasible family,
    /// amplified; `engine/barker.rs`), discretised by `profile.rs` (symmetric).
    BarkerTest { n: u64, batch_size: u64 },
}

/// A mixture `Σ w·N(m, σ²)` (at most two components).
#[derive(Clone, Copy, Debug)]
struct Mixture {
    parts: [(f64, f64); 2],
    len: usize,
}

impl Mixture {
    fn one(m: f64) -> Self {
        Mixture {
            parts: [(1.0, m), (0.0, 0.0)],
            len: 1,
        }
    }
    fn two(q: f64, m: f64) -> Self {
        Mixture {
            parts: [(1.0 - q, 0.0), (q, m)],
            len: 2,
        }
    }
    fn parts(&self) -> &[(f64, f64)] {
        &self.parts[..self.len]
    }
    /// `(P(x1 < X ≤ x2), allowance for its absolute round-off)`, `x1 ≤ x2`, from the
    /// tails `sf(|z|)` of both ends for each component (`tails1[i]`, `tails2[i]`, with
    /// `z = (x − m_i)/σ`), each the tail on the side of its own sign.
    fn interval(&self, ends: [(&[f64], f64); 2]) -> (f64, f64) {
        let [(t1, x1), (t2, x2)] = ends;
        let (mut p, mut err) = (0.0, 0.0);
        for (i, &(w, m)) in self.parts().iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            let (a, b) = (t1[i], t2[i]);
            let (v, scale) = if x1 >= m {
                (a - b, a + b)
            } else if x2 <= m {
                (b - a, a + b)
            } else {
                (1.0 - a - b, 1.0 + a + b)
            };
            p += w * v.max(0.0);
            err += w * TAIL_REL * scale;
        }
        (p, err)
    }

    /// `sf(|x − m_i|/σ)` for each component.
    fn tails(&self, sigma: f64, x: f64) -> [f64; 2] {
        let mut out = [0.0; 2];
        for (o, &(_, m)) in out.iter_mut().zip(self.parts()) {
            *o = norm_sf(((x - m) / sigma).abs());
        }
        out
    }
}

impl Mixture {
    /// [`Mixture::tails`], reusing `other_tails` (the tails of `other` at the same `x`) for
    /// every component whose mean is one of `other`'s.
    fn tails_sharing(
        &self,
        sigma: f64,
        x: f64,
        other: &Mixture,
        other_tails: &[f64; 2],
    ) -> [f64; 2] {
        let mut out = [0.0; 2];
        for (o, &(_, m)) in out.iter_mut().zip(self.parts()) {
            *o = match other.parts().iter().position(|&(_, mo)| mo == m) {
                Some(j) => other_tails[j],
                None => norm_sf(((x - m) / sigma).abs()),
            };
        }
        out
    }
}

/// How a mixture pair maps losses to x.
#[derive(Clone, Copy, Debug)]
struct MixturePair {
    sigma: f64,
    p: Mixture,
    q: Mixture,
    /// L increasing in x (else decreasing).
    increasing: bool,
}

/// Masses of one loss bucket `(a, b]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bucket {
    /// `P(L ∈ (a, b])`.
    pub p: f64,
    /// `Q(L ∈ (a, b])`.
    pub q: f64,
    /// Allowance for the absolute round-off of `p` (and of `q`, scaled by `e^{−a}`).
    pub err: f64,
}

impl Loss {
    /// The add direction's pair (the same pair where the two directions agree).
    pub(crate) fn add_direction(self) -> Loss {
        match self {
            Loss::PoissonRemove { sigma, q } => Loss::PoissonAdd { sigma, q },
            other => other,
        }
    }

    fn mixtures(self) -> Option<MixturePair> {
        Some(match self {
            Loss::Gaussian { sigma } => MixturePair {
                sigma,
                p: Mixture::one(0.0),
                q: Mixture::one(1.0),
                increasing: false,
            },
            Loss::Laplace { .. } | Loss::BarkerTest { .. } | Loss::SubstituteMultiple { .. } => {
                return None;
            }
            Loss::PoissonRemove { sigma, q } => MixturePair {
                sigma,
                p: Mixture::two(q, 1.0),
                q: Mixture::one(0.0),
                increasing: true,
            },
            Loss::PoissonAdd { sigma, q } => MixturePair {
                sigma,
                p: Mixture::one(0.0),
                q: Mixture::two(q, 1.0),
                increasing: false,
            },
            Loss::Substitute { sigma, q } => MixturePair {
                sigma,
                p: Mixture::two(q, 1.0),
                q: Mixture::two(q, -1.0),
                increasing: true,
            },
        })
    }

    /// `L(x)` (mixture pairs only).
    fn loss_at(self, x: f64) -> f64 {
        match self {
            Loss::Gaussian { sigma } => (1.0 - 2.0 * x) / (2.0 * sigma * sigma),
            Loss::PoissonRemove { sigma, q } => ln_mix(q, (2.0 * x - 1.0) / (2.0 * sigma * sigma)),
            Loss::PoissonAdd { sigma, q } => -ln_mix(q, (2.0 * x - 1.0) / (2.0 * sigma * sigma)),
            Loss::Substitute { sigma, q } => substitute_loss(sigma, q, x),
            Loss::Laplace { b } => ((x - 1.0).abs() - x.abs()) / b,
            Loss::BarkerTest { .. } | Loss::SubstituteMultiple { .. } => {
                unreachable!("no single mixture form")
            }
        }
    }

    /// The x where the loss crosses `l`: `L > l ⇔ x > x(l)` for increasing losses and
    /// `L > l ⇔ x < x(l)` for decreasing ones (±∞ when every or no x qualifies). `guess` is
    /// a nearby solution (used by the Newton solve of the substitute pair).
    fn x_of(self, l: f64, guess: f64) -> f64 {
        match self {
            Loss::Gaussian { sigma } => 0.5 - sigma * sigma * l,
            Loss::PoissonRemove { sigma, q } => {
                let a = l.exp_m1() + q;
                if a <= 0.0 {
                    f64::NEG_INFINITY
                } else {
                    sigma * sigma * (a / q).ln() + 0.5
                }
            }
            Loss::PoissonAdd { sigma, q } => {
                let a = (-l).exp_m1() + q;
                if a <= 0.0 {
                    f64::NEG_INFINITY
                } else {
                    sigma * sigma * (a / q).ln() + 0.5
                }
            }
            Loss::Substitute { sigma, q } => substitute_inverse(sigma, q, l, guess),
            Loss::Laplace { .. } | Loss::BarkerTest { .. } | Loss::SubstituteMultiple { .. } => {
                unreachable!("no mixture form")
            }
        }
    }

    /// A loss range `[lo, hi]` with `P(L < lo) ≤ tail` and `P(L > hi) ≤ tail` (the natural
    /// bounds where the loss is bounded).
    pub(crate) fn range(self, tail: f64) -> (f64, f64) {
        if let Loss::BarkerTest { n, batch_size } = self {
            let top = super::barker::amplified_range(batch_size as f64, n as f64, tail);
            return (-top, top);
        }
        if let Loss::SubstituteMultiple { sigma, mean } = self {
            // each carried label's range, to its share of the tail (labels too light to
            // matter contribute nothing; the bucket masses still count them)
            let (parts, _) = multiplicity_parts(sigma, mean);
            let share = tail / parts.len() as f64;
            let hi = parts
                .iter()
                .filter(|(w, _)| *w > share)
                .map(|(w, l)| l.range((share / w).min(0.25)).1)
                .fold(0.0_f64, f64::max);
            // below, label 1's range (the heaviest label: weight ≥ 0.58 for a mean ≤ 1): the
            // higher labels' far-left losses, where Q/P = e^{−L} is so large that the buckets'
            // relative round-off would bound every entry's, fall below the lattice and sit on
            // its lowest node (`discretise`: moved up, pessimistic)
            let lo = parts[0].1.range(share / parts[0].0).0.min(0.0);
            return (lo, hi);
        }
        let Some(pair) = self.mixtures() else {
            let Loss::Laplace { b } = self else {
                unreachable!()
            };
            return (-1.0 / b, 1.0 / b);
        };
        let z = normal_quantile_upper(tail / 2.0);
        let means = pair.p.parts().iter().map(|&(_, m)| m);
        let x_lo = means.clone().fold(f64::INFINITY, f64::min) - z * pair.sigma;
        let x_hi = means.fold(f64::NEG_INFINITY, f64::max) + z * pair.sigma;
        let (a, b) = (self.loss_at(x_lo), self.loss_at(x_hi));
        (a.min(b), a.max(b))
    }

    /// Masses of the buckets `(l_0, l_1], (l_1, l_2], …` for the increasing boundaries
    /// `ls` (`ls.len() − 1` buckets; `±∞` allowed at the ends).
    pub(crate) fn buckets(self, ls: &[f64]) -> Vec<Bucket> {
        if let Loss::Laplace { b } = self {
            return ls
                .windows(2)
                .map(|w| laplace_bucket(b, w[0], w[1]))
                .collect();
        }
        if let Loss::SubstituteMultiple { sigma, mean } = self {
            return multiplicity_buckets(sigma, mean, ls);
        }
        let pair = self.mixtures().expect("mixture pair");
        let mut guess = 0.0;
        let xs: Vec<f64> = ls
            .iter()
            .map(|&l| {
                let x = if l == f64::NEG_INFINITY {
                    if pair.increasing {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    }
                } else if l == f64::INFINITY {
                    if pair.increasing {
                        f64::INFINITY
                    } else {
                        f64::NEG_INFINITY
                    }
                } else {
                    self.x_of(l, guess)
                };
                if x.is_finite() {
                    guess = x;
                }
                x
            })
            .collect();
        let tp: Vec<[f64; 2]> = xs.iter().map(|&x| pair.p.tails(pair.sigma, x)).collect();
        // a Q component with the mean of a P component has the same tails: taken over
        let tq: Vec<[f64; 2]> = xs
            .iter()
            .zip(&tp)
            .map(|(&x, tpx)| pair.q.tails_sharing(pair.sigma, x, &pair.p, tpx))
            .collect();
        (0..xs.len() - 1)
            .map(|i| {
                let (i1, i2) = if pair.increasing {
                    (i, i + 1)
                } else {
                    (i + 1, i)
                };
                let (x1, x2) = (xs[i1], xs[i2]);
                if x2 <= x1 {
                    return Bucket {
                        p: 0.0,
                        q: 0.0,
                        err: 0.0,
                    };
                }
                let (p, ep) = pair.p.interval([(&tp[i1], x1), (&tp[i2], x2)]);
                let (q, eq) = pair.q.interval([(&tq[i1], x1), (&tq[i2], x2)]);
                Bucket { p, q, err: ep + eq }
            })
            .collect()
    }
}

/// The labels `m ≥ 1` of `SubstituteMultiple { sigma, mean }` carried exactly, as
/// `(weight, Substitute { σ/m, q })` with weight `Pois(m; mean)/q`, `q = 1 − e^{−mean}`, and an
/// upper bound on the total weight of the labels left out (at most `1e-30`, or what remains
/// after 400 labels).
pub(crate) fn multiplicity_parts(sigma: f64, mean: f64) -> (Vec<(f64, Loss)>, f64) {
    let q = -(-mean).exp_m1();
    // π_1 = mean·e^{−mean}/q, π_{m+1} = π_m·mean/(m+1)
    let mut w = mean * (-mean).exp() / q;
    let mut parts = Vec::new();
    let mut m = 1.0_f64;
    loop {
        parts.push((
            w,
            Loss::Substitute {
                sigma: sigma / m,
                q,
            },
        ));
        let next = w * mean / (m + 1.0);
        // the remaining weights are below a geometric series of ratio mean/(m + 2)
        let ratio = mean / (m + 2.0);
        let rest = if ratio < 1.0 {
            next / (1.0 - ratio)
        } else {
            f64::INFINITY
        };
        if rest <= 1e-30 || parts.len() >= 400 {
            let carried: f64 = parts.iter().map(|p| p.0).sum();
            let rest = rest.min((1.0 - carried).max(0.0) + 1e-15);
            return (parts, rest * (1.0 + 1e-12));
        }
        w = next;
        m += 1.0;
    }
}

/// Bucket masses of `SubstituteMultiple`: the weighted sum of its labels' (a label is public,
/// so the pair's bucket `(a, b]` is the union over labels of that label's bucket), the
/// labels left out at `+∞` under P and counted in Q's loose mass there.
fn multiplicity_buckets(sigma: f64, mean: f64, ls: &[f64]) -> Vec<Bucket> {
    let (parts, rest) = multiplicity_parts(sigma, mean);
    let mut out = vec![
        Bucket {
            p: 0.0,
            q: 0.0,
            err: 0.0,
        };
        ls.len() - 1
    ];
    for (w, loss) in parts {
        for (o, b) in out.iter_mut().zip(loss.buckets(ls)) {
            o.p += w * b.p;
            o.q += w * b.q;
            o.err += w * b.err;
        }
    }
    for o in &mut out {
        // the weighted sums' own round-off
        o.err += 4.0 * f64::EPSILON * (o.p + o.q);
    }
    if let Some(last) = out.last_mut() {
        last.p += rest;
        last.q += rest;
    }
    out
}

/// The Laplace pair P = Lap(0, b), Q = Lap(1, b): `L = (|x−1| − |x|)/b` is `1/b` on x ≤ 0
/// (P-mass ½, Q-mass e^{−1/b}/2), `−1/b` on x ≥ 1 (P-mass e^{−1/b}/2, Q-mass ½) and
/// `(1 − 2x)/b` between.
fn laplace_bucket(b: f64, la: f64, lb: f64) -> Bucket {
    let top = 1.0 / b;
    let e = (-top).exp();
    let (mut p, mut q) = (0.0, 0.0);
    if la < top && top <= lb {
        p += 0.5;
        q += 0.5 * e;
    }
    if la < -top && -top <= lb {
        p += 0.5 * e;
        q += 0.5;
    }
    // continuous part: L ∈ (la, lb] ∩ (−1/b, 1/b) ⇔ x ∈ [x(lb), x(la)), x(l) = (1 − b·l)/2
    let (l1, l2) = (la.max(-top), lb.min(top));
    if l1 < l2 {
        let (x1, x2) = (
            (0.5 * (1.0 - b * l2)).max(0.0),
            (0.5 * (1.0 - b * l1)).min(1.0),
        );
        if x1 < x2 {
            // P density e^{−x/b}/(2b) on x > 0, Q density e^{−(1−x)/b}/(2b) on x < 1
            p += 0.5 * ((-x1 / b).exp() - (-x2 / b).exp());
            q += 0.5 * ((-(1.0 - x2) / b).exp() - (-(1.0 - x1) / b).exp());
        }
    }
    Bucket {
        p,
        q,
        err: 8.0 * f64::EPSILON * (p + q + 1e-300),
    }
}

/// `L(x)` of the substitute pair, increasing in x.
fn substitute_loss(sigma: f64, q: f64, x: f64) -> f64 {
    let s2 = 2.0 * sigma * sigma;
    ln_mix(q, (2.0 * x - 1.0) / s2) - ln_mix(q, (-2.0 * x - 1.0) / s2)
}

/// `dL/dx` of the substitute pair.
fn substitute_slope(sigma: f64, q: f64, x: f64) -> f64 {
    let s2 = 2.0 * sigma * sigma;
    let share = |u: f64| (u + q.ln() - ln_mix(q, u)).exp(); // q·e^u / (1 − q + q·e^u)
    (share((2.0 * x - 1.0) / s2) + share((-2.0 * x - 1.0) / s2)) * 2.0 / s2
}

/// The x with `L(x) = l` for the substitute pair: in closed form
/// ([`substitute_inverse_closed`]) where its intermediate values are representable, else by a
/// safeguarded Newton solve from `guess`.
fn substitute_inverse(sigma: f64, q: f64, l: f64, guess: f64) -> f64 {
    substitute_inverse_closed(sigma, q, l).unwrap_or_else(|| substitute_newton(sigma, q, l, guess))
}

/// The substitute pair's inverse loss in closed form. With `t = e^{x/σ²}`, `c = e^{−1/(2σ²)}`
/// and `E = e^l`, `L(x) = l` reads `(1 − q) + qct = E((1 − q) + qc/t)`, the quadratic
/// `qc·t² + (1 − q)(1 − E)·t − Eqc = 0`, whose positive root is taken in the form without
/// cancellation (`(√D − B)/(2qc)` for `B = (1 − q)(1 − E) ≤ 0`, else `2Eqc/(B + √D)`), and
/// `x = σ² ln t`: a few rounding errors, where the Newton solve stops at `1e-15·(1 + |x|)`
/// after about five evaluations of the loss and its slope. `None` where `c` underflows
/// (σ < 0.027), `E` overflows, or the root is not a positive finite number.
fn substitute_inverse_closed(sigma: f64, q: f64, l: f64) -> Option<f64> {
    let s2 = 2.0 * sigma * sigma;
    let a = q * (-1.0 / s2).exp();
    let (e, b) = (l.exp(), -(1.0 - q) * l.exp_m1());
    // √(B² + 4q²c²E), without squaring B (which overflows for large losses)
    let disc = if b == 0.0 {
        2.0 * a * e.sqrt()
    } else {
        b.abs() * (1.0 + (2.0 * a / b).powi(2) * e).sqrt()
    };
    let t = if b <= 0.0 {
        (disc - b) / (2.0 * a)
    } else {
        2.0 * a * e / (b + disc)
    };
    (a > 0.0 && disc.is_finite() && t > 0.0 && t.is_finite()).then(|| sigma * sigma * t.ln())
}

/// The x with `L(x) = l` for the substitute pair: safeguarded Newton from `guess`.
fn substitute_newton(sigma: f64, q: f64, l: f64, guess: f64) -> f64 {
    let f = |x: f64| substitute_loss(sigma, q, x) - l;
    // bracket
    let (mut lo, mut hi) = (guess - 1.0, guess + 1.0);
    let mut step = 1.0;
    while f(lo) > 0.0 {
        step *= 2.0;
        lo -= step;
        if step > 1e12 {
            return f64::NEG_INFINITY;
        }
    }
    step = 1.0;
    while f(hi) <= 0.0 {
        step *= 2.0;
        hi += step;
        if step > 1e12 {
            return f64::INFINITY;
        }
    }
    let mut x = guess.clamp(lo, hi);
    for _ in 0..200 {
        let fx = f(x);
        if fx > 0.0 {
            hi = x;
        } else {
            lo = x;
        }
        let slope = substitute_slope(sigma, q, x);
        let mut next = x - fx / slope;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 1e-15 * (1.0 + x.abs()) || hi - lo <= 1e-15 * (1.0 + x.abs()) {
            return next;
        }
        x = next;
    }
    x
}

/// `z` with `P(N(0,1) > z) = p` (0 < p < 0.5), by bisection on the accurate tail.
fn normal_quantile_upper(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if norm_sf(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> [Loss; 6] {
        [
            Loss::SubstituteMultiple {
                sigma: 1.2,
                mean: 0.05,
            },
            Loss::Gaussian { sigma: 0.7 },
            Loss::Laplace { b: 1.3 },
            Loss::PoissonRemove {
                sigma: 1.0,
                q: 0.01,
            },
            Loss::PoissonAdd {
                sigma: 1.0,
                q: 0.01,
            },
            Loss::Substitute {
                sigma: 1.0,
                q: 0.01,
            },
        ]
    }

    /// The buckets of a partition of the line carry all of P and all of Q (Q may put mass
    /// where P has none only at L = −∞, which none of these pairs has), and each bucket's
    /// `E_P[e^{−L}]` lies in `[e^{−b}, e^{−a}]`.
    #[test]
    fn buckets_partition_both_measures() {
        for m in models() {
            let (lo, hi) = m.range(1e-20);
            let mut ls = vec![f64::NEG_INFINITY];
            let n = 400;
            for i in 0..=n {
                ls.push(lo + (hi - lo) * i as f64 / n as f64);
            }
            ls.push(f64::INFINITY);
            let bs = m.buckets(&ls);
            let (p, q): (f64, f64) = bs.iter().fold((0.0, 0.0), |a, b| (a.0 + b.p, a.1 + b.q));
            assert!((p - 1.0).abs() < 1e-12, "{m:?}: P total {p}");
            assert!((q - 1.0).abs() < 1e-12, "{m:?}: Q total {q}");
            for (i, b) in bs.iter().enumerate().skip(1).take(n) {
                if b.p > 1e-12 {
                    let r = b.q / b.p;
                    let (a, c) = (ls[i], ls[i + 1]);
                    assert!(
                        r <= (-a).exp() * (1.0 + 1e-9) && r >= (-c).exp() * (1.0 - 1e-9),
                        "{m:?} bucket ({a}, {c}]: Q/P = {r}"
                    );
                }
            }
        }
    }

    /// The multiplicity labels carry the zero-truncated Poisson law: weights sum to 1 within
    /// the bound on what is left out, each is `Pois(m)/q`, and a tiny mean is almost all
    /// label 1.
    #[test]
    fn multiplicity_labels_are_the_truncated_poisson() {
        for mean in [1e-6, 0.01, 0.3, 2.0, 20.0] {
            let (parts, rest) = multiplicity_parts(1.0, mean);
            let total: f64 = parts.iter().map(|p| p.0).sum();
            assert!(
                rest <= 1e-12 && (total - 1.0).abs() <= 1e-12 + rest,
                "{mean}: {total} {rest}"
            );
            let q = -(-mean).exp_m1();
            for (i, (w, l)) in parts.iter().enumerate() {
                let m = (i + 1) as f64;
                let ln_pois = -mean + m * mean.ln() - libm::lgamma(m + 1.0);
                assert!(
                    (w / (ln_pois.exp() / q) - 1.0).abs() < 1e-9,
                    "{mean} label {m}"
                );
                assert_eq!(*l, Loss::Substitute { sigma: 1.0 / m, q });
            }
        }
        assert!(multiplicity_parts(1.0, 1e-6).0[0].0 > 1.0 - 1e-6);
    }

    /// The substitute pair's inverse solves `L(x) = l`.
    #[test]
    fn substitute_inverse_solves() {
        for l in [-3.0, -0.2, -1e-4, 0.0, 1e-4, 0.5, 4.0] {
            let x = substitute_inverse(0.9, 0.02, l, 0.0);
            assert!((substitute_loss(0.9, 0.02, x) - l).abs() < 1e-12, "{l}");
        }
    }

    /// The closed form solves `L(x) = l` at least as well as the Newton solve does (measured in
    /// the loss, which is what a bucket boundary must match: where the loss is flat, far in a
    /// tail, the Newton solve stops early in x), over the noise and sampling rates the
    /// accountants see and losses across both tails; it declines where `e^{−1/(2σ²)}`
    /// underflows, and the Newton solve answers there.
    #[test]
    fn substitute_closed_form_agrees_with_newton() {
        let mut compared = 0;
        for sigma in [0.05, 0.3, 0.8, 1.0, 2.6, 10.0, 40.0] {
            for q in [1e-6, 1e-3, 0.01, 0.2, 0.5, 0.9, 0.999] {
                let (lo, hi) = Loss::Substitute { sigma, q }.range(1e-30);
                for i in 0..=200 {
                    let l = lo + (hi - lo) * i as f64 / 200.0;
                    let Some(x) = substitute_inverse_closed(sigma, q, l) else {
                        panic!("σ {sigma}, q {q}, l {l}: no closed form")
                    };
                    let newton = substitute_newton(sigma, q, l, 0.0);
                    let residual = |x: f64| (substitute_loss(sigma, q, x) - l).abs();
                    let allowed = (2.0 * residual(newton)).max(1e-14 * (1.0 + l.abs()));
                    assert!(
                        residual(x) <= allowed,
                        "σ {sigma}, q {q}, l {l}: x {x} (residual {}) vs Newton {newton} ({})",
                        residual(x),
                        residual(newton)
                    );
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 7 * 7 * 201);
        assert_eq!(substitute_inverse_closed(0.02, 0.01, 0.5), None);
        let x = substitute_inverse(0.02, 0.01, 0.5, 0.0);
        assert!((substitute_loss(0.02, 0.01, x) - 0.5).abs() < 1e-9);
    }
}
#[cfg(test)]
mod multiplicity_tests {
    use super::*;
    use crate::accounting::certified::engine::discretise::discretise;

    /// The labelled mixture's discretisation is the label-weighted sum of its labels' (a loss
    /// bucket of the labelled pair is the union of the labels' buckets): its `δ(ε)` equals the
    /// weighted labels' to 1e-6 relative (the labels beyond the sixth weigh < 1e-8 here, and
    /// the connect-the-dots split of a summed bucket differs from the sum of splits only within
    /// the bucket), at two steps. Exact value at σ = 1.5, mean 0.2, ε = 2: 3.6013e-4 (also from
    /// a direct quadrature of the labels' hockey-stick divergences: trapezoidal rule, 20 001 nodes
    /// over ±(12σ/m + 1.5), Python standard library, during development).
    #[test]
    fn the_mixture_discretises_as_its_weighted_labels() {
        let (sigma, mean) = (1.5, 0.2);
        let mix = Loss::SubstituteMultiple { sigma, mean };
        let (parts, rest) = multiplicity_parts(sigma, mean);
        assert!(rest < 1e-29);
        for h in [0.1, 0.02] {
            let d = discretise(mix, h, 1e-25, 1 << 24).unwrap();
            let total: f64 = d.pess.iter().sum::<f64>() + d.pess_inf;
            assert!((total - 1.0).abs() < 1e-12);
            for eps in [0.5, 2.0, 4.0] {
                let want: f64 = parts
                    .iter()
                    .map(|(w, l)| w * discretise(*l, h, 1e-25, 1 << 24).unwrap().pess_delta(eps))
                    .sum();
                let got = d.pess_delta(eps);
                assert!(
                    (got / want - 1.0).abs() < 1e-6,
                    "h {h}, ε {eps}: {got} vs {want}"
                );
            }
            assert!((d.pess_delta(2.0) / 3.6013e-4 - 1.0).abs() < 1e-3);
        }
    }

    /// The accountant's certified interval for one such step contains the exact value and is
    /// as narrow as its tolerance (a range reaching the high labels' far-left losses once made
    /// every entry's relative round-off 19 and the interval [0, 7.2e-3]).
    #[test]
    fn the_mixture_interval_contains_the_exact_value() {
        use crate::accounting::{Accountant, CertifiedPld, PrivacyEvent};
        let mut acc = CertifiedPld::new();
        acc.compose(&PrivacyEvent::gaussian(1.5).poisson_multiplicity(0.2))
            .unwrap();
        let iv = acc.delta_interval(2.0).unwrap();
        assert!(iv.lower <= 3.6013e-4 && 3.6013e-4 <= iv.upper, "{iv:?}");
        assert!(iv.upper - iv.lower <= 2e-3 * iv.upper, "{iv:?}");
    }
}
