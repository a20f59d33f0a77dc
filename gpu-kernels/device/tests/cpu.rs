//! The CPU runtime (`sluice_device::cpu`): small kernels written as closures,
//! run through `cpu::launch`, checked against the semantics the crate docs
//! prescribe (CUDA's). Assertions inside a kernel fail the launch with the
//! thread and the location, so `launch(..).unwrap()` reports them.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use sluice_device::atomic::{self, AtomicF32, AtomicF64, AtomicI32, AtomicU32 as DevAtomicU32, Ordering};
use sluice_device::shared::{self, SharedPtr};
use sluice_device::slice::DeviceSliceMut;
use sluice_device::thread::{self, Dim3};
use sluice_device::warp::{self, shfl_c, shfl_source, ShflMode, FULL_MASK};
use sluice_device::{cpu, dassert, dprintln, misc, shared_array, shared_static, sync, MemoryScope};

fn volume(d: [u32; 3]) -> u64 {
    d.iter().map(|&x| x as u64).product()
}

/// A raw pointer the kernel closure may capture (the blocks run on several
/// OS threads): each test says which thread touches which element.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);

impl<T> Shared<T> {
    /// The pointer (a method, so that a closure captures the whole `Sync` wrapper).
    fn ptr(&self) -> *mut T {
        self.0
    }
}
// SAFETY: only a pointer; every test accesses distinct elements from distinct
// threads, or only through atomics.
unsafe impl<T> Sync for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Send for Shared<T> {}

/// `cpu::launch`, never checked: for the tests of what the runtime does with code CUDA's
/// rules leave undefined (early exits before barriers, reads of unwritten shared memory,
/// shuffles from lanes outside the group), which the checking mode reports
/// (`tests/check.rs`).
fn unchecked(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: u32,
    body: &(dyn Fn() + Sync),
) -> Result<(), String> {
    let launch = cpu::CpuLaunch { kernel: "(closure)", grid, block, dynamic_shared_bytes, check: cpu::CpuCheck::Off };
    cpu::run(&launch, body).map_err(|e| e.to_string())
}

fn counters(n: u64) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

#[test]
fn indices_in_1d_2d_and_3d() {
    for (grid, block) in
        [([5, 1, 1], [64, 1, 1]), ([3, 2, 1], [8, 4, 1]), ([2, 3, 2], [4, 3, 2]), ([1, 1, 1], [1, 1, 1])]
    {
        let n = volume(grid) * volume(block);
        let seen = counters(n);
        cpu::launch(grid, block, 0, &|| {
            let (t, b, bd, gd) = (thread::thread_idx(), thread::block_idx(), thread::block_dim(), thread::grid_dim());
            assert_eq!(bd, Dim3::new(block[0], block[1], block[2]));
            assert_eq!(gd, Dim3::new(grid[0], grid[1], grid[2]));
            assert!(t.x < bd.x && t.y < bd.y && t.z < bd.z && b.x < gd.x && b.y < gd.y && b.z < gd.z);
            assert_eq!((thread::thread_idx_x(), thread::thread_idx_y(), thread::thread_idx_z()), (t.x, t.y, t.z));
            assert_eq!((thread::block_idx_x(), thread::block_idx_y(), thread::block_idx_z()), (b.x, b.y, b.z));
            assert_eq!((thread::block_dim_x(), thread::grid_dim_z()), (bd.x, gd.z));
            let g = |b: u32, d: u32, t: u32| b as u64 * d as u64 + t as u64;
            assert_eq!(thread::index_1d(), g(b.x, bd.x, t.x));
            assert_eq!(thread::index_2d(), (g(b.x, bd.x, t.x), g(b.y, bd.y, t.y)));
            assert_eq!(thread::index_3d(), (g(b.x, bd.x, t.x), g(b.y, bd.y, t.y), g(b.z, bd.z, t.z)));
            assert_eq!(thread::index_3d_u32(), Dim3::new(b.x * bd.x + t.x, b.y * bd.y + t.y, b.z * bd.z + t.z));
            assert_eq!(thread::block_rank(), (t.z * bd.y + t.y) * bd.x + t.x);
            assert_eq!(thread::grid_block_rank(), (b.z as u64 * gd.y as u64 + b.y as u64) * gd.x as u64 + b.x as u64);
            assert_eq!(thread::block_size(), bd.x * bd.y * bd.z);
            assert_eq!(thread::total_threads(), n);
            assert_eq!(
                thread::grid_size_3d(),
                (gd.x as u64 * bd.x as u64, gd.y as u64 * bd.y as u64, gd.z as u64 * bd.z as u64)
            );
            assert_eq!(thread::warp_idx(), thread::block_rank() / 32);
            assert_eq!(warp::lane_id(), thread::block_rank() % 32);
            assert_eq!(thread::warp_size(), 32);
            seen[thread::global_rank() as usize].fetch_add(1, Relaxed);
        })
        .unwrap();
        assert!(seen.iter().all(|c| c.load(Relaxed) == 1), "grid {grid:?} block {block:?}: every rank once");
    }
}

