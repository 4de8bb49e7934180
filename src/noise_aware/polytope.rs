//! The allowed polytope: every covariate row the declared bounds (and one-hot declarations)
//! allow, in the internal coordinates. One home for its vertices, its edges and the largest
//! shaped norm over it, the quantities every release's sensitivity is a maximum of.
//!
//! The polytope is the product of **factors**: a free coordinate's interval `[lo, hi]`, a
//! one-hot group's simplex (its coordinates at 0, or exactly one of them at its upper bound,
//! and the convex hull of those), constant coordinates fixed. A convex function's maximum over
//! it is at a vertex (one state per factor).
//!
//! - **Vertices** are enumerated when at most [`MAX_VERTEX_COORDS`] coordinates are free, and
//!   **edges** (pairs of vertices that differ in one factor) when there are at most
//!   [`MAX_EDGE_VERTICES`] vertices: the edge-based sensitivities (`sensitivity.rs`) search
//!   them.
//! - **The largest shaped norm** `max ‖M v‖` is exact at any size: by the enumerated vertices,
//!   or by a branch and bound over the factors' states (below) whose answer is certified from
//!   above.
//!
//! # Branch and bound
//! Factors are fixed one at a time (largest first). With the fixed part `f` and each free
//! factor's states written as `m_F + δ` (`m_F` their mean), every completion has
//! `‖g + Σ δ_F‖² ≤ ‖g‖² + 2 Σ_F max_δ g·δ_F + Q`, `g = f + Σ m_F`, where
//! `Q = Σ_F r_F² + Σ_{F≠G} max |δ_F·δ_G|` bounds `‖Σ δ_F‖²` (`r_F` the largest `‖δ_F‖`). A node
//! whose bound cannot beat the best vertex found is pruned; after [`MAX_NODES`] nodes the
//! remaining ones count with their bounds (sound, only looser).

use nalgebra::DMatrix;

/// Coordinates beyond which the vertices are not enumerated (the branch and bound answers
/// the norm maxima instead).
pub(crate) const MAX_VERTEX_COORDS: usize = 16;

/// Vertices beyond which the edges are not enumerated (the edge-based sensitivities are then
/// replaced by the separate worst cases, with exact norms).
pub(crate) const MAX_EDGE_VERTICES: usize = 2048;

/// Nodes of the branch and bound before the open ones are bounded as they are.
const MAX_NODES: usize = 200_000;

/// Relative slack of the branch and bound's pruning (its answer is rounded up by it).
const PRUNE_SLACK: f64 = 1e-9;

/// The allowed polytope (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Polytope {
    p: usize,
    lo: Vec<f64>,
    hi: Vec<f64>,
    /// Declared one-hot groups (coordinate indices).
    groups: Vec<Vec<usize>>,
    /// The factor each coordinate belongs to (its own index, or the label shared by a one-hot
    /// group, merged with any group it overlaps).
    factors: Vec<usize>,
    vertices: Option<Vec<f64>>,
    edges: Option<Vec<[u32; 2]>>,
}

impl Polytope {
    /// The box `[lo, hi]` (one interval per coordinate).
    pub(crate) fn new(lo: Vec<f64>, hi: Vec<f64>) -> Self {
        let p = lo.len();
        let vertices = enumerate_vertices(&lo, &hi);
        let factors: Vec<usize> = (0..p).collect();
        let edges = edges_of(vertices.as_deref(), p, &factors);
        Polytope {
            p,
            lo,
            hi,
            groups: Vec::new(),
            factors,
            vertices,
            edges,
        }
    }

