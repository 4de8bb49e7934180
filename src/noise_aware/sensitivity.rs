//! Substitution sensitivities of the logistic and Poisson releases, computed over the rows the
//! declared bounds allow with the response's dependence on the linear predictor kept.
//!
//! A row `(v, y)` contributes the score `r·v` and the information `w·v vᵀ`, where the residual
//! `r` lies between two functions of `η = θᵀv` alone (logistic: `−σ(η)` and `1 − σ(η)`;
//! Poisson with cap `K`: `max(−e^η, −K)` and `clamp(K − e^η, −K, K)`, both non-increasing) and
//! the weight `w(η)` is a function of `η` too. Bounding `|r|` and `w` by their worst case over the
//! whole box and `‖Av‖` by its own worst case separately ([`separate_bounds`]) ignores that the
//! row with the largest shaped norm usually has a residual far from its worst. Here the two are
//! kept together:
//!
//! - **Score**: the sensitivity is the diameter of the set `S = {r·Av}` over the allowed rows.
//!   For a fixed other point, `‖r·Av − s‖` is convex in `r` (so `r` is at one of its two
//!   limits) and, on a slice `η = t` where that limit is constant, convex in `v` (so `v` is at a
//!   vertex of the slice, which lies on an edge of the allowed polytope). The diameter is
//!   therefore attained on the polytope's edges, where `S` is two curves per edge (one per
//!   limit). Points are taken on each curve until it lies within `δ` of the chords between them
//!   (a bound from the residual's slope range and the affine `Av`), so `S` lies within `δ` of
//!   the points' convex hull and `diam S ≤ diam(points) + 2δ`, `δ` at most [`SAG`] of the
//!   largest vertex point `‖r·Av‖`; the points' diameter is exact (pairs pruned by their distance from a
//!   centre).
//! - **Information**: `max w(η)‖Bv‖²` over the allowed rows; on a slice `η = t` it is convex in
//!   `v`, so the maximum is on an edge; each edge is cut into pieces bounded by the largest
//!   weight over the piece's `η` range times the larger end's `‖Bv‖²` (convex along the piece),
//!   halved until within [`REL_TOL`] of the largest value found.
//!
//! Both are sound upper bounds (rounded up) and need the polytope's vertices
//! ([`GlmData::vertices`]) and edges; the releases take the smaller of each and the separate
//! worst case (which is also what they use without vertices).
use nalgebra::DMatrix;

use super::data::GlmData;
use super::link::GlmKind;
use super::link::Link;

/// Relative gap allowed between the information bound and the largest value found.
const REL_TOL: f64 = 1e-3;

/// The score curves are followed until each lies within this share of the largest vertex
/// point `‖r·Av‖` of the chords between the points taken on it.
const SAG: f64 = 4e-3;

/// Points taken on one edge's curve at most (a power of two).
const MAX_PIECES: usize = 256;

/// Upper limit on `|Δη|` of an edge piece of the information bound before it is searched.
const ETA_STEP: f64 = 0.5;

/// Halvings of one piece before its bound is accepted as it is (sound, only looser).
const MAX_DEPTH: u32 = 30;

/// Relative margin for floating-point rounding of the computed bound.
const ROUND_UP: f64 = 1e-9;

/// The residual's limits, the information weight and the residual's slope range: the
/// [`Link`]'s one formula for rows and bounds.
struct Residual {
    link: Link,
}

impl Residual {
    fn limit(&self, eta: f64, upper: bool) -> f64 {
        self.link.residual_limit(eta, upper)
    }

    /// The largest weight over `η` between `e0` and `e1`.
    fn max_weight(&self, e0: f64, e1: f64) -> f64 {
        self.link.max_weight(e0, e1)
    }

