//! One error type for the crate: each variant names the step that failed and carries
//! what is needed to act on it. Also where errors found while dropping go ([`ErrorLog`]):
//! recorded on the device, never printed by library code.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::driver::DriverError;

/// `Result` with sluice's [`Error`].
///
/// ```no_run
/// # use sluice_host as sluice;
/// fn columns(gpu: &sluice::Gpu) -> sluice::Result<usize> {
///     Ok(gpu.alloc_matrix::<f32>(16, 4)?.cols())
/// }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One kernel parameter as a side of [`Error::KernelParamType`] sees it: its kind, and the
/// size and alignment of its element type (slices, pointers) or value type.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{ParamKind, ParamLayout};
/// // A written slice of `f32` (`DeviceSliceMut<f32>` in the kernel, `Mut<f32>` on the host).
/// let out = ParamLayout { kind: ParamKind::WrittenSlice, size: 4, align: 4 };
/// assert_eq!(out.kind, ParamKind::WrittenSlice);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamLayout {
    /// What the parameter is.
    pub kind: ParamKind,
    /// `align_of` of the element or value type.
    pub align: u16,
    /// `size_of` of the element or value type.
    pub size: u32,
}

/// The kind of a kernel parameter (see [`ParamLayout`]).
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::ParamKind;
/// assert_eq!(ParamKind::from_letter(b'r'), Some(ParamKind::ReadSlice));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// `&[T]` in the kernel, [`Ref<T>`](crate::Ref) on the host.
    ReadSlice,
    /// `DeviceSliceMut<T>` (or an unchecked kernel's `&mut [T]`), [`Mut<T>`](crate::Mut).
    WrittenSlice,
    /// `TmaMatrix<T, R, C>` (a matrix read through TMA), [`Tma<T, R, C>`](crate::Tma).
    TensorMap,
    /// `*const T` or `&T` (unchecked kernels), [`Ptr<T>`](crate::Ptr).
    ConstPtr,
    /// `*mut T` (unchecked kernels), [`PtrMut<T>`](crate::PtrMut).
    MutPtr,
    /// A value passed as its bits.
    Value,
}

impl ParamKind {
    /// The kind a letter of `#[kernel]`'s record stands for (`r`, `m`, `t`, `p`, `q`, `v`).
    pub fn from_letter(letter: u8) -> Option<ParamKind> {
        Some(match letter {
            b'r' => ParamKind::ReadSlice,
            b'm' => ParamKind::WrittenSlice,
            b't' => ParamKind::TensorMap,
            b'p' => ParamKind::ConstPtr,
            b'q' => ParamKind::MutPtr,
            b'v' => ParamKind::Value,
            _ => return None,
        })
    }
}

