//! The checking mode of the CPU backend through the host API, as a user meets it: a
//! `#[kernel]` that races passes on the CPU unchecked (its threads switch only at
//! barriers), and fails `cargo test` checked — the scope returns `Error::KernelCheck`
//! naming the kernel, the block, both threads and both source lines.
//!
//! The kernels here are compiled for the host only (a test file is never built for the
//! GPU): the racy ones must never run on one (they would give wrong results, or hang).
//! `sluice_device`'s `tests/check.rs` has a kernel of every kind the checker reports;
//! these show the path from a kernel to the error a scope returns.

use sluice::{scope, CheckKind, CpuCheck, Error, Gpu, Kernel, LaunchConfig, Mut, Ref, Result, Tma};
use sluice_device::slice::DeviceSliceMut;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::tma::{TmaMatrix, WsPipeline};
use sluice_device::{kernel, shared_array, sync, thread};

/// Rows of the tile of [`tile_rows`].
const ROWS: usize = 4;

/// The example: each thread sets its column of every row of a 2-D tile by
/// reading the row, changing its element and writing the row back — 32 threads writing
/// one row at once, a race on a GPU (one thread's row overwrites another's). The CPU runs
/// the threads one after another, so unchecked the result is right.
#[kernel]
pub fn tile_rows(out: DeviceSliceMut<f32>) {
    let tile = shared_array!(TILE: [[f32; 32]; ROWS]);
    let t = thread::thread_idx_x() as usize;
    if t < ROWS {
        tile.set(t, [0.0; 32]);
    }
    sync::sync_threads();
    for r in 0..ROWS {
        let mut row = tile.get(r); // @tile:get
        row[t] = (r * 32 + t) as f32;
        tile.set(r, row); // @tile:set
    }
    sync::sync_threads();
    let mut out = out;
    for (i, o) in out.grid_stride() {
        *o = tile.get(i / 32)[i % 32];
    }
}

/// [`tile_rows`] done right: each thread writes only its element, through a tile of
/// `f32`s (one element per thread and row).
#[kernel]
pub fn tile_elements(out: DeviceSliceMut<f32>) {
    let tile = shared_array!(TILE: [f32; 32 * ROWS]);
    let t = thread::thread_idx_x() as usize;
    for r in 0..ROWS {
        tile.set(r * 32 + t, (r * 32 + t) as f32);
    }
    sync::sync_threads();
    let mut out = out;
    for (i, o) in out.grid_stride() {
        *o = tile.get(i);
    }
}

/// Every block's thread 0 writes `out[0]`: a race between blocks.
#[kernel]
pub fn last_block_wins(out: DeviceSliceMut<u32>) {
    if thread::thread_idx_x() == 0 {
        // SAFETY: deliberately wrong (the checker's test): every block writes element 0.
        unsafe { out.write(0, thread::block_idx_x()) }; // @blocks:write
    }
}

/// Threads past `x`'s end return before the barrier the others wait at.
#[kernel]
pub fn reverse_in_blocks(out: DeviceSliceMut<f32>, x: &[f32]) {
    let tile = shared_array!(TILE: [f32; 64]);
    let t = thread::thread_idx_x() as usize;
    let i = thread::index_1d() as usize;
    if i >= x.len() {
        return; // the bug: these threads never reach the barrier below
    }
    tile.set(t, x[i]);
    sync::sync_threads(); // @reverse:barrier
    let mut out = out;
    if let Some(o) = out.for_thread_1d() {
        *o = tile.get(63 - t);
    }
}

/// One TMA stage of an `8 × 32` f32 tile (1 KiB) for [`tma_read_early`] and
/// [`tma_stage_never_filled`].
type Stage = Tile<f32, Swizzled<8, 32>>;

