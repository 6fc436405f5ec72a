//! Cache hints. The event loop knows a few events ahead which packets,
//! ports and flows it will touch; asking the memory system for them early
//! overlaps the misses of later events with the work of the current one,
//! which matters most on large fabrics whose state outgrows the caches
//! (docs/performance.md). The tables those live in are also offered to the
//! kernel for transparent huge pages, so that their pages' translations
//! stay cached too.

use std::collections::VecDeque;

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

/// Tables smaller than this are left on ordinary pages.
const HUGE_TABLE: usize = 4 << 20;

/// Whether a full table of `T` (`len == capacity`) would grow into a buffer of
/// at least [`HUGE_TABLE`] bytes: the growth [`push_advised`] and
/// [`push_back_checked`] take out of line.
#[inline]
fn next_is_large<T>(len: usize, capacity: usize) -> bool {
    len == capacity && 2 * capacity * std::mem::size_of::<T>() >= HUGE_TABLE
}

/// Push `x` onto `table`. When the table is full and its next buffer
/// (twice as large) holds at least [`HUGE_TABLE`] bytes, that buffer is
/// offered for transparent huge pages ([`advise_huge_pages`]) before the
/// entries move in: pages the kernel has already given out as 4 KiB pages
/// (as a reallocation's copy would) are not merged into huge ones until
/// much later, if ever.
#[inline]
pub fn push_advised<T>(table: &mut Vec<T>, x: T) {
    if next_is_large::<T>(table.len(), table.capacity()) {
        grow_large(table);
    }
    table.push(x);
}

/// Push `x` onto the back of `queue` (a port's FIFO), its growth past
/// [`HUGE_TABLE`] refusable as a large table's ([`grow_large`]).
#[inline]
pub fn push_back_checked<T>(queue: &mut VecDeque<T>, x: T) {
    if next_is_large::<T>(queue.len(), queue.capacity()) {
        grow_deque(queue);
    }
    queue.push_back(x);
}

thread_local! {
    /// The running simulation's cgroups ([`crate::cgroup`]).
    static CGROUPS: std::cell::RefCell<Option<crate::cgroup::Watch>> =
        const { std::cell::RefCell::new(None) };
}

/// A large table's growth the process refused ([`grow_large`]), which
/// unwinds the run: [`catching`] turns it back into a value, and the run
/// ends with the one-line "outgrew" error. It is never a panic (no hook, no
/// message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The address-space limit (`ulimit -v`, `prlimit --as`) refused a
    /// buffer of `bytes`.
    AddressSpace { bytes: u64 },
    /// A cgroup of the process would hold `would_hold` bytes of its `limit`,
    /// past [`crate::cgroup::STOP_SHARE`] of it.
    Cgroup { would_hold: u64, limit: u64 },
}

