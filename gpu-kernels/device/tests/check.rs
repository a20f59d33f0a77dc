//! The checking mode of the CPU runtime (`sluice_device::cpu`, "Checking mode"): a
//! racy or divergent kernel of each kind the checker reports, with the report's kind,
//! threads and source lines checked, and clean kernels of the patterns it must accept
//! (barriers in uniform loops, warp-synchronous reductions with `sync_warp`, atomics to
//! one bin, early exit after the last barrier, named barriers pairing producers and
//! consumers, a `u8` array written per thread) reporting nothing; and a `cp.async` seen
//! as a write of its destination from its issue on.
//!
//! The kernels are closures run by `cpu::run` with `CpuCheck::On`: they never run on a
//! GPU (the racy ones would hang or give wrong results there).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use sluice_device::cpu::{self, CpuCheck, CpuLaunch, CpuLaunchError};
use sluice_device::slice::{self, DeviceSliceMut};
use sluice_device::warp::{self, FULL_MASK};
use sluice_device::{shared_array, sync, thread};
use sluice_host::{CheckKind, CheckReport};

fn launch(grid: [u32; 3], block: [u32; 3], body: &(dyn Fn() + Sync)) -> Result<(), CpuLaunchError> {
    let launch = CpuLaunch { kernel: "checked", grid, block, dynamic_shared_bytes: 0, check: CpuCheck::On };
    cpu::run(&launch, body)
}

/// The report of a launch that must fail the check.
#[track_caller]
fn report(r: Result<(), CpuLaunchError>) -> CheckReport {
    match r {
        Err(CpuLaunchError::Check(report)) => *report,
        other => panic!("expected a check report, got {other:?}"),
    }
}

/// `file:line:` of the line of this file that holds `marker` (a comment at its end).
fn at(marker: &str) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check.rs")).expect("this file");
    let tag = format!("// {marker}");
    let line = text.lines().position(|l| l.ends_with(&tag)).unwrap_or_else(|| panic!("no line ends with `{tag}`"));
    format!("{}:{}:", file!(), line + 1)
}

/// A raw pointer the kernel closures may capture.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
impl<T> Out<T> {
    fn ptr(&self) -> *mut T {
        self.0
    }
}
// SAFETY: only a pointer; each test says which thread touches which element.
unsafe impl<T> Sync for Out<T> {}

// ---------------------------------------------------------------------------------------
// What the checker reports.

#[test]
fn a_shared_read_of_another_threads_write_in_the_same_interval_is_a_race() {
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let tile = shared_array!(TILE: [u32; 32]);
        let t = thread::thread_idx_x() as usize;
        tile.set(t, t as u32); // @rotate:w
                               // The barrier is missing: thread t reads what thread t + 1 writes.
        let _ = tile.get((t + 1) % 32); // @rotate:r
    }));
    assert_eq!(rep.kind, CheckKind::SharedRace);
    assert_eq!(rep.kernel, "checked");
    assert_eq!(rep.block, [0, 0, 0]);
    // Thread 0 runs first and reads element 1 before thread 1 writes it: the write is
    // the second access, the read the first.
    assert_eq!(rep.first.thread, [0, 0, 0], "{rep}");
    assert!(rep.first.site.starts_with(&at("@rotate:r")) && rep.first.what == "reads it", "{rep}");
    let second = rep.second.as_ref().expect("two accesses");
    assert_eq!(second.thread, [1, 0, 0], "{rep}");
    assert!(second.site.starts_with(&at("@rotate:w")) && second.what == "writes it", "{rep}");
    assert!(rep.location.starts_with("bytes 4..8 of the shared variable declared at "), "{rep}");
    let m = rep.to_string();
    assert!(m.contains("sync_threads"), "the message says what to do: {m}");
}

/// The kernel of the issue's example (below): each thread writes its element of each row
/// by reading the whole row and writing it back; `count` is incremented if the tile came
/// out right.
fn tile_rows(count: &AtomicU32) -> impl Fn() + Sync + '_ {
    move || {
        let tile = shared_array!(TILE: [[f32; 32]; 4]);
        let t = thread::thread_idx_x() as usize;
        if t < 4 {
            tile.set(t, [0.0; 32]);
        }
        sync::sync_threads();
        for r in 0..4 {
            let mut row = tile.get(r); // @rows:get
            row[t] = (r * 32 + t) as f32;
            tile.set(r, row); // @rows:set
        }
        sync::sync_threads();
        if t == 0 {
            let ok = (0..4).all(|r| tile.get(r).iter().enumerate().all(|(c, &v)| v == (r * 32 + c) as f32));
            count.fetch_add(ok as u32, Relaxed);
        }
    }
}