    /// The polytope with the coordinates `idx` declared one-hot: at most one of them is away
    /// from its lower bound (the declared 0) in any allowed row.
    pub(crate) fn with_one_hot(mut self, idx: Vec<usize>) -> Self {
        let p = self.p;
        let lo = &self.lo;
        let set = |v: &[f64]| idx.iter().filter(|&&i| v[i] != lo[i]).count();
        self.vertices = self.vertices.take().map(|vs| {
            vs.chunks_exact(p)
                .filter(|v| set(v) <= 1)
                .flatten()
                .copied()
                .collect()
        });
        // one factor for the group (merged with any group it overlaps: every pair of the
        // merged factor's states then counts as an edge, a superset of its polytope's edges)
        let merged: Vec<usize> = idx.iter().map(|&i| self.factors[i]).collect();
        if let Some(&label) = merged.iter().min() {
            for f in self.factors.iter_mut() {
                if merged.contains(f) {
                    *f = label;
                }
            }
        }
        self.groups.push(idx);
        self.edges = edges_of(self.vertices.as_deref(), p, &self.factors);
        self
    }

    /// The declared one-hot groups (coordinate indices, sorted).
    pub(crate) fn groups(&self) -> &[Vec<usize>] {
        &self.groups
    }

    /// Whether `v` respects every one-hot declaration: at most one coordinate of each group
    /// away from its lower bound (the internal image of the declared 0; the box is checked
    /// elsewhere).
    pub(crate) fn one_hot_allows(&self, v: &[f64]) -> bool {
        self.groups
            .iter()
            .all(|g| g.iter().filter(|&&i| v[i] != self.lo[i]).count() <= 1)
    }

    /// The vertices (row-major, `p` per vertex), when few enough to enumerate.
    pub(crate) fn vertices(&self) -> Option<&[f64]> {
        self.vertices.as_deref()
    }

    /// The edges (pairs of indices into [`Self::vertices`]), when few enough vertices.
    pub(crate) fn edges(&self) -> Option<&[[u32; 2]]> {
        self.edges.as_deref()
    }

    /// `max ‖M_{:, ..p} v‖` over the polytope (`m` may have more columns than `p`; only the
    /// first `p` act on `v`): exact over the enumerated vertices, else certified from above by
    /// the branch and bound (exact unless it runs out of nodes).
    pub(crate) fn max_norm(&self, m: &DMatrix<f64>) -> f64 {
        match &self.vertices {
            Some(vs) => {
                let rows = m.nrows();
                let mut best: f64 = 0.0;
                let mut mv = vec![0.0; rows];
                for v in vs.chunks_exact(self.p) {
                    mv.iter_mut().for_each(|x| *x = 0.0);
                    for (i, &vi) in v.iter().enumerate() {
                        if vi != 0.0 {
                            for (r, out) in mv.iter_mut().enumerate() {
                                *out += m[(r, i)] * vi;
                            }
                        }
                    }
                    best = best.max(mv.iter().map(|x| x * x).sum::<f64>());
                }
                best.sqrt()
            }
            None if m.nrows() == 1 => self.max_abs_linear(m),
            None => self.branch_and_bound(m).min(self.triangle_bound(m)),
        }
        // rounding: the callers scale the result up by a relative 1e-12
    }

    /// `max |m v|` for one row `m`: each factor at the state that pushes the sum furthest up,
    /// or furthest down (exact).
    fn max_abs_linear(&self, m: &DMatrix<f64>) -> f64 {
        let (fixed, states) = self.mapped_states(m);
        let (mut up, mut down) = (fixed[0], fixed[0]);
        for s in &states {
            up += s.iter().map(|v| v[0]).fold(f64::NEG_INFINITY, f64::max);
            down += s.iter().map(|v| v[0]).fold(f64::INFINITY, f64::min);
        }
        up.abs().max(down.abs())
    }

    /// `‖M c‖ + Σ half-width_i ‖M e_i‖` (`c` the box's centre): the triangle inequality, a
    /// sound cap on the branch and bound's answer when it runs out of nodes.
    fn triangle_bound(&self, m: &DMatrix<f64>) -> f64 {
        let rows = m.nrows();
        let mut mc = vec![0.0; rows];
        let mut spread = 0.0;
        for i in 0..self.p {
            let col = m.column(i);
            for (r, out) in mc.iter_mut().enumerate() {
                *out += col[r] * 0.5 * (self.lo[i] + self.hi[i]);
            }
            spread += 0.5 * (self.hi[i] - self.lo[i]) * col.norm();
        }
        dot(&mc, &mc).sqrt() + spread
    }