/// Everything that can go wrong in sluice, by the step that failed.
///
/// Driver failures keep the raw [`DriverError`] (code, name, message); the other
/// variants are found by sluice itself before the driver is asked, so they cost no
/// driver call and leave nothing half-done.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::Error;
/// let e = Error::LengthMismatch { expected: 1024, got: 1000 };
/// assert_eq!(e.to_string(), "copy: the source has 1024 elements but the destination 1000");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No CUDA driver library (`libcuda`) can be loaded on this machine.
    NoDriver,
    /// The driver library lacks an entry point sluice calls (an old or broken install).
    DriverSymbolMissing {
        /// The missing symbol.
        symbol: &'static str,
    },
    /// The driver is too old: for sluice itself, or for the PTX being loaded.
    DriverTooOld {
        /// The driver's CUDA version, as `cuDriverGetVersion` reports it (12080 = 12.8).
        found: u32,
        /// The version needed.
        needed: u32,
    },
    /// `cuInit` failed.
    Init(DriverError),
    /// The driver refused a PTX module's `.version`, one this build of sluice does not know
    /// either (so it cannot say which driver would take it).
    UnsupportedPtx {
        /// The module's `.version`, as written.
        version: String,
        /// The driver's CUDA version (12080 = 12.8).
        driver: u32,
    },
    /// `SLUICE_BACKEND` asked for a backend this machine cannot give (e.g. `cuda` without an
    /// NVIDIA driver or device): why.
    BackendUnavailable {
        /// The backend asked for.
        asked: &'static str,
        /// Why it is not available.
        why: Box<Error>,
    },
    /// `SLUICE_BACKEND` is not `cuda`, `cpu` or `auto`.
    UnknownBackend {
        /// What it was.
        given: String,
    },
    /// A kernel declared with [`Kernel::new`](crate::Kernel::new) (PTX only) was launched on
    /// the CPU backend, which runs kernels' CPU entries (`#[kernel]` emits one).
    NoCpuEntry {
        /// The kernel.
        name: &'static str,
    },
    /// A kernel failed on the CPU backend (it panicked: an index out of bounds, a failed
    /// `dassert!`, a `trap`): its lane's later work was skipped, and so was the work of the
    /// lanes that wait for it — through a fence, or, in a deferred scope, through what the
    /// scope shares between lanes: a merged copy of their columns
    /// ([`SubmitConfig::merge_copy_bytes`](crate::SubmitConfig::merge_copy_bytes)) or a graph
    /// branch ([`SubmitConfig::graph_branches`](crate::SubmitConfig::graph_branches)); with
    /// [`SubmitConfig::direct`](crate::SubmitConfig::direct) only fences do. (On a GPU a
    /// fault loses the whole context.)
    KernelFault {
        /// The lane it ran on.
        lane: LaneId,
        /// What happened, with the kernel's name and where.
        message: String,
    },
    /// The checking mode of the CPU backend found a bug in a kernel (a data race, a
    /// divergent barrier or warp operation, a read of uninitialised shared memory): the
    /// launch failed and its lane's later work was skipped, as for a fault. The report
    /// names the kernel, the block, both threads and both source lines
    /// ([`CpuCheck`](crate::CpuCheck) says when launches are checked).
    KernelCheck {
        /// The lane it ran on.
        lane: LaneId,
        /// What was found.
        report: Box<crate::check::CheckReport>,
    },
    /// There is no device with this ordinal.
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        count: usize,
    },
    /// A device query or the primary context failed.
    Device {
        /// The driver call.
        call: &'static str,
        /// What the driver said.
        error: DriverError,
    },
    /// Loading a PTX module failed (`cuModuleLoadData`: JIT compilation or a bad image).
    LoadModule(DriverError),
    /// The module has no kernel entry of this name.
    KernelNotFound {
        /// The entry name asked for.
        name: &'static str,
    },
    /// The kernel exists only in the kernel crate's build for an architecture-specific
    /// target (`sm_90a`: Hopper's warpgroup MMA), and this device is another architecture.
    KernelNeedsArch {
        /// The kernel.
        name: &'static str,
        /// The architecture it was built for (`sm_90a`).
        arch: &'static str,
        /// This device's compute capability (`(0, 0)`: the CPU backend has none).
        device: (u32, u32),
    },
    /// The kernel's parameters in the PTX do not match its declared signature.
    KernelSignature {
        /// The kernel.
        name: &'static str,
        /// Parameter sizes in bytes, as the declaration lowers them.
        expected: Vec<usize>,
        /// Parameter sizes in bytes, as the PTX declares them.
        found: Vec<usize>,
    },
    /// A kernel parameter's element (or value) type differs between the host declaration and
    /// the device build: `#[kernel]`'s record in the PTX says what the device compiled (its
    /// kind, size and alignment), and they disagree though the lowered parameter sizes agree
    /// (a `u64` slice and a `u32` slice are both an address and a length). Typically a type
    /// chosen by `cfg(target_arch = "nvptx64")`, or a `#[repr(C)]` struct whose fields depend
    /// on the target. Nothing is launched.
    KernelParamType {
        /// The kernel.
        name: &'static str,
        /// The parameter's position (0-based) in the kernel's signature.
        index: u32,
        /// Its name, as the device record gives it (`None` past the record's end).
        param: Option<Box<str>>,
        /// What the host declares (`None`: the host declares fewer parameters than the
        /// device record).
        host: Option<ParamLayout>,
        /// What the device compiled (`None`: the device record has fewer parameters).
        device: Option<ParamLayout>,
    },
    /// The PTX declares the kernel, but its parameter list there could not be read, so the
    /// declaration could not be checked against it (and is not launched unchecked).
    KernelParamsUnreadable {
        /// The kernel.
        name: &'static str,
        /// What could not be read, such as `"a parameter's size overflows"`.
        reason: &'static str,
    },
    /// Memory or a resolved [`Function`](crate::Function) of one device was used on another
    /// device's lane.
    WrongDevice {
        /// The kernel, or `"copy"`.
        what: &'static str,
    },
    /// A launch configuration exceeds a limit of the device or the kernel.
    LaunchConfig {
        /// The kernel launched (`None` from [`LaunchConfig::validate`](crate::LaunchConfig::validate),
        /// which names none).
        kernel: Option<&'static str>,
        /// Which dimension or resource, such as `"block.x"` or `"threads per block"`.
        what: &'static str,
        /// The value asked for.
        requested: u64,
        /// The largest value allowed.
        limit: u64,
    },
    /// A launch configuration exceeds a limit of the kernel itself rather than the device's:
    /// the threads per block its build allows (its `#[kernel(max_threads = N)]`, or what its
    /// registers leave room for), or the dynamic shared memory left beside its static shared
    /// memory.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # use sluice::Error;
    /// let e = Error::KernelLimit { kernel: "gemm_ws_bf16", what: "threads per block", requested: 512, limit: 384 };
    /// assert!(e.to_string().contains("kernel `gemm_ws_bf16`"));
    /// ```
    KernelLimit {
        /// The kernel.
        kernel: &'static str,
        /// Which resource: `"threads per block"` (the kernel's `max_threads` or `block`),
        /// `"threads per block, as its registers allow"` (no declared bound: ptxas's register
        /// count leaves room for fewer threads) or `"dynamic shared memory per block"`.
        what: &'static str,
        /// The value asked for.
        requested: u64,
        /// The largest value the kernel allows.
        limit: u64,
    },
    /// A kernel that sets register budgets (`setmaxnreg`: `sluice_device::tma::WsPipeline::run`)
    /// was launched with another block size than its `#[kernel(max_threads = N)]`: the
    /// budgets share the register file ptxas sized for exactly `N` threads.
    LaunchBlockFixed {
        /// The kernel.
        kernel: &'static str,
        /// Threads per block asked for.
        requested: u64,
        /// Threads per block it runs with: its `max_threads`.
        required: u32,
    },
    /// A `#[kernel(dims = 1)]` kernel was launched with a grid or blocks that are not 1-D:
    /// the kernel's build assumes `(n, 1, 1)` for both.
    LaunchNot1d {
        /// The kernel.
        kernel: &'static str,
        /// The grid asked for.
        grid: (u32, u32, u32),
        /// The block asked for.
        block: (u32, u32, u32),
    },
    /// A `#[kernel(block = (x, y, z))]` kernel was launched with another block shape: the
    /// kernel's build assumes the one it declares.
    LaunchBlockShape {
        /// The kernel.
        kernel: &'static str,
        /// The block asked for.
        block: (u32, u32, u32),
        /// The block the kernel declares.
        required: (u32, u32, u32),
    },
    /// A launch configuration has a zero dimension.
    EmptyLaunch {
        /// Which dimension, such as `"grid.x"`.
        what: &'static str,
    },
    /// `cuLaunchKernel` failed.
    Launch {
        /// The kernel.
        kernel: &'static str,
        /// What the driver said.
        error: DriverError,
    },
    /// Device or pinned memory could not be allocated for another reason than its size.
    Alloc {
        /// Bytes asked for.
        bytes: usize,
        /// What the driver said.
        error: DriverError,
    },
    /// The device has not this much free memory.
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Bytes free on the device when asked.
        free: usize,
    },
    /// An allocation, upload or copy of zero elements.
    ZeroSized,
    /// The element type needs a stricter alignment than device and pinned memory has: its
    /// `#[repr(align(N))]` is over 256 bytes (what the driver promises for device memory).
    /// Checked before allocating.
    OverAligned {
        /// `align_of::<T>()`.
        align: usize,
        /// The alignment the memory has (256 for every allocation).
        max: usize,
    },
    /// `rows * cols * size_of::<T>()` does not fit in memory addresses.
    TooLarge {
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
        /// Bytes per element.
        elem_size: usize,
    },
    /// An asynchronous copy could not be enqueued.
    Copy {
        /// `"device to host"` or `"host to device"`.
        direction: &'static str,
        /// What the driver said.
        error: DriverError,
    },
    /// A fill (`Stream::zero`, `cuMemsetD2D8Async`) could not be enqueued.
    Fill {
        /// What the driver said.
        error: DriverError,
    },
    /// The two sides of a copy have different element counts.
    LengthMismatch {
        /// Elements on the source side.
        expected: usize,
        /// Elements on the destination side.
        got: usize,
    },
    /// Views to be joined into one column range are not adjacent columns of one matrix.
    NotAdjacent,
    /// A view cannot be read as the row-major matrix asked for
    /// ([`ColumnView::row_major`](crate::ColumnView::row_major)), or not by the
    /// tensor-memory accelerator (TMA) a kernel's `TmaMatrix` parameter reads through: why.
    TensorMap {
        /// What is wrong, with the numbers.
        reason: String,
    },
    /// An event (fence or timestamp) call failed.
    Event {
        /// The driver call.
        call: &'static str,
        /// What the driver said.
        error: DriverError,
    },
    /// A stream (lane) call failed.
    Stream {
        /// The driver call.
        call: &'static str,
        /// What the driver said.
        error: DriverError,
    },
    /// The device's context is lost: work on it faulted (an illegal address, a trap, a
    /// failed device assert: a *sticky* error, [`DriverError::is_sticky`]) and nothing runs in
    /// it any more. Every later scope, graph or `Gpu::cuda` of the device returns this at once,
    /// until [`Gpu::reset`](crate::Gpu::reset) resets the device. `lane` is the lane whose
    /// join first saw it (in the scope where it happened). The scope's memory is leaked
    /// rather than freed. (A join that fails for any other reason cannot be trusted to mean
    /// the lane stopped: sluice then aborts the process rather than let the scope's borrows
    /// end while the lane may still use them.)
    ContextLost {
        /// The fault that lost it.
        error: DriverError,
        /// The lane whose work faulted: the one lane that ran the failing kernel, where the
        /// device's fault record names it or only one lane launched kernels; otherwise the
        /// first lane whose join saw the loss (the message then says which one faulted is not
        /// known: `fault`'s `lanes` are not just this lane, and `kernels` is empty).
        lane: Option<LaneId>,
        /// What the failing thread recorded (`dfail!`, `dassert!`, a panic in the device
        /// std's debug mode): its block, thread, message and kernel. `None` for a fault that
        /// records nothing (a bounds check's or `trap`'s bare trap, an illegal address, a
        /// kernel without the device std).
        fault: Option<Box<DeviceFault>>,
        /// Where the device recorded nothing but the faulting lane is known: the kernels that
        /// lane launched in the scope, in order — the candidates for a bare trap (a bounds
        /// check, `trap`, an illegal address). Empty otherwise.
        kernels: Vec<&'static str>,
    },
    /// The device's context was lost by a kernel fault and CUDA refuses the device to this
    /// process even after [`Gpu::reset`](crate::Gpu::reset) (as it documents for faults such
    /// as `CUDA_ERROR_LAUNCH_FAILED`): end the process; a new one uses the GPU normally.
    RestartRequired {
        /// What the driver still says.
        error: DriverError,
    },
    /// Freeing memory or destroying a handle at the end of a scope failed.
    Free {
        /// What was being released.
        what: &'static str,
        /// What the driver said.
        error: DriverError,
    },
    /// A host-side wait (a fence's, a pending copy's, a timestamp's) or another operation that
    /// needs work to have run was asked for while the scope is being recorded into a graph
    /// ([`graph`](crate::graph)), where nothing runs until a replay.
    Recording {
        /// What was asked for, such as `"Pending::wait"`.
        what: &'static str,
    },
    /// A graph-only operation ([`Stream::launch_node`](crate::Stream::launch_node)) outside a
    /// recording.
    NotRecording {
        /// What was asked for.
        what: &'static str,
    },
    /// A graph's input, output, node or parameter was named with the wrong index or type,
    /// or new data does not have the recorded length. A changed shape or a different buffer
    /// needs a new recording.
    GraphMismatch {
        /// What was named, such as `"input 2"`.
        what: String,
        /// What is wrong, such as `"it holds f32, not u32"`.
        problem: String,
    },
    /// A replay of a graph was asked for while an earlier replay of it is in flight, or its
    /// [`Outputs`](crate::Outputs) are still being read: the new replay would overwrite them.
    /// Wait for the earlier one (`Replay::wait`) and drop its outputs first.
    ReplayInUse,
    /// The devices given to a multi-GPU scope or communicator do not fit together: none, a
    /// CPU backend mixed with CUDA devices, or (for a [`Communicator`](crate::Communicator)) one
    /// CUDA device given twice (NCCL runs one rank per GPU).
    Devices {
        /// What is wrong, such as `"device 0 is given twice"`.
        problem: String,
    },
    /// NCCL (the collectives' library) could not be loaded: `libnccl.so.2` was found nowhere
    /// sluice looked, or lacks an entry point it calls. `searched` lists where it looked, in
    /// order; `SLUICE_NCCL=/path/to/libnccl.so.2` (or `LD_LIBRARY_PATH`) points it at one.
    NcclUnavailable {
        /// Every place tried, in order (file names for the dynamic loader, then full paths).
        searched: Vec<String>,
        /// Why the last candidate, or the library found, was refused.
        reason: String,
    },
    /// An NCCL call failed.
    Nccl {
        /// The call, such as `"ncclAllReduce"`.
        call: &'static str,
        /// NCCL's `ncclResult_t`.
        code: u32,
        /// NCCL's description of the code.
        message: String,
    },
    /// The ranks given to a collective do not fit it: not one per device of the communicator
    /// in its order, lengths that do not match the operation, padded (non-contiguous) columns,
    /// or an in-place rank where the operation needs separate buffers. Nothing was enqueued.
    Collective {
        /// The collective, such as `"all_reduce"`.
        op: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A step failed, and cleaning up after it failed too (ending the scope: joining lanes,
    /// freeing memory): no error is dropped. `error` is the first failure — for a scope,
    /// the closure's own error — and `cleanup` lists what went wrong afterwards, in order.
    /// [`Error::primary`] gives the first one.
    Cleanup {
        /// The first failure.
        error: Box<Error>,
        /// Failures found while cleaning up after it, in order.
        cleanup: Vec<Error>,
    },
}

impl Error {
    /// The error that happened first: for [`Error::Cleanup`] its `error`, otherwise `self`.
    /// Match on this to react to what a scope's closure returned, whatever went wrong after.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{DriverError, Error};
    /// let e = Error::Cleanup {
    ///     error: Box::new(Error::NotAdjacent),
    ///     cleanup: vec![Error::ContextLost { lane: Some(sluice::LaneId::Lane(0)), error: DriverError::from_code(700), fault: None, kernels: vec![] }],
    /// };
    /// assert_eq!(e.primary(), &Error::NotAdjacent);
    /// assert_eq!(Error::ZeroSized.primary(), &Error::ZeroSized);
    /// ```
    pub fn primary(&self) -> &Error {
        match self {
            Error::Cleanup { error, .. } => error.primary(),
            e => e,
        }
    }

    /// Whether this error, or one it chains ([`Error::Cleanup`]), satisfies `f`.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::Error;
    /// let e = Error::Cleanup { error: Box::new(Error::NotAdjacent), cleanup: vec![Error::ZeroSized] };
    /// assert!(e.any(|e| matches!(e, Error::ZeroSized)));
    /// assert!(!Error::NotAdjacent.any(|e| matches!(e, Error::ZeroSized)));
    /// ```
    pub fn any(&self, f: impl Fn(&Error) -> bool + Copy) -> bool {
        match self {
            Error::Cleanup { error, cleanup } => error.any(f) || cleanup.iter().any(|e| e.any(f)),
            e => f(e),
        }
    }

    /// `self`, followed by `later` found while cleaning up after it.
    pub(crate) fn also(self, later: Error) -> Error {
        let (error, mut cleanup) = match self {
            Error::Cleanup { error, cleanup } => (error, cleanup),
            e => (Box::new(e), Vec::new()),
        };
        match later {
            Error::Cleanup { error: first, cleanup: rest } => {
                cleanup.push(*first);
                cleanup.extend(rest);
            }
            e => cleanup.push(e),
        }
        Error::Cleanup { error, cleanup }
    }

    /// This error (or chain) without the errors equal to `seen` (the scope's end finding the
    /// fault the closure already returned): `None` if nothing else is left.
    pub(crate) fn without(self, seen: &Error) -> Option<Error> {
        let all = match self {
            Error::Cleanup { error, cleanup } => std::iter::once(*error).chain(cleanup).collect(),
            e => vec![e],
        };
        Error::chain(all.into_iter().filter(|e| e != seen))
    }

    /// The errors in `errors` as one: `None` if empty, the error itself if alone.
    pub(crate) fn chain(errors: impl IntoIterator<Item = Error>) -> Option<Error> {
        errors.into_iter().fold(None, |acc, e| {
            Some(match acc {
                None => e,
                Some(first) => first.also(e),
            })
        })
    }
}

/// What a failing kernel recorded before it trapped: `dfail!` and `dassert!` (and, in the
/// device std's debug mode, any panic) write the first failing thread's block, thread and
/// message into host memory mapped for the device, which the fault does not destroy. Part
/// of [`Error::ContextLost`].
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::DeviceFault;
/// let f = DeviceFault {
///     block: [2, 0, 0],
///     thread: [17, 0, 0],
///     message: "kernel failed at src/lib.rs:40:9: n must be even".into(),
///     kernel: Some("halve"),
///     lanes: vec![sluice::LaneId::Lane(2)],
/// };
/// assert_eq!(f.to_string(), "kernel `halve`, block (2, 0, 0), thread (17, 0, 0): kernel failed at src/lib.rs:40:9: n must be even");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFault {
    /// The failing thread's block index (x, y, z).
    pub block: [u32; 3],
    /// Its thread index within the block (x, y, z).
    pub thread: [u32; 3],
    /// Its message, as written: `kernel failed at FILE:LINE:COL: MESSAGE` for `dfail!` and
    /// `dassert!` (at most 224 bytes).
    pub message: String,
    /// The kernel the message's location lies in, where one of the scope's launches is
    /// declared there (a `#[kernel]` knows its source lines); `None` when the failure is in
    /// a helper function outside every kernel's body.
    pub kernel: Option<&'static str>,
    /// The lanes of the scope that can have faulted: those that launched that kernel (one
    /// lane is the lane that faulted; several, the same kernel on several lanes, are the
    /// candidates, which the record cannot tell apart), or, where the kernel is not known,
    /// the one lane that launched anything. Empty when neither narrows it down.
    pub lanes: Vec<LaneId>,
}