/// `#[kernel(dims = 1)]`'s check on the CPU backend (where the host may have no PTX to read
/// the kernel's record from): a launch that is not 1-D fails with a message, a 1-D one runs.
#[test]
fn a_1d_kernel_checks_its_launch_on_the_cpu() {
    for (grid, block) in
        [([2, 2, 1], [4, 1, 1]), ([2, 1, 2], [4, 1, 1]), ([2, 1, 1], [2, 2, 1]), ([1, 1, 1], [1, 1, 3])]
    {
        let e = cpu::launch(grid, block, 0, &sluice_device::slice::__check_1d_launch).expect_err("not 1-D");
        assert!(e.contains("dims = 1") && e.contains("not 1-D"), "grid {grid:?} block {block:?}: {e}");
    }
    assert!(cpu::launch([3, 1, 1], [5, 1, 1], 0, &sluice_device::slice::__check_1d_launch).is_ok());
}

/// `#[kernel(block = (x, y, z))]`'s check on the CPU backend: a launch with another block
/// fails with a message, one with the declared block runs.
#[test]
fn a_kernel_of_one_block_shape_checks_its_launch_on_the_cpu() {
    let check = || sluice_device::slice::__check_block(32, 8, 1);
    for block in [[16, 16, 1], [32, 8, 2], [256, 1, 1], [8, 32, 1]] {
        let e = cpu::launch([2, 2, 1], block, 0, &check).expect_err("another block");
        let launched = format!("launched with block ({}, {}, {})", block[0], block[1], block[2]);
        assert!(e.contains("block = (32, 8, 1)") && e.contains(&launched), "block {block:?}: {e}");
    }
    assert!(cpu::launch([3, 2, 1], [32, 8, 1], 0, &check).is_ok());
}

#[test]
fn barriers_order_shared_memory_and_reduce_predicates() {
    let sums = counters(4);
    cpu::launch([4, 1, 1], [128, 1, 1], 0, &|| {
        let tile = shared_array!(TILE: [u32; 128]);
        let (t, b) = (thread::thread_idx_x(), thread::block_idx_x());
        tile.set(t as usize, t * 3 + b);
        sync::sync_threads();
        let next = (t + 1) % 128;
        assert_eq!(tile.get(next as usize), next * 3 + b);
        sync::sync_threads();
        // A barrier inside a loop: a tree reduction.
        tile.set(t as usize, t);
        sync::sync_threads();
        let mut stride = 64;
        while stride > 0 {
            if t < stride {
                tile.set(t as usize, tile.get(t as usize) + tile.get((t + stride) as usize));
            }
            sync::sync_threads();
            stride /= 2;
        }
        if t == 0 {
            sums[b as usize].store(tile.get(0), Relaxed);
        }
        assert_eq!(sync::sync_threads_count(t % 3 == 0), 43);
        assert!(sync::sync_threads_and(t < 128));
        assert!(!sync::sync_threads_and(t < 127));
        assert!(sync::sync_threads_or(t == 127));
        assert!(!sync::sync_threads_or(t == 500));
    })
    .unwrap();
    assert!(sums.iter().all(|s| s.load(Relaxed) == 127 * 128 / 2));
}

#[test]
fn barriers_wait_for_non_exited_threads_only() {
    unchecked([2, 1, 1], [64, 1, 1], 0, &|| {
        let t = thread::thread_idx_x();
        if t >= 48 {
            return;
        }
        assert_eq!(sync::sync_threads_count(true), 48);
        if t >= 40 {
            return;
        }
        sync::sync_threads();
        assert_eq!(sync::sync_threads_count(t < 10), 10);
    })
    .unwrap();
}

#[test]
fn named_barriers_pair_producers_and_consumers() {
    cpu::launch([3, 1, 1], [128, 1, 1], 0, &|| {
        let buf = shared_array!(BUF: [u32; 64]);
        let t = thread::thread_idx_x();
        for round in 0..3 {
            if t < 64 {
                buf.set(t as usize, t + 1000 * round);
                // SAFETY: 128 threads (4 whole warps) use barrier 1 per round.
                unsafe { sync::barrier_arrive(1, 128) };
            } else {
                // SAFETY: as above.
                unsafe { sync::barrier_sync(1, 128) };
                assert_eq!(buf.get((t - 64) as usize), t - 64 + 1000 * round);
            }
            // Barrier 2 for the consumers only (two warps), then everyone.
            if t >= 64 {
                // SAFETY: exactly the 64 consumer threads use barrier 2.
                unsafe { sync::barrier_sync(2, 64) };
            }
            sync::sync_threads();
        }
    })
    .unwrap();
}

shared_static! {
    static mut STAGE: [MaybeUninit<u64>; 32] = [MaybeUninit::uninit(); 32];
}