    /// Each factor's states as vectors `M t` (`t` over the factor's coordinates), and the
    /// fixed part from the constant coordinates.
    fn mapped_states(&self, m: &DMatrix<f64>) -> (Vec<f64>, Vec<Vec<Vec<f64>>>) {
        let rows = m.nrows();
        let mut fixed = vec![0.0; rows];
        let mut labels: Vec<usize> = Vec::new();
        for i in 0..self.p {
            if self.lo[i] == self.hi[i] {
                for (r, f) in fixed.iter_mut().enumerate() {
                    *f += m[(r, i)] * self.lo[i];
                }
            } else if !labels.contains(&self.factors[i]) {
                labels.push(self.factors[i]);
            }
        }
        let states = labels
            .iter()
            .map(|&label| {
                let coords: Vec<usize> = (0..self.p)
                    .filter(|&i| self.factors[i] == label && self.lo[i] < self.hi[i])
                    .collect();
                let mut out = Vec::new();
                let mut t = self.lo.clone();
                self.factor_states(&coords, 0, &mut t, &mut |t| {
                    let v: Vec<f64> = (0..rows)
                        .map(|r| coords.iter().map(|&i| m[(r, i)] * t[i]).sum())
                        .collect();
                    out.push(v);
                });
                out
            })
            .collect();
        (fixed, states)
    }

    /// Calls `visit` with every allowed assignment of `coords[k..]` to their bounds (the
    /// earlier ones set in `t`), one-hot declarations respected.
    fn factor_states(
        &self,
        coords: &[usize],
        k: usize,
        t: &mut Vec<f64>,
        visit: &mut dyn FnMut(&[f64]),
    ) {
        let Some(&i) = coords.get(k) else {
            visit(t);
            return;
        };
        for value in [self.lo[i], self.hi[i]] {
            t[i] = value;
            if self.one_hot_allows(t) {
                self.factor_states(coords, k + 1, t, visit);
            }
        }
        t[i] = self.lo[i];
    }

    /// `max ‖M v‖` by branch and bound over the factors' states (module docs).
    fn branch_and_bound(&self, m: &DMatrix<f64>) -> f64 {
        let (fixed, states) = self.mapped_states(m);
        let rows = fixed.len();
        // each factor's states about their mean, the factors by their reach, largest first
        let mut factors: Vec<Factor> = states.into_iter().map(|s| Factor::new(s, rows)).collect();
        factors.sort_by(|a, b| b.reach.total_cmp(&a.reach));
        let count = factors.len();
        // Q of each suffix of factors: Σ r² + Σ_{F≠G} max |δ_F·δ_G|
        let mut q = vec![0.0; count + 1];
        for k in (0..count).rev() {
            let cross: f64 = (k + 1..count)
                .map(|j| factors[k].max_cross(&factors[j]))
                .sum();
            q[k] = q[k + 1] + factors[k].reach * factors[k].reach + 2.0 * cross;
        }
        // the fixed part plus every free factor's mean
        let mut g = fixed;
        for f in &factors {
            for (x, c) in g.iter_mut().zip(&f.mean) {
                *x += c;
            }
        }
        let mut search = Search {
            factors: &factors,
            q: &q,
            best: 0.0,
            nodes: 0,
        };
        search.visit(0, &mut g);
        (search.best * (1.0 + PRUNE_SLACK)).sqrt()
    }
}

/// One factor's states about their mean.
struct Factor {
    mean: Vec<f64>,
    /// `δ = state − mean` per state.
    deltas: Vec<Vec<f64>>,
    /// The largest `‖δ‖`.
    reach: f64,
}

