//! Cache hints. The event loop knows a few events ahead which packets,
//! ports and flows it will touch; asking the memory system for them early
//! overlaps the misses of later events with the work of the current one,
//! which matters most on large fabrics whose state outgrows the caches
//! (docs/performance.md).

/// Start loading every cache line of `value` (a hint: nothing happens on
/// targets without a prefetch instruction, and results never depend on it).
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_bytes(value, std::mem::size_of::<T>());
}

/// Start loading the cache lines of the first `bytes` bytes of `value`.
#[inline(always)]
pub fn prefetch_bytes<T>(value: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = std::ptr::from_ref(value).cast::<i8>();
        let mut line = 0;
        while line < bytes.min(std::mem::size_of::<T>()) {
            // SAFETY: SSE, which `_mm_prefetch` needs, is part of the x86_64
            // baseline; a prefetch reads nothing and never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(line)) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (value, bytes);
}
