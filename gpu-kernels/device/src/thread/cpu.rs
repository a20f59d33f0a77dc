//! `thread` on the CPU: the indices of the GPU thread the CPU runtime runs
//! ([`crate::cpu`]); outside a launch every function panics, naming itself.

use crate::cpu::block::{current, yield_now, ThreadCtx};
use crate::spec::thread::{Dim3, WARP_SIZE};

/// The current GPU thread's context.
#[inline(always)]
#[track_caller]
fn ctx(what: &'static str) -> &'static ThreadCtx {
    current(what)
}

macro_rules! special {
    ($($name:ident => $field:ident;)*) => {$(
        #[inline(always)]
        #[track_caller]
        pub(super) fn $name() -> Dim3 {
            ctx(concat!("thread::", stringify!($name))).$field
        }
    )*};
}

special! {
    thread_idx => thread_idx;
    block_idx => block_idx;
    block_dim => block_dim;
    grid_dim => grid_dim;
}

macro_rules! component {
    ($($name:ident => $field:ident . $c:ident;)*) => {$(
        #[inline(always)]
        #[track_caller]
        pub(super) fn $name() -> u32 {
            ctx(concat!("thread::", stringify!($name))).$field.$c
        }
    )*};
}

component! {
    thread_idx_x => thread_idx.x;
    thread_idx_y => thread_idx.y;
    thread_idx_z => thread_idx.z;
    block_idx_x => block_idx.x;
    block_idx_y => block_idx.y;
    block_idx_z => block_idx.z;
    block_dim_x => block_dim.x;
    block_dim_y => block_dim.y;
    block_dim_z => block_dim.z;
    grid_dim_x => grid_dim.x;
    grid_dim_y => grid_dim.y;
    grid_dim_z => grid_dim.z;
}

/// 32, inside a launch.
#[inline(always)]
#[track_caller]
pub(super) fn warp_size() -> u32 {
    ctx("thread::warp_size");
    WARP_SIZE
}

/// Lets the other threads of the block run (a spin loop waiting for another
/// thread of its block must contain a suspension point); sleeps not at all.
#[inline(always)]
#[track_caller]
pub(super) fn nanosleep(ns: u32) {
    let _ = ns;
    yield_now("thread::nanosleep");
}