/// A consumer reads stage 0 through a second handle, without waiting for its barrier: a
/// race with the producer's TMA copy into it (the handle needs `unsafe`: safe code reaches a
/// stage only through the `Full` that `Consumer::wait` returns).
#[kernel]
pub fn tma_read_early(out: DeviceSliceMut<f32>, a: TmaMatrix<f32, 8, 32>) {
    let pipe = WsPipeline::<Stage, 2>::start();
    let base = (sluice_device::shared::dynamic_shared::<u8>().as_ptr().addr() + 1023) & !1023;
    // SAFETY: deliberately wrong (the checker's test): a second handle to stage 0.
    let early = unsafe { Stage::from_addr(base) };
    pipe.run_keeping_registers(
        |mut p| p.fill(a.tile_at(0, 0)),
        |mut c| {
            let t = thread::thread_idx_x() as usize % 32;
            let v = early.get(0, t); // @tma:early
            let full = c.wait();
            let w = full.tiles().get(0, t);
            let out = out;
            if thread::thread_idx_x() == 128 + t as u32 {
                // SAFETY: one thread per element (threads 128..160 of the one block).
                unsafe { out.write(t, v + w) };
            }
        },
    );
}

/// The consumers wait for two stages; the producer fills one.
#[kernel]
pub fn tma_stage_never_filled(a: TmaMatrix<f32, 8, 32>) {
    let pipe = WsPipeline::<Stage, 2>::start();
    pipe.run_keeping_registers(
        |mut p| p.fill(a.tile_at(0, 0)),
        |mut c| {
            drop(c.wait());
            drop(c.wait()); // @tma:never
        },
    );
}

/// Two pipelines on one kernel's dynamic shared memory: the second's barriers are set up
/// over the first's live ones.
#[kernel]
pub fn tma_two_pipelines(a: TmaMatrix<f32, 8, 32>) {
    let first = WsPipeline::<Stage, 2>::start();
    let second = WsPipeline::<Stage, 2>::start(); // @tma:second
    first.run_keeping_registers(|mut p| p.fill(a.tile_at(0, 0)), |mut c| drop(c.wait()));
    second.run_keeping_registers(|mut p| p.fill(a.tile_at(0, 0)), |mut c| drop(c.wait()));
}

/// A plain store over a pipeline's live barrier, through the dynamic region.
#[kernel]
pub fn tma_barrier_overwritten(a: TmaMatrix<f32, 8, 32>) {
    let pipe = WsPipeline::<Stage, 2>::start();
    if thread::thread_idx_x() == 0 {
        // The first barrier: after the two 1 KiB stages, at the 1 KiB-aligned ring's start.
        let words = sluice_device::shared::dynamic_shared::<u64>();
        words.set(256, 0); // @tma:overwrite
    }
    pipe.run_keeping_registers(|mut p| p.fill(a.tile_at(0, 0)), |mut c| drop(c.wait()));
}

// SAFETY: (all eight) CPU-only handles: the kernels of this file, which no PTX holds (the
// CPU backend runs their CPU entries; an empty PTX text declares no entry to check).
const TILE_ROWS: Kernel<(Mut<f32>,)> = unsafe { Kernel::of::<__sluice_kernel_tile_rows>("") };
// SAFETY: as above.
const TILE_ELEMENTS: Kernel<(Mut<f32>,)> = unsafe { Kernel::of::<__sluice_kernel_tile_elements>("") };
// SAFETY: as above.
const LAST_BLOCK_WINS: Kernel<(Mut<u32>,)> = unsafe { Kernel::of::<__sluice_kernel_last_block_wins>("") };
// SAFETY: as above.
const REVERSE: Kernel<(Mut<f32>, Ref<f32>)> = unsafe { Kernel::of::<__sluice_kernel_reverse_in_blocks>("") };
// SAFETY: as above.
const TMA_READ_EARLY: Kernel<(Mut<f32>, Tma<f32, 8, 32>)> = unsafe { Kernel::of::<__sluice_kernel_tma_read_early>("") };
// SAFETY: as above.
const TMA_NEVER_FILLED: Kernel<(Tma<f32, 8, 32>,)> =
    unsafe { Kernel::of::<__sluice_kernel_tma_stage_never_filled>("") };
// SAFETY: as above.
const TMA_TWO: Kernel<(Tma<f32, 8, 32>,)> = unsafe { Kernel::of::<__sluice_kernel_tma_two_pipelines>("") };
// SAFETY: as above.
const TMA_OVERWRITE: Kernel<(Tma<f32, 8, 32>,)> = unsafe { Kernel::of::<__sluice_kernel_tma_barrier_overwritten>("") };

/// The CPU device's check mode is the process's (see `Gpu::set_cpu_check`): the tests of this
/// file, which set it, take turns.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