/// The issue's example: a 2-D tile written per element through `get(row)`/`set(row, ..)`,
/// 32 threads each writing back a whole row. On a GPU the threads' read-modify-writes of
/// one row overwrite each other; on the CPU they run one after another and the result is
/// right — the coroutine schedule hides the race, the checker does not.
#[test]
fn a_tile_row_written_back_whole_by_every_thread_is_a_race_the_schedule_hides() {
    let hidden = AtomicU32::new(0);
    let body = tile_rows;
    // Unchecked, the CPU computes the right tile...
    let off =
        CpuLaunch { kernel: "rows", grid: [1, 1, 1], block: [32, 1, 1], dynamic_shared_bytes: 0, check: CpuCheck::Off };
    cpu::run(&off, &body(&hidden)).unwrap();
    assert_eq!(hidden.load(Relaxed), 1, "the schedule hides the race");
    // ...checked, the race is found.
    let rep = report(launch([1, 1, 1], [32, 1, 1], &body(&hidden)));
    assert_eq!(rep.kind, CheckKind::SharedRace, "{rep}");
    // The thread that completes the barrier runs on first (thread 31), writes every row;
    // thread 0 then reads row 0.
    let second = rep.second.as_ref().unwrap();
    assert_eq!((rep.first.thread, second.thread), ([31, 0, 0], [0, 0, 0]), "{rep}");
    assert!(rep.first.site.starts_with(&at("@rows:set")) && rep.first.what == "writes it", "{rep}");
    assert!(second.site.starts_with(&at("@rows:get")) && second.what == "reads it", "{rep}");
    assert!(rep.location.starts_with("bytes 0..128 of the shared variable"), "{rep}");
}

/// The fix of the issue's example: a padded 2-D tile (`[[f32; 33]; 32]`, a non-`Pod`
/// element type before bytemuck's const-generic arrays), each thread writing its own
/// element with `set_at` and reading another's with `at` after the barrier: checked,
/// nothing to report, and the transpose is right.
#[test]
fn a_2d_tile_written_per_element_is_clean_and_transposes() {
    let right = AtomicU32::new(0);
    let body = || {
        let tile = shared_array!(TILE: [[f32; 33]; 32]);
        let (tx, ty) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
        for r in (ty..32).step_by(8) {
            tile.set_at(r, tx, (r * 32 + tx) as f32);
        }
        sync::sync_threads();
        let ok = (ty..32).step_by(8).all(|r| tile.at(tx, r) == (tx * 32 + r) as f32);
        right.fetch_add(ok as u32, Relaxed);
        assert_eq!((tile.rows(), tile.cols()), (32, 33));
    };
    launch([2, 1, 1], [32, 8, 1], &body).expect("no race, no divergence");
    assert_eq!(right.load(Relaxed), 2 * 256, "every thread read the transposed tile");
}

#[test]
fn a_write_after_another_threads_read_in_the_same_interval_is_a_race() {
    let rep = report(launch([2, 1, 1], [64, 1, 1], &|| {
        let tile = shared_array!(TILE: [u32; 64]);
        let t = thread::thread_idx_x() as usize;
        tile.set(t, 1);
        sync::sync_threads();
        // Reads its right neighbour, then overwrites its own element: no barrier between.
        let v = tile.get((t + 1) % 64); // @war:r
                                        // (the barrier belongs here)
        tile.set(t, v + 1); // @war:w
    }));
    assert_eq!(rep.kind, CheckKind::SharedRace);
    assert_eq!(rep.block, [0, 0, 0], "the lowest failing block is reported");
    // Thread 63 completes the barrier and runs on: it reads element 0, which thread 0
    // then writes.
    assert_eq!(rep.first.thread, [63, 0, 0]);
    assert!(rep.first.site.starts_with(&at("@war:r")) && rep.first.what == "reads it", "{rep}");
    let second = rep.second.unwrap();
    assert_eq!(second.thread, [0, 0, 0]);
    assert!(second.site.starts_with(&at("@war:w")) && second.what == "writes it", "{second:?}");
}

