//! The parallel data pass: how one chain's pass over the data is split over the rayon pool.
//!
//! A pass is a sequence of chunks of [`CHUNK`] rows. [`Split`] cuts the chunks into
//! contiguous *groups* (one scratch buffer per group, allocated once per chain); the groups
//! run as rayon tasks (`run_groups`, a recursive `rayon::join`), and each chunk writes its
//! partial result (a clipped sum, a gradient sum) into its own slot of a per-chunk buffer.
//! The caller then folds the per-chunk partials **in chunk order**, exactly as a sequential
//! pass adds them one chunk after the other: the floating-point operations, and so the
//! results, are the same whatever the number of groups or threads.
//!
//! Small data stay sequential: below [`PARALLEL_MIN_CHUNKS`] chunks a pass is one group and
//! calls no rayon function at all, so the join overhead never slows short passes.

use super::pass::CHUNK;

/// A pass over fewer chunks than this (of [`CHUNK`] rows each) runs sequentially, whatever
/// the threads per chain: below ~2.6e5 rows a pass takes well under a millisecond and waking a
/// second thread costs a visible fraction of it. The thesis models (n ≤ 2e5) stay sequential.
pub const PARALLEL_MIN_CHUNKS: usize = 256;

/// Groups per thread: finer than one group per thread, so a thread slowed by other work on
/// the machine (or by another chain) leaves its remaining groups to be stolen.
const GROUPS_PER_THREAD: usize = 4;

/// Each group spans at least this many chunks (so a group's work dwarfs a join).
const MIN_GROUP_CHUNKS: usize = 16;

/// At most this many groups (bounds the per-group scratch a chain allocates).
const MAX_GROUPS: usize = 256;

/// How a pass over `chunks` chunks is cut into contiguous groups: group `g` holds the chunks
/// `g·per .. min((g+1)·per, chunks)`; no group is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    chunks: usize,
    per: usize,
    groups: usize,
}

impl Split {
    /// The split of a pass over `rows` rows for `threads` threads per chain (1: sequential;
    /// examples in the unit test `groups_by_size_and_threads`).
    pub fn new(rows: usize, threads: usize) -> Split {
        let chunks = rows.div_ceil(CHUNK);
        let wanted = if threads <= 1 || chunks < PARALLEL_MIN_CHUNKS {
            1
        } else {
            threads
                .saturating_mul(GROUPS_PER_THREAD)
                .min(chunks / MIN_GROUP_CHUNKS)
                .clamp(1, MAX_GROUPS)
        };
        let per = chunks.div_ceil(wanted).max(1);
        Split {
            chunks,
            per,
            groups: chunks.div_ceil(per).max(1),
        }
    }

    /// Number of groups (1: the pass is sequential).
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Number of chunks of the pass.
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// Chunks per group (the last group may hold fewer).
    pub fn per_group(&self) -> usize {
        self.per
    }
}

/// Run `work(g, scratch, parts, rows)` for every group `g` of `split`, in parallel when there
/// is more than one group (rayon's work stealing; nested inside whatever rayon task runs the
/// chain). `scratch[g]` is group `g`'s scratch buffer; `parts` holds `stride` slots per chunk
/// and `rows` one value per row (either may be empty); each call receives the slots and rows
/// of its own chunks only, so the groups write disjoint memory. `scratch` must hold at least
/// `split.groups()` buffers. With one group, `work` is called directly (no rayon call).
pub(crate) fn run_groups<S, P, R, F>(
    split: &Split,
    scratch: &mut [S],
    parts: &mut [P],
    stride: usize,
    rows: &mut [R],
    work: &F,
) where
    S: Send,
    P: Send,
    R: Send,
    F: Fn(usize, &mut S, &mut [P], &mut [R]) + Sync,
{
    recurse(
        split.per,
        0,
        &mut scratch[..split.groups],
        parts,
        stride,
        rows,
        work,
    );
}

fn recurse<S, P, R, F>(
    per: usize,
    first: usize,
    scratch: &mut [S],
    parts: &mut [P],
    stride: usize,
    rows: &mut [R],
    work: &F,
) where
    S: Send,
    P: Send,
    R: Send,
    F: Fn(usize, &mut S, &mut [P], &mut [R]) + Sync,
{
    match scratch {
        [] => {}
        [one] => work(first, one, parts, rows),
        _ => {
            let half = scratch.len() / 2;
            let (s1, s2) = scratch.split_at_mut(half);
            let cut_chunks = half * per;
            let (p1, p2) = parts.split_at_mut((cut_chunks * stride).min(parts.len()));
            let (r1, r2) = rows.split_at_mut((cut_chunks * CHUNK).min(rows.len()));
            rayon::join(
                || recurse(per, first, s1, p1, stride, r1, work),
                || recurse(per, first + half, s2, p2, stride, r2, work),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_size_and_threads() {
        // small data: one group (sequential) whatever the threads
        assert_eq!(Split::new(100_000, 8).groups(), 1);
        // large data: several groups per thread
        let big = Split::new(10_000_000, 2);
        assert!(big.groups() > 2);
        assert_eq!(Split::new(10_000_000, 1).groups(), 1);
        assert_eq!(Split::new(PARALLEL_MIN_CHUNKS * CHUNK, 2).groups(), 8);
    }

    #[test]
    fn groups_cover_every_chunk_once() {
        for rows in [0, 1, CHUNK, 300 * CHUNK + 5, 10_000_000] {
            for threads in [1, 2, 3, 8, 1000] {
                let s = Split::new(rows, threads);
                assert!(s.groups() >= 1 && s.groups() <= MAX_GROUPS);
                assert!((s.groups() - 1) * s.per_group() < s.chunks().max(1));
                assert!(s.groups() * s.per_group() >= s.chunks());
                let mut seen = vec![0u8; s.chunks()];
                let mut scratch = vec![(); s.groups()];
                let mut rowbuf = vec![0.0; rows.min(400 * CHUNK)];
                let rows_given = rowbuf.len();
                let work = |g: usize, _: &mut (), parts: &mut [u8], r: &mut [f64]| {
                    // each group gets exactly its chunks' slots and rows
                    let lo = g * s.per_group();
                    let hi = ((g + 1) * s.per_group()).min(s.chunks());
                    assert_eq!(parts.len(), hi - lo);
                    let want_rows = (hi * CHUNK).min(rows_given) - (lo * CHUNK).min(rows_given);
                    assert_eq!(r.len(), want_rows);
                    parts.iter_mut().for_each(|p| *p += 1);
                };
                run_groups(&s, &mut scratch, &mut seen, 1, &mut rowbuf, &work);
                assert!(
                    seen.iter().all(|&c| c == 1),
                    "rows {rows}, threads {threads}"
                );
            }
        }
    }
}