impl fmt::Display for DeviceFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(k) = self.kernel {
            write!(f, "kernel `{k}`")?;
            if self.lanes.len() > 1 {
                let lanes: Vec<String> = self.lanes.iter().map(|l| l.to_string()).collect();
                write!(f, " on one of {}", lanes.join(", "))?;
            }
            write!(f, ", ")?;
        }
        let ([bx, by, bz], [tx, ty, tz]) = (self.block, self.thread);
        write!(f, "block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz}): {}", self.message)
    }
}

/// Which lane of a scope: one the program made ([`Scope::lane`](crate::Scope::lane), numbered
/// from 0 in creation order), or the scope's own upload lane, which runs
/// [`Scope::upload`](crate::Scope::upload)'s copies.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::LaneId;
/// assert_eq!(LaneId::Lane(3).to_string(), "lane 3");
/// assert_eq!(LaneId::Upload.to_string(), "the scope's upload lane");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LaneId {
    /// The `n`th lane the program made in its scope.
    Lane(usize),
    /// The scope's upload lane.
    Upload,
}

impl Default for LaneId {
    fn default() -> Self {
        LaneId::Lane(0)
    }
}

impl fmt::Display for LaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneId::Lane(n) => write!(f, "lane {n}"),
            LaneId::Upload => write!(f, "the scope's upload lane"),
        }
    }
}

