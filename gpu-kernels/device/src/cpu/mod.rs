//! The CPU runtime (host only): CUDA's execution model on the CPU, so that a
//! kernel body written against this crate runs on the host with the same
//! semantics as on the GPU.
//!
//! [`launch`] runs a body once per thread of a `grid × block` launch. The
//! device functions of this crate (indices, barriers, shared memory, warp
//! operations, atomics, math, `dprint!`, slices, clocks) have host
//! implementations that read the "current GPU thread" the runtime sets; called
//! outside a launch, those that depend on it panic with a message saying so.
//! (The pure ones work anywhere: math, atomics on pointers and the atomic
//! types, fences.)
//!
//! # The engine and the families
//!
//! This module is the engine: [`launch`], the runner that runs a block's threads
//! as coroutines (`runner.rs`), and the block (`block.rs`): the current thread's
//! context, how a thread parks in a rendezvous until another releases it, and the
//! per-block state each op family keeps. It names no op family. Each family's
//! `cpu.rs` implements its operations over it: block barriers in `sync/cpu.rs`,
//! warp collectives and `active_mask` in `warp/cpu.rs` (`warp/rendezvous.rs`, the
//! rendezvous later warp-level families share), shared memory in `shared/cpu.rs`
//! (`shared/arena.rs`), atomics in `atomic/cpu.rs`, `dprint!` in `io/cpu.rs`.
//!
//! # How it runs
//!
//! * **Blocks in parallel** on rayon's pool, each block on one OS thread from
//!   its start to its end. A GPU runs as many blocks at once as fit on its
//!   SMs; here as many as rayon has threads.
//! * **The threads of a block as cooperative tasks**: stackful coroutines
//!   (`corosensei`) on the block's OS thread, one thread running at a time.
//!   A thread runs until it *suspends* — at a block barrier, a warp
//!   collective, `active_mask` or `nanosleep` — or returns. A coroutine is
//!   made only when one is needed: a worker coroutine runs threads one after
//!   another as long as none suspends, so a kernel without barriers and warp
//!   operations runs each block as a plain loop over its threads inside one
//!   coroutine. Stacks are pooled (no `mmap` per coroutine; see **Stacks**
//!   below); their size is 256 KiB (`SLUICE_CPU_STACK_KIB` changes it: a kernel
//!   with large local arrays may need more: a GPU thread that overflows its
//!   stack ends the process with a message that says so and names the variable,
//!   on Unix; see `overflow`).
//! * **Barriers** (`sync_threads` and its count/and/or forms, named barriers
//!   with a thread count, `barrier_arrive`): a thread waits until every
//!   non-exited thread of the block (or the named count) has arrived; the
//!   reductions are over the threads that arrived.
//! * **Warps** are 32 consecutive linear thread ranks, as on the GPU. A
//!   `*.sync` operation waits until every non-exited lane of its mask has
//!   arrived at an operation of the same kind with the same mask, as PTX
//!   prescribes for sm_70+; lanes in divergent branches with disjoint masks
//!   complete separately. A shuffle from a lane outside the group (undefined in
//!   PTX) reads all-one bits. `active_mask()` waits until no thread of the
//!   block can run, then returns the lanes of the warp waiting at the same
//!   call site: the lanes that reached it together.
//! * **Shared memory**: one buffer per block, the same address for every
//!   thread of the block (static variables allocated at their first use in
//!   the block, the dynamic region at address 0); every byte starts as
//!   [`SHARED_POISON`] (`0xff`: NaN for floats, `-1`/`MAX` for integers), so
//!   that reading an element nobody wrote shows. Static shared memory above
//!   48 KiB per block is refused, as ptxas refuses it.
//! * **Atomics** are host atomics on the memory pointed to (every memory scope
//!   is as strong as `System` on the CPU); float adds are compare-exchange loops.
//! * **Errors**: a panic in a thread (a device panic, a failed `dassert!`, an
//!   index out of bounds, `trap`) ends its block: the other threads of the
//!   block unwind from where they wait, blocks not started yet never start,
//!   blocks already running finish, and [`launch`] returns the message
//!   `block (x, y, z), thread (x, y, z): panicked at FILE:LINE:COL: MESSAGE`
//!   (a GPU aborts the whole grid). A block in which every non-exited thread
//!   waits and none can be released is a **deadlock**: reported with where each
//!   group of threads waits, never a hang.
//!
//! # Checking mode
//!
//! The coroutines of a block switch only at barriers and warp collectives, so a kernel
//! whose threads race passes here: each thread sees the others' stores either all done
//! or not begun, whatever a GPU would interleave. A **checked** launch records instead
//! what each thread did between the block's synchronisation points and reports a bug as
//! the launch's error (a [`CpuLaunchError::Check`] with a typed
//! [`CheckReport`](sluice_host::CheckReport): the kind, the kernel, the block, both
//! threads, both source lines, and what to do; through the host's CPU backend,
//! `Error::KernelCheck` of the lane). It reports:
//!
//! * **data races on shared memory**: two threads of a block access the same bytes in
//!   one barrier interval (nothing orders them), at least one writes, not both atomic
//!   — byte-exact, so a `u8` array written per thread is fine;
//! * **data races on global memory**: two threads of a launch access one element of a
//!   written slice parameter (`for_thread`, `for_thread_1d`, `grid_stride`, `write`,
//!   `get_unchecked_mut`, or an atomic on it) unordered: threads of different blocks are
//!   never ordered; a block's are by its barriers (and `sync_warp`, named barriers). A
//!   kernel parameter of atomics (`&[AtomicU32]`, `slice::atomics`) is shadowed the same
//!   way, every access through it recorded as atomic: it never races;
//! * **divergent barriers**: a `sync_threads` (or its count/and/or form) that a thread
//!   of the block returned before, that threads reach from different call sites, or
//!   where some threads wait at another barrier or another form of barrier 0 (on the
//!   GPU the reductions use barrier ids of their own); a named barrier used with two
//!   thread counts;
//! * **divergent warp operations**: a lane not in its own mask, a lane named in the mask
//!   that has not exited and never takes part (it waits at a barrier or in another
//!   operation or mask: the block is stuck), and a shuffle reading a lane that does not
//!   take part (exited, or outside the mask: an undefined value);
//! * **reads of uninitialised shared memory**: a read (or an atomic read-modify-write) of
//!   shared memory no thread of the block wrote before, reported at the end of its
//!   interval unless a write of another thread in that interval makes it a race.
//!
//! **How.** Races are found from *happens-before*, not from an interleaving, so the
//! schedule cannot hide them: every access is recorded with the block's barrier
//! interval and the thread's position among its own synchronisation points; a
//! `sync_warp` orders its lanes (a 32-entry vector clock per thread), a named barrier
//! its arrivals before its waiters (a vector clock over the block, made only when one is
//! used). Shuffles, votes, `match` and `redux` exchange values, not memory: PTX gives
//! them no memory ordering, and neither does the checker (a lane reading a neighbour's
//! store after a shuffle, without `sync_warp`, is a race). Shared memory has a shadow of
//! 72 bytes per byte (the last write and two reads); global memory one of 32 bytes per
//! element of each written slice parameter, shared by the launch's blocks (each element
//! locked while it is compared and updated).
//!
//! **When.** [`CpuCheck::auto`]: on in builds with debug assertions (so a plain
//! `cargo test` of a project checks every CPU launch), off in release builds;
//! `SLUICE_CPU_CHECK=1` or `0` decides instead where it is set. On the host,
//! `Gpu::cpu_checked()` and `Gpu::set_cpu_check` decide for one device; here [`run`]
//! takes the mode ([`CpuLaunch::check`]) and [`launch`] uses [`CpuCheck::auto`].
//!
//! **What it cannot see.** Plain Rust accesses through raw pointers — generic pointers
//! to shared memory (`as_generic_ptr`, `to_generic`, a `shared_static!`'s `Deref`, as
//! Rust-CUDA ports use them), `as_mut_ptr` of a slice parameter, `#[kernel(unchecked)]`'s
//! raw parameters — and what is done through a `&mut T` once a slice has handed it out
//! (one record per hand-out). A variable a generic pointer was made to counts as written
//! (no uninitialised-read report for it). An order made by fences and flags (without a
//! barrier) is not seen, nor the release/acquire orderings of atomics: a handshake
//! through a flag without a barrier is reported as a race (use a barrier, or make the
//! data accesses atomic too). Slice parameters of more than [`MAX_SHADOWED_ELEMENTS`]
//! elements are not shadowed. Within a barrier interval a byte keeps two reads: a
//! third thread's read, racing with a later write that the two recorded readers are
//! ordered before by `sync_warp`, goes unseen. Whether a lane that exits instead of
//! taking part in a warp operation had exited before the others reached it is a
//! matter of scheduling the CPU does not model: exited lanes are allowed (CUDA's rule
//! names the non-exited ones), and only reading such a lane's value is reported (a
//! divergent `if lane < 16 { shfl(FULL_MASK, ..) }` whose other lanes just return is
//! therefore seen only if a lane reads one of them). A thread that passes more than
//! 2^20 `sync_warp`s or named barriers between two block barriers starts a new
//! interval for the block (the checker may then miss a race). Two launches never write
//! the same memory at once: the lane rules forbid it (and kernels that could, through
//! raw pointers, are outside what the checker sees).
//!
//! **The tensor-core families** (`tile`, `mma`, `async_copy`) reach shared memory through
//! [`SharedPtr`](crate::shared::SharedPtr), so the checker sees them: a tile's `get`/`set`,
//! each lane's 16-byte row of an `ldmatrix` (as that lane's read; the CPU runtime has each
//! lane read the row its address names), the element-wise fragment loads, and a
//! `cp.async` as a write of its 16 bytes by the issuing thread both at its issue and at
//! the wait that lands it (on a GPU the bytes land at some point in between; an access by
//! another thread in a barrier interval strictly between the two is not seen — the type
//! state of `async_copy` rules it out for safe code). The accumulator store writes through
//! the output slice's element access (shadowed as above). A fragment's registers are
//! plain data: what a lane does with a fragment copied out of them is not an access.
//!
//! **Cost** (see "Cost model" below for the measurements): nothing for a launch that is
//! not checked but a load and a branch per shared access and a relaxed load per slice
//! element. Checked, barrier-free kernels that only write their slices cost a shadow
//! update per element, and shared-memory-heavy ones a few nanoseconds per byte
//! accessed.
//!
//! # What the CPU backend does not model
//!
//! * **Timing.** No warp scheduling, latency or throughput model; `clock`,
//!   `clock64` and the global timer read the host's clock (nanoseconds). Code
//!   whose result depends on timing (a race that usually goes one way, a
//!   timeout) may behave differently.
//! * **Weak memory ordering.** Threads of one block run on one OS thread,
//!   interleaved only at suspension points, so within a block every access is
//!   sequentially consistent; blocks run on different OS threads with the
//!   host's ordering (x86-64: TSO; Arm: weaker, still stronger than PTX's
//!   model in places). Fences are `std::sync::atomic::fence` (`SeqCst` for
//!   `fence`, `AcqRel` for `fence_acq_rel`) and barriers order everything, so
//!   correct programs work; a program that forgets a fence may pass on the CPU
//!   and fail on the GPU. A racy non-atomic access between two *blocks* that
//!   PTX defines (it returns some written value) is a data race on the host:
//!   use atomics for such data.
//! * **Implicit warp lockstep.** Lanes of a warp do not run in lockstep: each
//!   runs until it suspends. Warp-synchronous code that relies on lockstep
//!   without `sync_warp` or a `*.sync` operation (the pre-Volta shared-memory
//!   warp reduction with `volatile`, reading a neighbour lane's store without a
//!   `__syncwarp`) sees the other lanes' stores either all done or not begun,
//!   and computes wrong results, as it may on Volta and later GPUs with
//!   independent thread scheduling. Use the `*.sync` operations.
//! * **Spinning.** A thread that waits in a loop for another thread *of its
//!   block* must suspend inside the loop (`thread::nanosleep`, a warp
//!   operation or a barrier); a loop that only reads memory never lets the
//!   other thread run, and hangs (it is not detected as a deadlock). Waiting
//!   for another block works only while that block runs: at most as many blocks
//!   as rayon threads run at once (and, of blocks whose threads wait at
//!   barriers, only as many as the stack budget holds: **Stacks** below), fewer
//!   than a GPU keeps resident, so inter-block spin-waits (a grid-wide barrier
//!   of atomics) can hang here.
//! * **Stacks.** Each thread that waits (a barrier, a warp collective) holds a
//!   stack of [`DEFAULT_STACK_KIB`] until it exits; each is two of the
//!   process's memory mappings, of which Linux allows `vm.max_map_count`. Blocks
//!   whose threads wait share a process-wide budget of a third of those
//!   mappings (about 10,900 stacks by default): a block reserves its threads'
//!   stacks before its second one and, if the budget is spent — many lanes each
//!   running such a kernel at once — waits, first come first served, for
//!   another block to finish. Idle stacks kept for reuse are bounded too (a
//!   sixth of the mappings and at most 8192, counted over every thread). `SLUICE_CPU_STACK_KIB` must be a size from 16 to
//!   1,048,576 KiB, or every launch that needs a stack fails saying so. A stack
//!   the OS still refuses fails the launch with an error, never a panic.
//! * **Hardware specifics.** No textures or surfaces, no constant or local
//!   memory spaces, no `ld.global.nc` caching, no bank conflicts, no occupancy
//!   limits, no clusters or distributed shared memory, no tensor-core hardware (the
//!   MMAs are computed: `mma`, `wgmma`); `sm_id`
//!   is the rayon thread's index. The `*_fast` math functions are the exact
//!   ones (within the fast bounds, not bitwise the GPU's approximations), and
//!   `rsqrt` is `1 / sqrt`. A dynamic shared size above 227 KiB is refused,
//!   below it no opt-in attribute is needed.
//! * **Panics** need unwinding (`panic = "unwind"`, the default on the host);
//!   under `panic = "abort"` a device panic aborts the process. The runtime
//!   installs a panic hook (once) that records a GPU thread's panic for the
//!   launch's error and keeps it off stderr; panics elsewhere go to the hook
//!   that was there before. A hook installed later than the first launch takes
//!   over: launch errors then say the location is unknown.
//!
//! # Cost model
//!
//! Measured on this project's 2-core development machine (release build; the
//! `cpu_micro` example of this crate and the workspace's `bench_cpu` example print them):
//!
//! * **Per GPU thread: about 5 ns** — the body called through `&dyn Fn()`
//!   inside `catch_unwind`, a thread-local store, the thread's context record.
//!   Per block: one coroutine from the pool. A device function that reads the
//!   context (an index) is a thread-local load; a shared-memory access also finds
//!   its family's per-block state (a load of the key's slot and a null test): about
//!   1 ns per access in a tight loop (`cpu_micro`). The seed
//!   workload's `potential` kernel (262,144 rows × 512 sources, one thread per
//!   row) runs at 0.98–1.01× the time of a plain rayon loop over the rows with
//!   the same inner loop, with bitwise the same results.
//! * **Per barrier or warp collective: about 30 ns per thread** — a suspension
//!   and a resumption (two coroutine switches), and one coroutine (stack) per
//!   waiting thread: a block of 1024 threads at a barrier holds 1024 pooled
//!   stacks, mostly untouched virtual memory. `potential_tiled` (two barriers
//!   per 256 sources) costs 1.13–1.23× the barrier-free kernel. A GPU's warp
//!   shuffle is a cycle or two; here a reduction by shuffles
//!   (`gpu_kernels::sum_reduce`) costs 10–14× rayon's `sum`.
//! * **Memory order.** The threads of a block run one after another, so the
//!   access pattern that coalesces on a GPU (neighbouring threads, neighbouring
//!   addresses: a grid-stride loop) becomes a strided walk per thread on the
//!   CPU, touching one element per cache line per thread. Kernels that give
//!   each thread a contiguous range run faster here, and a grid-stride kernel
//!   runs best with few blocks (a few per rayon thread), each thread doing
//!   more of the work.
//! * `active_mask` waits for the whole block to block, like a barrier.
//!
//! # Example
//!
//! ```
//! use sluice_device::{cpu, shared_array, sync, thread};
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! let total = AtomicU32::new(0);
//! cpu::launch([4, 1, 1], [64, 1, 1], 0, &|| {
//!     let tile = shared_array!(TILE: [u32; 64]);
//!     let t = thread::thread_idx_x() as usize;
//!     tile.set(t, t as u32);
//!     sync::sync_threads();
//!     if t == 0 {
//!         let sum: u32 = (0..64).map(|i| tile.get(i)).sum();
//!         total.fetch_add(sum, Ordering::Relaxed);
//!     }
//! })
//! .unwrap();
//! assert_eq!(total.into_inner(), 4 * (63 * 64 / 2));
//! ```