#[test]
fn shared_memory_is_per_block_static_and_dynamic() {
    let addrs: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(0)).collect();
    let dyn_bytes = 64 * 4 + 8;
    cpu::launch([8, 1, 1], [64, 1, 1], dyn_bytes, &|| {
        let (t, b) = (thread::thread_idx_x(), thread::block_idx_x());
        let tile = shared_array!(TILE: [u32; 64]);
        let other = shared_array!(OTHER: [f64; 3]);
        let dynamic = shared::dynamic_shared::<u32>();
        assert_eq!(dynamic.len(), 66);
        assert_eq!(shared::dynamic_shared_bytes(), dyn_bytes);
        assert_eq!(shared::dynamic_shared_ptr::<u8>() as usize % 16, 0);
        let raw: *mut u16 = shared_array![u16; 64];
        // Every thread of a block sees the same addresses; arrays do not overlap.
        let here = tile.as_generic_ptr() as u64;
        let prev = addrs[b as usize].compare_exchange(0, here, Relaxed, Relaxed);
        assert!(prev.is_ok() || prev == Err(here), "one address per block");
        assert_eq!(tile.as_generic_ptr() as usize % 16, 0);
        let span = |p: u64, n: u64| p..p + n;
        let (a, o, r) = (span(here, 256), span(other.as_generic_ptr() as u64, 24), span(raw as u64, 128));
        assert!(a.end <= o.start || o.end <= a.start);
        assert!(a.end <= r.start || r.end <= a.start);
        tile.set(t as usize, b * 1000 + t);
        dynamic.set(t as usize, b * 7 + t);
        // SAFETY: each thread writes its own element of the 64 `u16`s.
        unsafe { raw.add(t as usize).write(t as u16) };
        if t < 32 {
            // SAFETY: each thread below 32 writes its own element; the barrier
            // below orders the writes before the reads.
            unsafe { (&mut *std::ptr::addr_of_mut!(STAGE))[t as usize].write(t as u64 * b as u64) };
        }
        sync::sync_threads();
        let m = 63 - t;
        assert_eq!(tile.get(m as usize), b * 1000 + m);
        assert_eq!(dynamic.get(m as usize), b * 7 + m);
        // SAFETY: element `m` was written before the barrier.
        assert_eq!(unsafe { raw.add(m as usize).read() }, m as u16);
        if t < 32 {
            // SAFETY: written before the barrier by thread 31 - t.
            let v = unsafe { (&*std::ptr::addr_of!(STAGE))[(31 - t) as usize].assume_init() };
            assert_eq!(v, (31 - t) as u64 * b as u64);
        }
        // The atomics of a shared array are the block's.
        let hits = shared_array!(HITS: [u32; 1]);
        if t == 0 {
            hits.set(0, 0);
        }
        sync::sync_threads();
        hits.fetch_add(0, 1);
        sync::sync_threads();
        assert_eq!(hits.get(0), 64);
    })
    .unwrap();
    // (Blocks that run one after another on one OS thread reuse one buffer.)
    assert!(addrs.iter().all(|a| a.load(Relaxed) != 0));
}

#[test]
fn in_kernel_shared_statics_as_cuda_std_kernels_declare_them() {
    cpu::launch([3, 1, 1], [32, 1, 1], 8, &|| {
        shared_static! {
            @kernel static mut ROW: [MaybeUninit<f32>; 32] = [MaybeUninit::uninit(); 32];
        }
        // What the kernel attribute's prologue does on the device (on the host it
        // allocates early; the first use would too).
        // SAFETY: once per kernel body, before any use.
        unsafe { shared::__declare_in_kernel(std::ptr::addr_of!(ROW)) };
        let t = thread::thread_idx_x() as usize;
        // SAFETY: each thread writes its own element; the barrier orders the reads.
        unsafe { (&mut *std::ptr::addr_of_mut!(ROW))[t].write(t as f32 * 0.5) };
        sync::sync_threads();
        // SAFETY: element 31 - t was written before the barrier.
        let v = unsafe { (&*std::ptr::addr_of!(ROW))[31 - t].assume_init() };
        assert_eq!(v, (31 - t) as f32 * 0.5);
        assert_eq!(shared::total_shared_bytes(), 8 + 32 * 4);
    })
    .unwrap();
}

#[test]
fn unwritten_shared_memory_reads_the_poison() {
    unchecked([2, 1, 1], [32, 1, 1], 16, &|| {
        let ints = shared_array!(INTS: [u32; 8]);
        let floats = shared_array!(FLOATS: [f32; 8]);
        assert_eq!(ints.get(3), u32::MAX);
        assert!(floats.get(5).is_nan());
        assert_eq!(shared::dynamic_shared::<i32>().get(2), -1);
        assert_eq!(cpu::SHARED_POISON, 0xff);
        sync::sync_threads();
        if thread::thread_idx_x() == 0 {
            ints.set(3, 5);
        }
    })
    .unwrap();
}