#[test]
fn a_global_element_written_by_two_blocks_is_a_race() {
    let mut out = vec![0u32; 4];
    let p = Out(out.as_mut_ptr());
    let rep = report(launch([3, 1, 1], [32, 1, 1], &|| {
        // SAFETY: `out` lives for the launch and is reached only through this slice.
        let out = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 4) };
        if thread::thread_idx_x() == 0 {
            // SAFETY: deliberately wrong: thread 0 of every block writes element 2.
            unsafe { out.write(2, thread::block_idx_x()) }; // @blocks:w
        }
    }));
    assert_eq!(rep.kind, CheckKind::GlobalRace, "{rep}");
    assert!(rep.location.starts_with("element 2 of a slice parameter (4 bytes each"), "{rep}");
    let second = rep.second.clone().unwrap();
    assert_ne!(rep.first.block, second.block, "{rep}");
    assert_eq!(second.block, rep.block);
    assert!(rep.first.site.starts_with(&at("@blocks:w")) && second.site.starts_with(&at("@blocks:w")), "{rep}");
    assert!(rep.to_string().contains("never ordered"), "{rep}");
    drop(out);
}

#[test]
fn a_global_element_written_by_two_threads_of_a_block_without_a_barrier_is_a_race() {
    let mut out = vec![0u32; 64];
    let p = Out(out.as_mut_ptr());
    let rep = report(launch([1, 1, 1], [64, 1, 1], &|| {
        // SAFETY: `out` lives for the launch and is reached only through this slice.
        let mut out = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 64) };
        if let Some(o) = out.for_thread() {
            *o = 1;
        }
        let t = thread::thread_idx_x() as usize;
        // SAFETY: deliberately wrong: element t + 1 is thread t + 1's, and no barrier
        // orders its write before this one.
        unsafe { *out.get_unchecked_mut((t + 1) % 64) += 1 };
    }));
    assert_eq!(rep.kind, CheckKind::GlobalRace, "{rep}");
    assert_eq!(rep.first.block, rep.second.as_ref().unwrap().block);
    // With the barrier the same kernel is clean (a block barrier orders global memory).
    launch([1, 1, 1], [64, 1, 1], &|| {
        // SAFETY: as above.
        let mut out = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 64) };
        if let Some(o) = out.for_thread() {
            *o = 1;
        }
        sync::sync_threads();
        let t = thread::thread_idx_x() as usize;
        sync::sync_threads();
        if t == 0 {
            // SAFETY: thread 0 alone, after a barrier.
            unsafe { *out.get_unchecked_mut(63) += 1 };
        }
    })
    .unwrap();
    drop(out);
}

#[test]
fn an_early_return_before_a_barrier_is_a_divergent_barrier() {
    let rep = report(launch([1, 1, 1], [64, 1, 1], &|| {
        let tile = shared_array!(TILE: [u32; 64]);
        let t = thread::thread_idx_x() as usize;
        let n = 40;
        tile.set(t, 0); // @early:last
        if t >= n {
            return; // the classic bug: threads without an element leave before the barrier
        }
        sync::sync_threads(); // @early:bar
        let _ = tile.get(n - 1 - t);
    }));
    assert_eq!(rep.kind, CheckKind::DivergentBarrier, "{rep}");
    assert!(rep.first.site.starts_with(&at("@early:bar")) && rep.first.what.starts_with("waits at barrier 0"), "{rep}");
    let gone = rep.second.as_ref().unwrap();
    assert_eq!(gone.thread, [40, 0, 0]);
    assert!(gone.what.starts_with("returned from the kernel before reaching it"), "{rep}");
    assert!(gone.site.starts_with(&at("@early:last")), "its last operation: {rep}");
}

#[test]
fn a_barrier_reached_from_two_call_sites_is_divergent() {
    let rep = report(launch([1, 1, 1], [64, 1, 1], &|| {
        let t = thread::thread_idx_x();
        if t < 32 {
            sync::sync_threads(); // @sites:a
        } else {
            sync::sync_threads(); // @sites:b
        }
    }));
    assert_eq!(rep.kind, CheckKind::DivergentBarrier, "{rep}");
    assert!(rep.first.site.starts_with(&at("@sites:a")), "{rep}");
    let second = rep.second.as_ref().unwrap();
    assert_eq!(second.thread, [32, 0, 0]);
    assert!(second.site.starts_with(&at("@sites:b")) && second.what.contains("from another call"), "{rep}");
}

