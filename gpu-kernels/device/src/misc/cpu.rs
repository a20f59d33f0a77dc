//! `misc` on the CPU: the host's clocks, for the GPU thread the CPU runtime runs
//! ([`crate::cpu`]); each function panics outside a launch.

use crate::cpu::block::current;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

#[track_caller]
pub(super) fn clock() -> u32 {
    current("misc::clock");
    epoch().elapsed().as_nanos() as u32
}

#[track_caller]
pub(super) fn clock64() -> u64 {
    current("misc::clock64");
    epoch().elapsed().as_nanos() as u64
}

#[track_caller]
pub(super) fn global_timer_ns() -> u64 {
    current("misc::global_timer_ns");
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

#[track_caller]
pub(super) fn sm_id() -> u32 {
    current("misc::sm_id");
    rayon::current_thread_index().unwrap_or(0) as u32
}

#[track_caller]
pub(super) fn trap() -> ! {
    current("misc::trap");
    panic!("trap")
}