#[test]
fn a_shared_index_out_of_bounds_fails_the_launch_at_the_callers_line() {
    let line = line!() + 4;
    let err = cpu::launch([1, 1, 1], [32, 1, 1], 0, &|| {
        let tile = shared_array!(TILE: [u32; 32]);
        let t = thread::thread_idx_x() as usize;
        tile.set(t + 1, 0);
    })
    .unwrap_err();
    assert!(err.starts_with("block (0, 0, 0), thread (31, 0, 0): panicked at "), "{err}");
    assert!(err.contains(&format!("tests/cpu.rs:{line}:")), "{err}");
    assert!(err.ends_with("shared memory index out of bounds"), "{err}");
    // A raw `SharedPtr` outside the block's shared memory is a panic too, not a wild access.
    let err = cpu::launch([1, 1, 1], [1, 1, 1], 0, &|| {
        let _ = shared_array!(SMALL: [u32; 4]);
        // SAFETY: deliberately outside: the CPU runtime checks it.
        let _ = unsafe { SharedPtr::<u32>::from_addr(1 << 20).read() };
    })
    .unwrap_err();
    assert!(err.contains("shared memory access out of bounds"), "{err}");
}

fn expect_shfl<T: PartialEq + std::fmt::Debug>(got: (T, bool), want: (T, bool), what: &str) {
    assert_eq!(got, want, "{what}, lane {}", warp::lane_id());
}

#[test]
fn shuffles_read_the_lanes_ptx_defines() {
    cpu::launch([2, 1, 1], [64, 1, 1], 0, &|| {
        let tid = thread::thread_idx_x();
        let (lane, base) = (tid % 32, tid - tid % 32);
        let value = |l: u32| (base + l) * 3 + 1;
        // SAFETY: (all shuffles) both warps are full and every lane makes every call.
        unsafe {
            for (mode, name) in
                [(ShflMode::Idx, "idx"), (ShflMode::Up, "up"), (ShflMode::Down, "down"), (ShflMode::Xor, "xor")]
            {
                for width in [1, 2, 4, 8, 16, 32] {
                    for b in [0, 1, 3, 5, 17, 31, lane, 32 + 2] {
                        let v = value(lane);
                        let got = match mode {
                            ShflMode::Idx => warp::shfl_idx_width(FULL_MASK, v, b, width),
                            ShflMode::Up => warp::shfl_up_width(FULL_MASK, v, b, width),
                            ShflMode::Down => warp::shfl_down_width(FULL_MASK, v, b, width),
                            ShflMode::Xor => warp::shfl_xor_width(FULL_MASK, v, b, width),
                        };
                        let (src, p) = shfl_source(mode, lane, b, shfl_c(mode, width));
                        expect_shfl(got, (value(src), p), &format!("shfl_{name}_width(b {b}, width {width})"));
                    }
                }
            }
            let full = |mode| shfl_c(mode, 32);
            assert_eq!(warp::shfl_idx(FULL_MASK, value(lane), 5), value(5));
            assert_eq!(
                warp::shfl_up(FULL_MASK, value(lane), 1),
                value(shfl_source(ShflMode::Up, lane, 1, full(ShflMode::Up)).0)
            );
            assert_eq!(
                warp::shfl_down(FULL_MASK, value(lane), 1),
                value(shfl_source(ShflMode::Down, lane, 1, full(ShflMode::Down)).0)
            );
            assert_eq!(warp::shfl_xor(FULL_MASK, value(lane), 1), value(lane ^ 1));
            // Every width of value.
            assert_eq!(
                warp::shfl_xor(FULL_MASK, (tid as u64) << 33 | tid as u64, 2),
                ((tid ^ 2) as u64) << 33 | (tid ^ 2) as u64
            );
            assert_eq!(warp::shfl_down(FULL_MASK, -(tid as f64), 2), -((if lane < 30 { tid + 2 } else { tid }) as f64));
            assert_eq!(warp::shfl_idx(FULL_MASK, -(tid as i8), 0), -(base as i8));
            assert_eq!(
                warp::shfl_up(FULL_MASK, tid as i16 - 40, 2),
                if lane < 2 { tid as i16 - 40 } else { tid as i16 - 42 }
            );
            let wide = (tid as u128) << 100 | tid as u128;
            assert_eq!(warp::shfl_idx(FULL_MASK, wide, 31), ((base + 31) as u128) << 100 | (base + 31) as u128);
            assert_eq!(warp::shfl_idx(FULL_MASK, tid as f32 + 0.5, 7), (base + 7) as f32 + 0.5);
            assert_eq!(warp::sum_f32(lane as f32), 496.0);
        }
    })
    .unwrap();
}