#[test]
fn sync_threads_and_a_reduction_never_meet() {
    // On the GPU the reductions use barrier ids of their own: this hangs there.
    let rep = report(launch([1, 1, 1], [64, 1, 1], &|| {
        if thread::thread_idx_x() < 32 {
            sync::sync_threads();
        } else {
            sync::sync_threads_count(true);
        }
    }));
    assert_eq!(rep.kind, CheckKind::DivergentBarrier, "{rep}");
    let m = rep.to_string();
    assert!(m.contains("sync_threads_count"), "{m}");
}

#[test]
fn a_lane_outside_its_own_mask_is_a_divergent_warp_operation() {
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let lane = warp::lane_id();
        // SAFETY: deliberately wrong: lane 0 is not in the mask.
        let _ = unsafe { warp::shfl_xor(0xffff_fffe, lane, 1) }; // @mask:own
    }));
    assert_eq!(rep.kind, CheckKind::DivergentWarp, "{rep}");
    assert_eq!(rep.first.thread, [0, 0, 0]);
    assert!(rep.first.site.starts_with(&at("@mask:own")), "{rep}");
    assert!(rep.first.what.contains("does not name its own lane 0"), "{rep}");
}

#[test]
fn a_shuffle_some_lanes_of_its_mask_skip_is_a_divergent_warp_operation() {
    // Half the warp shuffles with the full mask, the other half goes on to the barrier.
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let lane = warp::lane_id();
        let mut v = lane;
        if lane < 16 {
            // SAFETY: deliberately wrong: lanes 16..32 never come.
            v += unsafe { warp::shfl_down(FULL_MASK, v, 1) }; // @skip:shfl
        }
        sync::sync_threads(); // @skip:bar
        let _ = v;
    }));
    let m = rep.to_string();
    assert!(matches!(rep.kind, CheckKind::DivergentWarp | CheckKind::DivergentBarrier), "{m}");
    let sites = [rep.first.site.clone(), rep.second.as_ref().unwrap().site.clone()];
    assert!(sites.iter().any(|s| s.starts_with(&at("@skip:shfl"))), "{m}");
    assert!(sites.iter().any(|s| s.starts_with(&at("@skip:bar"))), "{m}");
}

#[test]
fn a_shuffle_reading_a_lane_that_skipped_it_is_a_divergent_warp_operation() {
    // The other lanes return instead (Hopper runs this; CUDA's rules leave the value read
    // from a lane that does not take part undefined).
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let lane = warp::lane_id();
        if lane < 16 {
            // SAFETY: deliberately wrong: lanes 8..16 read lanes 16..24, which skip the
            // shuffle.
            let v = unsafe { warp::shfl_down(FULL_MASK, lane, 8) }; // @skipped:shfl
            let _ = v;
        }
    }));
    assert_eq!(rep.kind, CheckKind::DivergentWarp, "{rep}");
    assert_eq!(rep.first.thread, [8, 0, 0], "{rep}");
    assert!(rep.first.site.starts_with(&at("@skipped:shfl")) && rep.first.what.contains("reads lane 16"), "{rep}");
    assert!(rep.second.as_ref().unwrap().what.contains("undefined"), "{rep}");
}

#[test]
fn two_operations_naming_each_others_lanes_are_divergent() {
    // Lane 0 waits in a vote with the full mask; lane 1 calls a shuffle with the full
    // mask: each waits for the other in its own operation.
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let lane = warp::lane_id();
        // SAFETY: deliberately wrong: two operations with the same mask in one warp.
        unsafe {
            if lane == 0 {
                warp::ballot(FULL_MASK, true); // @mixed:vote
            } else {
                warp::shfl_xor(FULL_MASK, lane, 1); // @mixed:shfl
            }
        }
    }));
    assert_eq!(rep.kind, CheckKind::DivergentWarp, "{rep}");
    assert!(rep.first.site.starts_with(&at("@mixed:vote")) && rep.first.what.contains("ballot"), "{rep}");
    let second = rep.second.as_ref().unwrap();
    assert!(second.site.starts_with(&at("@mixed:shfl")) && second.what.contains("shfl_xor"), "{rep}");
}

