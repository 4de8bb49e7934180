//! Transparent huge pages for large stored data sets (Linux): a performance hint, never a
//! change of values.
//!
//! Every data pass streams the data columns from memory or L3. With 4 KB pages a 16 MB data set
//! spans 4096 pages and ten column streams walk them side by side, so the passes wait on page
//! walks as well as on the data; backed by 2 MB pages the same passes run 5-10 % faster
//! (measured: DP HMC gauss-30d and tempered-10d, DP penalty tempered-10d, RWMH easy-10d, one
//! chain on this repository's 2-core machine, docs/PERFORMANCE.md "The hot loop"). Linux backs anonymous
//! memory with huge pages only where asked (`transparent_hugepage = madvise`, the common
//! default), so [`advise`] asks for them on the buffer's whole 2 MB pages and collapses the
//! pages already written in place (`MADV_COLLAPSE`, Linux 6.1; about 0.3 ms per MB).
//! Failures (an older kernel, huge pages disabled or none free) are ignored: the data stay
//! where and what they are.

/// Buffers below this size are left alone (at most one whole huge page inside).
const MIN_BYTES: usize = 4 << 20;

/// Size and alignment of a huge page (x86-64, aarch64 with 4 KB base pages).
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// Ask the kernel to back the whole 2 MB pages inside `values` with huge pages, collapsing the
/// ones already written. A hint: the values are unchanged whatever happens.
pub(crate) fn advise<T>(values: &[T]) {
    let bytes = std::mem::size_of_val(values);
    if bytes < MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = values.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            let (addr, len) = (first as *mut libc::c_void, end - first);
            // SAFETY: `[first, end)` lies inside the live allocation of `values` (2 MB-aligned,
            // mapped); both advices only change how its pages are backed, never their
            // contents, and their results are ignored.
            unsafe {
                libc::madvise(addr, len, libc::MADV_HUGEPAGE);
                libc::madvise(addr, len, libc::MADV_COLLAPSE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice leaves every value as it was, for buffers below and above the size limit.
    #[test]
    fn advice_keeps_the_values() {
        for n in [10usize, (MIN_BYTES / 8) * 3 + 5] {
            let values: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
            let copy = values.clone();
            advise(&values);
            assert_eq!(values, copy, "n = {n}");
        }
    }
}
