//! Micro-costs of the CPU runtime (not a test): per thread and per suspension.
use sluice_device::warp::{self, FULL_MASK};
use sluice_device::{cpu, sync, thread};
use std::time::Instant;

fn main() {
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
        let tile = sluice_device::shared_array!(TILE: [u32; 256]);
        let t = thread::thread_idx_x() as usize;
        let mut v = 0u32;
        for k in 0..16 {
            tile.set((t + k) % 256, k as u32);
            v = v.wrapping_add(tile.get((t + 3 * k) % 256));
        }
        std::hint::black_box(v);
    });
    time("16 x shfl_xor", 16.0, &|| {
        let mut v = thread::thread_idx_x();
        for k in 0..16 {
            // SAFETY: full warps, every lane.
            v ^= unsafe { warp::shfl_xor(FULL_MASK, v, k & 31) };
        }
        std::hint::black_box(v);
    });
}