use std::format;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::vec::Vec;

use rayon::prelude::*;

use crate::spec::thread::Dim3;

pub(crate) mod block;
pub(crate) mod check;
#[cfg(unix)]
mod overflow;
pub(crate) mod runner;
mod stacks;

pub use check::MAX_SHADOWED_ELEMENTS;
pub use sluice_host::{CpuCheck, CpuLaunch, CpuLaunchError};

/// The byte every shared-memory location holds before it is written on the
/// CPU (NaN as `f32`/`f64`, `-1` or `MAX` as an integer).
pub const SHARED_POISON: u8 = 0xff;

/// The default stack of each GPU thread that suspends (`SLUICE_CPU_STACK_KIB`
/// overrides it).
pub const DEFAULT_STACK_KIB: usize = 256;

/// Dynamic shared memory per block, at most (sm_90's 227 KiB).
pub const MAX_DYNAMIC_SHARED_BYTES: u32 = 227 * 1024;

/// Runs `body` once per thread of a `grid` x `block` launch with `dynamic_shared_bytes`
/// of dynamic shared memory per block; blocks in parallel (rayon), the threads of a block
/// as cooperating tasks with real barrier and warp semantics. Err(message) if a thread
/// panicked (a device panic, failed dassert!, out-of-bounds index...) or the block
/// deadlocked on a barrier; the message says where (block, thread, panic message/location).
///
/// Checked as [`CpuCheck::auto`] says (on in builds with debug assertions,
/// `SLUICE_CPU_CHECK=1|0` deciding where it is set): a bug the checking mode finds is
/// the error too, its report as the message ([`run`] returns it typed, and takes the
/// mode and the kernel's name).
///
/// Inside `body` every device function of this crate works as on the GPU for
/// the thread running it: `thread::thread_idx()` and friends give its indices,
/// `sync::sync_threads()` waits for its block, `shared_array!` is its block's
/// memory, `warp::shfl_*` exchange with its warp (see the [module docs](self)
/// for what is modelled and what is not).
///
/// The other errors: a launch configuration CUDA would refuse (a zero
/// dimension, more than 1024 threads per block, a block `z` above 64, a grid
/// `x` above 2^31 − 1 or `y`/`z` above 65,535, more than 227 KiB of dynamic
/// shared memory), and a launch from inside a kernel (no dynamic parallelism).
///
/// When a block fails, blocks not started yet are skipped and the error of the
/// failed block with the lowest linear index is returned (with how many other
/// blocks failed). `body`'s captures must be `Sync`: the blocks run on several
/// OS threads at once (a kernel's raw-pointer arguments need a wrapper that
/// asserts it).
pub fn launch(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: u32,
    body: &(dyn Fn() + Sync),
) -> Result<(), String> {
    let launch = CpuLaunch { kernel: "(closure)", grid, block, dynamic_shared_bytes, check: CpuCheck::auto() };
    run(&launch, body).map_err(|e| e.to_string())
}