#[test]
fn votes_match_and_reductions() {
    cpu::launch([1, 1, 1], [64, 1, 1], 0, &|| {
        let tid = thread::thread_idx_x();
        let lane = tid % 32;
        // SAFETY: (all warp operations) both warps are full and converged.
        unsafe {
            assert_eq!(warp::ballot(FULL_MASK, lane.is_multiple_of(3)), 0x4924_9249);
            assert!(warp::any(FULL_MASK, lane == 7));
            assert!(!warp::any(FULL_MASK, false));
            assert!(warp::all(FULL_MASK, true));
            assert!(!warp::all(FULL_MASK, lane < 31));
            assert_eq!(warp::match_any(FULL_MASK, lane / 4), 0xf << (4 * (lane / 4)));
            assert_eq!(
                warp::match_any_u64(FULL_MASK, (lane as u64 & 1) << 40),
                if lane.is_multiple_of(2) { 0x5555_5555 } else { 0xaaaa_aaaa }
            );
            assert_eq!(warp::match_all(FULL_MASK, 5), Some(FULL_MASK));
            assert_eq!(warp::match_all(FULL_MASK, lane), None);
            assert_eq!(warp::match_all_u64(FULL_MASK, 1 << 50), Some(FULL_MASK));
            assert_eq!(warp::reduce_add_u32(FULL_MASK, lane), 496);
            assert_eq!(warp::reduce_add_i32(FULL_MASK, lane as i32 - 20), 496 - 640);
            assert_eq!(warp::reduce_min_u32(FULL_MASK, lane + 3), 3);
            assert_eq!(warp::reduce_max_u32(FULL_MASK, lane + 3), 34);
            assert_eq!(warp::reduce_min_i32(FULL_MASK, lane as i32 - 20), -20);
            assert_eq!(warp::reduce_max_i32(FULL_MASK, -(lane as i32)), 0);
            assert_eq!(warp::reduce_and_u32(FULL_MASK, !(1 << lane)), 0);
            assert_eq!(warp::reduce_or_u32(FULL_MASK, 1 << lane), FULL_MASK);
            assert_eq!(warp::reduce_xor_u32(FULL_MASK, lane), 0);
            warp::sync_warp(FULL_MASK);
            assert_eq!(warp::lane_mask_lt(), (1u32 << lane) - 1);
            assert_eq!(warp::lane_mask_le(), ((1u64 << (lane + 1)) - 1) as u32);
            assert_eq!(warp::lane_mask_eq(), 1 << lane);
            assert_eq!(warp::lane_mask_gt(), !warp::lane_mask_le());
            assert_eq!(warp::active_mask(), FULL_MASK);
        }
    })
    .unwrap();
}

#[test]
fn divergent_warps_partial_warps_and_exited_lanes() {
    unchecked([2, 1, 1], [48, 1, 1], 0, &|| {
        let tid = thread::thread_idx_x();
        let lane = tid % 32;
        // SAFETY: each call's mask is exactly the lanes that reach it (or those
        // of them that have not exited, as PTX allows on sm_70+).
        unsafe {
            if tid >= 32 {
                // The partial second warp: 16 lanes; the other 16 do not exist.
                assert_eq!(warp::ballot(FULL_MASK, true), 0xffff);
                assert_eq!(warp::reduce_add_u32(FULL_MASK, 1), 16);
                assert_eq!(warp::active_mask(), 0xffff);
                return;
            }
            // Two halves of a warp in different branches, each with its own mask.
            if lane < 16 {
                assert_eq!(warp::active_mask(), 0x0000_ffff);
                assert_eq!(warp::shfl_xor(0x0000_ffff, lane, 1), lane ^ 1);
                warp::sync_warp(0x0000_ffff);
                // A source outside the group: undefined in PTX, all-one bits here.
                assert_eq!(warp::shfl_idx(0x0000_ffff, lane, 20), u32::MAX);
            } else {
                assert_eq!(warp::active_mask(), 0xffff_0000);
                assert_eq!(warp::shfl_xor(0xffff_0000, lane, 1), lane ^ 1);
                warp::sync_warp(0xffff_0000);
            }
            assert_eq!(warp::reduce_add_u32(FULL_MASK, 1), 32);
            if lane >= 24 {
                return;
            }
            // Exited lanes do not take part in later collectives.
            assert_eq!(warp::reduce_add_u32(FULL_MASK, lane), 23 * 24 / 2);
            assert_eq!(warp::ballot(FULL_MASK, true), 0x00ff_ffff);
            assert_eq!(warp::active_mask(), 0x00ff_ffff);
        }
    })
    .unwrap();
}