impl Factor {
    fn new(states: Vec<Vec<f64>>, rows: usize) -> Self {
        let n = states.len().max(1) as f64;
        let mut mean = vec![0.0; rows];
        for s in &states {
            for (m, x) in mean.iter_mut().zip(s) {
                *m += x / n;
            }
        }
        let deltas: Vec<Vec<f64>> = states
            .iter()
            .map(|s| s.iter().zip(&mean).map(|(x, m)| x - m).collect())
            .collect();
        let reach = deltas.iter().map(|d| dot(d, d).sqrt()).fold(0.0, f64::max);
        Factor {
            mean,
            deltas,
            reach,
        }
    }

    fn max_cross(&self, other: &Factor) -> f64 {
        let mut best: f64 = 0.0;
        for a in &self.deltas {
            for b in &other.deltas {
                best = best.max(dot(a, b).abs());
            }
        }
        best
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The branch and bound's state: the factors, the suffixes' `Q`, the best squared norm found.
struct Search<'a> {
    factors: &'a [Factor],
    q: &'a [f64],
    best: f64,
    nodes: usize,
}

impl Search<'_> {
    /// An upper bound on `‖·‖²` of every completion of a node whose factors `k..` are free
    /// and at their means (`g`).
    fn bound(&self, k: usize, g: &[f64]) -> f64 {
        let linear: f64 = self.factors[k..]
            .iter()
            .map(|f| f.deltas.iter().map(|d| dot(g, d)).fold(0.0, f64::max))
            .sum();
        dot(g, g) + 2.0 * linear + self.q[k]
    }

    /// Searches the node with factors `..k` fixed (`g` their sum plus the free factors' means).
    fn visit(&mut self, k: usize, g: &mut [f64]) {
        self.nodes += 1;
        if k == self.factors.len() {
            self.best = self.best.max(dot(g, g));
            return;
        }
        let ub = self.bound(k, g);
        if ub <= self.best * (1.0 + PRUNE_SLACK) {
            return;
        }
        if self.nodes > MAX_NODES {
            // out of nodes: the subtree counts with its bound (sound)
            self.best = self.best.max(ub);
            return;
        }
        let factor = &self.factors[k];
        // children in order of their own bounds, most promising first
        let mut children: Vec<(f64, usize)> = factor
            .deltas
            .iter()
            .enumerate()
            .map(|(s, d)| {
                let child: Vec<f64> = g.iter().zip(d).map(|(x, y)| x + y).collect();
                (self.bound(k + 1, &child), s)
            })
            .collect();
        children.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (ub, s) in children {
            if ub <= self.best * (1.0 + PRUNE_SLACK) {
                break;
            }
            let d = &self.factors[k].deltas[s];
            for (x, y) in g.iter_mut().zip(d) {
                *x += y;
            }
            self.visit(k + 1, g);
            let d = &self.factors[k].deltas[s];
            for (x, y) in g.iter_mut().zip(d) {
                *x -= y;
            }
        }
    }
}

fn edges_of(vertices: Option<&[f64]>, p: usize, factors: &[usize]) -> Option<Vec<[u32; 2]>> {
    let vs = vertices?;
    (vs.len() / p <= MAX_EDGE_VERTICES).then(|| polytope_edges(vs, p, factors))
}

/// The vertices of the box (row-major), or `None` when more than [`MAX_VERTEX_COORDS`]
/// coordinates are free.
fn enumerate_vertices(lo: &[f64], hi: &[f64]) -> Option<Vec<f64>> {
    let free: Vec<usize> = (0..lo.len()).filter(|&i| lo[i] < hi[i]).collect();
    if free.len() > MAX_VERTEX_COORDS {
        return None;
    }
    let p = lo.len();
    let count = 1usize << free.len();
    let mut out = Vec::with_capacity(count * p);
    for mask in 0..count {
        let mut v = lo.to_vec();
        for (bit, &i) in free.iter().enumerate() {
            if mask >> bit & 1 == 1 {
                v[i] = hi[i];
            }
        }
        out.extend(v);
    }
    Some(out)
}