#[test]
fn two_masks_in_one_warp_operation_are_divergent() {
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let lane = warp::lane_id();
        let mask = if lane < 16 { 0x0000_ffff } else { FULL_MASK };
        // SAFETY: deliberately wrong: the high lanes name the low ones, which use another mask.
        let _ = unsafe { warp::shfl_xor(mask, lane, 16) };
        sync::sync_threads();
    }));
    assert_eq!(rep.kind, CheckKind::DivergentWarp, "{rep}");
}

#[test]
fn a_read_of_shared_memory_never_written_is_reported() {
    let rep = report(launch([2, 1, 1], [32, 1, 1], &|| {
        let tile = shared_array!(TILE: [f32; 32]);
        let t = thread::thread_idx_x() as usize;
        if t > 0 {
            tile.set(t, 1.0);
        }
        sync::sync_threads();
        let _ = tile.get(31 - t); // thread 31 reads element 0, never written // @uninit:r
    }));
    assert_eq!(rep.kind, CheckKind::UninitShared, "{rep}");
    assert_eq!(rep.first.thread, [31, 0, 0]);
    assert!(rep.first.site.starts_with(&at("@uninit:r")), "{rep}");
    assert!(rep.second.is_none());
    assert!(rep.location.starts_with("bytes 0..4 of the shared variable declared at "), "{rep}");
}

#[test]
fn an_atomic_on_shared_memory_never_written_is_reported() {
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let hits = shared_array!(HITS: [u32; 1]);
        hits.fetch_add(0, 1); // the count was never zeroed // @uninit:atomic
    }));
    assert_eq!(rep.kind, CheckKind::UninitShared, "{rep}");
    assert!(rep.first.site.starts_with(&at("@uninit:atomic")) && rep.first.what == "updates it atomically", "{rep}");
}

#[test]
fn shared_memory_of_the_previous_block_counts_as_unwritten() {
    // Block 1 runs after block 0 on the same buffer, where block 0 left its values.
    let rep = report(launch([2, 1, 1], [32, 1, 1], &|| {
        let tile = shared_array!(TILE: [u32; 32]);
        let (t, b) = (thread::thread_idx_x() as usize, thread::block_idx_x());
        if b == 0 {
            tile.set(t, 7);
        }
        sync::sync_threads();
        let _ = tile.get(t);
    }));
    assert_eq!((rep.kind, rep.block), (CheckKind::UninitShared, [1, 0, 0]), "{rep}");
}

#[test]
fn a_write_before_a_named_barrier_is_seen_by_its_waiters_only() {
    // Producers (warps 0-1) write and arrive; consumers (warps 2-3) wait, then read.
    launch([2, 1, 1], [128, 1, 1], &|| {
        let buf = shared_array!(BUF: [u32; 64]);
        let t = thread::thread_idx_x();
        for round in 0..3 {
            if t < 64 {
                buf.set(t as usize, t + round);
                // SAFETY: 128 threads (4 whole warps) use barrier 1 per round.
                unsafe { sync::barrier_arrive(1, 128) };
            } else {
                // SAFETY: as above.
                unsafe { sync::barrier_sync(1, 128) };
                assert_eq!(buf.get((t - 64) as usize), t - 64 + round);
            }
            sync::sync_threads();
        }
    })
    .unwrap();
    // A consumer that reads before waiting races with the producer's write.
    let rep = report(launch([1, 1, 1], [128, 1, 1], &|| {
        let buf = shared_array!(BUF: [u32; 64]);
        let t = thread::thread_idx_x();
        if t < 64 {
            buf.set(t as usize, t);
            // SAFETY: 128 threads use barrier 1.
            unsafe { sync::barrier_arrive(1, 128) };
        } else {
            let _ = buf.get((t - 64) as usize);
            // SAFETY: as above.
            unsafe { sync::barrier_sync(1, 128) };
        }
    }));
    assert_eq!(rep.kind, CheckKind::SharedRace, "{rep}");
}