/// `file:line:` of the line of this file that ends with `// marker`.
fn at(marker: &str) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cpu_check.rs")).expect("this file");
    let tag = format!("// {marker}");
    let line = text.lines().position(|l| l.ends_with(&tag)).expect("the marker") + 1;
    format!("{}:{line}:", file!())
}

/// The checking mode's report in `e` (a scope's error: a host-side wait on the failed
/// lane, such as a copy's, fails first and the lane's join reports the check in the
/// cleanup), with its lane.
fn check_report(e: &Error) -> (sluice::LaneId, &sluice::CheckReport) {
    match e {
        Error::KernelCheck { lane, report } => (*lane, report),
        Error::Cleanup { error, cleanup } => std::iter::once(&**error)
            .chain(cleanup)
            .find(|e| matches!(e, Error::KernelCheck { .. }))
            .map(check_report)
            .unwrap_or_else(|| panic!("no check report in {e:?}")),
        e => panic!("no check report in {e:?}"),
    }
}

/// Runs `kernel` over one column of `n` elements, 32 threads per block.
fn run_f32(gpu: &Gpu, kernel: &Kernel<(Mut<f32>,)>, n: usize) -> Result<Vec<f32>> {
    let mut host = gpu.pinned_matrix::<f32>(n, 1)?;
    scope(gpu, |s| {
        let out = s.alloc_matrix::<f32>(n, 1)?;
        let col = out.columns_mut().next().expect("one column");
        let dst = host.columns_mut().next().expect("one column");
        let pending = s.lane()?.enter(|st| {
            let mut col = st.bind(col);
            st.launch(kernel, LaunchConfig { grid: (1, 1, 1), block: (32, 1, 1), shared_mem_bytes: 0 }, (&mut col,))?;
            st.copy_to_host(&col, dst)
        })?;
        pending.wait().map(drop)
    })?;
    Ok(host.column(0).expect("one column").to_vec())
}

#[test]
fn a_racing_tile_passes_unchecked_and_fails_checked_naming_both_accesses() {
    let _turn = one_at_a_time();
    let n = 32 * ROWS;
    let want: Vec<f32> = (0..n).map(|i| i as f32).collect();
    // Unchecked, the CPU hides the race: the result is right.
    let gpu = Gpu::cpu();
    gpu.set_cpu_check(CpuCheck::Off);
    assert_eq!(run_f32(&gpu, &TILE_ROWS, n).unwrap(), want);
    // Checked, it is found.
    let gpu = Gpu::cpu_checked();
    let e = run_f32(&gpu, &TILE_ROWS, n).expect_err("the checker reports the race");
    let (lane, report) = check_report(&e);
    assert_eq!(lane.to_string(), "lane 0");
    assert_eq!(report.kind, CheckKind::SharedRace);
    assert_eq!(report.kernel, "tile_rows");
    let second = report.second.as_ref().expect("two accesses");
    assert_ne!(report.first.thread, second.thread);
    assert!(report.first.site.starts_with(&at("@tile:set")), "{report}");
    assert!(second.site.starts_with(&at("@tile:get")), "{report}");
    let m = e.to_string();
    assert!(
        m.contains(
            "lane 0: the CPU backend's check failed: kernel `tile_rows`, block (0, 0, 0): data race on shared memory"
        ),
        "{m}"
    );
    assert!(m.contains(&at("@tile:set")) && m.contains(&at("@tile:get")), "{m}");
    // The fixed kernel passes the check.
    assert_eq!(run_f32(&gpu, &TILE_ELEMENTS, n).unwrap(), want);
}

#[test]
fn blocks_writing_one_element_fail_checked() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_checked();
    let e = scope(&gpu, |s| {
        let out = s.alloc_matrix::<u32>(1, 1)?;
        let col = out.columns_mut().next().expect("one column");
        s.lane()?.enter(|st| {
            let mut col = st.bind(col);
            st.launch(
                &LAST_BLOCK_WINS,
                LaunchConfig { grid: (4, 1, 1), block: (32, 1, 1), shared_mem_bytes: 0 },
                (&mut col,),
            )
        })?;
        Ok(())
    })
    .expect_err("a race between blocks");
    let (_, report) = check_report(&e);
    assert_eq!(report.kind, CheckKind::GlobalRace);
    let second = report.second.as_ref().unwrap();
    assert_ne!(report.first.block, second.block, "{report}");
    assert!(report.first.site.starts_with(&at("@blocks:write")) && second.site.starts_with(&at("@blocks:write")));
}