    /// Bounds `[s_min, s_max]` on the slope `dr/dη` of either residual limit for `η` between
    /// `e0` and `e1` (the same for both limits of the logistic residual: `−σ(1 − σ)`; Poisson:
    /// `−e^η`, or 0 where a cap holds the limit).
    fn slope_range(&self, e0: f64, e1: f64) -> (f64, f64) {
        let (lo, hi) = (e0.min(e1), e0.max(e1));
        match self.link.kind {
            GlmKind::Logistic => {
                let w_max = self.max_weight(lo, hi);
                let w_min = self.weight(lo).min(self.weight(hi));
                (-w_max, -w_min)
            }
            _ => {
                let k = self.link.cap;
                let (mu_lo, mu_hi) = (lo.exp(), hi.exp());
                let s_max = if mu_hi < k { -mu_lo } else { 0.0 };
                (-(mu_hi.min(2.0 * k)), s_max)
            }
        }
    }

    fn weight(&self, eta: f64) -> f64 {
        self.link.weight(eta)
    }
}

/// The allowed polytope's vertices mapped by a matrix, with their linear predictors.
struct Mapped {
    d: usize,
    /// `M v` per vertex, row-major (`d` per vertex).
    mv: Vec<f64>,
    eta: Vec<f64>,
}

impl Mapped {
    fn new(data: &GlmData, theta: &[f64], m: &DMatrix<f64>, vertices: &[f64]) -> Self {
        let (p, d) = (data.p, m.nrows());
        let count = vertices.len() / p;
        let mut mv = vec![0.0; count * d];
        let mut eta = vec![0.0; count];
        for ((v, out), e) in vertices
            .chunks_exact(p)
            .zip(mv.chunks_exact_mut(d))
            .zip(eta.iter_mut())
        {
            for (i, &vi) in v.iter().enumerate() {
                if vi != 0.0 {
                    for (r, o) in out.iter_mut().enumerate() {
                        *o += m[(r, i)] * vi;
                    }
                    *e += theta[i] * vi;
                }
            }
        }
        Mapped { d, mv, eta }
    }