#[test]
fn a_lane_reading_its_neighbours_store_needs_sync_warp() {
    let rep = report(launch([1, 1, 1], [32, 1, 1], &|| {
        let buf = shared_array!(BUF: [u32; 32]);
        let lane = warp::lane_id() as usize;
        buf.set(lane, lane as u32);
        // A shuffle exchanges values, not memory: it orders nothing.
        // SAFETY: the full warp takes part.
        let _ = unsafe { warp::ballot(FULL_MASK, true) };
        let _ = buf.get(lane ^ 1);
    }));
    assert_eq!(rep.kind, CheckKind::SharedRace, "{rep}");
}

// ---------------------------------------------------------------------------------------
// What it accepts.

#[test]
fn barriers_in_uniform_loops_are_clean() {
    let sums = AtomicU32::new(0);
    launch([4, 1, 1], [128, 1, 1], &|| {
        let tile = shared_array!(TILE: [u32; 128]);
        let t = thread::thread_idx_x();
        tile.set(t as usize, t);
        let mut stride = 64;
        while stride > 0 {
            sync::sync_threads();
            if t < stride {
                tile.set(t as usize, tile.get(t as usize) + tile.get((t + stride) as usize));
            }
            stride /= 2;
        }
        sync::sync_threads();
        // Every thread reads the result (a broadcast), then thread 0 resets it: after a barrier.
        let total = tile.get(0);
        sync::sync_threads();
        if t == 0 {
            tile.set(0, 0);
            sums.fetch_add(total, Relaxed);
        }
    })
    .unwrap();
    assert_eq!(sums.into_inner(), 4 * 127 * 128 / 2);
}

#[test]
fn a_warp_synchronous_reduction_with_sync_warp_is_clean() {
    let sums = AtomicU32::new(0);
    launch([2, 1, 1], [64, 1, 1], &|| {
        let buf = shared_array!(BUF: [u32; 64]);
        let t = thread::thread_idx_x() as usize;
        let lane = t % 32;
        buf.set(t, t as u32);
        // SAFETY: (every sync_warp) the full warp calls it.
        unsafe { warp::sync_warp(FULL_MASK) };
        let mut s = 16;
        while s > 0 {
            if lane < s {
                buf.set(t, buf.get(t) + buf.get(t + s));
            }
            // SAFETY: as above.
            unsafe { warp::sync_warp(FULL_MASK) };
            s /= 2;
        }
        if lane == 0 {
            sums.fetch_add(buf.get(t), Relaxed);
        }
    })
    .unwrap();
    assert_eq!(sums.into_inner(), 2 * 63 * 64 / 2);
}

#[test]
fn atomics_to_one_bin_are_clean() {
    let mut bins = vec![0u32; 2];
    let p = Out(bins.as_mut_ptr());
    launch([8, 1, 1], [256, 1, 1], &|| {
        let local = shared_array!(LOCAL: [u32; 2]);
        let t = thread::thread_idx_x() as usize;
        if t < 2 {
            local.set(t, 0);
        }
        sync::sync_threads();
        local.add(t % 2, 1); // every thread of the block on one of two bins
        sync::sync_threads();
        // SAFETY: `bins` lives for the launch; every block adds to it atomically.
        let out = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 2) };
        if t < 2 {
            // SAFETY: an element of `out`, touched only atomically.
            unsafe {
                sluice_device::atomic::global::add(
                    out.as_mut_ptr().add(t),
                    local.get(t),
                    sluice_device::MemoryScope::Device,
                )
            };
        }
    })
    .unwrap();
    assert_eq!(bins, [8 * 128, 8 * 128]);
}

/// A kernel parameter of atomics (`x: &[AtomicU32]`, [`slice::atomics`]) is shadowed like
/// a `DeviceSliceMut`: every thread of every block updating, loading and storing one
/// element through it is clean (atomics never race each other).
#[test]
fn a_slice_of_atomics_updated_by_every_thread_is_clean() {
    let mut bins = vec![0u32; 4];
    let mut total = vec![0f32; 1];
    let (b, s) = (Out(bins.as_mut_ptr()), Out(total.as_mut_ptr()));
    launch([4, 1, 1], [64, 1, 1], &|| {
        // SAFETY: `bins` and `total` live for the launch and are reached only through these
        // slices of atomics (as `#[kernel]` makes them from a `&[AtomicU32]` parameter).
        let bins: &[sluice_device::atomic::AtomicU32] = unsafe { slice::atomics(b.ptr(), 4) };
        // SAFETY: as above.
        let total: &[sluice_device::atomic::AtomicF32] = unsafe { slice::atomics(s.ptr(), 1) };
        let t = thread::thread_idx_x();
        bins[(t % 3) as usize].fetch_add(1, Relaxed);
        let _ = bins[3].load(Relaxed);
        bins[3].store(7, Relaxed);
        total[0].fetch_add(1.0, Relaxed);
    })
    .unwrap();
    assert_eq!(bins, [4 * 22, 4 * 21, 4 * 21, 7]);
    assert_eq!(total, [256.0]);
}

