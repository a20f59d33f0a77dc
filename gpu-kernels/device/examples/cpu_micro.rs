//! Micro-costs of the CPU runtime (not a test): per thread and per suspension.
//!
//! `cpu::launch` checks as `SLUICE_CPU_CHECK` (else the build) says: run it with
//! `SLUICE_CPU_CHECK=0` and `=1` to compare the checking mode's costs.
use sluice_device::slice::DeviceSliceMut;
use sluice_device::warp::{self, FULL_MASK};
use sluice_device::{cpu, sync, thread};
use std::time::Instant;

/// The output of the slice case: a pointer the kernel closure may capture.
struct Out(*mut u32);
// SAFETY: each GPU thread writes its own element only (`for_thread`).
unsafe impl Sync for Out {}

fn main() {
    println!("checking mode: {:?}", cpu::CpuCheck::auto());
    let (grid, block) = (256u32, 256u32);
    let threads = (grid * block) as f64;
    let time = |name: &str, per: f64, body: &(dyn Fn() + Sync)| {
        cpu::launch([grid, 1, 1], [block, 1, 1], 0, body).unwrap();
        let t = Instant::now();
        for _ in 0..3 {
            cpu::launch([grid, 1, 1], [block, 1, 1], 0, body).unwrap();
        }
        let ns = t.elapsed().as_secs_f64() * 1e9 / 3.0 / threads / per;
        println!("{name:<40} {ns:8.1} ns per thread{}", if per > 1.0 { " per operation" } else { "" });
    };
    time("empty body", 1.0, &|| {});
    time("index_1d", 1.0, &|| {
        std::hint::black_box(thread::index_1d());
    });
    time("16 x sync_threads", 16.0, &|| {
        for _ in 0..16 {
            sync::sync_threads();
        }
    });
    time("16 x shared set + get", 16.0, &|| {
        // Each thread its own elements (a race-free kernel: the checking mode accepts it).
        let tile = sluice_device::shared_array!(TILE: [u32; 16 * 256]);
        let t = thread::thread_idx_x() as usize;
        let mut v = 0u32;
        for k in 0..16 {
            tile.set(k * 256 + t, k as u32);
            v = v.wrapping_add(tile.get(k * 256 + t));
        }
        std::hint::black_box(v);
    });
    time("16 x shared get of a tile (broadcast)", 16.0, &|| {
        let tile = sluice_device::shared_array!(TILE: [u32; 256]);
        let t = thread::thread_idx_x() as usize;
        tile.set(t, t as u32);
        sync::sync_threads();
        let mut v = 0u32;
        for k in 0..16 {
            v = v.wrapping_add(tile.get((t + 7 * k) % 256));
        }
        std::hint::black_box(v);
    });
    let mut out = vec![0u32; (grid * block) as usize];
    let p = Out(out.as_mut_ptr());
    let len = out.len() as u64;
    let p = &p;
    time("a slice element (for_thread)", 1.0, &|| {
        // SAFETY: `out` lives through the launches, one element per thread.
        let mut s = unsafe { DeviceSliceMut::from_raw_parts(p.0, len) };
        if let Some(o) = s.for_thread() {
            *o += 1;
        }
    });
    time("16 x sync_warp", 16.0, &|| {
        for _ in 0..16 {
            // SAFETY: full warps, every lane.
            unsafe { warp::sync_warp(FULL_MASK) };
        }
    });
    time("16 x shfl_xor", 16.0, &|| {
        let mut v = thread::thread_idx_x();
        for k in 0..16 {
            // SAFETY: full warps, every lane.
            v ^= unsafe { warp::shfl_xor(FULL_MASK, v, k & 31) };
        }
        std::hint::black_box(v);
    });
    drop(out);
}
