//! The hook program's allocator: a process that answers one call and exits
//! frees nothing that matters, so memory is handed out from one arena by
//! moving a pointer forward, and never reused except when the last block
//! given out is freed or resized (the common pattern of a temporary
//! string or a growing vector). A hook process makes about a thousand
//! allocations of ~160 KB in all; the general-purpose allocator's
//! bookkeeping for them (bins, coalescing, locks) was about a sixth of the
//! process's instructions.
//!
//! The arena lives in the program's zero-initialised data, so it costs
//! nothing until a page of it is touched. What does not fit (a payload of
//! many megabytes, say) comes from the system allocator instead, so the
//! arena bounds only the speed, never what the process can allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A forward-only allocator over `N` bytes of its own, falling back on the
/// system allocator. Safe to share between threads: the arena's top moves
/// by compare-and-swap.
pub struct Arena<const N: usize> {
    memory: UnsafeCell<Memory<N>>,
    /// Bytes of `memory` handed out (the offset of the next block).
    top: AtomicUsize,
}

/// Page-aligned, so that blocks of any alignment up to a page start where
/// their offset says.
#[repr(C, align(4096))]
struct Memory<const N: usize>([u8; N]);

// SAFETY: the arena's bytes are handed out in disjoint blocks: `top` only
// moves by compare-and-swap, and a block is given back (the top moved down
// over it) only by its owner, the last block's.
unsafe impl<const N: usize> Sync for Arena<N> {}

impl<const N: usize> Arena<N> {
    /// An empty arena.
    pub const fn new() -> Self {
        Arena {
            memory: UnsafeCell::new(Memory([0; N])),
            top: AtomicUsize::new(0),
        }
    }

    fn base(&self) -> usize {
        self.memory.get() as usize
    }

    /// The offset of `ptr` in the arena, if it is one of the arena's.
    fn offset_of(&self, ptr: *mut u8) -> Option<usize> {
        (ptr as usize).checked_sub(self.base()).filter(|at| *at < N)
    }

    /// A block of `layout` from the arena, or `None` when it does not fit.
    fn take(&self, layout: Layout) -> Option<*mut u8> {
        let base = self.base();
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            let start = (base + top).checked_next_multiple_of(layout.align())? - base;
            let end = start.checked_add(layout.size())?;
            if end > N {
                return None;
            }
            match self
                .top
                .compare_exchange_weak(top, end, Ordering::Relaxed, Ordering::Relaxed)
            {
                // SAFETY: `start..end` lies within the arena's `N` bytes.
                Ok(_) => return Some(unsafe { self.memory.get().cast::<u8>().add(start) }),
                Err(now) => top = now,
            }
        }
    }

    /// Maps the arena's first `bytes` (rounded to pages) at once: one call
    /// instead of a page fault for each page as it is first touched. Does
    /// nothing where the kernel cannot (before Linux 5.14); the pages are
    /// then mapped as they are touched, as without it.
    pub fn populate(&self, bytes: usize) {
        let len = bytes.min(N).next_multiple_of(4096).min(N);
        // SAFETY: the range lies within the arena, a page-aligned mapping of
        // this process; populating it changes no byte of it.
        unsafe {
            libc::madvise(self.memory.get().cast(), len, libc::MADV_POPULATE_WRITE);
        }
    }

    /// Bytes of the arena handed out and not given back.
    pub fn used(&self) -> usize {
        self.top.load(Ordering::Relaxed)
    }
}