/// The same parameter's elements are recorded (as atomic): a plain write to one of them
/// through another slice of the memory (which `#[kernel]` never makes: the host hands the
/// launch the view once) races with the atomics of other blocks.
#[test]
fn a_plain_write_to_an_element_of_a_slice_of_atomics_is_a_race() {
    let mut bins = vec![0u32; 2];
    let p = Out(bins.as_mut_ptr());
    let rep = report(launch([2, 1, 1], [32, 1, 1], &|| {
        // SAFETY: `bins` lives for the launch.
        let atomics: &[sluice_device::atomic::AtomicU32] = unsafe { slice::atomics(p.ptr(), 2) };
        if thread::block_idx_x() == 0 {
            atomics[1].fetch_add(1, Relaxed); // @atomics:rmw
        } else if thread::thread_idx_x() == 0 {
            // SAFETY: deliberately wrong: a second way into the memory of `atomics`.
            let out = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 2) };
            // SAFETY: deliberately wrong: a plain write beside the other block's atomics.
            unsafe { out.write(1, 5) }; // @atomics:w
        }
    }));
    assert_eq!(rep.kind, CheckKind::GlobalRace, "{rep}");
    assert!(rep.location.starts_with("element 1 of a slice parameter (4 bytes each"), "{rep}");
    // The blocks may run in either order: one access is the atomic, the other the write.
    let second = rep.second.clone().unwrap();
    let (atomic, plain) = if rep.first.what == "writes it" { (&second, &rep.first) } else { (&rep.first, &second) };
    assert!(atomic.site.starts_with(&at("@atomics:rmw")) && atomic.what == "updates it atomically", "{rep}");
    assert!(plain.site.starts_with(&at("@atomics:w")) && plain.what == "writes it", "{rep}");
    assert_ne!(atomic.block, plain.block, "{rep}");
    drop(bins);
}

#[test]
fn an_early_exit_after_the_last_barrier_is_clean() {
    let mut out = vec![0u32; 100];
    let p = Out(out.as_mut_ptr());
    launch([2, 1, 1], [64, 1, 1], &|| {
        let tile = shared_array!(TILE: [u32; 64]);
        let t = thread::thread_idx_x() as usize;
        tile.set(t, t as u32);
        sync::sync_threads();
        let i = thread::index_1d() as usize;
        if i >= 100 {
            return; // after the last barrier: fine
        }
        // SAFETY: `out` lives for the launch and is reached only through this slice.
        let mut out = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 100) };
        if let Some(o) = out.for_thread_1d() {
            *o = tile.get(63 - t);
        }
    })
    .unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == 63 - (i % 64) as u32));
}

#[test]
fn bytes_written_by_different_threads_are_not_a_race() {
    launch([1, 1, 1], [64, 1, 1], &|| {
        let bytes = shared_array!(BYTES: [u8; 64]);
        let t = thread::thread_idx_x() as usize;
        bytes.set(t, t as u8);
        sync::sync_threads();
        let word = bytes.as_slice();
        let _ = word.get(63 - t);
    })
    .unwrap();
}

#[test]
fn full_warps_exchanging_with_shuffles_and_votes_are_clean() {
    launch([2, 1, 1], [96, 1, 1], &|| {
        let lane = warp::lane_id();
        // SAFETY: every warp is full and every lane makes every call.
        unsafe {
            let mut v = lane;
            let mut o = 16;
            while o > 0 {
                v += warp::shfl_xor(FULL_MASK, v, o);
                o /= 2;
            }
            assert_eq!(v, 496);
            assert_eq!(warp::ballot(FULL_MASK, true), FULL_MASK);
            // A shuffle down whose sources past lane 31 read their own value: defined.
            let _ = warp::shfl_down(FULL_MASK, lane, 4);
        }
    })
    .unwrap();
}