/// Errors found where they cannot be returned — while dropping a handle, or ending a scope
/// whose closure panicked — kept until someone asks for them
/// ([`Gpu::take_errors`](crate::Gpu::take_errors), or the end of the next scope). Library
/// code never prints them.
pub(crate) struct ErrorLog {
    /// Whether `errors` may hold anything: lets the end of every scope check without a lock.
    any: AtomicBool,
    errors: Mutex<Vec<Error>>,
}

impl ErrorLog {
    pub(crate) const fn new() -> ErrorLog {
        ErrorLog { any: AtomicBool::new(false), errors: Mutex::new(Vec::new()) }
    }

    pub(crate) fn record(&self, e: Error) {
        self.errors.lock().unwrap_or_else(|p| p.into_inner()).push(e);
        self.any.store(true, Ordering::Release);
    }

    /// Everything recorded so far, oldest first; the log is then empty.
    pub(crate) fn take(&self) -> Vec<Error> {
        if !self.any.load(Ordering::Acquire) {
            return Vec::new();
        }
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        self.any.store(false, Ordering::Release);
        std::mem::take(&mut *errors)
    }
}

/// Errors of devices whose last handle is gone (releasing the context itself failed, or
/// errors recorded on it were never taken): [`Gpu::take_errors`](crate::Gpu::take_errors) of
/// any later `Gpu` returns them too.
pub(crate) static ORPHANED: ErrorLog = ErrorLog::new();

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => write!(
                f,
                "no CUDA driver: libcuda could not be loaded (install the NVIDIA driver, or add its folder to LD_LIBRARY_PATH)"
            ),
            Error::DriverSymbolMissing { symbol } => {
                write!(f, "the CUDA driver library lacks `{symbol}`: update the NVIDIA driver")
            }
            Error::DriverTooOld { found, needed } => write!(
                f,
                "the CUDA driver supports CUDA {}, but {} is needed: update the NVIDIA driver",
                version(*found),
                version(*needed)
            ),
            Error::Init(e) => write!(f, "cuInit failed: {e}"),
            Error::UnsupportedPtx { version: v, driver } => write!(
                f,
                "the driver (CUDA {}) does not support PTX ISA {v}: update the NVIDIA driver, or build the kernels \
                 with a toolchain that emits an older PTX ISA",
                version(*driver)
            ),
            Error::BackendUnavailable { asked, why } => {
                write!(f, "SLUICE_BACKEND={asked} asks for a backend this machine does not have: {why}")
            }
            Error::UnknownBackend { given } => {
                write!(f, "SLUICE_BACKEND={given:?} is not a backend: use `cuda`, `cpu` or `auto` (or unset it)")
            }
            Error::NoCpuEntry { name } => write!(
                f,
                "kernel `{name}` has no CPU entry (declared with `Kernel::new`, PTX only): declare it with `#[kernel]` to run it on the CPU backend"
            ),
            Error::KernelFault { lane, message } => write!(f, "{lane} faulted: {message}"),
            Error::KernelCheck { lane, report } => write!(f, "{lane}: the CPU backend's check failed: {report}"),
            Error::NoDevice { ordinal, count } => {
                write!(f, "no CUDA device {ordinal}: the driver sees {count} device(s)")
            }
            Error::Device { call, error } => write!(f, "device set-up: {call} failed: {error}"),
            Error::LoadModule(e) => write!(f, "loading the PTX module failed: {e}"),
            Error::KernelNotFound { name } => write!(f, "the module has no kernel `{name}`"),
            Error::KernelNeedsArch { name, arch, device } => write!(
                f,
                "kernel `{name}` exists only for {arch} (it uses instructions only that architecture has), and this \
                 device is compute capability {}.{}: launch another kernel here, or run on a GPU of {arch}",
                device.0, device.1
            ),
            Error::KernelSignature { name, expected, found } => write!(
                f,
                "kernel `{name}`: its declaration lowers to parameters of {expected:?} bytes, the PTX has {found:?}: \
                 fix the declaration (each slice is two u64 parameters: address, length)"
            ),
            Error::KernelParamType { name, index, param, host, device } => {
                let param = param.as_deref().map_or_else(|| format!("#{index}"), |p| format!("`{p}` (#{index})"));
                let side = |s: &Option<ParamLayout>| match s {
                    None => "no parameter".to_string(),
                    Some(ParamLayout { kind, size, align }) => {
                        let what = match kind {
                            ParamKind::ReadSlice => "a read-only slice of",
                            ParamKind::WrittenSlice => "a written slice of",
                            ParamKind::TensorMap => "a TMA matrix of",
                            ParamKind::ConstPtr => "a const pointer to",
                            ParamKind::MutPtr => "a mutable pointer to",
                            ParamKind::Value => "a value of",
                        };
                        let noun = if *kind == ParamKind::Value { "type" } else { "elements" };
                        format!("{what} {size}-byte {noun} (align {align})")
                    }
                };
                write!(
                    f,
                    "kernel `{name}`, parameter {param}: the host declares {}, the device build compiled {}: \
                     the element types differ between the two builds (a type chosen by `cfg(target_arch)`, or a \
                     `#[repr(C)]` struct whose fields depend on the target?); declare the same type for both. \
                     Nothing was launched",
                    side(host),
                    side(device)
                )
            }
            Error::KernelParamsUnreadable { name, reason } => write!(
                f,
                "kernel `{name}`: its parameter list in the PTX cannot be read ({reason}), so its declaration \
                 cannot be checked: pass the PTX the kernel was compiled into"
            ),
            Error::WrongDevice { what } => {
                write!(f, "{what}: memory or kernel of another device than this lane's (use one `Gpu` per device)")
            }
            Error::LaunchConfig { kernel, what, requested, limit } => {
                let of = kernel.map(|k| format!("kernel `{k}`: ")).unwrap_or_default();
                write!(f, "launch config: {of}{what} = {requested} is over the limit of {limit}")
            }
            Error::KernelLimit { kernel, what, requested, limit } => {
                let (why, fix) = if *what == KERNEL_THREADS {
                    (
                        "the most its `#[kernel(max_threads = N)]` declares",
                        "launch it with at most that many threads per block, or raise its `max_threads`",
                    )
                } else if *what == KERNEL_THREADS_BY_REGISTERS {
                    (
                        "what the registers ptxas gave each of its threads leave room for in one block; it declares no \
                         `max_threads`",
                        "launch it with at most that many threads per block, or declare `#[kernel(max_threads = N)]` \
                         so that ptxas fits N threads",
                    )
                } else {
                    (
                        "the device's opt-in limit less the kernel's static shared memory",
                        "ask for at most that many bytes",
                    )
                };
                write!(f, "kernel limit: kernel `{kernel}`: {what} = {requested} is over its limit of {limit} ({why}); {fix}")
            }
            Error::LaunchBlockFixed { kernel, requested, required } => write!(
                f,
                "launch config: kernel `{kernel}` sets register budgets (setmaxnreg) for blocks of exactly {required} \
                 threads, its `max_threads`; {requested} threads per block asked for"
            ),
            Error::LaunchNot1d { kernel, grid, block } => {
                let dims = [("grid.y", grid.1), ("grid.z", grid.2), ("block.y", block.1), ("block.z", block.2)];
                let (what, v) = dims.into_iter().find(|&(_, v)| v != 1).unwrap_or(("grid.y", grid.1));
                write!(
                    f,
                    "launch config: kernel `{kernel}` is declared `#[kernel(dims = 1)]`, so it launches in 1-D only, \
                     but {what} = {v} (grid {grid:?}, block {block:?}); launch it with grid (n, 1, 1) and block \
                     (m, 1, 1) (`LaunchConfig::for_elements`), or drop `dims = 1` from the kernel to launch it in \
                     2-D or 3-D"
                )
            }
            Error::LaunchBlockShape { kernel, block, required } => write!(
                f,
                "launch config: kernel `{kernel}` is declared `#[kernel(block = {required:?})]`, so every block \
                 has that shape, but block {block:?} was asked for; launch it with block {required:?} \
                 (`LaunchConfig {{ block: {required:?}, .. }}`), or drop `block` from the kernel to launch it \
                 with other shapes"
            ),
            Error::EmptyLaunch { what } => write!(f, "launch config: {what} is zero (every dimension must be at least 1)"),
            Error::Launch { kernel, error } => write!(f, "launching `{kernel}` failed: {error}"),
            Error::Alloc { bytes, error } => write!(f, "allocating {bytes} bytes failed: {error}"),
            Error::OutOfMemory { requested, free } => write!(
                f,
                "out of device memory: {requested} bytes asked for, {free} free"
            ),
            Error::ZeroSized => write!(f, "zero-sized buffer: allocations, uploads and copies need at least one element"),
            Error::OverAligned { align, max } => write!(
                f,
                "the element type needs {align}-byte alignment, but device and pinned memory is only {max}-byte aligned: \
                 use an element type aligned to at most 256 bytes"
            ),
            Error::TooLarge { rows, cols, elem_size } => {
                write!(f, "a {rows} x {cols} matrix of {elem_size}-byte elements does not fit in the address space")
            }
            Error::Copy { direction, error } => write!(f, "copy ({direction}) failed: {error}"),
            Error::Fill { error } => write!(f, "zero-fill failed: {error}"),
            Error::LengthMismatch { expected, got } => {
                write!(f, "copy: the source has {expected} elements but the destination {got}")
            }
            Error::NotAdjacent => write!(f, "views to join are not adjacent columns of one matrix"),
            Error::TensorMap { reason } => write!(f, "TMA matrix: {reason}"),
            Error::Event { call, error } => write!(f, "event: {call} failed: {error}"),
            Error::Stream { call, error } => write!(f, "lane: {call} failed: {error}"),
            Error::ContextLost { error, lane, fault, kernels } => {
                // `lane` is the culprit where the fault record or the one busy lane named it
                // (`attribute_fault`: the record's only candidate, or the kernels it launched);
                // otherwise only the first lane whose join saw the loss.
                let named = match (lane, fault) {
                    (Some(lane), Some(fault)) => fault.lanes[..] == [*lane],
                    (Some(_), None) => !kernels.is_empty(),
                    (None, _) => false,
                };
                match (lane, named) {
                    (Some(lane), true) => write!(f, "{lane} faulted: {error}")?,
                    (Some(lane), false) => write!(
                        f,
                        "the device's context was lost ({error}), first seen by {lane}'s join; which lane's work \
                         faulted is not known"
                    )?,
                    (None, _) => write!(f, "the device's context was lost by an earlier fault ({error})")?,
                }
                if let Some(fault) = fault {
                    write!(f, " ({fault})")?;
                } else if !kernels.is_empty() {
                    let names: Vec<String> = kernels.iter().map(|k| format!("`{k}`")).collect();
                    let (which, what) = match kernels.len() {
                        1 => ("", "the kernel it launched in this scope"),
                        _ => ("one of ", "the kernels it launched in this scope"),
                    };
                    write!(
                        f,
                        ", in {which}{} ({what}; the device recorded nothing: a failed bounds check, `trap` or an \
                         illegal address)",
                        names.join(", ")
                    )?;
                }
                write!(f, "; nothing runs in the context any more: `Gpu::reset` resets the device")
            }
            Error::RestartRequired { error } => write!(
                f,
                "the device's context was lost by a kernel fault and CUDA refuses the device to this process even \
                 after a reset ({error}): end the process; a new one can use the GPU"
            ),
            Error::Free { what, error } => write!(f, "releasing {what} failed: {error}"),
            Error::Recording { what } => write!(
                f,
                "{what} while the scope is being recorded into a graph: nothing runs until a replay; \
                 wait on the replay instead (`Replay::wait`)"
            ),
            Error::NotRecording { what } => write!(f, "{what} is for scopes recorded into a graph (`sluice::graph`)"),
            Error::GraphMismatch { what, problem } => {
                write!(f, "graph {what}: {problem} (a changed shape or a different buffer needs a new recording)")
            }
            Error::ReplayInUse => write!(
                f,
                "a replay of this graph was asked for while an earlier one is in flight or its outputs are still \
                 borrowed: wait for it (`Replay::wait`) and drop its `Outputs` first"
            ),
            Error::Devices { problem } => write!(f, "the devices do not fit together: {problem}"),
            Error::NcclUnavailable { searched, reason } => write!(
                f,
                "NCCL (libnccl.so.2) could not be loaded ({reason}); looked in: {}. Install NCCL (e.g. the pip \
                 package nvidia-nccl-cu12, which PyTorch brings), or set SLUICE_NCCL=/path/to/libnccl.so.2 or \
                 LD_LIBRARY_PATH",
                searched.join(", ")
            ),
            Error::Nccl { call, code, message } => write!(f, "{call} failed: NCCL error {code} ({message})"),
            Error::Collective { op, problem } => write!(f, "{op}: {problem}"),
            Error::Cleanup { error, cleanup } => {
                write!(f, "{error}")?;
                // Lanes whose kernel failed exactly as the first one's (the same kernel on
                // every lane, the same bug): named once, by lane.
                let alike: Vec<LaneId> = cleanup.iter().filter_map(|e| same_failure(error, e)).collect();
                if !alike.is_empty() {
                    let shown: Vec<String> = alike.iter().take(SHOWN_LANES).map(LaneId::to_string).collect();
                    write!(f, "; the same on {}", shown.join(", "))?;
                    if alike.len() > SHOWN_LANES {
                        write!(f, " and {} more lanes", alike.len() - SHOWN_LANES)?;
                    }
                }
                // A scope of a thousand lanes that all failed in different ways would print a
                // thousand messages: the first few say what happened, the value holds them all.
                let rest: Vec<&Error> = cleanup.iter().filter(|e| same_failure(error, e).is_none()).collect();
                for (i, e) in rest.iter().take(SHOWN_CLEANUP).enumerate() {
                    let sep = if i == 0 { "; then, cleaning up: " } else { "; " };
                    write!(f, "{sep}{e}")?;
                }
                if rest.len() > SHOWN_CLEANUP {
                    let more = rest.len() - SHOWN_CLEANUP;
                    write!(f, "; and {more} more (the `cleanup` field of `Error::Cleanup` holds every one)")?;
                }
                Ok(())
            }
        }
    }
}

