// `&[A]` of an atomic type is a kernel parameter every thread may update: the host passes a
// mutable view of `A`'s plain type. Only the device std's atomic types (device scope, each
// access an `atom`/`red` instruction, seen by the CPU backend's checker) say what that plain
// type is; `core`'s `AtomicU32` is refused, and the error names the types that work.
use core::sync::atomic::AtomicU32;
use sluice_macros::kernel;

#[kernel]
pub fn count(bins: &[AtomicU32], x: &[u32]) {
    let _ = (bins, x);
}

fn main() {}
