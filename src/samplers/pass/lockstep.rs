//! Chains in lockstep: chains on one data set hand their passes to a shared [`Lockstep`]
//! group, which computes them span by span of chunks, so each span of the data is read from
//! memory once for all of them instead of once per chain.
//!
//! A pass streams the whole data set. On data larger than the caches (the thesis' d ≥ 10
//! experiments hold 16-48 MB) much of its time goes to reading it, and chains that each stream
//! the data on their own read it once per chain. In a group, each chain runs on its own thread
//! ([`run_member`]); at a pass (a gradient pass, or a ratio pass of a model with a direct
//! ratio) it leaves its request (θ, the bound) in its slot and waits. When every chain still
//! running is waiting, the last one to arrive computes all the requests: for each span of a
//! few chunks (sized to stay in L2), every waiting chain's chunk sums, while the span's rows
//! are in cache. Each chunk's sum is computed by the same code as the chain's own pass
//! ([`GradPlan::span`], [`ratio_span`]) and the chunk sums are added in chunk order, so every
//! chain gets the same bits as when it runs alone, whatever the group. A ratio pass against a
//! per-row cache (models without a direct ratio) runs on its own chain's thread, as does any
//! pass on another model than the group's.

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::CHUNK;
use super::gradient::{GradPlan, GradScratch, fold_partials};
use super::linear_ratio::{covers, linear_span};
use super::ratio::{ClippedSum, fold_sums, ratio_span};
use crate::models::Model;

/// A group of chains in lockstep on one model (see the module docs). Build it with
/// [`Lockstep::new`] and run each member with [`run_member`].
#[derive(Debug)]
pub struct Lockstep {
    /// Address of the group's model: only passes on this model are shared.
    model: usize,
    inner: Mutex<Inner>,
    turn: Condvar,
}

#[derive(Debug)]
struct Inner {
    slots: Vec<Slot>,
    /// The computing member's gradient scratch and ratio buffer (allocated at the first
    /// pass, then reused).
    scratch: Option<GradScratch>,
    buf: Vec<f64>,
    /// Requests computed by the group so far.
    shared: usize,
}

/// One member: whether it is still running, its request, and the request's per-chunk sums
/// once computed (`done`; a gradient pass that failed holds its error instead), which the
/// member folds in chunk order as its own pass would.
#[derive(Debug)]
struct Slot {
    live: bool,
    request: Request,
    theta: Vec<f64>,
    theta_new: Vec<f64>,
    grad_parts: Vec<f64>,
    grad_clipped: usize,
    ratio_parts: Vec<ClippedSum>,
    error: Option<crate::Error>,
    done: bool,
}

#[derive(Clone, Copy, Debug, Default)]
enum Request {
    #[default]
    Idle,
    Gradient {
        bound: f64,
    },
    Ratio {
        bound: f64,
        raw: bool,
    },
}

impl Slot {
    /// A running member with a request not yet computed.
    fn waiting(&self) -> bool {
        self.live && !matches!(self.request, Request::Idle) && !self.done
    }
}

thread_local! {
    /// The group this thread's chain belongs to, and its index there.
    static MEMBER: RefCell<Option<(Arc<Lockstep>, usize)>> = const { RefCell::new(None) };
}

/// The address of a model (the data pointer of a possibly unsized reference).
fn address<M: ?Sized>(model: &M) -> usize {
    std::ptr::from_ref(model).cast::<()>() as usize
}

impl Lockstep {
    /// A group of `members` chains on `model` (each member then runs with [`run_member`]
    /// on its own thread; a member that has not started yet is waited for).
    pub fn new<M: Model + ?Sized>(model: &M, members: usize) -> Arc<Self> {
        Arc::new(Lockstep {
            model: address(model),
            inner: Mutex::new(Inner {
                slots: (0..members)
                    .map(|_| Slot {
                        live: true,
                        request: Request::Idle,
                        theta: Vec::new(),
                        theta_new: Vec::new(),
                        grad_parts: Vec::new(),
                        grad_clipped: 0,
                        ratio_parts: Vec::new(),
                        error: None,
                        done: false,
                    })
                    .collect(),
                scratch: None,
                buf: Vec::new(),
                shared: 0,
            }),
            turn: Condvar::new(),
        })
    }