/// [`launch`] with the launch described by a [`CpuLaunch`] — its shape, the kernel's name
/// for reports, and whether to check it — and the error typed: a
/// [`CpuLaunchError::Check`] carries the checking mode's [`CheckReport`](sluice_host::CheckReport).
/// What a `#[kernel]`'s CPU entry calls.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice_device::{cpu, shared_array, sync, thread};
/// use sluice::{CheckKind, CpuCheck, CpuLaunch};
///
/// let launch = CpuLaunch { kernel: "rotate", grid: [1, 1, 1], block: [32, 1, 1], dynamic_shared_bytes: 0, check: CpuCheck::On };
/// let err = cpu::run(&launch, &|| {
///     let tile = shared_array!(TILE: [u32; 32]);
///     let t = thread::thread_idx_x() as usize;
///     tile.set(t, t as u32);
///     // sync::sync_threads() is missing here
///     let _next = tile.get((t + 1) % 32);
/// })
/// .unwrap_err();
/// let report = err.report().expect("the checker's report");
/// assert_eq!(report.kind, CheckKind::SharedRace);
/// assert_eq!(report.kernel, "rotate");
/// ```
pub fn run(launch: &CpuLaunch, body: &(dyn Fn() + Sync)) -> Result<(), CpuLaunchError> {
    let CpuLaunch { grid, block, dynamic_shared_bytes, .. } = *launch;
    validate(grid, block, dynamic_shared_bytes)?;
    if block::in_launch() {
        return Err(CpuLaunchError::Fault(
            "cpu::launch called from inside a kernel: a kernel cannot launch another on the CPU \
             (no dynamic parallelism)"
                .into(),
        ));
    }
    runner::install_panic_hook();
    let checker = launch.check.is_on().then(|| check::Checker::new(launch.kernel));
    let checker = checker.as_ref();
    let (g, d) = (Dim3::new(grid[0], grid[1], grid[2]), Dim3::new(block[0], block[1], block[2]));
    let failed = AtomicBool::new(false);
    let errors: Mutex<Vec<(u64, CpuLaunchError)>> = Mutex::new(Vec::new());
    (0..g.volume()).into_par_iter().for_each_init(
        || runner::Runner::new(g, d, dynamic_shared_bytes, body, checker),
        |runner, b| {
            if failed.load(Ordering::Relaxed) {
                return;
            }
            if let Err(e) = runner.run(b) {
                failed.store(true, Ordering::Relaxed);
                errors.lock().unwrap_or_else(|p| p.into_inner()).push((b, e));
            }
        },
    );
    stacks::trim();
    let mut errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    errors.sort_by_key(|e| e.0);
    let mut it = errors.into_iter();
    match it.next() {
        None => Ok(()),
        Some((_, e)) => match (it.len(), e) {
            (0, e) | (_, e @ CpuLaunchError::Check(_)) => Err(e),
            (n, CpuLaunchError::Fault(m)) => {
                Err(CpuLaunchError::Fault(format!("{m} (and {n} more block{} failed)", if n == 1 { "" } else { "s" })))
            }
        },
    }
}