#[test]
fn atomics_from_many_blocks_are_exact() {
    let mut words = vec![0u32; 8];
    let mut wide = vec![0u64; 4];
    let (w, x) = (Shared(words.as_mut_ptr()), Shared(wide.as_mut_ptr()));
    words[2] = u32::MAX;
    words[3] = !0;
    let f = AtomicF32::new(0.0);
    let d = AtomicF64::new(10_000.0);
    let min = AtomicI32::new(i32::MAX);
    let flag = AtomicBool::new(false);
    let (grid, block) = ([64, 1, 1], [128, 1, 1]);
    cpu::launch(grid, block, 0, &|| {
        let g = thread::global_rank() as u32;
        let t = thread::thread_idx_x();
        let block_sum = shared_array!(BLOCK_SUM: [u32; 1]);
        if t == 0 {
            block_sum.set(0, 0);
        }
        sync::sync_threads();
        block_sum.fetch_add(0, g);
        // SAFETY: (all raw-pointer atomics) the pointers are to the live, aligned
        // `words`/`wide` vectors, touched only atomically during the launch.
        unsafe {
            atomic::global::add(w.ptr(), 1u32, MemoryScope::Device);
            atomic::fetch_max(w.ptr().add(1), g, MemoryScope::Device);
            atomic::fetch_min(w.ptr().add(2), g + 5, MemoryScope::System);
            atomic::fetch_and(w.ptr().add(3), !(1 << (g % 32)), MemoryScope::Device);
            atomic::fetch_or(w.ptr().add(4), 1 << (g % 16), MemoryScope::Device);
            atomic::fetch_xor(w.ptr().add(5), 1 << (g % 32), MemoryScope::Block);
            let mut cur = 0u32;
            while let Err(seen) = atomic::compare_exchange(w.ptr().add(6), cur, cur + 3, MemoryScope::Device) {
                cur = seen;
            }
            atomic::fetch_add(x.ptr(), g as u64, MemoryScope::Device);
            atomic::global::fetch_add(x.ptr().add(1) as *mut i64, -1i64, MemoryScope::Device);
            atomic::swap(x.ptr().add(2), 77u64, MemoryScope::Device);
            atomic::global::add(x.ptr().add(3) as *mut f64, 0.25f64, MemoryScope::Device);
        }
        f.fetch_add(0.5, Ordering::Relaxed);
        d.fetch_sub(1.0, Ordering::AcqRel);
        min.fetch_min(g as i32 - 5000, Ordering::Relaxed);
        sync::sync_threads();
        if t == 0 {
            let xs = (0..128u32).map(|k| thread::grid_block_rank() as u32 * 128 + k).sum::<u32>();
            assert_eq!(block_sum.get(0), xs);
            // A device-scope atomic type on global memory.
            // SAFETY: `words[7]` is live, aligned, and used only through this type.
            let counter = unsafe { DevAtomicU32::from_ptr(w.ptr().add(7)) };
            counter.fetch_add(1, Ordering::Relaxed);
            flag.store(true, Relaxed);
        }
    })
    .unwrap();
    let n = (volume(grid) * volume(block)) as u32;
    assert_eq!(words[0], n);
    assert_eq!(words[1], n - 1);
    assert_eq!(words[2], 5);
    assert_eq!(words[3], 0);
    assert_eq!(words[4], 0xffff);
    assert_eq!(words[5], 0, "each bit flipped n / 32 (an even number of) times");
    assert_eq!(words[6], 3 * n);
    assert_eq!(words[7], 64);
    assert_eq!(wide[0], (n as u64 - 1) * n as u64 / 2);
    assert_eq!(wide[1] as i64, -(n as i64));
    assert_eq!(wide[2], 77);
    assert_eq!(f64::from_bits(wide[3]), n as f64 / 4.0);
    assert_eq!(f.load(Ordering::Relaxed), n as f32 / 2.0);
    assert_eq!(d.load(Ordering::Relaxed), 10_000.0 - n as f64);
    assert_eq!(min.load(Ordering::Relaxed), -5000);
    assert!(flag.load(Relaxed));
}

#[test]
fn a_panic_is_reported_with_its_thread_and_location() {
    let line = line!() + 5;
    let err = cpu::launch([4, 1, 1], [64, 1, 1], 0, &|| {
        let t = thread::thread_idx_x();
        sync::sync_threads();
        if thread::block_idx_x() == 2 && t == 5 {
            panic!("boom {}", t * 2);
        }
        // The others wait here; the block is abandoned cleanly.
        sync::sync_threads();
    })
    .unwrap_err();
    assert!(err.starts_with("block (2, 0, 0), thread (5, 0, 0): panicked at "), "{err}");
    assert!(err.contains(&format!("tests/cpu.rs:{line}:")), "{err}");
    assert!(err.contains(": boom 10"), "{err}");

    // An index out of bounds, a failed `dassert!`, `trap`.
    let err = cpu::launch([1, 1, 1], [8, 1, 1], 0, &|| {
        let v = [1u32, 2, 3];
        let _ = v[thread::thread_idx_x() as usize + 5 * (thread::thread_idx_x() == 3) as usize];
    })
    .unwrap_err();
    assert!(err.contains("thread (3, 0, 0)") && err.contains("index out of bounds"), "{err}");
    let line = line!() + 2;
    let err = cpu::launch([1, 1, 1], [8, 1, 1], 0, &|| {
        dassert!(thread::thread_idx_x() != 6, "thread 6 is not welcome");
    })
    .unwrap_err();
    assert_eq!(
        err,
        format!("block (0, 0, 0), thread (6, 0, 0): panicked at {}:{line}:9: thread 6 is not welcome", file!())
    );
    let err = cpu::launch([3, 1, 1], [1, 1, 1], 0, &|| {
        if thread::block_idx_x() == 1 {
            misc::trap();
        }
    })
    .unwrap_err();
    assert!(err.starts_with("block (1, 0, 0), thread (0, 0, 0): panicked at ") && err.ends_with(": trap"), "{err}");
}