/// Run `f`; a [`Refusal`] it unwinds with is returned as the error, any
/// other panic goes on unwinding.
pub fn catching<R>(f: impl FnOnce() -> R) -> Result<R, Refusal> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|unwound| {
        match unwound.downcast::<Refusal>() {
            Ok(refusal) => *refusal,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Stop the run here with `refusal`.
fn refuse(refusal: Refusal) -> ! {
    std::panic::resume_unwind(Box::new(refusal))
}

/// The process's cgroups, watched for the running simulation on this thread
/// while the guard lives ([`cgroup_over`], [`grow_large`]).
pub struct Watched;

impl Watched {
    pub fn start() -> Watched {
        CGROUPS.set(Some(crate::cgroup::Watch::of_this_process()));
        Watched
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        CGROUPS.set(None);
    }
}

/// Stop the run with a growth of `bytes` unless the process has room for
/// it: a watched cgroup that it would take past
/// [`crate::cgroup::STOP_SHARE`] of its limit ([`crate::cgroup::Watch::refuses`])
/// refuses it before anything is allocated, the address-space limit when
/// `reserve` (the allocation) fails.
fn check_growth(bytes: usize, reserve: impl FnOnce() -> bool) {
    let cgroup = CGROUPS.with_borrow(|w| w.as_ref().and_then(|w| w.refuses(bytes as u64)));
    if let Some((would_hold, limit)) = cgroup {
        refuse(Refusal::Cgroup { would_hold, limit });
    }
    if !reserve() {
        refuse(Refusal::AddressSpace {
            bytes: bytes as u64,
        });
    }
}

/// Move a full large table into a buffer twice as large, offered for huge
/// pages. The scenario's memory estimate is checked against what the process
/// may take before a run, but what a run holds at once (packets queued in a
/// deep buffer, events, flows) can outgrow it. A growth the process cannot
/// take ends the run at once with a [`Refusal`] ([`check_growth`]), never
/// an abort (Rust's answer to a failed allocation) nor the kernel's OOM
/// killer (a cgroup's answer). Not a smaller growth instead: the tables of
/// cache-line-aligned rows (packets) grow by a copy (Rust's allocator
/// reallocates buffers aligned beyond 16 B by allocating anew and copying),
/// so an eighth more takes the whole table again at once, which near the
/// limit is itself refused (or, in a cgroup, what the kernel kills: a
/// 128 MiB packet table at 400 MiB held of a 512 MiB cgroup), and the run
/// would end at the loop's next check anyway.
#[cold]
#[inline(never)]
fn grow_large<T>(table: &mut Vec<T>) {
    let mut bigger = Vec::new();
    let want = 2 * table.capacity();
    check_growth(want * std::mem::size_of::<T>(), || {
        bigger.try_reserve_exact(want).is_ok()
    });
    advise_huge_pages(&bigger);
    bigger.append(table);
    *table = bigger;
}

/// [`grow_large`] for a queue: twice as large, or the run ends.
#[cold]
#[inline(never)]
fn grow_deque<T>(queue: &mut VecDeque<T>) {
    let cap = queue.capacity();
    check_growth(2 * cap * std::mem::size_of::<T>(), || {
        queue.try_reserve_exact(cap).is_ok()
    });
}

/// (bytes held, limit) of a cgroup of the process holding more than
/// [`crate::cgroup::STOP_SHARE`] of its limit, which ends the run before the
/// kernel kills the process; read at most every 10 ms of wall time.
pub fn cgroup_over() -> Option<(u64, u64)> {
    CGROUPS.with_borrow_mut(|w| w.as_mut().and_then(crate::cgroup::Watch::over))
}

/// Ask the kernel to back the 2 MiB-aligned pages inside `table`'s buffer
/// (its spare capacity included) with transparent huge pages, when the
/// buffer holds at least [`HUGE_TABLE`] bytes. A hint (Linux
/// `madvise(MADV_HUGEPAGE)`, honoured when transparent huge pages are
/// enabled as `always` or `madvise`); results never depend on it. On a
/// large fabric a packet-hop reads lines from tables of several MB (ports,
/// packets, flows, events), whose 4 KiB pages outnumber the TLB's entries.
pub fn advise_huge_pages<T>(table: &Vec<T>) {
    let bytes = table.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE_TABLE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = table.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let len = (start + bytes).saturating_sub(first) / HUGE * HUGE;
        if len > 0 {
            // SAFETY: the range lies inside the table's allocation, and
            // MADV_HUGEPAGE changes how it is backed, never its contents;
            // a refusal (EINVAL without transparent huge pages) is harmless.
            unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The flags the kernel keeps for the mapping holding `addr`
    /// (`/proc/self/smaps`), where `hg` marks a MADV_HUGEPAGE hint.
    fn vm_flags(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) =
                        (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                    {
                        inside = a <= addr && addr < b;
                        continue;
                    }
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return flags.to_string();
                }
            }
        }
        panic!("no mapping holds {addr:#x}")
    }

    /// A table that grows past [`HUGE_TABLE`] is marked for huge pages (on
    /// kernels that have them); a small one is left alone, and pushing
    /// keeps the contents.
    #[test]
    fn large_tables_are_offered_huge_pages() {
        let mut big: Vec<u64> = Vec::new();
        for i in 0..(HUGE_TABLE / 8 + 1) as u64 {
            push_advised(&mut big, i);
        }
        assert!(big.iter().enumerate().all(|(i, &x)| x == i as u64));
        // Kernels built without transparent huge pages refuse the hint.
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            let aligned = (big.as_ptr() as usize).next_multiple_of(2 << 20);
            assert!(
                vm_flags(aligned).split_whitespace().any(|f| f == "hg"),
                "no huge page hint on the table's mapping"
            );
        }
        let small: Vec<u64> = vec![0; 1024];
        advise_huge_pages(&small);
        assert!(!vm_flags(small.as_ptr() as usize)
            .split_whitespace()
            .any(|f| f == "hg"));
    }
}
