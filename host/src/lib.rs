//! sluice's host library: run kernels on many CUDA streams at once, with the borrow checker —
//! not a runtime tracker — ordering the streams.
//!
//! A [`scope`] hands out *lanes* (CUDA streams, reused from the device's pool of idle
//! streams). Inside [`Lane::enter`] a lane's [`Stream`]
//! binds device columns as *views* branded with that lane, launches kernels on them and copies
//! them to pinned host memory. Data moves between lanes only through *fences* (CUDA events),
//! awaited on the GPU. When the scope ends it joins each lane it used — never the whole
//! device — and frees what it allocated (stream-ordered, back into the device's memory pool).
//!
//! Kernels written with `#[kernel]` (crate `sluice-macros`) come with a [`KernelDecl`]; the
//! facade crate `sluice` pairs each with the embedded PTX as a typed [`Kernel`] handle
//! (`sluice::kernels::<name>`, through `include_kernels!`), and `<name>::args(..)` passes the
//! arguments by name. [`Kernel::new`] declares a kernel of any PTX by hand (`unsafe`).
//!
//! ```no_run
//! # use sluice_host as sluice;
//! use sluice::{scope, Gpu, Kernel, LaunchConfig, Mut, Ref};
//! # #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)] #[repr(C)] struct Particle { x: f32, y: f32, z: f32, q: f32 }
//! # const PTX: &str = "";
//! // SAFETY: `potential` writes only `out`, within its length, and reads the others in bounds.
//! const POTENTIAL: Kernel<(Mut<f32>, Ref<Particle>, Ref<Particle>, f32)> =
//!     unsafe { Kernel::new(PTX, "potential") };
//!
//! # fn main() -> sluice::Result<()> {
//! # let (rows, n) = (1 << 16, 8);
//! # let host_sources: Vec<Particle> = vec![];
//! # let host_targets: Vec<Particle> = vec![];
//! let gpu = Gpu::new(0)?;
//! let mut host = gpu.pinned_matrix::<f32>(rows, n)?;          // page-locked destination
//! scope(&gpu, |s| {
//!     let sources = s.upload(&host_sources)?;                 // one upload, read by every lane
//!     let targets = s.upload_matrix(&host_targets, rows, n)?; // column j: lane j's targets
//!     let out = s.alloc_matrix::<f32>(rows, n)?;              // shared m x n device matrix
//!     let cfg = LaunchConfig::for_elements(rows, 256);
//!     for (j, ((lane, col), dst)) in
//!         s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
//!     {
//!         let _copy = lane.enter(|st| {
//!             let src = st.await_fence(&sources)?;            // GPU-side wait, host never blocks
//!             let tgt = st.await_fence(&targets)?.column(j).unwrap();
//!             let mut col = st.bind(col);                     // ColumnViewMut, this lane only
//!             st.launch(&POTENTIAL, cfg, (&mut col, &tgt, &src, 1e-3))?;
//!             st.copy_to_host(&col, dst)                      // same lane: ordered, no sync
//!         })?;
//!     }
//!     Ok(())
//! })?;                                                        // joins each lane; never the device
//! println!("{}", host[0]);
//! # Ok(()) }
//! ```
//!
//! # CPU ideas and their sluice types
//!
//! | on the CPU | in sluice | notes |
//! | --- | --- | --- |
//! | `Vec<T>` | [`DeviceMatrix<T>`] (a buffer is one column) | owned, freed on drop (`cuMemFreeAsync` into the pool); or from a [`Scope`], freed at its end |
//! | `&mut [T]` | [`ColumnsMut<'a, T>`] | disjoint column ranges: `columns_mut`, `split_columns_mut`, `column_chunks_mut` |
//! | `&[T]` | [`ColumnsRef<'a, T>`] / [`ColumnView<'scope, 'lane, T>`] | unbound / bound to one lane |
//! | `&mut [T]` given to a thread | [`ColumnViewMut<'scope, 'lane, T>`] | bound to one lane by its brand `'lane` |
//! | `std::thread::scope` | [`scope`] | joins every lane in its own frame |
//! | thread | [`Lane`] / [`Stream`] | a CUDA stream; work on it runs in order |
//! | `join` / `JoinHandle` | [`Fence`], [`Fenced`], [`Pending`] | awaited by another lane (GPU-side) or by the host |
//! | `Arc<[T]>` read by many threads | [`Scope::upload`] → `&Fenced<ColumnsRef>` | each lane awaits the upload fence |
//! | a page-locked `Vec<T>` | [`PinnedMatrix<T>`], [`PinnedMut<'a, T>`] | destinations of copies back |
//! | `#[kernel] fn(DeviceSliceMut<f32>, &[f32], f32)` | [`Kernel<(Mut<f32>, Ref<f32>, f32)>`](Kernel) (from its [`KernelDecl`] and the PTX) | typed launches; `<kernel>::args(..)` names the arguments |
//! | NUMA nodes, each with its memory | [`scope_multi`]: a [`Device`] per GPU, [`OnDevice`] memory | one scope over several GPUs; [`DeviceStream::copy_to_peer`] moves data, [`MultiScope::all_reduce`] and the other collectives go through NCCL (`docs/multi-gpu.md`) |
//!
//! # Safety model
//!
//! The seven rules of the design, and where each is enforced:
//!
//! | rule | enforced by | file |
//! | --- | --- | --- |
//! | 1. a view written on lane A is used on lane B only after B awaited a fence recorded on A | brands: each [`Lane::enter`] is a `for<'lane>` closure, `'lane` is invariant in every view, and a fence is the only way a view's columns leave their lane; across GPUs, each [`MultiScope::device`] is a `for<'dev>` closure whose lanes take only its own memory, and a peer copy's hand-off is the way between devices | `fence.rs`, `multi/device.rs` |
//! | 2. no two lanes hold mutable access to the same elements | column splitting is disjoint by construction; binding consumes the borrow | `matrix.rs` |
//! | 3. read-only data is read by many lanes, each after awaiting its upload fence | awaiting `&Fenced<ColumnsRef>` yields a `ColumnView`, which fits only `Ref` parameters | `fence.rs` |
//! | 4. the host keeps off a pending copy's host side | copies consume the destination (`Pending::wait` gives it back); a lane's `copy_to_device` borrows its source for the scope; [`Scope::upload`] reads its source before it returns (the driver stages pageable memory; pinned memory and the CPU backend go through the scope's own staging copy; a recording stages into the graph's buffer) | `copy.rs` |
//! | 5. no memory is freed while work may use it; `mem::forget` is harmless | everything work touches is borrowed for `'scope`; the scope joins every lane before `'scope` ends (its stream synchronized, or known idle because its last operation came before a fence that the host or an already joined lane awaited: `join_order`); a multi-GPU scope joins every device's lanes before it frees any device's memory | `scope.rs`, `multi/scope.rs` |
//! | 6. no device-wide synchronization | only `cuStreamSynchronize` and `cuEventSynchronize` are bound; device memory is stream-ordered (`cuMemAllocFromPoolAsync`/`cuMemFreeAsync`), never `cuMemFree`; the `tidy` test | `driver.rs` |
//! | 7. no hidden events or waits; awaiting on one's own lane enqueues nothing | the program asks for one event per fence/copy/timestamp and one wait per foreign await ([`LaneStats`] counts what it asked); what is submitted is a subset of those — a fence no one can await is not recorded — plus, for each merged copy, one fan-in event and wait per copy it absorbed, and, for each lane that logs again after its work went out in a segment ([`SubmitConfig::segment_lanes`]), one event and wait that order it after the stream the segment ran on; no dependency comes from tracking memory ([`Submission`] counts what was submitted; see "Submission" below) | `fence.rs`, `plan.rs` |
//!
//! Every compile error of these rules, of launches and of kernel declarations, next to its fix: `docs/compile-errors.md`.
//!
//! # Kernel-side contract
//!
//! The rules above hold only if a kernel does what its declaration says: writes through its
//! written (`Mut`) parameters alone, in bounds, with no two threads racing on an element. For
//! a `#[kernel]` written without `unsafe`, that is guaranteed by construction; what a safe
//! kernel can and cannot do, and where each point is enforced:
//!
//! | a safe `#[kernel]` body cannot | because | file |
//! | --- | --- | --- |
//! | do an unsafe operation (raw pointers, `unsafe fn`s, `static mut`) | the body is compiled as an ordinary safe Rust function, whatever the edition and the crate's lints; `#[kernel] unsafe fn` is refused | `gpu-kernels/macros/src/lib.rs` |
//! | keep a parameter past its launch | the body's elided lifetimes are its own generic parameters; a named lifetime (`'static`) in a parameter type is refused | `gpu-kernels/macros/src/lib.rs` |
//! | write through a `&[T]` parameter | it is a shared slice; only a `DeviceSliceMut<T>` parameter writes | `gpu-kernels/device/src/slice.rs` |
//! | write out of bounds | slices are bounds-checked; `DeviceSliceMut` hands out `&mut` only to elements below its length | `gpu-kernels/device/src/slice.rs` |
//! | race on an element of a written parameter | `for_thread`, `for_thread_1d` and `grid_stride` give each thread elements no other thread gets (by global rank); any other indexed write (`write`) is `unsafe` | `gpu-kernels/device/src/slice.rs` |
//! | take a parameter type that holds pointers | every slice element and value type is `bytemuck::Pod`, checked in the host build and the device build | `gpu-kernels/device/src/abi.rs` |
//! | be launched under a declaration of other element types | the device build records each parameter's kind, size and alignment beside the entry; the host compares the record at load ([`Error::KernelParamType`]) on a GPU and on the CPU backend | `gpu-kernels/device/src/abi.rs`, `ptx.rs`, `kernel.rs` |
//! | be paired with another module's PTX | [`Kernel::of`] and `kernel_handles!` need `unsafe`; `include_kernels!` includes the builder's file, generated from the crate it compiled | `kernel.rs`, the `sluice` facade |
//! | add an entry of its own beside the `#[kernel]`s (a hand-written `extern "ptx-kernel"` fn, an entry in `global_asm!`) | the builder compiles kernel crates with `unsafe_attr_outside_unsafe` denied, so `#[no_mangle]`/`#[export_name]` need `unsafe(..)` in every edition; the bitcode linker refuses module assembly that declares an entry or a parameter record | `gpu-kernels/builder/src/builder.rs`, `bin/sluice-llbc.rs` |
//! | export a symbol from its body in either build (`#[export_name = "malloc"]` on a nested fn, also behind a `cfg_attr`; `global_asm!`) | `#[kernel]` forbids `unsafe_attr_outside_unsafe` on the body in both builds (the host build too, which the CPU backend runs and the builder does not compile) and refuses `global_asm!` in it | `gpu-kernels/macros/src/lib.rs` |
//! | take parameters that the GPU cannot (over 4352 bytes) | a compile-time check in both builds, so a kernel the CPU backend runs also assembles | `gpu-kernels/macros/src/lib.rs` |
//! | reach shared memory as a Rust reference | `shared_array!` arrays are read and written with bounds-checked inline PTX (`get`/`set`, `Pod` elements); `SharedStatic` handles and raw shared pointers are made or used only in `unsafe` | `gpu-kernels/device/src/shared.rs` |
//! | make a warp operation name lanes that do not take part, or misuse a named barrier | the `*.sync` warp operations, named barriers, atomics on raw pointers and block-scope atomic types are `unsafe fn`s | `gpu-kernels/device/src/warp.rs`, `sync.rs`, `atomic.rs` |
//! | make `printf` read what was not passed, or print without end | formats are checked against the arguments at compile time (C strings, no `%n`, no `*`, widths and precisions at most 1024); the argument traits are sealed | `gpu-kernels/device/src/io.rs` |
//!
//! What a safe kernel *can* still do wrong, without breaking memory safety: race on a shared
//! array through `get`/`set` (PTX defines such a race: a read returns some written value),
//! skip a block barrier that other threads wait at (a hang: sluice emits the non-`.aligned`
//! `barrier.sync`, defined in divergent code), compute the wrong thing. The CPU backend's
//! checking mode reports the first two in `cargo test`. A `#[kernel(unchecked)]` (raw
//! pointers, Rust-CUDA ports) makes no such promise: its launches are `unsafe`.
//!
//! `tile::MatrixMut` splits a written parameter into blocks', warps' and threads' tiles
//! (`block_tile`, `warp_tile`, `partition`): every thread computes its own share, so all must
//! agree on the split. They do by construction: a `MatrixMut` is only a kernel parameter,
//! made by `#[kernel]` from a shape of the kernel's own parameters or literals
//! (`#[matrix(rows = m, cols = n)]`), and its tiling (tile shape, blocks' order, threads' or
//! warps' layout) is its type — no shape chosen in the body, no constructor
//! (`docs/compile-errors.md`, kernel 21-23).
//!
//! The contract rests on rustc's own soundness, as every safe Rust program does: a known
//! compiler bug (rust-lang/rust#25860, implied bounds on nested references) lets safe code
//! extend a lifetime, and with it keep a kernel's parameter past its launch; the unstable
//! features the device build can enable (it runs with `RUSTC_BOOTSTRAP=1`), such as
//! `specialization`, are known to be unsound. A kernel crate that uses neither keeps the
//! contract. Outside the kernels' bodies, a kernel crate is ordinary Rust under its own
//! edition and lints: in edition 2021, an item of the crate may still be `#[no_mangle]` or
//! `global_asm!` without `unsafe` in its host build — Rust's rule there, not sluice's (edition
//! 2024, or `#![deny(unsafe_attr_outside_unsafe)]` at the crate's top, closes the first).
//!
//! # Layers
//!
//! Each file has one job, and each imports only from the layers below it (the `tidy` test
//! `host_modules_import_only_lower_layers` checks it; run it with
//! `cargo test --test tidy host_modules`):
//!
//! | layer | files | what |
//! | --- | --- | --- |
//! | driver | `driver.rs` | one thin function per driver call, raw `Copy` handles, [`DriverError`] |
//! | NCCL | `nccl.rs` | NCCL loaded at run time (where it looks, in order), one thin function per call |
//! | checks | `check.rs` | the CPU backend's checking mode as the host sees it: [`CpuCheck`], [`CheckReport`], [`CpuLaunch`] |
//! | errors | `error.rs` | [`Error`], [`LaneId`], the log of errors found while dropping |
//! | CPU device | `cpu.rs` | the CPU backend's memory, streams (worker threads), events, recorded graphs |
//! | handles | `handle.rs` | owned context, streams, events, modules, each freed on drop |
//! | launcher | `launcher.rs` | a device's thread that launches a scope's segment graphs while the scope logs on |
//! | plain data | `span.rs`, `ptx.rs` | spans and their arithmetic, layout checks; PTX text parsing |
//! | module cache | `module.rs` | loaded modules and resolved functions of a device |
//! | plans | `plan.rs` | a deferred scope's batch of operations, its plan (fences left out, copies merged), its shape (the graph cache's key), [`SubmitConfig`], [`Submission`] |
//! | device | `device.rs` | [`Gpu`]: context, allocator, pools of streams and events, the cache of executable graphs |
//! | traces | `trace.rs` | timelines of traced scopes ([`Trace`]): recorded marks, Chrome JSON, SVG |
//! | recordings | `capture.rs` | a scope being recorded into a graph: capture, staged inputs, outputs, kernel nodes |
//! | submission | `submit.rs` | operations handed to the driver: one at a time, or a batch planned, direct or as a cached graph |
//! | memory | `matrix.rs`, `pinned.rs` | [`DeviceMatrix`] and its column borrows; [`PinnedMatrix`] |
//! | views | `view.rs` | [`ColumnView`], [`ColumnViewMut`], [`RowMajor`], the brand |
//! | kernels | `kernel.rs` | [`Kernel`], [`KernelDecl`], [`Mut`], [`Ref`], [`Function`] |
//! | lanes | `lane.rs` | [`Lane`], [`Stream`], [`LaneStats`] |
//! | work | `launch.rs`, `fence.rs`, `copy.rs` | launches, fences and hand-offs, copies and fills |
//! | scopes | `scope.rs` | [`scope`], [`Scope`], [`LaneSet`]: lanes joined, memory freed |
//! | graphs | `graph.rs` | [`graph`], [`Graph`]: a scope recorded once, replayed on lanes of later scopes |
//! | several GPUs | `multi/` (`scope.rs`, `device.rs`, `branded.rs`, `peer.rs`, `peer_copy.rs`, `comm.rs`, `collective/` with `nccl.rs` and `cpu.rs`) | [`scope_multi`], [`MultiScope`], device brands ([`Device`], [`DeviceStream`], [`OnDevice`]), peer copies ([`PeerPath`]), collectives ([`Communicator`], [`Rank`]) |
//!
//! What the types cannot check is what a kernel does with its parameters: declaring a
//! [`Kernel`] is `unsafe` (it must write only through `Mut` parameters, in bounds). Every
//! `unsafe` block in this crate says which invariant it relies on and who upholds it.
//!
//! Errors are values ([`Error`]), never panics: no driver, no device, a driver too old, a
//! launch over the device's limits, a copy of mismatched lengths, an allocation too large.
//!
//! What the types cannot check in a kernel's body, the CPU backend checks while it runs it
//! ([`CpuCheck`]: on in builds with debug assertions): a data race on shared or global
//! memory, a barrier some threads skip, a warp operation with the wrong mask, a read of
//! shared memory never written fails the launch with [`Error::KernelCheck`], whose
//! [`CheckReport`] names the kernel, the block, both threads and both source lines.
//!
//! # Submission: when the work reaches the GPU
//!
//! A scope *defers* (by default; [`SubmitConfig`] says how, per device): its lanes' launches,
//! copies, fills, fence records and fence waits are logged, each on its lane, in program
//! order, and reach the driver where the host must observe them — a host wait that needs one
//! of them ([`Pending::wait`], [`Fenced::wait`], [`Fence::wait`], a timestamp's elapsed time),
//! an operation that goes to the driver at once (a graph replay, an upload from outside the
//! scope), a log of [`SubmitConfig::max_deferred`] operations, and the scope's end. Submitted
//! in program order, one driver call each, they are exactly what the calls asked for, so a
//! deferred scope means what an undeferred one means. Knowing the whole batch, sluice then:
//!
//! * **leaves out fence records no one can await**: a [`Pending`] dropped without a wait needs
//!   no event (the scope's end joins its lane anyway);
//! * **merges copies** at the scope's end: adjacent column copies to adjacent host memory, each
//!   the last operation of a lane whose work is the same as its neighbours' (they finish
//!   together), none of whose fences anyone awaits, become one copy of about
//!   [`SubmitConfig::merge_copy_bytes`] (and of at most [`SubmitConfig::merge_columns`]
//!   columns, where set) after the lanes' fan-in (the chunked fan-in below, chosen from the
//!   sizes);
//! * **replays a graph**: the second time a scope's last batch has the shape of an earlier one
//!   (the same lanes, kernels, launch shapes, copy shapes and fence edges; pointers and scalar
//!   arguments may differ), sluice captures it into an executable graph, kept in a bounded
//!   cache of the device; from then on such a scope writes its changed arguments and
//!   addresses into the graph's nodes and launches it — one driver call for the whole scope,
//!   on its first lane's stream, and the scope's end joins that one stream. A program that
//!   comes back to a set of buffers its copies used before (scope memory that the device's
//!   pool hands out at alternating addresses; on the CPU backend, where scope memory comes
//!   from the process's allocator, often) gets a graph of its own for each set, up to four
//!   per shape: so a shape may be captured again a few times before every scope replays
//!   ([`Submission::reason`] says why each one ran as it did). A batch that
//!   follows earlier submissions of its lanes, waits for a fence recorded before it, or
//!   copies from host memory (which may be pageable) is submitted directly;
//! * **chains the lanes' first kernels** in a graph ([`SubmitConfig::chain_launches`], on by
//!   default): each kernel that waits for nothing in the graph is launched once every block
//!   of the one captured before it has begun (a launch-order edge). They still run side by
//!   side and wait for nothing more, so results are unchanged; the driver launches such a
//!   graph from fewer of its streams, so its launch costs the host less (H100: the README's
//!   program with 128 lanes of small kernels, 0.222 ms a scope against 0.264 unchained).
//!   Each lane keeps its own branch then;
//! * **folds lanes into branches** where kernels are not chained: in a graph of more than 64
//!   lanes, consecutive lanes share a branch ([`SubmitConfig::graph_branches`]; on each, its
//!   lanes' steps in program order): an unchained graph's launch costs host time per branch,
//!   and past 64 branches more cost more than they overlap (H200: 128 lanes of small kernels
//!   ran about a quarter faster folded in pairs). Folding only adds order between lanes; what
//!   each computes is unchanged;
//! * **submits in segments** ([`SubmitConfig::segment_lanes`], 4 by default): once the lanes
//!   that logged work number that many (later: at least as many as all earlier segments took
//!   together, so 4, 4, 8, 16, 32, ..., but no more than 32 or a quarter of the lanes the
//!   scope made, whichever is more, while another of them has logged nothing yet) and no
//!   fence they recorded can
//!   still be awaited (every [`Pending`], [`Fence`], [`Fenced`] and timestamp of theirs
//!   dropped), what they logged goes to the GPU — merged, and as a graph if its shape
//!   repeats, as at the scope's end — when the next lane logs its first launch, copy, fill, fence record or fence wait: the GPU
//!   starts on the first lanes while the closure is still logging the others. The device's
//!   launcher thread launches each segment's graph ([`SubmitConfig::background_launches`]),
//!   so that the program's thread goes on logging; the scope waits for those launches
//!   before any other driver call it makes. A lane whose
//!   work a segment ran on another lane's stream (the segment's graph, or a merged copy of
//!   its column) waits for that stream first when it logs again;
//! * **reuses a plan**: a scope's last batch (or segment) equal to one of the last sixteen a device planned —
//!   the same operations on the same lanes, the same arguments and addresses (a repeated
//!   scope's memory comes back at the same addresses) — takes that batch's plan and graph key
//!   instead of working them out again ([`Submission::plan_reused`],
//!   [`SubmitStats::plans_reused`]); equal in everything they are made from, they are the
//!   same.
//!
//! [`Trace::submissions`], [`Scope::submissions`] and [`Gpu::submit_stats`] say which path ran
//! and what was merged or left out; [`SubmitConfig::direct`] turns it all off (one driver
//! call per operation as it is asked for). An error a submission meets (a launch the driver
//! refuses) is returned where the submission happens: by the host wait, or by the scope.
//!
//! A loop of scopes that uploads the same inputs in every scope (`s.upload(&x)`) repeats the
//! upload; upload them once before the loop instead (`gpu.upload(&x)`): the lanes await a
//! persistent matrix exactly as they await an upload (`st.await_fence(&x)`, which enqueues
//! nothing for it), so the rest of the program is unchanged.
//!
//! # When to copy per column, and when to fan in
//!
//! In a deferred scope sluice picks this itself at the scope's end (see "Submission"); with
//! [`SubmitConfig::direct`], or where columns are awaited one by one, the program picks it.
//! A copy per column on the lane that produced it overlaps each column's copy with other
//! lanes' kernels: the best choice when columns are large. Many small copies serialise on
//! the copy engines; then fan in: lanes hand their columns off ([`Stream::fence`]), and a few
//! collector lanes each await a run of adjacent columns ([`Stream::await_all`], with
//! `column_chunks`) and copy it at once. The rule, from the H200 measurements of the seed
//! workload (`BENCHMARKS.md`, medians, 8 to 128 columns):
//!
//! | column size | best path | measured |
//! | --- | --- | --- |
//! | ≥ 4 MiB (1,048,576 `f32` or more) | a copy per column, on its own lane | 16 MiB × 8: per-lane 2.57 ms, chunks of 2 2.62, one fan-in 2.88; 4 MiB × 8: per-lane 1.13, chunks of 2 1.21, one fan-in 1.67 |
//! | 16–64 KiB, 64–128 columns | fan-ins of 8–16 adjacent columns | 64 KiB × 64: chunks of 8 0.359 ms, of 16 0.374, one fan-in 0.422, per-lane 0.583; 16 KiB × 128: chunks of 16 0.613 ms, one fan-in 0.657, per-lane 0.99 |
//!
//! One fan-in of every column is never the fastest (its copy waits for the slowest lane),
//! and per-lane copies of small columns pay a copy's fixed cost per column.

