//! Asynchronous copies on the CPU runtime: each thread keeps its copies in flight as PTX
//! describes them — issued into an open group, closed by a commit, completed (the bytes
//! written to shared memory) only when a wait covers their group. So a kernel that reads a
//! destination before its wait sees the old bytes (the poison of fresh shared memory), as
//! it might on a GPU, instead of the new ones. Completion writes through
//! [`SharedPtr`](crate::shared::SharedPtr), bounds-checked and seen by the checking mode
//! ([`crate::cpu`]) as the issuing thread's writes, at the wait that completes them (where
//! they become visible to that thread on a GPU; the barrier after the wait orders them for
//! the others), and at the issue too (the bytes may land any time in between): another
//! thread's access of the destination in the barrier interval or the wait's is a
//! reported race. An access in an interval in between is not seen (the type-state of
//! [`super`] rules it out for safe code).
//!
//! The queues are the family's per-block state in the CPU runtime ([`crate::cpu`]): one
//! per thread of the block, reset with the block, so that a block never sees another's
//! copies. Copies never waited for are dropped with the block: on the GPU they would land
//! in shared memory nobody reads.

use core::cell::RefCell;
use std::vec::Vec;

use crate::cpu::block::{current, Launch, Local, LocalKey};
use crate::shared::SharedPtr;

/// One copy in flight: its destination and the 16 bytes it will write there (the source
/// read at the issue, zero-filled past `src_bytes`: a copy may read its source any time
/// until its wait, and reading it at once never reads memory freed before the wait).
#[derive(Clone, Copy)]
struct Copy16 {
    dst: u32,
    bytes: [u8; 16],
}

/// One thread's copies: the open group and the committed ones, oldest first.
#[derive(Default)]
struct Queue {
    open: Vec<Copy16>,
    groups: Vec<Vec<Copy16>>,
}

/// The block's threads' queues.
struct Queues(Vec<RefCell<Queue>>);

impl Local for Queues {
    fn new(launch: &Launch) -> Queues {
        Queues((0..launch.block.volume()).map(|_| RefCell::new(Queue::default())).collect())
    }

    fn reset(&mut self) {
        for q in &self.0 {
            let mut q = q.borrow_mut();
            q.open.clear();
            q.groups.clear();
        }
    }
}

static QUEUES: LocalKey<Queues> = LocalKey::new();

#[track_caller]
fn with_queue<R>(what: &'static str, f: impl FnOnce(&mut Queue) -> R) -> R {
    let ctx = current(what);
    let queues = QUEUES.get(ctx.block());
    let mut q = queues.0[ctx.rank as usize].borrow_mut();
    f(&mut q)
}

/// Writes a completed copy's bytes.
#[track_caller]
fn land(c: Copy16) {
    for (i, b) in c.bytes.into_iter().enumerate() {
        // SAFETY: the destination is bounds-checked by the runtime (`shared`'s CPU side).
        unsafe { SharedPtr::<u8>::from_addr(c.dst + i as u32).write(b) };
    }
}

/// Completes this thread's oldest groups until at most `pending` are in flight.
#[track_caller]
fn complete_to(pending: usize) {
    let done: Vec<Vec<Copy16>> = with_queue("cp.async.wait_group", |q| {
        let n = q.groups.len().saturating_sub(pending);
        q.groups.drain(..n).collect()
    });
    for c in done.into_iter().flatten() {
        land(c);
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
    // The checker sees the destination written from here on (the copy may land any time
    // until its wait, where `land` writes it), so a thread still reading it is a race.
    crate::shared::imp::note_pending_write(dst, 16);
    let mut bytes = [0u8; 16];
    for (i, b) in bytes.iter_mut().enumerate().take(src_bytes.min(16) as usize) {
        // SAFETY: `src .. src + src_bytes` is readable now (the caller's contract).
        *b = unsafe { src.add(i).read() };
    }
    with_queue("cp.async", |q| q.open.push(Copy16 { dst, bytes }));
}

/// [`copy16`] of 16 bytes if `read`, else of none (16 zeros; `src` not read).
///
/// # Safety
///
/// As [`copy16`], for `src .. src + 16` if `read`.
#[track_caller]
pub(super) unsafe fn copy16_or_zero(dst: u32, src: *const u8, read: bool) {
    // SAFETY: forwarded (with no bytes to read when `!read`).
    unsafe { copy16(dst, src, if read { 16 } else { 0 }) }
}

/// Every address is a global one on the CPU (copies read their source at the issue).
pub(super) fn is_global(_ptr: *const u8) -> bool {
    true
}

#[track_caller]
pub(super) fn commit() {
    with_queue("cp.async.commit_group", |q| {
        let g = core::mem::take(&mut q.open);
        q.groups.push(g);
    });
}

#[track_caller]
pub(super) fn wait_group<const N: u32>() {
    complete_to(N as usize);
}

#[track_caller]
/// Nothing on the CPU: the runtime's shared memory has one proxy.
pub(super) fn publish_for_async_proxy() {}

pub(super) fn wait_all() {
    commit();
    complete_to(0);
}
