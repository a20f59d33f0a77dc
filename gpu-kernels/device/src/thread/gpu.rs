//! `thread` on the GPU: special registers (`%tid`, `%ctaid`, `%ntid`, `%nctaid`,
//! `WARP_SZ`) and `nanosleep`.

use crate::spec::thread::Dim3;
use core::arch::nvptx;

macro_rules! special {
    ($($name:ident => $x:ident, $y:ident, $z:ident;)*) => {$(
        #[inline(always)]
        pub(super) fn $name() -> Dim3 {
            // SAFETY: reading a special register has no preconditions inside a kernel.
            unsafe { Dim3 { x: nvptx::$x() as u32, y: nvptx::$y() as u32, z: nvptx::$z() as u32 } }
        }
    )*};
}

special! {
    thread_idx => _thread_idx_x, _thread_idx_y, _thread_idx_z;
    block_idx => _block_idx_x, _block_idx_y, _block_idx_z;
    block_dim => _block_dim_x, _block_dim_y, _block_dim_z;
    grid_dim => _grid_dim_x, _grid_dim_y, _grid_dim_z;
}

macro_rules! component {
    ($($name:ident => $intr:ident;)*) => {$(
        #[inline(always)]
        pub(super) fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions inside a kernel.
            unsafe { nvptx::$intr() as u32 }
        }
    )*};
}

/// An index special register below its extent's: `%tid.x < %ntid.x`, `%ctaid.x <
/// %nctaid.x`, ... The hardware guarantees it; LLVM's ranges of the registers (`%tid.x <
/// 1024`, `%ntid.x <= 1024`) do not relate the two, so the read tells it: after a kernel
/// has checked its block shape (`block_dim_x() == 32`), an index computed from
/// `thread_idx_x()` is known below 32 and the bounds check it feeds folds away.
macro_rules! index_below {
    ($($name:ident => $intr:ident < $extent:ident;)*) => {$(
        #[inline(always)]
        pub(super) fn $name() -> u32 {
            // SAFETY: reading special registers has no preconditions inside a kernel, and
            // an index register is below its extent register (PTX ISA, "Special
            // Registers").
            unsafe {
                let (i, n) = (nvptx::$intr() as u32, nvptx::$extent() as u32);
                core::hint::assert_unchecked(i < n);
                i
            }
        }
    )*};
}

index_below! {
    thread_idx_x => _thread_idx_x < _block_dim_x;
    thread_idx_y => _thread_idx_y < _block_dim_y;
    thread_idx_z => _thread_idx_z < _block_dim_z;
    block_idx_x => _block_idx_x < _grid_dim_x;
    block_idx_y => _block_idx_y < _grid_dim_y;
    block_idx_z => _block_idx_z < _grid_dim_z;
}

component! {
    block_dim_x => _block_dim_x;
    block_dim_y => _block_dim_y;
    block_dim_z => _block_dim_z;
    grid_dim_x => _grid_dim_x;
    grid_dim_y => _grid_dim_y;
    grid_dim_z => _grid_dim_z;
}

/// `WARP_SZ`.
#[inline(always)]
pub(super) fn warp_size() -> u32 {
    let r: u32;
    // SAFETY: reads a special register.
    unsafe {
        core::arch::asm!("mov.u32 {r}, WARP_SZ;", r = out(reg32) r, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

/// `nanosleep.u32`.
#[inline(always)]
pub(super) fn nanosleep(ns: u32) {
    // SAFETY: no operands besides the delay; no memory is accessed.
    unsafe { core::arch::asm!("nanosleep.u32 {n};", n = in(reg32) ns, options(nomem, nostack, preserves_flags)) }
}