#![warn(missing_docs)]

// In layer order, lowest first (see "Layers" above).
mod capture;
mod check;
mod copy;
mod cpu;
mod device;
mod driver;
mod error;
mod fence;
mod graph;
mod handle;
mod kernel;
mod lane;
mod launch;
mod launcher;
mod matrix;
mod module;
mod multi;
mod nccl;
mod pinned;
mod plan;
mod ptx;
mod scope;
mod span;
mod submit;
mod trace;
mod view;

/// The parameter record `#[kernel]` leaves in the PTX (`sluice_device::abi` writes it), as
/// the host decodes it. Not an API: the device crate's tests check that the two agree.
#[doc(hidden)]
pub mod __abi {
    pub use crate::ptx::{decode_abi as decode, AbiParam};
}

pub use capture::KernelNode;
pub use check::{Access, CheckKind, CheckReport, CpuCheck, CpuLaunch, CpuLaunchError};
pub use copy::Pending;
pub use device::{Backend, DeviceInfo, Gpu, MemInfo};
pub use driver::{driver_present, DriverError};
pub use error::{DeviceFault, Error, LaneId, ParamKind, ParamLayout, Result};
pub use fence::{Awaitable, Fence, Fenceable, Fenced, Timestamp};
pub use graph::{graph, Graph, Outputs, Replay};
pub use kernel::{
    ByValue, Checked, CheckedLaunch, CpuEntry, Function, Kernel, KernelDecl, KernelKind, Launchable, Mut, Param, Ptr,
    PtrMut, Ref, Signature, SpecificPtx, Tma, Unchecked,
};
pub use lane::{Lane, LaneStats, Stream};
pub use launch::{Arg, LaunchArgs, LaunchConfig};
pub use matrix::{ColumnChunks, ColumnChunksMut, ColumnsMut, ColumnsRef, DeviceMatrix};
pub use multi::{
    scope_multi, traced_scope_multi, Adoptable, Communicator, Device, DeviceAwaitable, DeviceLane, DeviceStream,
    MultiScope, OnDevice, OnDeviceIter, PeerDestination, PeerLink, PeerPath, Rank, ReduceOp, Reducible,
};
pub use pinned::{PendingUpload, PinnedChunksMut, PinnedMatrix, PinnedMut};
pub use plan::{Submission, SubmitConfig, SubmitPath, SubmitStats};
pub use scope::{scope, traced_scope, LaneSet, Scope};
pub use trace::{SpanKind, Trace, TraceSpan};
pub use view::{ColumnView, ColumnViewMut, CopySource, RowMajor, ViewChunks, ViewChunksMut};