    /// How many passes the group has computed for its members (tests check that passes are
    /// shared, not only that their bits match).
    #[cfg(test)]
    pub fn shared_passes(&self) -> usize {
        self.lock().shared
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Member `i` stopped: it no longer holds the others back.
    fn leave(&self, i: usize) {
        let mut g = self.lock();
        if let Some(slot) = g.slots.get_mut(i) {
            slot.live = false;
            slot.request = Request::Idle;
        }
        drop(g);
        self.turn.notify_all();
    }

    /// Leaves member `i`'s request (written by `fill`) and waits for its outcome; the member
    /// that completes the group computes every waiting request.
    fn submit<M: Model + ?Sized>(
        &self,
        i: usize,
        model: &M,
        fill: impl FnOnce(&mut Slot),
    ) -> MutexGuard<'_, Inner> {
        let mut g = self.lock();
        fill(&mut g.slots[i]);
        g.slots[i].done = false;
        loop {
            if g.slots[i].done {
                return g;
            }
            let all_waiting = g.slots.iter().all(|slot| !slot.live || slot.waiting());
            if all_waiting {
                g.compute(model);
                self.turn.notify_all();
                continue;
            }
            g = self.turn.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// [`ratio_span`] of a direct ratio (no per-row cache), with the raw sum when `raw`.
fn direct_ratio_span<F: Fn(usize, &mut [f64], &mut [f64]) + Sync>(
    raw: bool,
    ratios: &F,
    (rows, span, bound): ((usize, usize), usize, f64),
    buf: &mut [f64],
    parts: &mut [ClippedSum],
) {
    if raw {
        ratio_span::<true, f64, F>(ratios, rows, span, bound, buf, parts, &mut []);
    } else {
        ratio_span::<false, f64, F>(ratios, rows, span, bound, buf, parts, &mut []);
    }
}

/// Rows of the data a span of the shared passes covers: a few chunks, so a span's rows
/// (`dim` values each) stay in L2 while every member's sums are computed over them.
fn span_chunks(dim: usize) -> usize {
    const SPAN_VALUES: usize = 32 * CHUNK;
    let fit = (SPAN_VALUES / CHUNK / dim.max(1)).max(1);
    (1usize << fit.ilog2()).max(2)
}

impl Inner {
    /// Every waiting request's pass, span by span of chunks.
    fn compute<M: Model + ?Sized>(&mut self, model: &M) {
        let (d, n) = (model.dim(), model.n_rows());
        let chunks = n.div_ceil(CHUNK);
        let span = span_chunks(d);
        let staging = !model.has_column_gradients();
        let scratch = self
            .scratch
            .get_or_insert_with(|| GradScratch::new(d, staging));
        if self.buf.len() < span * CHUNK {
            self.buf.resize(span * CHUNK, 0.0);
        }
        for slot in self.slots.iter_mut().filter(|s| s.waiting()) {
            slot.grad_clipped = 0;
            slot.grad_parts.resize(chunks * d, 0.0);
            slot.ratio_parts.resize(chunks, ClippedSum::default());
        }
        for first in (0..chunks).step_by(span) {
            let last = (first + span).min(chunks);
            for slot in self.slots.iter_mut().filter(|s| s.waiting()) {
                let Slot {
                    request,
                    theta,
                    theta_new,
                    grad_parts,
                    grad_clipped,
                    ratio_parts,
                    error,
                    done,
                    ..
                } = slot;
                match *request {
                    Request::Idle => {}
                    Request::Gradient { bound } => {
                        let parts = &mut grad_parts[first * d..last * d];
                        GradPlan::new(model, bound)
                            .in_cache()
                            .span(model, theta, first, scratch, parts);
                        *grad_clipped += scratch.clipped;
                        if let Some(e) = scratch.error.take() {
                            // the first failing chunk in chunk order, as a chain's own pass
                            *error = Some(e);
                            *done = true;
                        }
                    }
                    Request::Ratio { bound, raw } => {
                        let parts = &mut ratio_parts[first..last];
                        // described again for each span (O(d) against the span's rows): a
                        // member summing its whole pass at once would read the data from
                        // memory in 32-row pieces (a gauss-30d DP penalty box: 2.3 s → 10 s)
                        let linear = model.linear_ratio(theta, theta_new);
                        if let Some(lr) = linear.filter(|lr| covers(lr, n)) {
                            linear_span(&lr, raw, (first, n), bound, parts);
                            continue;
                        }
                        let ratios = |start: usize, buf: &mut [f64], _: &mut [f64]| {
                            model.log_lik_ratio_rows(theta, theta_new, start, buf);
                        };
                        let (buf, rows) = (&mut self.buf[..], (first, n));
                        direct_ratio_span(raw, &ratios, (rows, span, bound), buf, parts);
                    }
                }
            }
        }
        for slot in self.slots.iter_mut().filter(|s| s.waiting()) {
            self.shared += 1;
            slot.done = true;
        }
    }
}

/// Runs `f` on this thread as member `index` of `group`: the gradient and direct-ratio passes
/// `f` makes on the group's model are computed together with the other members' (the same
/// bits as alone). The member leaves the group when `f` returns (or unwinds).
pub fn run_member<R>(group: &Arc<Lockstep>, index: usize, f: impl FnOnce() -> R) -> R {
    struct Leave<'a>(&'a Lockstep, usize);
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            MEMBER.with_borrow_mut(|m| *m = None);
            self.0.leave(self.1);
        }
    }
    MEMBER.with_borrow_mut(|m| *m = Some((Arc::clone(group), index)));
    let _leave = Leave(group, index);
    f()
}