#[test]
fn an_early_return_before_a_barrier_fails_checked() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_checked();
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let e = scope(&gpu, |s| {
        let x = s.upload(&x)?;
        let out = s.alloc_matrix::<f32>(100, 1)?;
        let col = out.columns_mut().next().expect("one column");
        s.lane()?.enter(|st| {
            let x = st.await_fence(&x)?;
            let mut col = st.bind(col);
            st.launch(&REVERSE, LaunchConfig::for_elements(100, 64), (&mut col, &x))
        })?;
        Ok(())
    })
    .expect_err("threads 36..64 of block 1 return before the barrier");
    let (_, report) = check_report(&e);
    assert_eq!(report.kind, CheckKind::DivergentBarrier);
    assert_eq!(report.block, [1, 0, 0]);
    assert!(report.first.site.starts_with(&at("@reverse:barrier")), "{report}");
    assert_eq!(report.second.as_ref().unwrap().thread, [36, 0, 0], "{report}");
}

/// The launch of the TMA kernels above: one block of 256 threads (a producer and a consumer
/// warpgroup), an 8 × 32 matrix, the pipeline's shared memory.
const TMA_CFG: LaunchConfig =
    LaunchConfig { grid: (1, 1, 1), block: (256, 1, 1), shared_mem_bytes: WsPipeline::<Stage, 2>::SHARED_BYTES as u32 };

#[test]
fn a_tma_stage_read_before_its_barrier_fails_checked() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_checked();
    let a: Vec<f32> = (0..8 * 32).map(|i| i as f32).collect();
    let e = scope(&gpu, |s| {
        let a = s.upload(&a)?;
        let out = s.alloc_matrix::<f32>(32, 1)?;
        let col = out.columns_mut().next().expect("one column");
        s.lane()?.enter(|st| {
            let a = st.await_fence(&a)?.row_major(8, 32)?;
            let mut col = st.bind(col);
            st.launch(&TMA_READ_EARLY, TMA_CFG, (&mut col, &a))
        })?;
        Ok(())
    })
    .expect_err("the early read races with the TMA copy");
    let (_, report) = check_report(&e);
    assert_eq!(report.kind, CheckKind::SharedRace, "{report}");
    let second = report.second.as_ref().expect("two accesses");
    let sites = [report.first.site.as_str(), second.site.as_str()];
    assert!(sites.iter().any(|s| s.starts_with(&at("@tma:early"))), "{report}");
}

#[test]
fn a_tma_stage_no_one_fills_is_a_deadlock_report() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_checked();
    let a: Vec<f32> = (0..8 * 32).map(|i| i as f32).collect();
    let e = scope(&gpu, |s| {
        let a = s.upload(&a)?;
        s.lane()?.enter(|st| {
            let a = st.await_fence(&a)?.row_major(8, 32)?;
            st.launch(&TMA_NEVER_FILLED, TMA_CFG, (&a,))
        })?;
        Ok(())
    })
    .expect_err("the consumers wait for ever");
    let m = e.to_string();
    assert!(m.contains("mbarrier") && m.contains(&at("@tma:never")), "{m}");
}

/// Runs a one-matrix TMA kernel of this file; its error.
fn tma_error(kernel: &Kernel<(Tma<f32, 8, 32>,)>) -> Error {
    let gpu = Gpu::cpu_checked();
    let a: Vec<f32> = (0..8 * 32).map(|i| i as f32).collect();
    scope(&gpu, |s| {
        let a = s.upload(&a)?;
        s.lane()?.enter(|st| {
            let a = st.await_fence(&a)?.row_major(8, 32)?;
            st.launch(kernel, TMA_CFG, (&a,))
        })?;
        Ok(())
    })
    .expect_err("the CPU backend fails the launch")
}

#[test]
fn a_second_pipeline_over_live_barriers_fails_on_the_cpu() {
    let _turn = one_at_a_time();
    let m = tma_error(&TMA_TWO).to_string();
    assert!(m.contains("already holds a live mbarrier") && m.contains(&at("@tma:second")), "{m}");
}