#[test]
fn a_deadlock_is_reported_not_hung() {
    // Lane 0 waits at the block barrier, the other lanes in a shuffle that needs lane 0.
    // (Unchecked: the checking mode reports these as divergent, `tests/check.rs`.)
    let err = unchecked([1, 1, 1], [32, 1, 1], 0, &|| {
        if warp::lane_id() == 0 {
            sync::sync_threads();
        } else {
            // SAFETY: deliberately wrong: lane 0 never comes (the runtime reports it).
            unsafe { warp::shfl_xor(FULL_MASK, 1u32, 1) };
        }
    })
    .unwrap_err();
    assert!(err.starts_with("block (0, 0, 0): deadlock"), "{err}");
    assert!(err.contains("thread 0: barrier 0 (1 of 32 non-exited threads arrived) at "), "{err}");
    assert!(
        err.contains("threads 1..=31: warp 0 shfl_xor (mask 0xffffffff, waiting for lane 0 (at barrier 0)) at "),
        "{err}"
    );

    // A named barrier whose count is never reached.
    let err = unchecked([2, 1, 1], [64, 1, 1], 0, &|| {
        if thread::thread_idx_x() < 32 {
            // SAFETY: deliberately wrong: only 32 of the 64 threads come.
            unsafe { sync::barrier_sync(3, 64) };
        }
    })
    .unwrap_err();
    assert!(
        err.contains("deadlock") && err.contains("threads 0..=31: barrier 3 (32 of 64 threads arrived) at "),
        "{err}"
    );
    assert!(err.contains(file!()), "{err}");

    // The runtime is intact afterwards.
    let ran = AtomicU32::new(0);
    cpu::launch([2, 1, 1], [64, 1, 1], 0, &|| {
        sync::sync_threads();
        ran.fetch_add(1, Relaxed);
    })
    .unwrap();
    assert_eq!(ran.into_inner(), 128);
}

#[test]
fn grid_stride_and_per_thread_slices() {
    let mut out = vec![0u64; 1000];
    let p = Shared(out.as_mut_ptr());
    cpu::launch([3, 1, 1], [32, 1, 1], 0, &|| {
        // SAFETY: `out` is live for the launch, and only reached through these
        // per-thread views, whose indices are disjoint.
        let mut s = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 1000) };
        let mut visited = 0;
        for (i, o) in s.grid_stride() {
            *o += i as u64 * 2 + 1;
            visited += 1;
        }
        let r = thread::global_rank();
        assert_eq!(visited, (1000 - r).div_ceil(96));
    })
    .unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u64 * 2 + 1));

    let mut out = vec![0u32; 50];
    let p = Shared(out.as_mut_ptr());
    cpu::launch([2, 2, 1], [4, 4, 1], 0, &|| {
        // SAFETY: as above.
        let mut s = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 50) };
        assert!(s.for_thread_1d().is_none(), "a 2-D launch has no 1-D element");
        if let Some(o) = s.for_thread() {
            *o = thread::global_rank() as u32 + 1;
        }
    })
    .unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
}

#[test]
fn dprintln_prints_from_kernels() {
    cpu::launch([1, 1, 1], [2, 1, 1], 0, &|| {
        dprintln!(
            "thread %u of %u: x = %.3f, n = %lld, %s",
            thread::thread_idx_x(),
            thread::block_dim_x(),
            1.5f32,
            -7i64,
            c"ok"
        );
    })
    .unwrap();
}

#[test]
fn the_device_self_test_passes_on_the_cpu() {
    use sluice_device::selftest;
    // 8-byte aligned, as a device allocation is.
    let mut words = vec![0u64; selftest::LEN.div_ceil(2)];
    let out = Shared(words.as_mut_ptr() as *mut u32);
    cpu::launch([1, 1, 1], [selftest::THREADS as u32, 1, 1], 0, &|| {
        // SAFETY: launched as `selftest` requires: one block of THREADS threads,
        // `out` is LEN (or more) u32s, 8-byte aligned, used by nothing else.
        unsafe { selftest::run(out.ptr(), selftest::LEN) }
    })
    .unwrap();
    // SAFETY: the u64s reinterpreted as twice as many u32s (same allocation, alignment 8 >= 4).
    let host = unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u32, selftest::LEN) };
    let bad = selftest::check(host);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn launch_configuration_and_context_errors() {
    let nothing = || {};
    assert!(cpu::launch([0, 1, 1], [1, 1, 1], 0, &nothing).unwrap_err().contains("invalid launch configuration"));
    assert!(cpu::launch([1, 1, 1], [1025, 1, 1], 0, &nothing).unwrap_err().contains("at most 1024"));
    assert!(cpu::launch([1, 1, 1], [32, 32, 2], 0, &nothing).unwrap_err().contains("at most 1024 threads"));
    assert!(cpu::launch([1, 70_000, 1], [1, 1, 1], 0, &nothing).unwrap_err().contains("65535"));
    assert!(cpu::launch([1, 1, 1], [1, 1, 1], 300 * 1024, &nothing).unwrap_err().contains("dynamic shared memory"));
    let err = cpu::launch([1, 1, 1], [1, 1, 1], 0, &|| {
        cpu::launch([1, 1, 1], [1, 1, 1], 0, &|| {}).unwrap();
    })
    .unwrap_err();
    assert!(err.contains("from inside a kernel"), "{err}");
    // Static shared memory beyond 48 KiB, as ptxas refuses it.
    let err = cpu::launch([1, 1, 1], [1, 1, 1], 0, &|| {
        let big = shared_array!(BIG: [u8; 40 * 1024]);
        let more = shared_array!(MORE: [u8; 10 * 1024]);
        big.set(0, more.get(0));
    })
    .unwrap_err();
    assert!(err.contains("more than the 49152"), "{err}");
}

