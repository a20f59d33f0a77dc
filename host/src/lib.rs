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
//! (`sluice::kernels::<name>`, through the `unsafe` [`Kernel::of`]), and `<name>::args(..)`
//! passes the arguments by name. [`Kernel::new`] declares a kernel of any PTX by hand.
//!
//! ```no_run
//! use sluice_host::{scope, Gpu, Kernel, LaunchConfig, Mut, Ref};
//! # #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)] #[repr(C)] struct Particle { x: f32, y: f32, z: f32, q: f32 }
//! # const PTX: &str = "";
//! // SAFETY: `potential` writes only `out`, within its length, and reads the others in bounds.
//! const POTENTIAL: Kernel<(Mut<f32>, Ref<Particle>, Ref<Particle>, f32)> =
//!     unsafe { Kernel::new(PTX, "potential") };
//!
//! # fn main() -> sluice_host::Result<()> {
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
//! | 1. a view written on lane A is used on lane B only after B awaited a fence recorded on A | brands: each [`Lane::enter`] is a `for<'lane>` closure, `'lane` is invariant in every view, and a fence is the only way a view's columns leave their lane; across GPUs, each [`MultiScope::device`] is a `for<'dev>` closure whose lanes take only its own memory, and a peer copy's hand-off is the way between devices | `fence.rs`, `multi.rs` |
//! | 2. no two lanes hold mutable access to the same elements | column splitting is disjoint by construction; binding consumes the borrow | `matrix.rs` |
//! | 3. read-only data is read by many lanes, each after awaiting its upload fence | awaiting `&Fenced<ColumnsRef>` yields a `ColumnView`, which fits only `Ref` parameters | `fence.rs` |
//! | 4. the host keeps off a pending copy's host side | copies consume the destination (`Pending::wait` gives it back) and borrow sources for the scope | `copy.rs` |
//! | 5. no memory is freed while work may use it; `mem::forget` is harmless | everything work touches is borrowed for `'scope`; the scope joins every lane before `'scope` ends (its stream synchronized, or known idle because its last operation came before a fence that the host or an already joined lane awaited: `join_order`); a multi-GPU scope joins every device's lanes before it frees any device's memory | `scope.rs`, `multi.rs` |
//! | 6. no device-wide synchronization | only `cuStreamSynchronize` and `cuEventSynchronize` are bound; device memory is stream-ordered (`cuMemAllocFromPoolAsync`/`cuMemFreeAsync`), never `cuMemFree`; the `tidy` test | `driver.rs` |
//! | 7. no hidden events or waits; awaiting on one's own lane enqueues nothing | one event per fence/copy/timestamp, one wait per foreign await; [`LaneStats`] counts them | `fence.rs` |
//!
//! Every compile error of these rules, of launches and of kernel declarations, next to its fix: `docs/compile-errors.md`.
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
//! | errors | `error.rs` | [`Error`], [`LaneId`], the log of errors found while dropping |
//! | CPU device | `cpu.rs` | the CPU backend's memory, streams (worker threads), events, recorded graphs |
//! | handles | `handle.rs` | owned context, streams, events, modules, each freed on drop |
//! | plain data | `span.rs`, `ptx.rs` | spans and their arithmetic, layout checks; PTX text parsing |
//! | module cache | `module.rs` | loaded modules and resolved functions of a device |
//! | device | `device.rs` | [`Gpu`]: context, allocator, pools of streams and events |
//! | traces | `trace.rs` | timelines of traced scopes ([`Trace`]): recorded marks, Chrome JSON, SVG |
//! | recordings | `capture.rs` | a scope being recorded into a graph: capture, staged inputs, outputs, kernel nodes |
//! | memory | `matrix.rs`, `pinned.rs` | [`DeviceMatrix`] and its column borrows; [`PinnedMatrix`] |
//! | views | `view.rs` | [`ColumnView`], [`ColumnViewMut`], the brand |
//! | kernels | `kernel.rs` | [`Kernel`], [`KernelDecl`], [`Mut`], [`Ref`], [`Function`] |
//! | lanes | `lane.rs` | [`Lane`], [`Stream`], [`LaneStats`] |
//! | work | `launch.rs`, `fence.rs`, `copy.rs` | launches, fences and hand-offs, copies and fills |
//! | scopes | `scope.rs` | [`scope`], [`Scope`], [`LaneSet`]: lanes joined, memory freed |
//! | graphs | `graph.rs` | [`graph`], [`Graph`]: a scope recorded once, replayed on lanes of later scopes |
//! | several GPUs | `multi.rs` | [`scope_multi`], [`MultiScope`], device brands ([`Device`], [`DeviceStream`], [`OnDevice`]), peer copies ([`PeerPath`]), collectives ([`Communicator`], [`Rank`]) |
//!
//! What the types cannot check is what a kernel does with its parameters: declaring a
//! [`Kernel`] is `unsafe` (it must write only through `Mut` parameters, in bounds). Every
//! `unsafe` block in this crate says which invariant it relies on and who upholds it.
//!
//! Errors are values ([`Error`]), never panics: no driver, no device, a driver too old, a
//! launch over the device's limits, a copy of mismatched lengths, an allocation too large.
//!
//! # When to copy per column, and when to fan in
//!
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

pub use capture::KernelNode;
pub use copy::Pending;
pub use device::{Backend, DeviceInfo, Gpu, MemInfo};
pub use driver::{driver_present, DriverError};
pub use error::{DeviceFault, Error, LaneId, Result};
pub use fence::{Awaitable, Fence, Fenceable, Fenced, Timestamp};
pub use graph::{graph, Graph, Outputs, Replay};
pub use kernel::{
    ByValue, Checked, CheckedLaunch, CpuEntry, Function, Kernel, KernelDecl, KernelKind, Launchable, Mut, Param, Ptr,
    PtrMut, Ref, Signature, Unchecked,
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
pub use view::{ColumnView, ColumnViewMut, ViewChunks, ViewChunksMut};
