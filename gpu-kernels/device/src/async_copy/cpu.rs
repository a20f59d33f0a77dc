//! Asynchronous copies on the CPU runtime: each thread keeps its copies in flight as PTX
//! describes them — issued into an open group, closed by a commit, completed (the bytes
//! written to shared memory) only when a wait covers their group. So a kernel that reads a
//! destination before its wait sees the old bytes (the poison of fresh shared memory), as
//! it might on a GPU, instead of the new ones. Completion writes through
//! [`SharedPtr`](crate::shared::SharedPtr), bounds-checked and visible to a race checker.
//!
//! The queues live in a thread-local table of the block's OS thread, by the thread's rank,
//! tagged with the block, so that a block never sees another's copies. Copies never waited
//! for are dropped when the block's thread table is next reset: on the GPU they would land
//! in shared memory nobody reads.

use std::cell::RefCell;
use std::vec::Vec;

use crate::shared::SharedPtr;

/// One copy in flight.
#[derive(Clone, Copy)]
struct Copy16 {
    dst: u32,
    src: *const u8,
    src_bytes: u32,
}

#[derive(Default)]
struct Queue {
    open: Vec<Copy16>,
    groups: Vec<Vec<Copy16>>,
}

struct Table {
    block: u64,
    queues: Vec<Queue>,
}

std::thread_local! {
    static TABLE: RefCell<Table> = const { RefCell::new(Table { block: u64::MAX, queues: Vec::new() }) };
}

#[track_caller]
fn with_queue<R>(f: impl FnOnce(&mut Queue) -> R) -> R {
    let block = crate::thread::grid_block_rank();
    let rank = crate::thread::block_rank() as usize;
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if t.block != block {
            t.block = block;
            t.queues.clear();
        }
        if t.queues.len() <= rank {
            t.queues.resize_with(rank + 1, Queue::default);
        }
        f(&mut t.queues[rank])
    })
}

/// Writes a completed copy's bytes.
#[track_caller]
fn land(c: Copy16) {
    for i in 0..16u32 {
        // SAFETY: `src .. src + src_bytes` is readable (the issuer's contract), and the
        // kernel's parameters outlive its launch, so they still are; the destination is
        // bounds-checked by the runtime.
        unsafe {
            let b = if i < c.src_bytes { c.src.add(i as usize).read() } else { 0 };
            SharedPtr::<u8>::from_addr(c.dst + i).write(b);
        }
    }
}

#[track_caller]
fn complete_to(pending: usize) {
    let done: Vec<Vec<Copy16>> = with_queue(|q| {
        let n = q.groups.len().saturating_sub(pending);
        q.groups.drain(..n).collect()
    });
    for g in done {
        for c in g {
            land(c);
        }
    }
}

/// Queues one 16-byte chunk.
///
/// # Safety
///
/// As on the GPU: `src .. src + src_bytes` stays readable until the copy is waited for
/// (kernel parameters are, for the launch).
#[track_caller]
pub(super) unsafe fn copy16(dst: u32, src: *const u8, src_bytes: u32) {
    with_queue(|q| q.open.push(Copy16 { dst, src, src_bytes }));
}

#[track_caller]
pub(super) fn commit() {
    with_queue(|q| {
        let g = core::mem::take(&mut q.open);
        q.groups.push(g);
    });
}

#[track_caller]
pub(super) fn wait_group<const N: u32>() {
    complete_to(N as usize);
}

#[track_caller]
pub(super) fn wait_all() {
    commit();
    complete_to(0);
}
