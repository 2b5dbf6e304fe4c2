//! Test builds only: the allocator of the unit-test binary, which counts every allocation made
//! by the child of ka's own spawn between its `clone` and its `execve`, and [`check`], which
//! fails the spawn when there was one. That child shares our memory and may take no lock: an
//! allocation there could deadlock on the allocator's lock or corrupt its state.
//!
//! The child runs on the parent thread's thread-local storage (the `clone` sets no new TLS), so
//! a flag it sets there marks its allocations, and the suspended parent thread, the only other
//! user of that storage, reads the count once the child is gone.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Set by the child first thing; cleared by the parent in [`check`].
    static IN_CHILD: Cell<bool> = const { Cell::new(false) };
    /// Allocator calls made while [`IN_CHILD`] was set.
    static CHILD_ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// The allocator of the unit-test binary: [`System`], counting the child's calls.
struct Guard;

// SAFETY: every call is passed on to `System` unchanged; the count only touches thread-locals
// that are constant-initialised and need no destructor (no allocation, usable at any time).
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GUARD: Guard = Guard;

fn count() {
    if IN_CHILD.get() {
        CHILD_ALLOCATIONS.set(CHILD_ALLOCATIONS.get() + 1);
    }
}

/// Called by the child first: from here its allocations are counted.
pub(super) fn enter_child() {
    IN_CHILD.set(true);
}

/// Called by the parent once the child is gone: panics if it allocated, and resets the count.
pub(super) fn check() {
    IN_CHILD.set(false);
    let allocations = CHILD_ALLOCATIONS.replace(0);
    assert_eq!(
        allocations, 0,
        "the child of the own spawn allocated between clone and execve"
    );
}