/// How many of an [`Error::Cleanup`]'s later errors its message shows.
const SHOWN_CLEANUP: usize = 4;

/// How many lanes that failed as the first one did an [`Error::Cleanup`]'s message names.
const SHOWN_LANES: usize = 8;

/// The lane of `later` if it is a kernel's failure with exactly `first`'s message on another
/// lane (the same fault or check report, word for word).
fn same_failure(first: &Error, later: &Error) -> Option<LaneId> {
    match (first, later) {
        (Error::KernelFault { message: a, .. }, Error::KernelFault { lane, message: b }) if a == b => Some(*lane),
        (Error::KernelCheck { report: a, .. }, Error::KernelCheck { lane, report: b }) if a == b => Some(*lane),
        _ => None,
    }
}

/// [`Error::KernelLimit`]'s `what` for threads per block, the bound the kernel declares.
pub(crate) const KERNEL_THREADS: &str = "threads per block";
/// [`Error::KernelLimit`]'s `what` for threads per block, where the kernel declares no bound
/// and its registers set it.
pub(crate) const KERNEL_THREADS_BY_REGISTERS: &str = "threads per block, as its registers allow";

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Init(e) | Error::LoadModule(e) => Some(e),
            Error::Device { error, .. }
            | Error::Launch { error, .. }
            | Error::Alloc { error, .. }
            | Error::Copy { error, .. }
            | Error::Fill { error }
            | Error::Event { error, .. }
            | Error::Stream { error, .. }
            | Error::ContextLost { error, .. }
            | Error::RestartRequired { error }
            | Error::Free { error, .. } => Some(error),
            Error::Cleanup { error, .. } => Some(&**error),
            Error::BackendUnavailable { why, .. } => Some(&**why),
            _ => None,
        }
    }
}