/// The member this thread runs as, if its group shares passes on `model`.
fn member_on<M: ?Sized>(model: &M) -> Option<(Arc<Lockstep>, usize)> {
    MEMBER.with_borrow(|m| {
        m.as_ref()
            .filter(|(g, _)| g.model == address(model))
            .map(|(g, i)| (Arc::clone(g), *i))
    })
}

/// The gradient pass `Σ_j clip_{bound}(∇ℓ_j(θ))` into `out`, computed by the group when this
/// thread runs a member of one on `model` (`None`: it does not; the caller computes it).
pub(super) fn gradient<M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    bound: f64,
    out: &mut [f64],
) -> Option<crate::Result<usize>> {
    let (group, i) = member_on(model)?;
    let mut g = group.submit(i, model, |slot| {
        slot.theta.clear();
        slot.theta.extend_from_slice(theta);
        slot.request = Request::Gradient { bound };
    });
    let slot = &mut g.slots[i];
    slot.request = Request::Idle;
    Some(match slot.error.take() {
        Some(e) => Err(e),
        None => {
            fold_partials(&slot.grad_parts, model.dim(), out);
            Ok(slot.grad_clipped)
        }
    })
}

/// The direct-ratio pass `Σ clip(ℓ_j(θ') − ℓ_j(θ), ±bound)` (with `RAW`, also unclipped),
/// computed by the group when this thread runs a member of one on `model` (`None`: it does
/// not; the caller computes it).
pub(super) fn ratio<const RAW: bool, M: Model + ?Sized>(
    model: &M,
    theta: &[f64],
    theta_new: &[f64],
    bound: f64,
) -> Option<ClippedSum> {
    let (group, i) = member_on(model)?;
    let mut g = group.submit(i, model, |slot| {
        slot.theta.clear();
        slot.theta.extend_from_slice(theta);
        slot.theta_new.clear();
        slot.theta_new.extend_from_slice(theta_new);
        slot.request = Request::Ratio { bound, raw: RAW };
    });
    let slot = &mut g.slots[i];
    slot.request = Request::Idle;
    Some(fold_sums(&slot.ratio_parts))
}