    /// `M v(t)` and `η(t)` at `t` along the edge from vertex `a` to vertex `b`.
    fn at(&self, [a, b]: [u32; 2], t: f64, out: &mut [f64]) -> f64 {
        let (a, b, d) = (a as usize, b as usize, self.d);
        let (va, vb) = (&self.mv[a * d..(a + 1) * d], &self.mv[b * d..(b + 1) * d]);
        for ((o, x), y) in out.iter_mut().zip(va).zip(vb) {
            *o = x + t * (y - x);
        }
        self.eta[a] + t * (self.eta[b] - self.eta[a])
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// The number of pieces an edge starts as: `|Δη|` at most [`ETA_STEP`] each.
fn pieces_of(eta_a: f64, eta_b: f64) -> usize {
    let span = (eta_b - eta_a).abs() / ETA_STEP;
    if span.is_finite() {
        (span.ceil() as usize).clamp(1, 64)
    } else {
        64
    }
}

/// A sound bound on how far the score curve `r(η(t))·Mv(t)` strays from its chord over the
/// piece `t ∈ [t0, t1]` of an edge: `|r − r̂|·max‖Mv‖ + |Δr|·‖ΔMv‖/4`, where `r̂` is the residual's
/// own chord, `|r − r̂| ≤ (s_max − s_min)·|Δη|/4` for slopes `r'` in `[s_min, s_max]`, and the
/// second term is the product of two affine interpolations against the chord of the product.
/// `w0` and `w1` are scratch space of `map.d` values.
#[allow(clippy::too_many_arguments)]
fn sag(
    map: &Mapped,
    res: &Residual,
    edge: [u32; 2],
    upper: bool,
    t0: f64,
    t1: f64,
    w0: &mut [f64],
    w1: &mut [f64],
) -> f64 {
    let (e0, e1) = (map.at(edge, t0, w0), map.at(edge, t1, w1));
    let (c0, c1) = (res.limit(e0, upper), res.limit(e1, upper));
    let (s_min, s_max) = res.slope_range(e0, e1);
    let dev = (s_max - s_min) * (e1 - e0).abs() / 4.0;
    dev * norm(w0).max(norm(w1)) + 0.25 * (c1 - c0).abs() * dist(w0, w1)
}

/// The substitution sensitivity of the score release `A Σ_j g_j(θ)` (logistic or Poisson):
/// the diameter of `{r·Av}` over the allowed rows, bounded from above (see the module docs):
/// points on every edge's two residual curves, dense enough that each curve lies within `δ` of
/// the chords between them, give `diam ≤ diam(points) + 2δ`. `None` for a linear model or when
/// the vertices are not enumerated.
pub(crate) fn score_sensitivity(data: &GlmData, theta: &[f64], a: &DMatrix<f64>) -> Option<f64> {
    let res = residual(data)?;
    let (vertices, edges) = (data.vertices()?, data.edges()?);
    let map = Mapped::new(data, theta, a, vertices);
    let d = map.d;
    let mut points = Vec::with_capacity(2 * map.eta.len() * d);
    for (v, &eta) in map.mv.chunks_exact(d).zip(&map.eta) {
        for upper in [false, true] {
            let c = res.limit(eta, upper);
            points.extend(v.iter().map(|x| c * x));
        }
    }
    // the score set's own scale: the largest vertex point
    let scale = points.chunks_exact(d).map(norm).fold(0.0f64, f64::max);
    let target = SAG * scale;
    // the vertices' best pair and its centre `o`: a curve none of whose points can be farther
    // from `o` than `best − R` (`R` the largest reach from `o` of any point of the set) cannot
    // hold a point of a longer pair, so it need not be sampled
    let count = points.len() / d;
    let (best, centre) = best_pair(&points, d, count);
    let reach = |x: &[f64]| dist(x, &centre);
    let (mut w, mut w1) = (vec![0.0; d], vec![0.0; d]);
    // per curve (edge, upper): its whole-chord sag and its endpoints' largest reach
    let curves: Vec<([u32; 2], bool, f64, f64)> = edges
        .iter()
        .flat_map(|&edge| [(edge, false), (edge, true)])
        .map(|(edge, upper)| {
            let sag1 = sag(&map, &res, edge, upper, 0.0, 1.0, &mut w, &mut w1);
            let end = |v: u32| 2 * v as usize + usize::from(upper);
            let ends = reach(&points[end(edge[0]) * d..(end(edge[0]) + 1) * d])
                .max(reach(&points[end(edge[1]) * d..(end(edge[1]) + 1) * d]));
            (edge, upper, sag1, ends + sag1)
        })
        .collect();
    let vertex_reach = points.chunks_exact(d).map(reach).fold(0.0f64, f64::max);
    let most = curves.iter().map(|c| c.3).fold(vertex_reach, f64::max);
    let mut delta = 0.0f64;
    for &(edge, upper, sag1, curve_reach) in &curves {
        if curve_reach + most <= best {
            continue;
        }
        let mut m = 1usize;
        let mut worst = sag1;
        while worst > target && m < MAX_PIECES {
            m *= 2;
            worst = (0..m)
                .map(|k| {
                    let (t0, t1) = (k as f64 / m as f64, (k + 1) as f64 / m as f64);
                    sag(&map, &res, edge, upper, t0, t1, &mut w, &mut w1)
                })
                .fold(0.0f64, f64::max);
        }
        delta = delta.max(worst);
        for k in 1..m {
            let eta = map.at(edge, k as f64 / m as f64, &mut w);
            let c = res.limit(eta, upper);
            points.extend(w.iter().map(|x| c * x));
        }
    }
    let bound = (diameter(&points, d, best, &centre) + 2.0 * delta) * (1.0 + ROUND_UP);
    bound.is_finite().then_some(bound)
}

/// The largest distance between two of the first `first` points (`d` coordinates each) and
/// the middle of that pair.
fn best_pair(points: &[f64], d: usize, first: usize) -> (f64, Vec<f64>) {
    let (mut best, mut pair) = (0.0f64, (0, 0));
    for (i, x) in points[..first * d].chunks_exact(d).enumerate() {
        for (j, y) in points[..i * d].chunks_exact(d).enumerate() {
            let s: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
            if s > best {
                (best, pair) = (s, (i, j));
            }
        }
    }
    let centre = (0..d)
        .map(|k| 0.5 * (points[pair.0 * d + k] + points[pair.1 * d + k]))
        .collect();
    (best.sqrt(), centre)
}

/// The largest distance between two of `points` (`d` coordinates each), exactly: from a first
/// answer `best` (the vertices' best pair, [`best_pair`], with its middle `centre`), every
/// pair that could beat it, pruned by each point's distance from `centre`.
fn diameter(points: &[f64], d: usize, mut best: f64, centre: &[f64]) -> f64 {
    // ‖x − y‖ ≤ ‖x − o‖ + ‖y − o‖: only pairs whose reaches sum past `best` can beat it
    let mut reach: Vec<(f64, usize)> = points
        .chunks_exact(d)
        .enumerate()
        .map(|(i, x)| (dist(x, centre), i))
        .collect();
    reach.sort_by(|a, b| b.0.total_cmp(&a.0));
    // the points in that order, one column per coordinate, so that the distances from one
    // point to a prefix of the others are computed a column at a time (vectorised)
    let n = reach.len();
    let cols: Vec<Vec<f64>> = (0..d)
        .map(|k| reach.iter().map(|&(_, i)| points[i * d + k]).collect())
        .collect();
    let mut acc = vec![0.0; n];
    for oi in 0..n {
        let ri = reach[oi].0;
        if ri + reach[0].0 <= best {
            break;
        }
        // the earlier points that could still beat `best` form a prefix
        let len = reach[..oi].partition_point(|&(rj, _)| ri + rj > best);
        if len == 0 {
            continue;
        }
        let acc = &mut acc[..len];
        acc.iter_mut().for_each(|a| *a = 0.0);
        for col in &cols {
            let x = col[oi];
            for (a, y) in acc.iter_mut().zip(&col[..len]) {
                let t = x - y;
                *a += t * t;
            }
        }
        let far = acc.iter().copied().fold(0.0f64, f64::max);
        if far > best * best {
            best = far.sqrt();
        }
    }
    best
}

/// `max ‖B I_j(θ) Bᵀ‖_F = max w(η)‖Bv‖²` over the allowed rows (logistic or Poisson),
/// certified from above (see the module docs). `None` for a linear model or when the vertices
/// are not enumerated.
pub(crate) fn information_bound(data: &GlmData, theta: &[f64], b: &DMatrix<f64>) -> Option<f64> {
    let res = residual(data)?;
    let (vertices, edges) = (data.vertices()?, data.edges()?);
    let map = Mapped::new(data, theta, b, vertices);
    let mut found = map
        .mv
        .chunks_exact(map.d)
        .zip(&map.eta)
        .map(|(v, &eta)| res.weight(eta) * norm(v).powi(2))
        .fold(0.0f64, f64::max);
    let mut accepted = 0.0f64;
    let (mut w0, mut w1) = (vec![0.0; map.d], vec![0.0; map.d]);
    let mut stack = Vec::new();
    for &edge in edges {
        let m = pieces_of(map.eta[edge[0] as usize], map.eta[edge[1] as usize]);
        stack.extend((0..m).map(|k| (k as f64 / m as f64, (k + 1) as f64 / m as f64, 0u32)));
        while let Some((t0, t1, depth)) = stack.pop() {
            let e0 = map.at(edge, t0, &mut w0);
            let e1 = map.at(edge, t1, &mut w1);
            // ‖Bv‖² is convex along the piece: largest at an end
            let bound = res.max_weight(e0, e1) * norm(&w0).max(norm(&w1)).powi(2);
            found = found
                .max(res.weight(e0) * norm(&w0).powi(2))
                .max(res.weight(e1) * norm(&w1).powi(2));
            if bound <= found * (1.0 + REL_TOL) {
                continue;
            }
            if depth >= MAX_DEPTH {
                accepted = accepted.max(bound);
                continue;
            }
            let mid = 0.5 * (t0 + t1);
            stack.push((t0, mid, depth + 1));
            stack.push((mid, t1, depth + 1));
        }
    }
    let bound = (found * (1.0 + REL_TOL)).max(accepted) * (1.0 + ROUND_UP);
    bound.is_finite().then_some(bound)
}

fn residual(data: &GlmData) -> Option<Residual> {
    data.link().map(|link| Residual { link })
}

/// The separate worst cases: sound bounds, over every row the declared bounds allow, of `‖A g_j(θ)‖` (the score
/// shaped by `a`) and of `‖B I_j(θ) Bᵀ‖_F` (the information shaped by `b`), and the factor
/// that turns the latter into the substitution sensitivity (`√2` for rank-one PSD terms,
/// 2 otherwise).
pub(crate) fn separate_bounds(
    data: &GlmData,
    theta: &[f64],
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
) -> (f64, f64, f64) {
    let up = 1.0 + 1e-12;
    let (eta_lo, eta_hi) = data.eta_range(&theta[..data.p]);
    match data.kind {
        GlmKind::Logistic => {
            // |y − σ(η)| ≤ max(σ(η), σ(−η)) = σ(|η|), largest at the η farthest from 0;
            // the weight is largest at the η of the range closest to 0 (the link's one
            // formula, accurate in both tails)
            let far = eta_lo.abs().max(eta_hi.abs());
            let r = super::link::sigmoid(far).min(1.0);
            let w = data.link().map_or(0.25, |l| l.max_weight(eta_lo, eta_hi));
            let nb = data.max_shaped_norm(b);
            (
                r * data.max_shaped_norm(a) * up,
                w * nb * nb * up,
                std::f64::consts::SQRT_2,
            )
        }
        GlmKind::Poisson => {
            let k = data.cap();
            let w = data.link().map_or(k, |l| l.max_weight(eta_lo, eta_hi));
            let nb = data.max_shaped_norm(b);
            (
                k * data.max_shaped_norm(a) * up,
                w * nb * nb * up,
                std::f64::consts::SQRT_2,
            )
        }
        GlmKind::Linear => {
            let p = data.p;
            let e = (-2.0 * theta[p]).exp();
            let r = (data.y_hi - eta_lo).abs().max((data.y_lo - eta_hi).abs());
            let a_beta = a.columns(0, p).into_owned();
            let a_s = a.column(p).norm();
            let ga = r * e * data.max_shaped_norm(&a_beta) + (r * r * e - 1.0).abs().max(1.0) * a_s;
            let b_beta = b.columns(0, p).into_owned();
            let b_s = b.column(p).norm();
            let ba = data.max_shaped_norm(&b_beta) + 2.0 * r * b_s;
            let hb = e * ba * ba + 2.0 * r * r * e * b_s * b_s;
            (ga * up, hb * up, 2.0)
        }
    }
}

// A linear model's releases (`linear.rs`): `svec(XᵀX)`, `A Xᵀy` and `yᵀy`.

/// Rounding up of a linear model's computed sensitivities (a factor).
const LINEAR_ROUND_UP: f64 = 1.0 + 1e-12;

/// The extremes of `y²` over the declared response range (internal coordinates).
fn y_squared_range(data: &GlmData) -> (f64, f64) {
    let (yl, yh) = (data.y_lo, data.y_hi);
    let y_min = if yl <= 0.0 && yh >= 0.0 {
        0.0
    } else {
        (yl * yl).min(yh * yh)
    };
    (y_min, (yl * yl).max(yh * yh))
}

/// The substitution sensitivities of `svec(XᵀX)` and `yᵀy` over the declared box (internal
/// coordinates): `√(2 max‖x‖⁴ − 2 max(0, min xᵀx')²)` and `max y² − min y²`, rounded up.
pub(crate) fn moment_sensitivities(data: &GlmData) -> [f64; 2] {
    let (mut big, mut small) = (0.0, 0.0);
    for a in 0..data.p {
        let (l, h) = (data.lo[a], data.hi[a]);
        big += (l * l).max(h * h);
        small += (l * h).min(l * l).min(h * h);
    }
    let small: f64 = f64::max(small, 0.0);
    let (y_min, y_max) = y_squared_range(data);
    [
        (2.0 * big * big - 2.0 * small * small).max(0.0).sqrt() * LINEAR_ROUND_UP,
        (y_max - y_min) * LINEAR_ROUND_UP,
    ]
}

/// The substitution sensitivity of `A Xᵀy` over the declared box (internal coordinates):
/// `2 max‖Ax‖ max|y|`, the maximum over the allowed polytope, rounded up.
pub(crate) fn xty_sensitivity(data: &GlmData, a: &DMatrix<f64>) -> f64 {
    let (_, y_max) = y_squared_range(data);
    2.0 * data.max_shaped_norm(a) * y_max.sqrt() * LINEAR_ROUND_UP
}

/// The substitution sensitivity of `svec(B XᵀX Bᵀ)` over the declared box (internal
/// coordinates): `‖Bxxᵀ Bᵀ − Bx'x'ᵀBᵀ‖_F² = ‖Bx‖⁴ + ‖Bx'‖⁴ − 2((Bx)ᵀBx')² ≤ 2 max‖Bx‖⁴`, so
/// `√2 max‖Bx‖²`, the maximum over the allowed polytope, rounded up.
pub(crate) fn whitened_xtx_sensitivity(data: &GlmData, b: &DMatrix<f64>) -> f64 {
    let m = data.max_shaped_norm(b);
    std::f64::consts::SQRT_2 * m * m * LINEAR_ROUND_UP
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    /// Three free covariates (one on [−1, 2]) and, optionally, a one-hot pair among them.
    fn data(kind: GlmKind, one_hot: bool) -> GlmData {
        let x = vec![
            1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 0.0, -1.0, 1.0, 0.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0,
        ];
        let y = match kind {
            GlmKind::Logistic => vec![0.0, 1.0, 1.0, 0.0],
            _ => vec![0.0, 3.0, 7.0, 1.0],
        };
        let names = (0..4).map(|i| format!("t{i}")).collect();
        let bounds = vec![(1.0, 1.0), (0.0, 1.0), (0.0, 1.0), (-1.0, 2.0)];
        let y_bounds = if kind == GlmKind::Logistic {
            (0.0, 1.0)
        } else {
            (0.0, 8.0)
        };
        let data = GlmData::new(kind, x, y, bounds, y_bounds, 10.0, names).unwrap();
        if one_hot {
            data.one_hot(&["t1", "t2"]).unwrap()
        } else {
            data
        }
    }

    /// One row's score and information at `theta`, in the internal coordinates.
    fn row_terms(base: &GlmData, x: &[f64], y: f64, theta: &[f64]) -> (Vec<f64>, DMatrix<f64>) {
        let one = base.with_one_row(x, y);
        let d = base.dim();
        let (mut g, mut h) = (vec![0.0; d], DMatrix::zeros(d, d));
        one.sums(theta, &mut g, &mut h);
        (g, h)
    }

    /// A random allowed row: on an edge of the box half of the time (where the worst cases
    /// are), anywhere in it otherwise; the one-hot pair never both non-zero.
    fn random_row(rng: &mut crate::rng::ChainRng, one_hot: bool) -> Vec<f64> {
        let mut x = [
            1.0,
            f64::from(rng.random_range(0..2u8)),
            f64::from(rng.random_range(0..2u8)),
            [-1.0, 2.0][rng.random_range(0..2usize)],
        ];
        if rng.random_range(0..2u8) == 0 {
            let k = rng.random_range(1..4usize);
            x[k] = if k == 3 {
                rng.random_range(-1.0..=2.0)
            } else {
                rng.random_range(0.0..=1.0)
            };
        } else {
            x[1] = rng.random_range(0.0..=1.0);
            x[2] = rng.random_range(0.0..=1.0);
            x[3] = rng.random_range(-1.0..=2.0);
        }
        if one_hot && x[1] != 0.0 && x[2] != 0.0 {
            x[2] = 0.0;
        }
        x.to_vec()
    }

    fn random_response(rng: &mut crate::rng::ChainRng, kind: GlmKind) -> f64 {
        match kind {
            GlmKind::Logistic => f64::from(rng.random_range(0..2u8)),
            _ => f64::from(rng.random_range(0..=8u8)),
        }
    }

    /// No substitution of one allowed row for another moves the shaped score or information
    /// sum by more than the bounds, for random θ and shapes; and the bounds are tighter than
    /// the separate worst cases when the residual and the norm peak at different rows.
    #[test]
    fn bounds_cover_every_substitution() {
        let mut rng = crate::rng::chain_rng(11, 0);
        for kind in [GlmKind::Logistic, GlmKind::Poisson] {
            for one_hot in [false, true] {
                let base = data(kind, one_hot);
                let d = base.dim();
                for _ in 0..40 {
                    let theta: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
                    let a = DMatrix::from_fn(d, d, |_, _| rng.random_range(-1.0..1.0));
                    let b = DMatrix::from_fn(d, d, |_, _| rng.random_range(-1.0..1.0));
                    let score = score_sensitivity(&base, &theta, &a).unwrap();
                    let info = information_bound(&base, &theta, &b).unwrap();
                    // never more than the separate worst cases, up to the search's own
                    // slack (2δ ≤ 0.8 % of the set's scale, 0.1 % for the information)
                    let (sep_g, sep_h, _) = separate_bounds(&base, &theta, &a, &b);
                    assert!(
                        score <= 2.0 * sep_g * (1.0 + 1e-2),
                        "{kind:?} {score} {sep_g}"
                    );
                    assert!(info <= sep_h * (1.0 + 1e-2), "{kind:?} {info} {sep_h}");
                    for _ in 0..200 {
                        let (x1, x2) =
                            (random_row(&mut rng, one_hot), random_row(&mut rng, one_hot));
                        let (y1, y2) = (
                            random_response(&mut rng, kind),
                            random_response(&mut rng, kind),
                        );
                        let (g1, h1) = row_terms(&base, &x1, y1, &theta);
                        let (g2, _) = row_terms(&base, &x2, y2, &theta);
                        let diff: Vec<f64> = g1.iter().zip(&g2).map(|(p, q)| p - q).collect();
                        let moved = (&a * nalgebra::DVector::from_vec(diff)).norm();
                        assert!(
                            moved <= score,
                            "{kind:?} one-hot {one_hot}: {moved} > {score}"
                        );
                        let shaped = (&b * h1 * b.transpose()).norm();
                        assert!(
                            shaped <= info,
                            "{kind:?} one-hot {one_hot}: {shaped} > {info}"
                        );
                    }
                }
            }
        }
    }

    /// The score bound is within 1 % of the largest substitution found on a fine grid along the
    /// edges (where the diameter is attained), so the search is tight as well as sound.
    #[test]
    fn score_bound_is_tight() {
        let base = data(GlmKind::Logistic, false);
        let d = base.dim();
        let theta = [0.3, -1.0, 0.5, 1.5];
        let a = DMatrix::from_fn(d, d, |i, j| if i == j { 1.0 } else { 0.2 });
        let bound = score_sensitivity(&base, &theta, &a).unwrap();
        let mut points = Vec::new();
        for v in base.vertices().unwrap().chunks_exact(d) {
            for k in 1..d {
                let (lo, hi) = (base.lo[k], base.hi[k]);
                for step in 0..=200 {
                    let mut x = v.to_vec();
                    x[k] = lo + (hi - lo) * f64::from(step) / 200.0;
                    let c = base.coordinates();
                    let x: Vec<f64> = (0..d).map(|i| c.centre[i] + c.scale[i] * x[i]).collect();
                    for y in [0.0, 1.0] {
                        let (g, _) = row_terms(&base, &x, y, &theta);
                        points.push(&a * nalgebra::DVector::from_vec(g));
                    }
                }
            }
        }
        let mut best: f64 = 0.0;
        for (i, p) in points.iter().enumerate() {
            for q in &points[..i] {
                best = best.max((p - q).norm());
            }
        }
        assert!(bound >= best && bound <= best * 1.01, "{bound} vs {best}");
    }
}
