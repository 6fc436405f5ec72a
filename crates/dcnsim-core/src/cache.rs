//! Cache hints. The event loop knows a few events ahead which packets,
//! ports and flows it will touch; asking the memory system for them early
//! overlaps the misses of later events with the work of the current one,
//! which matters most on large fabrics whose state outgrows the caches
//! (docs/performance.md). The tables those live in are also offered to the
//! kernel for transparent huge pages, so that their pages' translations
//! stay cached too.

use std::cell::Cell;
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

/// Bytes of address space a run holds untouched while it goes (no memory is
/// used until written), given back when the process refuses a large
/// table's growth: room for the smaller growths until the run ends. Half as
/// much, and so on down to an eighth, where the process refuses that much;
/// at most an eighth of the address-space limit ([`address_space_limit`]).
const HEADROOM: usize = 1 << 30;

/// The process's address-space limit (`ulimit -v`, `prlimit --as`), if any.
/// The memory budget a run is checked against before it starts leaves a
/// fifth of what the limit allows beyond the run's estimate
/// (`python/dcnsim/memory.py`); a headroom of at most an eighth of the limit
/// stays within it, where a whole [`HEADROOM`] would take the room the run's
/// own tables were estimated to fit in, and their growth would fail.
fn address_space_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the limit into `limit` and nothing else.
        let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
        if read && limit.rlim_cur != libc::RLIM_INFINITY {
            return Some(usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX));
        }
    }
    None
}

thread_local! {
    /// Bytes of the last large growth the process refused on this thread (0:
    /// none since [`take_refused`]). A thread runs one simulation at a time.
    static REFUSED: Cell<usize> = const { Cell::new(0) };
    /// The running simulation's [`HEADROOM`], while not given back.
    static HELD: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// The running simulation's cgroups ([`crate::cgroup`]).
    static CGROUPS: std::cell::RefCell<Option<crate::cgroup::Watch>> =
        const { std::cell::RefCell::new(None) };
}

/// What a large table's growth refused by a cgroup of the process unwinds
/// the run with ([`grow_large`]): the bytes the cgroup would hold and its
/// limit. The event loop catches it and ends the run with the one-line
/// error (`Simulation::run_with`); it is never a panic (no hook, no message).
pub struct CgroupRefusal {
    pub would_hold: u64,
    pub limit: u64,
}

/// [`HEADROOM`] held for the run on this thread while the guard lives (none
/// if the process refuses even that).
pub struct Headroom;

impl Headroom {
    pub fn hold() -> Headroom {
        let mut room = Vec::new();
        let mut bytes = address_space_limit().map_or(HEADROOM, |l| HEADROOM.min(l / 8));
        while room.try_reserve_exact(bytes).is_err() && bytes > HEADROOM / 8 {
            bytes /= 2;
        }
        HELD.set(room);
        REFUSED.set(0);
        CGROUPS.set(Some(crate::cgroup::Watch::of_this_process()));
        Headroom
    }
}

impl Drop for Headroom {
    fn drop(&mut self) {
        drop(HELD.take());
        CGROUPS.set(None);
    }
}

/// Note a refused growth of `bytes` for the run to end with, and give its
/// headroom back.
fn refused(bytes: usize) {
    drop(HELD.take());
    REFUSED.set(bytes);
}

/// Stop the run here if a cgroup of the process refuses a growth of `bytes`
/// ([`crate::cgroup::Watch::refuses`]): unwind it with a [`CgroupRefusal`].
fn stop_if_cgroup_refuses(bytes: usize) {
    let refusal = CGROUPS.with_borrow(|w| w.as_ref().and_then(|w| w.refuses(bytes as u64)));
    if let Some((would_hold, limit)) = refusal {
        std::panic::resume_unwind(Box::new(CgroupRefusal { would_hold, limit }));
    }
}

/// Move a full large table into a buffer twice as large, offered for huge
/// pages. The scenario's memory estimate is checked against what the process
/// may take before a run, but what a run holds at once (packets queued in a
/// deep buffer, events, flows) can outgrow it; then an address-space limit
/// refuses the doubling, and instead of aborting the process (Rust's answer
/// to a failed allocation) the refusal is kept for the event loop, which
/// ends the run with it at its next check ([`take_refused`]), and the table
/// grows in place by an eighth (a sixty-fourth if even that is refused) into
/// the run's [`Headroom`], given back for this, to get there. Only a refusal
/// of the last aborts. A cgroup limit is not an allocation failure but the
/// kernel's OOM killer: a doubling that would take a cgroup of the process
/// past [`crate::cgroup::STOP_SHARE`] of its limit stops the run at once
/// ([`stop_if_cgroup_refuses`]), and [`cgroup_over`] watches the rest. It
/// cannot grow by an eighth instead: the tables of cache-line-aligned rows
/// (packets, events) grow by a copy (Rust's allocator reallocates buffers
/// aligned beyond 16 B by allocating anew and copying), which touches the
/// whole table again at once and, near the limit, is what the kernel kills
/// (a 128 MiB packet table at 400 MiB held of a 512 MiB cgroup).
#[cold]
#[inline(never)]
fn grow_large<T>(table: &mut Vec<T>) {
    let mut bigger = Vec::new();
    let want = 2 * table.capacity();
    stop_if_cgroup_refuses(want * std::mem::size_of::<T>());
    if bigger.try_reserve_exact(want).is_err() {
        refused(want * std::mem::size_of::<T>());
        let cap = table.capacity();
        if table.try_reserve_exact(cap / 8).is_err() {
            table.reserve_exact(cap / 64);
        }
        return;
    }
    advise_huge_pages(&bigger);
    bigger.append(table);
    *table = bigger;
}

/// [`grow_large`] for a queue: twice as large, or an eighth more once refused.
#[cold]
#[inline(never)]
fn grow_deque<T>(queue: &mut VecDeque<T>) {
    let cap = queue.capacity();
    stop_if_cgroup_refuses(2 * cap * std::mem::size_of::<T>());
    if queue.try_reserve_exact(cap).is_err() {
        refused(2 * cap * std::mem::size_of::<T>());
        if queue.try_reserve_exact(cap / 8).is_err() {
            queue.reserve_exact(cap / 64);
        }
    }
}

/// Bytes of a large growth the process refused on this thread since the last
/// call (0: none), which ends the run.
pub fn take_refused() -> usize {
    REFUSED.replace(0)
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