/// 12080 → "12.8".
fn version(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        assert!(Error::NoDriver.to_string().contains("install the NVIDIA driver"));
        let e = Error::DriverTooOld { found: 11020, needed: 12080 };
        assert_eq!(e.to_string(), "the CUDA driver supports CUDA 11.2, but 12.8 is needed: update the NVIDIA driver");
        let e = Error::LaunchConfig { kernel: None, what: "block.x", requested: 2048, limit: 1024 };
        assert_eq!(e.to_string(), "launch config: block.x = 2048 is over the limit of 1024");
        let e = Error::LaunchConfig { kernel: Some("saxpy"), what: "block.x", requested: 2048, limit: 1024 };
        assert_eq!(e.to_string(), "launch config: kernel `saxpy`: block.x = 2048 is over the limit of 1024");
        let e = Error::OutOfMemory { requested: 10, free: 5 };
        assert_eq!(e.to_string(), "out of device memory: 10 bytes asked for, 5 free");
    }

    #[test]
    fn lanes_that_failed_as_the_first_did_are_named_once() {
        let fault = |lane, message: &str| Error::KernelFault { lane: LaneId::Lane(lane), message: message.into() };
        let same = "kernel `k` failed on the CPU: index out of bounds";
        let mut all: Vec<Error> = (0..12).map(|l| fault(l, same)).collect();
        all.push(fault(12, "another message"));
        let e = Error::chain(all).expect("errors");
        let s = e.to_string();
        assert!(s.starts_with(&format!("lane 0 faulted: {same}; the same on lane 1, lane 2, ")), "{s}");
        assert!(s.contains("lane 8 and 3 more lanes; then, cleaning up: lane 12 faulted: another message"), "{s}");
        assert_eq!(s.matches("index out of bounds").count(), 1, "{s}");
    }

    #[test]
    fn cleanup_errors_are_chained_not_lost() {
        let join = Error::ContextLost {
            lane: Some(LaneId::Lane(3)),
            error: DriverError::from_code(700),
            fault: None,
            kernels: vec![],
        };
        let free = Error::Free { what: "stream", error: DriverError::from_code(700) };
        assert_eq!(Error::chain([]), None);
        assert_eq!(Error::chain([Error::ZeroSized]), Some(Error::ZeroSized));
        let e = Error::chain([Error::NotAdjacent, join.clone(), free.clone()]).unwrap();
        assert_eq!(
            e,
            Error::Cleanup { error: Box::new(Error::NotAdjacent), cleanup: vec![join.clone(), free.clone()] }
        );
        assert_eq!(e.primary(), &Error::NotAdjacent);
        let s = e.to_string();
        assert!(s.starts_with("views to join are not adjacent"), "{s}");
        assert!(s.contains("then, cleaning up: the device's context was lost"), "{s}");
        assert!(s.contains("first seen by lane 3's join"), "{s}");
        assert!(s.contains("releasing stream failed"), "{s}");
        // Many: the first few, then a count.
        let many = Error::Cleanup { error: Box::new(Error::NotAdjacent), cleanup: vec![join.clone(); 1000] };
        let m = many.to_string();
        assert_eq!(m.matches("first seen by lane 3's join").count(), SHOWN_CLEANUP, "{m}");
        assert!(
            m.ends_with(&format!(
                "; and {} more (the `cleanup` field of `Error::Cleanup` holds every one)",
                1000 - SHOWN_CLEANUP
            )),
            "{m}"
        );
        // Chaining a chain keeps one flat list.
        let e2 = Error::ZeroSized.also(e);
        assert_eq!(
            e2,
            Error::Cleanup { error: Box::new(Error::ZeroSized), cleanup: vec![Error::NotAdjacent, join, free] }
        );
        use std::error::Error as _;
        assert_eq!(e2.source().map(|s| s.to_string()), Some(Error::ZeroSized.to_string()));
    }

    #[test]
    fn over_aligned_says_what_to_do() {
        let s = Error::OverAligned { align: 8192, max: 256 }.to_string();
        assert!(s.contains("8192-byte alignment") && s.contains("256"), "{s}");
    }

    #[test]
    fn driver_errors_are_the_source() {
        use std::error::Error as _;
        let e = Error::Launch { kernel: "k", error: DriverError::from_code(1) };
        assert!(e.source().is_some());
        assert!(e.to_string().contains("CUDA_ERROR_INVALID_VALUE (1)"));
        assert!(Error::ZeroSized.source().is_none());
    }
}
