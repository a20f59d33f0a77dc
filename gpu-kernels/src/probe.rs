//! Kernels for the reliability tests (`tests/gpu_faults.rs`, `tests/gpu_first_launch.rs`):
//! one that runs for a given time and can fail on purpose, one that prints.

use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::{dfail, dprintln, misc, thread};

/// Every thread spins for `cycles` of its multiprocessor's clock (`clock64`; on the CPU
/// backend, nanoseconds), then writes `1` to its element of `out`; the thread whose
/// global index is `fail_at` fails with `dfail!` instead (`u32::MAX`: none does). Any 1-D
/// launch.
#[kernel]
pub fn spin_then_fail(out: DeviceSliceMut<u32>, cycles: u64, fail_at: u32) {
    let start = misc::clock64();
    while misc::clock64().wrapping_sub(start) < cycles {}
    if thread::index_1d() == fail_at as u64 {
        dfail!("spin_then_fail: failing as asked");
    }
    let mut out = out;
    if let Some(o) = out.for_thread_1d() {
        *o = 1;
    }
}

/// Writes `tag` to `out[i]`; thread 0 also prints one line with `tag` (`dprintln!`), so
/// this kernel needs the driver's printf machinery. Any 1-D launch.
#[kernel]
pub fn tag_and_print(mut out: DeviceSliceMut<u32>, tag: u32) {
    if thread::index_1d() == 0 {
        dprintln!("tag_and_print: tag %u", tag);
    }
    for (_, o) in out.grid_stride() {
        *o = tag;
    }
}

/// Thread 0 writes `1` at index `at` with `DeviceSliceMut::write` (the general indexed
/// write); past the end that is a fault, located at this line (the kernel's, not the
/// device std's), so the host names this kernel and its lane. Any 1-D launch.
#[kernel]
pub fn write_at(out: DeviceSliceMut<u32>, at: u32) {
    if thread::index_1d() == 0 {
        // SAFETY: only thread 0 writes, one element: no other thread touches it.
        unsafe { out.write(at as usize, 1) };
    }
}
