//! Device memory on a real GPU: the stream-ordered allocator (freed memory stays in the pool
//! until trimmed; allocating and freeing never wait for running lanes — rule 6), the retry
//! after trimming when the device looks full, lanes' streams reused across scopes, and the
//! typed errors of the soundness checks (over-aligned element types, row slices that must
//! not fan in).
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_alloc -- --ignored`. Without one it fails.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sluice::{kernels, scope, ColumnsMut, Error, Fenced, Gpu, Lane, LaunchConfig};

/// The memory checks need the device to themselves within this test binary.
static DEVICE: Mutex<()> = Mutex::new(());

/// Free memory may move by the driver's allocation granularity when streams and events
/// come and go; the buffers used here are far larger.
const SLACK: usize = 32 << 20;

const GIB: usize = 1 << 30;

fn freed_device_memory_stays_pooled_until_trimmed(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let base = common::free_device_memory(&gpu);
    let m = gpu.alloc_matrix::<u8>(GIB, 1).expect("1 GiB");
    let used = gpu.mem_info().expect("mem info").free;
    assert!(used + GIB <= base + SLACK, "a live 1 GiB matrix shows as used (free {base} -> {used})");
    m.free().expect("free");
    // The free is stream-ordered and the pool keeps the memory for the next allocation.
    let pooled = gpu.mem_info().expect("mem info").free;
    assert!(
        pooled + GIB <= base + SLACK,
        "freed memory should stay reserved in the pool until trimmed (free before {base}, after the free {pooled})"
    );
    // The next allocation of the same size reuses it: free memory does not drop again.
    let again = gpu.alloc_matrix::<u8>(GIB, 1).expect("1 GiB again");
    let reused = gpu.mem_info().expect("mem info").free;
    assert!(reused + SLACK >= pooled, "the pool's memory is reused (free {pooled} -> {reused})");
    drop(again);
    let trimmed = common::free_device_memory(&gpu);
    assert!(trimmed + SLACK >= base, "trimming gives the memory back (free before {base}, after trim {trimmed})");
}

fn a_full_device_is_retried_after_trimming_the_pool(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let free = common::free_device_memory(&gpu);
    // Fill 60% of the free memory, free it (now reserved in the pool), then ask for 70%: it
    // fits only once the pool has handed its blocks back to the driver.
    let first = free / 10 * 6;
    let second = free / 10 * 7;
    drop(gpu.alloc_matrix::<u8>(first, 1).expect("60% of free memory"));
    let m = gpu.alloc_matrix::<u8>(second, 1).expect("70% of free memory, after the pool was trimmed");
    drop(m);
    // And a request over the device's size is still a typed error, with a truthful `free`.
    let total = gpu.info().total_memory;
    match gpu.alloc_matrix::<u8>(total + GIB, 1) {
        Err(Error::OutOfMemory { requested, free }) => assert!(requested > total && free <= total),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    let after = common::free_device_memory(&gpu);
    assert!(after + SLACK >= free, "nothing leaked (free before {free}, after {after})");
}

fn allocating_and_freeing_do_not_wait_for_running_lanes(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    const ELEMS: usize = 1 << 28; // 1 GiB of f32: about 0.3 ms per fill on an H200
    const FILLS: usize = 1000;
    let mut alloc_free = Duration::ZERO;
    let mut enqueued_at = Instant::now();
    scope(&gpu, |s| {
        let big = s.alloc_matrix::<f32>(ELEMS, 1)?;
        let lane = s.lane()?;
        lane.enter(|st| {
            let mut v = st.bind(big.as_columns_mut());
            for _ in 0..FILLS {
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(ELEMS, 256), (&mut v, 1.0))?;
            }
            Ok::<_, Error>(())
        })?;
        enqueued_at = Instant::now();
        // While the lane runs: owned matrices and scope allocations come and go. With a
        // synchronous `cuMemFree` each drop would wait for the lane's fills.
        for _ in 0..8 {
            let m = gpu.alloc_matrix::<f32>(1 << 24, 1)?; // 64 MiB
            drop(m);
            s.alloc_buffer::<f32>(1 << 20)?;
        }
        alloc_free = enqueued_at.elapsed();
        Ok(())
    })
    .expect("scope");
    let joined_after = enqueued_at.elapsed();
    println!("8 allocations and frees: {alloc_free:?}; the lane finished {joined_after:?} after its work was enqueued");
    assert!(
        joined_after > Duration::from_millis(50),
        "setup: the lane's {FILLS} fills should still run for a while after being enqueued ({joined_after:?})"
    );
    assert!(
        alloc_free * 4 < joined_after,
        "allocating and freeing waited for the running lane: {alloc_free:?} of {joined_after:?} (rule 6)"
    );
}

fn repeated_scopes_reuse_streams_and_memory(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    const LANES: usize = 64;
    const ROWS: usize = 1 << 14;
    let mut host = gpu.pinned_matrix::<f32>(ROWS, LANES).expect("pinned");
    let run = |host: &mut sluice::PinnedMatrix<f32>, round: usize| {
        host.fill(f32::NAN);
        scope(&gpu, |s| {
            let out = s.alloc_matrix::<f32>(ROWS, LANES)?;
            let lanes = s.lanes(LANES)?;
            for (j, ((lane, col), dst)) in lanes.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
            {
                let value = (round * LANES + j) as f32;
                lane.enter(|st| {
                    let mut v = st.bind(col);
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(ROWS, 256), (&mut v, value))?;
                    st.copy_to_host(&v, dst).map(drop)
                })?;
            }
            Ok(())
        })
        .expect("scope");
        for j in 0..LANES {
            let want = (round * LANES + j) as f32;
            assert!(host.column(j).unwrap().iter().all(|x| *x == want), "round {round}, column {j}");
        }
    };
    run(&mut host, 0); // warm up: module load, the first streams and events, the pool
    let before = common::free_device_memory(&gpu);
    let t = Instant::now();
    for round in 1..=20 {
        run(&mut host, round);
    }
    println!("20 scopes of {LANES} lanes with pooled streams and memory: {:?} per scope", t.elapsed() / 20);
    let after = common::free_device_memory(&gpu);
    assert!(after + SLACK >= before, "nothing leaked across scopes (free before {before}, after {after})");
}

/// A loop of scopes finds its scope memory where the last scope's was (the device keeps it:
/// a repeated scope's cached graph needs no new addresses), and on the CPU backend memory
/// kept so is poisoned again, as a fresh allocation is: a column copied back unwritten reads
/// NaN, not the last scope's values.
fn a_scope_finds_the_last_scopes_memory_where_it_was(gpu: Gpu) {
    const ROWS: usize = 1024;
    let mut host = gpu.pinned_buffer::<f32>(ROWS).expect("pinned");
    let mut addresses = Vec::new();
    // Buffers of the same size allocated between the scopes and held: memory freed at a
    // scope's end (rather than kept for the next scope) would go to them.
    let mut held = Vec::new();
    for round in 0..4 {
        host.fill(0.0);
        scope(&gpu, |s| {
            let out = s.alloc_buffer::<f32>(ROWS)?;
            s.lane()?.enter(|st| {
                let mut v = st.bind(out.as_columns_mut());
                addresses.push(v.device_address());
                if round % 2 == 0 {
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(ROWS, 256), (&mut v, 7.0))?;
                }
                st.copy_to_host(&v, host.as_pinned_mut()).map(drop)
            })
        })
        .expect("scope");
        match (round % 2, gpu.backend()) {
            (0, _) => assert!(host.iter().all(|x| *x == 7.0), "round {round}"),
            (_, sluice::Backend::Cpu) => assert!(host.iter().all(|x| x.is_nan()), "round {round}: not poisoned again"),
            // A GPU's memory is not poisoned: the last scope's values may be there.
            _ => {}
        }
        held.push(gpu.alloc_buffer::<f32>(ROWS).expect("alloc"));
    }
    assert!(addresses.windows(2).all(|w| w[0] == w[1]), "the scope memory moved: {addresses:x?}");
}

fn over_aligned_element_types_are_typed_errors(gpu: Gpu) {
    #[derive(Clone, Copy, bytemuck::Zeroable, bytemuck::Pod)]
    #[repr(C, align(8192))]
    struct Page {
        bytes: [[u8; 4096]; 2],
    }
    #[derive(Clone, Copy, bytemuck::Zeroable, bytemuck::Pod)]
    #[repr(C, align(256))]
    struct Line {
        bytes: [u8; 256],
    }
    let over = Error::OverAligned { align: 8192, max: 256 };
    assert_eq!(gpu.alloc_matrix::<Page>(4, 2).unwrap_err(), over);
    assert_eq!(gpu.alloc_buffer::<Page>(4).unwrap_err(), over);
    assert_eq!(gpu.pinned_matrix::<Page>(4, 2).unwrap_err(), over);
    let r = scope(&gpu, |s| {
        assert_eq!(s.alloc_buffer::<Page>(4).unwrap_err(), over);
        assert_eq!(s.pinned_buffer::<Page>(4).unwrap_err(), over);
        assert_eq!(s.upload(&[Page { bytes: [[0; 4096]; 2] }]).unwrap_err(), over);
        Ok(())
    });
    assert_eq!(r, Ok(()));
    // 256-byte alignment is what the memory has: allowed, and the addresses are aligned.
    let m = gpu.alloc_matrix::<Line>(3, 2).expect("256-byte aligned elements");
    let h = gpu.pinned_matrix::<Line>(3, 2).expect("256-byte aligned elements, pinned");
    assert_eq!(h.as_ptr() as usize % 256, 0);
    drop((m, h));
}

fn row_slices_of_adjacent_columns_do_not_fan_in(gpu: Gpu) {
    let r = scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(16, 2)?;
        let (c0, c1) = m.split_columns_mut(1).expect("2 columns");
        let (la, lb, collector) = (s.lane()?, s.lane()?, s.lane()?);
        // Rows 4..8 of each column, on two lanes: their addresses are one column apart, so
        // the address check alone would join them into a view covering rows 8..16 of
        // column 0 and 0..4 of column 1 as well.
        let (a, b) = (rows_4_to_8(la, c0)?, rows_4_to_8(lb, c1)?);
        collector.enter(|st| {
            let joined = st.await_all([a, b]);
            assert!(matches!(joined, Err(Error::NotAdjacent)), "row slices of two columns fanned in: {joined:?}");
            // Nothing was enqueued for the refused fan-in.
            assert_eq!(st.stats().waits_enqueued, 0);
        });
        Ok(())
    });
    assert_eq!(r, Ok(()));
}

/// Rows 4..8 of a 16-row column, zeroed on `lane` and fenced.
fn rows_4_to_8<'scope>(
    lane: Lane<'scope>,
    col: ColumnsMut<'scope, f32>,
) -> sluice::Result<Fenced<'scope, ColumnsMut<'scope, f32>>> {
    lane.enter(|st| {
        let (_, lower) = st.bind(col).split_rows(4).expect("16 rows");
        let (mut mid, _) = lower.split_rows(4).expect("12 rows");
        st.zero(&mut mid)?;
        st.fence(mid)
    })
}

on_every_backend!(
    repeated_scopes_reuse_streams_and_memory,
    a_scope_finds_the_last_scopes_memory_where_it_was,
    over_aligned_element_types_are_typed_errors,
    row_slices_of_adjacent_columns_do_not_fan_in,
    ;
    cuda_only:
    freed_device_memory_stays_pooled_until_trimmed,
    a_full_device_is_retried_after_trimming_the_pool,
    allocating_and_freeing_do_not_wait_for_running_lanes,
);