fn validate(grid: [u32; 3], block: [u32; 3], dynamic: u32) -> Result<(), CpuLaunchError> {
    let bad = |why: &str| Err(format!("invalid launch configuration: grid {grid:?}, block {block:?}: {why}").into());
    if grid.contains(&0) || block.contains(&0) {
        return bad("every dimension must be at least 1");
    }
    if block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
        return bad("a block is at most 1024 x 1024 x 64");
    }
    if block[0] as u64 * block[1] as u64 * block[2] as u64 > 1024 {
        return bad("a block has at most 1024 threads");
    }
    if grid[0] > i32::MAX as u32 || grid[1] > 65_535 || grid[2] > 65_535 {
        return bad("a grid is at most (2^31 - 1) x 65535 x 65535 blocks");
    }
    if dynamic > MAX_DYNAMIC_SHARED_BYTES {
        return Err(format!(
            "invalid launch configuration: {dynamic} bytes of dynamic shared memory, more than the \
             {MAX_DYNAMIC_SHARED_BYTES} a block may have"
        )
        .into());
    }
    Ok(())
}

/// The error of a deadlocked block: where each group of threads (by linear
/// rank in the block) waits, and the call site.
pub(crate) fn deadlock_report(b: &block::Block) -> String {
    format!(
        "{}: deadlock: every non-exited thread waits and none can be released ({} of {} threads exited): {}",
        b.name(),
        b.size - b.live(),
        b.size,
        block::wait_groups(b).join("; ")
    )
}

/// `threads 0..=31, 40` or `thread 5`: ranks as compact ranges.
pub(crate) fn ranks(r: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < r.len() {
        let mut j = i;
        while j + 1 < r.len() && r[j + 1] == r[j] + 1 {
            j += 1;
        }
        parts.push(if j == i { format!("{}", r[i]) } else { format!("{}..={}", r[i], r[j]) });
        i = j + 1;
    }
    let noun = if r.len() == 1 { "thread" } else { "threads" };
    let shown = if parts.len() > 8 { format!("{}, ...", parts[..8].join(", ")) } else { parts.join(", ") };
    format!("{noun} {shown}")
}