#[test]
fn grid_stride_loops_and_per_thread_elements_are_clean() {
    let mut out = vec![0u64; 1000];
    let p = Out(out.as_mut_ptr());
    launch([3, 1, 1], [32, 1, 1], &|| {
        // SAFETY: `out` lives for the launch, reached only through these per-thread views.
        let mut s = unsafe { DeviceSliceMut::from_raw_parts(p.ptr(), 1000) };
        for (i, o) in s.grid_stride() {
            *o = i as u64;
        }
    })
    .unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u64));
}

#[test]
fn the_device_self_test_is_clean() {
    use sluice_device::selftest;
    let mut words = vec![0u64; selftest::LEN.div_ceil(2)];
    let out = Out(words.as_mut_ptr() as *mut u32);
    launch([1, 1, 1], [selftest::THREADS as u32, 1, 1], &|| {
        // SAFETY: launched as `selftest` requires (see tests/cpu.rs).
        unsafe { selftest::run(out.ptr(), selftest::LEN) }
    })
    .unwrap();
}

#[test]
fn cpu_launch_reports_as_a_message_when_checked() {
    // `cpu::launch` checks as `CpuCheck::auto()` says; its error is the report's text.
    if CpuCheck::auto() != CpuCheck::On {
        return;
    }
    let err = cpu::launch([1, 1, 1], [32, 1, 1], 0, &|| {
        let tile = shared_array!(TILE: [u32; 32]);
        let t = thread::thread_idx_x() as usize;
        tile.set(t, 1);
        let _ = tile.get((t + 1) % 32);
    })
    .unwrap_err();
    assert!(err.starts_with("kernel `(closure)`, block (0, 0, 0): data race on shared memory"), "{err}");
}

// ---------------------------------------------------------------------------------------
// The tensor-core families: a `cp.async` is a write of its destination from its issue on.

/// 64 f32, 16-byte aligned (the `cp.async` path of `copy_from`).
#[repr(C, align(16))]
struct Aligned([f32; 64]);
static SRC: Aligned = Aligned([1.0; 64]);

#[test]
fn a_tile_read_while_a_copy_into_it_is_in_flight_is_a_race() {
    use sluice_device::async_copy::Threads;
    use sluice_device::tile::{dynamic_tiles, dynamic_tiles_bytes, Matrix, RowMajor, Tile};
    type T = Tile<f32, RowMajor<8, 8>>;
    let launch = CpuLaunch {
        kernel: "checked",
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: dynamic_tiles_bytes::<T>() as u32,
        check: CpuCheck::On,
    };
    let rep = report(cpu::run(&launch, &|| {
        let threads = Threads::<32>::check();
        let t = thread::thread_idx_x();
        let mut tile: T = dynamic_tiles();
        tile.fill_cooperative(0.0);
        sync::sync_threads();
        // A second handle to the same tile: what the type-state cannot see.
        let other: T = dynamic_tiles();
        let src = Matrix::new(&SRC.0, 8, 8);
        // Thread 0 copies the first 16 bytes; it lands at the wait, after the barrier
        // below, but on a GPU it may land at once: thread 31's read races with it.
        let in_flight = tile.copy_async(&threads, &src, 0, 0); // @cp:w
        if t == 31 {
            let _ = other.get(0, 0); // @cp:r
        }
        sync::sync_threads();
        let _ = in_flight.wait();
    }));
    assert_eq!(rep.kind, CheckKind::SharedRace, "{rep}");
    let second = rep.second.as_ref().expect("two accesses");
    // Both accesses, in the order the report gives them.
    let (read, write) = if rep.first.what == "reads it" { (&rep.first, second) } else { (second, &rep.first) };
    assert_eq!(read.thread, [31, 0, 0], "{rep}");
    assert!(read.site.starts_with(&at("@cp:r")) && read.what == "reads it", "{rep}");
    assert_eq!(write.thread, [0, 0, 0], "{rep}");
    assert!(write.site.starts_with(&at("@cp:w")) && write.what == "writes it", "{rep}");
    assert!(rep.location.starts_with("bytes 0..16 of the dynamic shared memory"), "{rep}");
}