/// The edges of the polytope: pairs of vertices that differ in exactly one factor
/// (`factors[i]` labels coordinate `i`; the coordinates of a one-hot group share a label, and
/// every pair of a group's states is an edge of its simplex). The polytope is the product of
/// the free coordinates' intervals and the groups' simplices, whose edges are exactly these.
fn polytope_edges(vertices: &[f64], p: usize, factors: &[usize]) -> Vec<[u32; 2]> {
    let count = vertices.len() / p;
    let mut edges = Vec::new();
    for a in 0..count {
        let va = &vertices[a * p..(a + 1) * p];
        for b in a + 1..count {
            let vb = &vertices[b * p..(b + 1) * p];
            let mut factor = None;
            let mut one = true;
            for i in 0..p {
                if va[i] != vb[i] {
                    match factor {
                        None => factor = Some(factors[i]),
                        Some(f) if f == factors[i] => {}
                        Some(_) => {
                            one = false;
                            break;
                        }
                    }
                }
            }
            if one && factor.is_some() {
                edges.push([a as u32, b as u32]);
            }
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    /// The largest `‖Mv‖²` over every vertex of `poly`'s box that its one-hot groups allow,
    /// by brute force (2^free vertices).
    fn brute_force(poly: &Polytope, m: &DMatrix<f64>) -> f64 {
        let free: Vec<usize> = (0..poly.p).filter(|&i| poly.lo[i] < poly.hi[i]).collect();
        let mut best: f64 = 0.0;
        for mask in 0..1usize << free.len() {
            let mut v = poly.lo.clone();
            for (bit, &i) in free.iter().enumerate() {
                if mask >> bit & 1 == 1 {
                    v[i] = poly.hi[i];
                }
            }
            if poly.one_hot_allows(&v) {
                let mv = m.columns(0, poly.p) * nalgebra::DVector::from_vec(v);
                best = best.max(mv.norm_squared());
            }
        }
        best.sqrt()
    }

    /// Beyond the vertex enumeration's cut-over (17-20 free coordinates, with and without a
    /// one-hot group, random and near-whitening shapes) the branch and bound's bound is the
    /// exact maximum over the vertices to within its slack, never below it; the triangle
    /// inequality bound it replaces was up to several times larger.
    #[test]
    fn branch_and_bound_is_exact_beyond_the_vertex_cut_over() {
        let mut rng = crate::rng::chain_rng(21, 0);
        for (free, one_hot) in [(17, false), (18, true), (20, false), (19, true)] {
            let p = free + 1;
            let mut lo = vec![1.0];
            let mut hi = vec![1.0];
            for i in 0..free {
                lo.push(if i % 3 == 0 { -1.0 } else { 0.0 });
                hi.push(1.0);
            }
            let mut poly = Polytope::new(lo, hi);
            assert!(poly.vertices().is_none());
            if one_hot {
                poly = poly.with_one_hot(vec![2, 3, 5, 6]);
            }
            for trial in 0..3 {
                let m = DMatrix::from_fn(p, p, |r, c| {
                    let diag = if r == c { 2.0 } else { 0.0 };
                    diag + rng.random_range(-1.0..1.0) * if trial == 0 { 1.0 } else { 0.3 }
                });
                let exact = brute_force(&poly, &m);
                let bound = poly.max_norm(&m);
                assert!(
                    bound >= exact && bound <= exact * (1.0 + 1e-8),
                    "free {free} one-hot {one_hot}: {bound} vs {exact}"
                );
            }
        }
    }

    /// A box's edges join vertices one coordinate apart; a one-hot group's states are all
    /// joined (a simplex): one free coordinate × a group of two is a triangular prism.
    #[test]
    fn edges_of_a_box_and_a_prism() {
        let boxed = Polytope::new(vec![1.0, 0.0, 0.0, -1.0], vec![1.0, 1.0, 1.0, 2.0]);
        assert_eq!(boxed.edges().unwrap().len(), 12);
        let prism = boxed.with_one_hot(vec![1, 2]);
        assert_eq!(prism.vertices().unwrap().len() / 4, 6);
        assert_eq!(prism.edges().unwrap().len(), 9);
    }
}