#[test]
fn a_store_over_a_live_barrier_fails_on_the_cpu() {
    let _turn = one_at_a_time();
    let m = tma_error(&TMA_OVERWRITE).to_string();
    assert!(m.contains("touches the mbarrier") && m.contains(&at("@tma:overwrite")), "{m}");
}

#[test]
fn the_default_follows_the_build() {
    // A plain `cargo test` has debug assertions: every CPU launch is checked, unless
    // SLUICE_CPU_CHECK says otherwise.
    let _turn = one_at_a_time();
    if std::env::var_os("SLUICE_CPU_CHECK").is_none() {
        // No test of this file holds a handle now, so this one starts a fresh device.
        assert_eq!(Gpu::cpu().cpu_check(), if cfg!(debug_assertions) { CpuCheck::On } else { CpuCheck::Off });
    }
}

/// The safe kernels of `gpu-kernels` whose outputs are slices of atomics (`&[AtomicU32]`,
/// `&[AtomicF32]`: issue 22's form for writes chosen by data) pass checked: the checker
/// shadows such a parameter and records every access through it as atomic, and atomics
/// never race each other — many blocks adding to one bin or one total, and a transpose's
/// stores through a `Matrix` tile of them.
#[test]
fn the_kernels_taking_slices_of_atomics_pass_checked() {
    let _turn = one_at_a_time();
    let gpu = Gpu::cpu_checked();
    let x: Vec<f32> = (0..5000).map(|i| ((i * 37) % 211) as f32 / 100.0 - 1.0).collect();
    let (lo, hi, n_bins) = (-1.0f32, 1.0f32, 64usize);
    let (rows, cols) = (40u32, 70u32);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut bins_host = gpu.pinned_buffer::<u32>(n_bins).unwrap();
    let mut sum_host = gpu.pinned_buffer::<f32>(1).unwrap();
    let mut t_host = gpu.pinned_buffer::<f32>(input.len()).unwrap();
    let transpose_cfg = LaunchConfig {
        grid: (cols.div_ceil(gpu_kernels::TRANSPOSE_TILE), rows.div_ceil(gpu_kernels::TRANSPOSE_TILE), 1),
        block: (gpu_kernels::TRANSPOSE_TILE, gpu_kernels::TRANSPOSE_BLOCK_ROWS, 1),
        shared_mem_bytes: 0,
    };
    let blocks = |grid: u32| LaunchConfig { grid: (grid, 1, 1), block: (256, 1, 1), shared_mem_bytes: 0 };
    scope(&gpu, |s| {
        let (xs, inp) = (s.upload(&x)?, s.upload(&input)?);
        let (bins, sum, out) =
            (s.alloc_buffer::<u32>(n_bins)?, s.alloc_buffer::<f32>(1)?, s.alloc_buffer::<f32>(input.len())?);
        s.lane()?.enter(|st| {
            let (x, inp) = (st.await_fence(&xs)?, st.await_fence(&inp)?);
            let (mut bins, mut sum, mut out) =
                (st.bind(bins.as_columns_mut()), st.bind(sum.as_columns_mut()), st.bind(out.as_columns_mut()));
            st.zero(&mut bins)?;
            st.zero(&mut sum)?;
            st.launch(&sluice::kernels::histogram, blocks(4), (&mut bins, &x, lo, hi))?;
            st.launch(&sluice::kernels::sum_reduce, blocks(3), (&mut sum, &x))?;
            st.launch(&sluice::kernels::transpose, transpose_cfg, (&mut out, &inp, rows, cols))?;
            st.copy_to_host(&bins, bins_host.as_pinned_mut())?.wait()?;
            st.copy_to_host(&sum, sum_host.as_pinned_mut())?.wait()?;
            st.copy_to_host(&out, t_host.as_pinned_mut())?.wait().map(drop)
        })
    })
    .expect("clean checked");
    assert_eq!(bins_host[..], gpu_kernels::reference::histogram(&x, lo, hi, n_bins)[..]);
    let (want, abs) = gpu_kernels::reference::sum(&x);
    assert!((sum_host[0] as f64 - want).abs() <= 1e-5 * abs, "{} against {want}", sum_host[0]);
    assert_eq!(t_host[..], gpu_kernels::reference::transpose(&input, rows as usize, cols as usize)[..]);
}