impl<const N: usize> Default for Arena<N> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every block returned is either a fresh, disjoint, suitably aligned
// range of the arena (`take`) or the system allocator's; each is given back
// to whichever gave it, by address.
unsafe impl<const N: usize> GlobalAlloc for Arena<N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.take(layout) {
            Some(ptr) => ptr,
            // SAFETY: the caller's `layout` contract is passed on.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.take(layout) {
            Some(ptr) => {
                // Given back blocks may be handed out again, so not zero.
                // SAFETY: `ptr` is valid for `layout.size()` bytes.
                unsafe { ptr.write_bytes(0, layout.size()) };
                ptr
            }
            // SAFETY: as in `alloc`.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(start) = self.offset_of(ptr) else {
            // SAFETY: not the arena's, so the system allocator's.
            return unsafe { System.dealloc(ptr, layout) };
        };
        // The last block given out is given back; any other stays until exit.
        let end = start + layout.size();
        let _ = self
            .top
            .compare_exchange(end, start, Ordering::Relaxed, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(start) = self.offset_of(ptr) else {
            // SAFETY: not the arena's, so the system allocator's.
            return unsafe { System.realloc(ptr, layout, new_size) };
        };
        let end = start + layout.size();
        // The last block grows or shrinks where it is, when it fits.
        if let Some(new_end) = start.checked_add(new_size).filter(|e| *e <= N)
            && self
                .top
                .compare_exchange(end, new_end, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return ptr;
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: `layout.align()` is a valid alignment and `new_size` is
        // non-zero (the caller's contract).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as in `alloc`.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are valid for the old size and disjoint
            // (the new one was handed out after the old).
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size());
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_the_last_one_is_given_back() {
        let arena: Box<Arena<4096>> = Box::default();
        unsafe {
            let a = arena.alloc(layout(3, 1));
            let b = arena.alloc(layout(16, 16));
            assert_eq!(b as usize % 16, 0);
            assert!(b as usize >= a as usize + 3);
            let used = arena.used();
            // Not the last: stays.
            arena.dealloc(a, layout(3, 1));
            assert_eq!(arena.used(), used);
            // The last: given back, and handed out again.
            arena.dealloc(b, layout(16, 16));
            assert!(arena.used() < used);
            let c = arena.alloc(layout(16, 16));
            assert_eq!(c, b);
        }
    }

    #[test]
    fn the_last_block_grows_in_place_and_others_move_with_their_bytes() {
        let arena: Box<Arena<4096>> = Box::default();
        unsafe {
            let a = arena.alloc(layout(8, 8));
            a.copy_from_nonoverlapping(b"abcdefgh".as_ptr(), 8);
            let grown = arena.realloc(a, layout(8, 8), 64);
            assert_eq!(grown, a, "the last block grows where it is");
            let b = arena.alloc(layout(8, 8));
            let moved = arena.realloc(grown, layout(64, 8), 128);
            assert_ne!(moved, grown, "a block that is not the last moves");
            assert_eq!(std::slice::from_raw_parts(moved, 8), b"abcdefgh");
            let shrunk = arena.realloc(b, layout(8, 8), 4);
            assert_eq!(shrunk, b);
        }
    }

    #[test]
    fn what_does_not_fit_comes_from_the_system_allocator() {
        let arena: Box<Arena<4096>> = Box::default();
        unsafe {
            let small = arena.alloc(layout(4000, 8));
            assert!(arena.offset_of(small).is_some());
            let big = arena.alloc(layout(1 << 20, 8));
            assert!(!big.is_null());
            assert!(arena.offset_of(big).is_none());
            big.write_bytes(7, 1 << 20);
            // Growing past the arena moves the block to the system's.
            let grown = arena.realloc(small, layout(4000, 8), 8000);
            assert!(arena.offset_of(grown).is_none());
            let grown = arena.realloc(grown, layout(8000, 8), 16000);
            arena.dealloc(grown, layout(16000, 8));
            arena.dealloc(big, layout(1 << 20, 8));
            let zeroed = arena.alloc_zeroed(layout(64, 8));
            assert!(
                std::slice::from_raw_parts(zeroed, 64)
                    .iter()
                    .all(|b| *b == 0)
            );
        }
    }

    #[test]
    fn threads_get_disjoint_blocks() {
        let arena: &'static Arena<{ 1 << 16 }> = Box::leak(Box::default());
        let handles: Vec<_> = (0..4u8)
            .map(|t| {
                std::thread::spawn(move || {
                    let mut blocks = Vec::new();
                    for _ in 0..100 {
                        unsafe {
                            let p = arena.alloc(layout(24, 8));
                            p.write_bytes(t, 24);
                            blocks.push(p as usize);
                        }
                    }
                    blocks
                })
            })
            .collect();
        let mut all: Vec<usize> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        assert!(all.windows(2).all(|w| w[1] - w[0] >= 24));
    }
}