#[test]
#[should_panic(expected = "sluice_device::thread::thread_idx_x called outside a kernel launch")]
fn device_functions_panic_outside_a_launch() {
    thread::thread_idx_x();
}

#[test]
#[should_panic(expected = "sluice_device::sync::sync_threads called outside a kernel launch")]
fn barriers_panic_outside_a_launch() {
    sync::sync_threads();
}

#[test]
fn spinning_on_a_flag_with_nanosleep_lets_the_writer_run() {
    cpu::launch([2, 1, 1], [64, 1, 1], 0, &|| {
        let flag = shared_array!(FLAG: [u32; 1]);
        let t = thread::thread_idx_x();
        if t == 0 {
            flag.set(0, 0);
        }
        sync::sync_threads();
        // The flag is read and written atomically (plain accesses would race: the
        // checking mode reports them).
        if t == 0 {
            // Waits for thread 63, which starts after it.
            while flag.fetch_add(0, 0) != 63 {
                thread::nanosleep(100);
            }
        } else if t == 63 {
            flag.swap(0, 63);
        }
        let c0 = misc::clock64();
        assert!(misc::clock64() >= c0);
    })
    .unwrap();
}

/// Two `shared_array!`s that one macro call expands (same site, same name, so the same
/// hash) of different types are two variables, as on the GPU (each type's `declare` is a
/// function of its own there): no aliasing on the CPU either.
#[test]
fn one_macro_expanding_two_shared_arrays_of_different_types_gives_two_arrays() {
    macro_rules! two {
        () => {
            (
                sluice_device::shared_array!(T: [u8; 16]),
                sluice_device::shared_array!(T: [u64; 2]),
            )
        };
    }
    let seen = std::sync::atomic::AtomicU32::new(0);
    sluice_device::cpu::launch([1, 1, 1], [1, 1, 1], 0, &|| {
        let (small, big) = two!();
        small.set(8, 7);
        big.set(1, u64::MAX);
        seen.store(small.get(8) as u32, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(seen.into_inner(), 7);
}

/// A GPU thread that overflows its stack (here a 1 MiB local array on the smallest stack,
/// 16 KiB) ends the process with a message naming the cause and the fix, not a bare
/// "Segmentation fault": run in a child process (this test binary, re-run on this test
/// alone), whose stderr and status the parent checks.
#[test]
#[cfg(unix)]
fn a_gpu_thread_that_overflows_its_stack_ends_with_a_message() {
    const CHILD: &str = "SLUICE_TEST_OVERFLOW_CHILD";
    match std::env::var(CHILD).as_deref() {
        Ok("gpu") => {
            let _ = cpu::launch([1, 1, 1], [2, 1, 1], 0, &|| {
                let big = std::hint::black_box([thread::thread_idx_x() as u8; 1 << 20]);
                std::hint::black_box(&big);
            });
            return; // not reached: the overflow aborts
        }
        Ok("os") => {
            // After a launch (the handler is installed), an OS thread's own overflow is
            // still Rust's to report.
            cpu::launch([1, 1, 1], [2, 1, 1], 0, &|| {}).unwrap();
            let t = std::thread::Builder::new().stack_size(64 << 10).spawn(|| {
                let big = std::hint::black_box([7u8; 1 << 20]);
                std::hint::black_box(&big);
            });
            let _ = t.unwrap().join();
            return; // not reached
        }
        Ok("kill") => {
            // A process whose SIGSEGV had the default disposition before the handler was
            // installed: a SIGSEGV sent by `kill` still ends it.
            // SAFETY: setting the default disposition, before any thread of ours faults.
            unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
            cpu::launch([1, 1, 1], [2, 1, 1], 0, &|| {}).unwrap();
            // SAFETY: sends this process a signal.
            unsafe { libc::kill(libc::getpid(), libc::SIGSEGV) };
            std::thread::sleep(std::time::Duration::from_millis(200));
            eprintln!("survived the SIGSEGV");
            std::process::exit(0);
        }
        _ => {}
    }
    let child = |mode: &str| {
        let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args(["a_gpu_thread_that_overflows_its_stack_ends_with_a_message", "--exact", "--nocapture"])
            .env(CHILD, mode)
            .env("SLUICE_CPU_STACK_KIB", "16")
            .output()
            .expect("run the child");
        assert!(!out.status.success(), "the {mode} child survived an overflow");
        (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (status, err) = child("gpu");
    // Ended by the handler's abort, not by the fault's default action.
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGABRT), "{status:?}: {err}");
    assert!(
        err.contains("a GPU thread overflowed its stack of 16 KiB") && err.contains("SLUICE_CPU_STACK_KIB"),
        "stderr: {err}"
    );
    let (_, err) = child("os");
    assert!(err.contains("has overflowed its stack") && !err.contains("GPU thread"), "stderr: {err}");
    let (status, err) = child("kill");
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    assert_eq!(signal, Some(libc::SIGSEGV), "{status:?}: {err}");
}
