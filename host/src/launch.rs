//! Typed kernels and launches: [`Kernel`] descriptors, [`LaunchConfig`], and the traits
//! that make a launch with wrong arguments a compile error.
//!
//! A kernel's parameters are described by a tuple type of [`Mut<T>`] (a slice the kernel
//! writes), [`Ref<T>`] (a slice it reads) and plain [`Pod`] values (scalars and structs).
//! Launching checks at compile time that each argument fits its parameter — a
//! `&mut` [`ColumnViewMut`] for `Mut`, a [`ColumnView`] or `&ColumnViewMut` for `Ref`, the value
//! itself for a scalar — and that every view is bound to the launching lane (its brand).
//!
//! # ABI
//!
//! Each slice parameter becomes two kernel parameters, the device address (`u64`) and the
//! element count (`u64`); a scalar or `Pod` struct is passed by value. A view of several
//! columns lowers to its first element's address and the count from its first to its last
//! element, padding between columns included. Such a view always covers whole columns, so
//! it owns that padding. A row range (`split_rows`/`slice_rows`) is a single column and
//! lowers to exactly its rows; row ranges never join. Pass the leading dimension as a
//! scalar when a kernel needs the columns.

use std::ffi::{c_void, CString};
use std::marker::PhantomData;

use bytemuck::Pod;

use crate::device::{lock, DeviceInfo, Gpu};
use crate::driver::{self, module::FuncAttribute, RawFunction, RawModule};
use crate::error::{Error, Result};
use crate::memory::Span;
use crate::view::{ColumnView, ColumnViewMut};

/// Grid and block shape and dynamic shared memory of a launch: CUDA's `<<<grid, block, shmem>>>`.
///
/// Checked against the device's and the kernel's limits before the driver is called;
/// a violation is an [`Error::LaunchConfig`] naming the dimension, never a driver error.
///
/// ```
/// use sluice_host::LaunchConfig;
/// let cfg = LaunchConfig::for_elements(1000, 256);
/// assert_eq!(cfg.grid, (4, 1, 1));
/// assert_eq!(cfg.block, (256, 1, 1));
/// let cfg = cfg.with_shared_mem(4096);
/// assert_eq!(cfg.shared_mem_bytes, 4096);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks along x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block along x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element, `block` threads per block, 1-D: `ceil(n / block)` blocks.
    /// (`n = 0` gives an empty grid, which a launch rejects.)
    ///
    /// ```
    /// let cfg = sluice_host::LaunchConfig::for_elements(1 << 20, 256);
    /// assert_eq!(cfg.grid.0, 4096);
    /// ```
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig {
        let blocks = if block == 0 { 0 } else { n.div_ceil(block as usize) };
        LaunchConfig {
            grid: (u32::try_from(blocks).unwrap_or(u32::MAX), 1, 1),
            block: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    ///
    /// ```
    /// let cfg = sluice_host::LaunchConfig::for_elements(64, 64).with_shared_mem(256);
    /// assert_eq!(cfg.shared_mem_bytes, 256);
    /// ```
    pub fn with_shared_mem(self, bytes: u32) -> LaunchConfig {
        LaunchConfig { shared_mem_bytes: bytes, ..self }
    }

    /// Checks the configuration against a device's limits (what [`Stream::launch`]
    /// does before calling the driver, together with the kernel's own limits).
    ///
    /// [`Stream::launch`]: crate::Stream::launch
    ///
    /// ```no_run
    /// use sluice_host::{Error, Gpu, LaunchConfig};
    /// let gpu = Gpu::new(0)?;
    /// let too_big = LaunchConfig { grid: (1, 1, 1), block: (2048, 1, 1), shared_mem_bytes: 0 };
    /// assert!(matches!(too_big.validate(gpu.info()), Err(Error::LaunchConfig { what: "block.x", .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn validate(&self, info: &DeviceInfo) -> Result<()> {
        let (g, b) = (self.grid, self.block);
        for (what, v) in [("grid.x", g.0), ("grid.y", g.1), ("grid.z", g.2), ("block.x", b.0), ("block.y", b.1), ("block.z", b.2)] {
            if v == 0 {
                return Err(Error::EmptyLaunch { what });
            }
        }
        let limits = [
            ("block.x", b.0, info.max_block_dims[0]),
            ("block.y", b.1, info.max_block_dims[1]),
            ("block.z", b.2, info.max_block_dims[2]),
            ("grid.x", g.0, info.max_grid_dims[0]),
            ("grid.y", g.1, info.max_grid_dims[1]),
            ("grid.z", g.2, info.max_grid_dims[2]),
        ];
        for (what, v, limit) in limits {
            if v > limit {
                return Err(Error::LaunchConfig { what, requested: v as u64, limit: limit as u64 });
            }
        }
        let threads = b.0 as u64 * b.1 as u64 * b.2 as u64;
        if threads > info.max_threads_per_block as u64 {
            return Err(Error::LaunchConfig {
                what: "threads per block",
                requested: threads,
                limit: info.max_threads_per_block as u64,
            });
        }
        if self.shared_mem_bytes > info.max_shared_memory_per_block {
            return Err(Error::LaunchConfig {
                what: "dynamic shared memory per block",
                requested: self.shared_mem_bytes as u64,
                limit: info.max_shared_memory_per_block as u64,
            });
        }
        Ok(())
    }
}

/// Parameter marker: a slice the kernel may write (`DeviceSliceMut<T>` in a `#[kernel]`).
/// Passed as `&mut ColumnViewMut<T>` bound to the launching lane.
///
/// ```
/// use sluice_host::{Kernel, Mut};
/// // SAFETY: a kernel `fill(out: &mut [f32], v: f32)` that writes only `out`, in bounds.
/// const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("PTX text", "fill") };
/// # let _ = FILL;
/// ```
pub struct Mut<T>(PhantomData<fn() -> T>);

/// Parameter marker: a slice the kernel only reads (`&[T]` on the device side).
/// Passed as a [`ColumnView`] (or `&ColumnView`, `&ColumnViewMut`) bound to the lane.
///
/// ```
/// use sluice_host::{Kernel, Mut, Ref};
/// // SAFETY: `saxpy(y: &mut [f32], x: &[f32], a: f32)` writes only `y`, reads `x`, in bounds.
/// const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("PTX text", "saxpy") };
/// # let _ = SAXPY;
/// ```
pub struct Ref<T>(PhantomData<fn() -> T>);

/// The private halves of the launch traits. Outside this crate they cannot be named, so
/// the public traits built on them ([`Param`], [`Signature`], [`Arg`], [`LaunchArgs`],
/// [`Launchable`]) cannot be implemented there: every value a launch hands the driver is
/// lowered by an impl in this file, and every function it calls is resolved by one.
mod sealed {
    use super::{Gpu, LaunchTarget, ParamBuf, Result};

    /// Seals [`Param`](super::Param).
    pub trait Sealed {}

    /// Seals [`Signature`](super::Signature).
    pub trait SignatureSealed {}

    /// How an argument lowers for parameter `P` on the lane branded `'id`: seals
    /// [`Arg`](super::Arg). Without the seal, an impl elsewhere could push a pointer to a
    /// local (read by the driver after it is gone), too few parameters, or a view bound to
    /// another lane under this lane's brand.
    pub trait LowerArg<'id, P> {
        /// Appends this argument's lowered parameters.
        fn lower(&self, buf: &mut ParamBuf);
    }

    /// How an argument tuple lowers for signature `S`: seals [`LaunchArgs`](super::LaunchArgs).
    pub trait LowerArgs<'id, S> {
        /// Appends every argument's lowered parameters.
        fn lower(&self, buf: &mut ParamBuf);
    }

    /// How a launchable finds its function on a device: seals
    /// [`Launchable`](super::Launchable). Without the seal, an impl elsewhere could pair
    /// any `Sig` with another kernel's function.
    pub trait Resolve {
        /// The function to launch on `gpu`, checked against the launchable's signature.
        fn resolve(&self, gpu: &Gpu) -> Result<LaunchTarget>;
    }
}

/// One kernel parameter type: [`Mut<T>`], [`Ref<T>`] or a [`Pod`] value.
///
/// ```
/// use sluice_host::{Kernel, Mut, Ref};
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Params { scale: f32, offset: f32 }
/// // Mut<T>, Ref<T> and any Pod value (here a struct) are parameters.
/// // SAFETY: declaration only, never launched.
/// const K: Kernel<(Mut<f32>, Ref<u32>, Params)> = unsafe { Kernel::new("", "k") };
/// # let _ = K;
/// ```
pub trait Param: sealed::Sealed {
    /// Appends the sizes in bytes of the kernel parameters this one lowers to.
    #[doc(hidden)]
    fn sizes(out: &mut Vec<usize>);
    /// `found` without its leading sizes if they are this parameter's, else `None`.
    #[doc(hidden)]
    fn strip(found: &[usize]) -> Option<&[usize]>;
}

impl<T: Pod> sealed::Sealed for Mut<T> {}
impl<T: Pod> Param for Mut<T> {
    fn sizes(out: &mut Vec<usize>) {
        out.extend([8, 8]);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[8, 8])
    }
}
impl<T: Pod> sealed::Sealed for Ref<T> {}
impl<T: Pod> Param for Ref<T> {
    fn sizes(out: &mut Vec<usize>) {
        out.extend([8, 8]);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[8, 8])
    }
}
impl<T: Pod> sealed::Sealed for T {}
impl<T: Pod> Param for T {
    fn sizes(out: &mut Vec<usize>) {
        out.push(std::mem::size_of::<T>());
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        match found {
            [size, rest @ ..] if *size == std::mem::size_of::<T>() => Some(rest),
            _ => None,
        }
    }
}

/// A kernel's parameter list: a tuple of [`Param`]s (up to 12).
///
/// ```
/// use sluice_host::{Kernel, Mut};
/// // `()`, `(Mut<f32>,)`, `(Mut<f32>, f32)`, ... up to 12 parameters.
/// // SAFETY: declaration only, never launched.
/// const NOTHING: Kernel<()> = unsafe { Kernel::new("", "noop") };
/// # let _ = NOTHING;
/// ```
pub trait Signature: sealed::SignatureSealed {
    /// Appends the sizes in bytes of all lowered kernel parameters.
    #[doc(hidden)]
    fn sizes(out: &mut Vec<usize>);
    /// Whether `found` (an entry's parameter sizes) are exactly those this list lowers
    /// to; unlike comparing with [`sizes`](Signature::sizes), allocates nothing, so a
    /// launch can check every time.
    #[doc(hidden)]
    fn matches(found: &[usize]) -> bool;
}

/// The kernel parameters lowered for `cuLaunchKernel`: a value per parameter, held here
/// or pointed to in the caller's argument tuple.
///
/// Nameable only in this crate: `pub` because the sealed traits' methods take it, but the
/// module is private and nothing re-exports it. Built only by [`launch_raw`], around one
/// launch call: what it points to in the argument tuple outlives it.
pub struct ParamBuf {
    slots: [Slot; MAX_PARAMS],
    n: usize,
    /// The launching lane's context; a view of another context's memory sets `foreign`.
    ctx: usize,
    foreign: bool,
}

#[derive(Clone, Copy)]
enum Slot {
    Empty,
    /// A u64 stored here (view address or length).
    Word(u64),
    /// A pointer to a scalar in the argument tuple, which outlives the launch call.
    Ptr(*const c_void),
}

/// Most lowered parameters one launch takes (12 views lower to 24).
const MAX_PARAMS: usize = 32;

impl ParamBuf {
    fn new(ctx: usize) -> ParamBuf {
        ParamBuf { slots: [Slot::Empty; MAX_PARAMS], n: 0, ctx, foreign: false }
    }

    fn push(&mut self, s: Slot) {
        // The tuple impls stop at 12 arguments of at most 2 parameters each, so this
        // never overflows; a debug assertion documents it and the check keeps it safe.
        debug_assert!(self.n < MAX_PARAMS);
        if let Some(slot) = self.slots.get_mut(self.n) {
            *slot = s;
            self.n += 1;
        }
    }

    fn push_slice(&mut self, addr: u64, len: u64) {
        self.push(Slot::Word(addr));
        self.push(Slot::Word(len));
    }

    fn push_span(&mut self, s: &Span) {
        self.foreign |= s.ctx != self.ctx;
        self.push_slice(s.ptr, s.flat_len() as u64);
    }

    /// Points the next parameter at `v`, which must outlive the launch call: only the
    /// `Pod` impl of `LowerArg` calls this, with a field of the argument tuple
    /// `launch_raw` borrows across the call.
    fn push_value<T: Pod>(&mut self, v: &T) {
        self.push(Slot::Ptr((v as *const T).cast()));
    }

    /// The pointer array `cuLaunchKernel` wants; valid while `self` and the argument tuple
    /// are neither moved nor dropped.
    fn pointers(&self) -> [*mut c_void; MAX_PARAMS] {
        std::array::from_fn(|i| match &self.slots[i] {
            Slot::Empty => std::ptr::null_mut(),
            Slot::Word(w) => (w as *const u64).cast_mut().cast(),
            Slot::Ptr(p) => p.cast_mut(),
        })
    }
}

/// An argument that fits kernel parameter `P` on the lane branded `'id`.
///
/// Implemented for: `&mut ColumnViewMut<'_, 'id, T>` → [`Mut<T>`]; `&ColumnView`,
/// `ColumnView` and `&ColumnViewMut` (all `'id`) → [`Ref<T>`]; a `Pod` value → itself.
/// Sealed: these are all the arguments there are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter `{P}`",
    label = "wrong argument for a `{P}` parameter",
    note = "a `Mut<T>` parameter takes `&mut ColumnViewMut<T>`; a `Ref<T>` parameter takes `&ColumnView<T>` or `&ColumnViewMut<T>`; a scalar parameter takes a value of exactly its type",
    note = "read-only data (`ColumnView`, e.g. an awaited upload) can never be passed where the kernel writes"
)]
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// # use sluice_host::{Kernel, LaunchConfig, Mut, Ref};
/// # const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("", "saxpy") };
/// sluice_host::scope(gpu, |s| {
///     let (x, y) = (s.alloc_buffer::<f32>(64)?, s.alloc_buffer::<f32>(64)?);
///     s.lane()?.enter(|st| {
///         let x = st.bind(x.as_columns_mut());
///         let mut y = st.bind(y.as_columns_mut());
///         // Mut<f32> ← &mut y, Ref<f32> ← &x (a &ColumnViewMut read), f32 ← 2.0
///         st.launch(&SAXPY, LaunchConfig::for_elements(64, 64), (&mut y, &x, 2.0))
///     })
/// })
/// # }
/// ```
///
/// A new kind of argument cannot be added outside sluice — for instance a wrapper that
/// passes a view bound to another lane as if it were this lane's:
///
/// ```compile_fail,E0277
/// use sluice_host::{Arg, ColumnViewMut, Mut};
/// struct OtherLane<'s, 'other>(ColumnViewMut<'s, 'other, f32>);
/// // error[E0277]: the trait bound `...: LowerArg<'id, Mut<f32>>` is not satisfied (sealed)
/// impl<'id, 's, 'other> Arg<'id, Mut<f32>> for &mut OtherLane<'s, 'other> {}
/// ```
///
/// Hand a view to another lane through a fence instead (`Fenced`, `Stream::await_fence`).
pub trait Arg<'id, P: Param>: sealed::LowerArg<'id, P> {}

impl<'id, T: Pod> Arg<'id, Mut<T>> for &mut ColumnViewMut<'_, 'id, T> {}
impl<'id, T: Pod> sealed::LowerArg<'id, Mut<T>> for &mut ColumnViewMut<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, Ref<T>> for &ColumnViewMut<'_, 'id, T> {}
impl<'id, T: Pod> sealed::LowerArg<'id, Ref<T>> for &ColumnViewMut<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, Ref<T>> for &ColumnView<'_, 'id, T> {}
impl<'id, T: Pod> sealed::LowerArg<'id, Ref<T>> for &ColumnView<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, Ref<T>> for ColumnView<'_, 'id, T> {}
impl<'id, T: Pod> sealed::LowerArg<'id, Ref<T>> for ColumnView<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, T> for T {}
impl<'id, T: Pod> sealed::LowerArg<'id, T> for T {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_value(self);
    }
}

/// A tuple of arguments that fits the parameter tuple `S` on the lane branded `'id`.
/// Sealed: implemented for tuples of [`Arg`]s only.
#[diagnostic::on_unimplemented(
    message = "these arguments do not fit a kernel with parameters `{S}`",
    label = "expected one argument per parameter of `{S}`, each of the matching kind",
    note = "pass a tuple with one argument per parameter, in order: `&mut view` for `Mut<T>`, `&view` for `Ref<T>`, the value for a scalar"
)]
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill") };
/// sluice_host::scope(gpu, |s| {
///     let m = s.alloc_buffer::<f32>(64)?;
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(64, 64), (&mut v, 0.5)) // one tuple, in order
///     })
/// })
/// # }
/// ```
pub trait LaunchArgs<'id, S: Signature>: sealed::LowerArgs<'id, S> {}

macro_rules! tuple_impls {
    ($( ($($P:ident $A:ident $i:tt),*) )*) => {$(
        impl<$($P: Param),*> sealed::SignatureSealed for ($($P,)*) {}
        impl<$($P: Param),*> Signature for ($($P,)*) {
            #[allow(unused_variables)]
            fn sizes(out: &mut Vec<usize>) {
                $($P::sizes(out);)*
            }
            fn matches(found: &[usize]) -> bool {
                let rest = found;
                $(let Some(rest) = $P::strip(rest) else { return false };)*
                rest.is_empty()
            }
        }
        impl<'id, $($P: Param,)* $($A: Arg<'id, $P>),*> LaunchArgs<'id, ($($P,)*)> for ($($A,)*) {}
        impl<'id, $($P: Param,)* $($A: Arg<'id, $P>),*> sealed::LowerArgs<'id, ($($P,)*)> for ($($A,)*) {
            #[allow(unused_variables)]
            fn lower(&self, buf: &mut ParamBuf) {
                $(sealed::LowerArg::<'id, $P>::lower(&self.$i, buf);)*
            }
        }
    )*};
}

tuple_impls! {
    ()
    (P0 A0 0)
    (P0 A0 0, P1 A1 1)
    (P0 A0 0, P1 A1 1, P2 A2 2)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10, P11 A11 11)
}

/// A typed kernel descriptor: which PTX, which entry, which parameters. A plain `const`
/// value: `#[kernel]` emits a [`KernelDecl`] type, which [`Kernel::of`] pairs with the PTX
/// (the facade's `sluice::kernels::<name>`); [`Kernel::new`] declares one by hand. The
/// module is loaded on first use per device.
///
/// The std analogue is a function pointer type: `Kernel<(Mut<f32>, f32)>` is
/// `#[kernel] fn(DeviceSliceMut<f32>, f32)` on the device.
///
/// ```no_run
/// use sluice_host::{Kernel, LaunchConfig, Mut};
/// // SAFETY: `fill_column(out: &mut [f32], value: f32)` writes `out[i]` for `i < len` only.
/// const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new(PTX, "fill_column") };
/// # const PTX: &str = "";
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(1024)?;
///     let lane = s.lane()?;
///     lane.enter(|st| {
///         let mut col = st.bind(out.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut col, 1.0))
///     })
/// })
/// # }
/// ```
///
/// # Compile-time checks
///
/// A launch whose arguments do not fit the parameters does not compile. Writing through
/// a read-only view (here an awaited upload, rule 3):
///
/// ```compile_fail,E0277
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// # fn demo(gpu: &sluice_host::Gpu, data: &[f32]) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let shared = s.upload(data)?;
///     s.lane()?.enter(|st| {
///         let src = st.await_fence(&shared)?;
///         // error[E0277]: `&mut ColumnView<'_, '_, f32>` cannot be passed for a kernel parameter `Mut<f32>`
///         st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut src, 1.0))
///     })
/// })
/// # }
/// ```
///
/// Write into memory the lane owns instead, e.g. a scope allocation bound with `bind`:
///
/// ```no_run
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(1024)?;
///     s.lane()?.enter(|st| {
///         let mut dst = st.bind(out.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut dst, 1.0))
///     })
/// })
/// # }
/// ```
///
/// A scalar of the wrong type (`f64` for an `f32` parameter), or the wrong number of
/// arguments, is rejected the same way:
///
/// ```compile_fail,E0277
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(1024)?;
///     s.lane()?.enter(|st| {
///         let mut dst = st.bind(out.as_columns_mut());
///         let v: f64 = 1.0;
///         st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut dst, v)) // error[E0277]
///     })
/// })
/// # }
/// ```
///
/// ```compile_fail,E0277
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(1024)?;
///     s.lane()?.enter(|st| {
///         let mut dst = st.bind(out.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&mut dst,)) // error[E0277]: missing the f32
///     })
/// })
/// # }
/// ```
///
/// The fix for both: `(&mut dst, 1.0f32)` — one argument per parameter, of its type.
///
/// A written (`Mut`) parameter needs `&mut view`; a shared borrow is rejected:
///
/// ```compile_fail,E0277
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// sluice_host::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(1024)?;
///     s.lane()?.enter(|st| {
///         let dst = st.bind(out.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(1024, 256), (&dst, 1.0)) // error[E0277]: `&ColumnViewMut` for `Mut<f32>`
///     })
/// })
/// # }
/// ```
///
/// The fix: `let mut dst = ...;` and pass `&mut dst`.
pub struct Kernel<S> {
    ptx: &'static str,
    name: &'static str,
    /// The parameter list; `fn() -> S` keeps `Kernel` `Send + Sync + Copy` whatever `S` is.
    _sig: PhantomData<fn() -> S>,
}

impl<S> Clone for Kernel<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Kernel<S> {}

impl<S: Signature> Kernel<S> {
    /// Declares entry `name` of the PTX module `ptx` with parameters `S`.
    ///
    /// When the module is loaded, sluice checks that the entry exists and that its PTX
    /// parameters have the sizes `S` lowers to ([`Error::KernelSignature`] otherwise).
    /// What it cannot check is what the kernel does with them:
    ///
    /// # Safety
    /// - The kernel writes only through its [`Mut`] parameters, never through [`Ref`] ones.
    /// - It accesses a slice parameter only at indices below the length passed with it.
    /// - Its parameters, in order, are those `S` lowers to (see the module's ABI section).
    ///
    /// ```
    /// use sluice_host::{Kernel, Mut};
    /// // SAFETY: `fill_column` writes `out[i]` for `i < out.len()` only.
    /// const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("...", "fill_column") };
    /// assert_eq!(FILL.name(), "fill_column");
    /// ```
    pub const unsafe fn new(ptx: &'static str, name: &'static str) -> Kernel<S> {
        Kernel { ptx, name, _sig: PhantomData }
    }
}

/// What `#[kernel]` (crate `sluice-macros`) emits on the host for each kernel: a zero-sized
/// type naming the entry and its parameter list, from the kernel's own Rust signature.
/// [`Kernel::of`] pairs it with the PTX that holds the entry.
///
/// ```
/// use sluice_host::{Kernel, KernelDecl, Mut, Ref};
/// // What `#[kernel] pub fn saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32)` expands to on
/// // the host (besides `saxpy::args`, the arguments by name). A braced struct lives in the
/// // type namespace only, so a `const saxpy` handle can share the name.
/// #[allow(non_camel_case_types)]
/// pub struct saxpy {}
/// // SAFETY: (emitted by the macro) the entry's parameters are what the signature lowers to,
/// // and only the `Mut` slice is written.
/// unsafe impl KernelDecl for saxpy {
///     const NAME: &'static str = "saxpy";
///     type Signature = (Mut<f32>, Ref<f32>, f32);
/// }
/// # const PTX: &str = "PTX text";
/// // SAFETY: `PTX` is the module the crate declaring `saxpy` was compiled into.
/// const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::of::<saxpy>(PTX) };
/// assert_eq!(SAXPY.name(), "saxpy");
/// ```
///
/// # Safety
/// The same duties as [`Kernel::new`], for the entry `NAME` of the PTX module the
/// implementing crate is compiled into: the entry takes, in order, the parameters
/// `Signature` lowers to; it writes only through its [`Mut`] parameters and only below the
/// lengths passed with them. `#[kernel]` upholds them by construction: it derives the
/// signature from the function it compiles, and a `&[T]` parameter cannot be written in
/// safe kernel code. (Which PTX that is, the declaration cannot say: [`Kernel::of`]'s
/// caller vouches for it.)
pub unsafe trait KernelDecl {
    /// The PTX entry name.
    const NAME: &'static str;
    /// The parameter list, as the host passes it.
    type Signature: Signature;
}

impl<S: Signature> Kernel<S> {
    /// The typed handle of a `#[kernel]`-declared entry `D` in the PTX module `ptx`.
    ///
    /// The declaration's `unsafe impl` vouches for the entry as compiled from `D`'s own
    /// crate; only the caller knows that `ptx` is that compilation. Another module may hold
    /// an entry of the same name and parameter sizes (the load-time check passes) that
    /// writes through a [`Ref`] parameter, or out of bounds.
    ///
    /// # Safety
    /// - `ptx` is the module `D`'s kernel crate was compiled into (for the facade,
    ///   `gpu-kernels` compiled by the build script), so its entry `D::NAME` is the
    ///   kernel `D` declares and keeps the duties of [`KernelDecl`].
    ///
    /// See [`KernelDecl`] for an example. Calling it outside `unsafe` does not compile:
    ///
    /// ```compile_fail,E0133
    /// use sluice_host::{Kernel, KernelDecl, Mut};
    /// struct Fill;
    /// // SAFETY: (as `#[kernel]` emits it) `fill` writes only `out`, in bounds.
    /// unsafe impl KernelDecl for Fill {
    ///     const NAME: &'static str = "fill";
    ///     type Signature = (Mut<f32>, f32);
    /// }
    /// const FILL: Kernel<(Mut<f32>, f32)> = Kernel::of::<Fill>("any PTX"); // error[E0133]
    /// ```
    pub const unsafe fn of<D: KernelDecl<Signature = S>>(ptx: &'static str) -> Kernel<S> {
        Kernel { ptx, name: D::NAME, _sig: PhantomData }
    }
}

impl<S: Signature> Kernel<S> {
    /// Checks, from the PTX text alone (no driver needed), that the entry exists and that its
    /// parameters have the sizes the declaration lowers to. Loading does the same check.
    ///
    /// ```
    /// use sluice_host::{Error, Kernel, Mut};
    /// const PTX: &str = ".visible .entry fill(\n .param .u64 p0,\n .param .u64 p1,\n .param .f32 p2\n)\n{ ret; }";
    /// // SAFETY: only checked here, never launched.
    /// const GOOD: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new(PTX, "fill") };
    /// const BAD: Kernel<(Mut<f32>, f64)> = unsafe { Kernel::new(PTX, "fill") };
    /// assert_eq!(GOOD.check_signature(), Ok(()));
    /// assert!(matches!(BAD.check_signature(), Err(Error::KernelSignature { .. })));
    /// ```
    ///
    /// # Errors
    /// [`Error::KernelNotFound`] (no entry of this name in the text),
    /// [`Error::KernelParamsUnreadable`] (the entry's parameter list is not understood, so
    /// nothing could be checked), [`Error::KernelSignature`] (the sizes differ).
    pub fn check_signature(&self) -> Result<()> {
        let found = ptx_param_sizes(self.ptx, self.name).map_err(|e| match e {
            PtxParamsError::NoEntry => Error::KernelNotFound { name: self.name },
            PtxParamsError::Unreadable(reason) => Error::KernelParamsUnreadable { name: self.name, reason },
        })?;
        check_sizes::<S>(self.name, &found)
    }
}

/// `Ok` if `found` (an entry's parameter sizes in the PTX) are those `S` lowers to.
fn check_sizes<S: Signature>(name: &'static str, found: &[usize]) -> Result<()> {
    if S::matches(found) {
        return Ok(());
    }
    let mut expected = Vec::new();
    S::sizes(&mut expected);
    Err(Error::KernelSignature { name, expected, found: found.to_vec() })
}

impl<S> Kernel<S> {
    /// The entry's name.
    ///
    /// ```
    /// # use sluice_host::{Kernel, Mut};
    /// # const K: Kernel<(Mut<f32>,)> = unsafe { Kernel::new("", "k") };
    /// assert_eq!(K.name(), "k");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX module text.
    ///
    /// ```
    /// # use sluice_host::{Kernel, Mut};
    /// # const K: Kernel<(Mut<f32>,)> = unsafe { Kernel::new(".version 7.8", "k") };
    /// assert!(K.ptx().starts_with(".version"));
    /// ```
    pub const fn ptx(&self) -> &'static str {
        self.ptx
    }
}

impl<S> std::fmt::Debug for Kernel<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A kernel resolved on one device: [`Kernel`] plus its loaded function, so launches skip
/// the lookup. Get one with [`Gpu::function`]; it keeps the device's modules loaded.
///
/// Launching a `Function` takes no lock and searches nothing: its signature was checked
/// against the PTX when it was resolved, and it holds the driver's function handle and
/// the kernel's limits. (Launching a [`Kernel`] finds them in the device's cache and checks
/// the signature again each time.)
///
/// ```no_run
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// let fill = gpu.function(&FILL)?; // loads and JIT-compiles the PTX now, not at first launch
/// sluice_host::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(256)?;
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(out.as_columns_mut());
///         st.launch(&fill, LaunchConfig::for_elements(256, 256), (&mut v, 2.0))
///     })
/// })
/// # }
/// ```
pub struct Function<S> {
    /// Keeps the context and the module holding `target.func` loaded.
    gpu: Gpu,
    target: LaunchTarget,
    _sig: PhantomData<fn() -> S>,
}

impl<S> Clone for Function<S> {
    fn clone(&self) -> Self {
        Function { gpu: self.gpu.clone(), target: self.target, _sig: PhantomData }
    }
}

impl<S> std::fmt::Debug for Function<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("name", &self.target.name).finish_non_exhaustive()
    }
}

/// Something a lane can launch: a [`Kernel`] descriptor or a resolved [`Function`].
/// Sealed: these two are all there are, so the parameter list `Sig` a launch is checked
/// against is always the one the function was resolved (and checked) with.
///
/// ```no_run
/// # fn demo(gpu: &sluice_host::Gpu) -> sluice_host::Result<()> {
/// # use sluice_host::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill") };
/// let resolved = gpu.function(&FILL)?;
/// sluice_host::scope(gpu, |s| {
///     let m = s.alloc_buffer::<f32>(64)?;
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(64, 64), (&mut v, 1.0))?;     // descriptor
///         st.launch(&resolved, LaunchConfig::for_elements(64, 64), (&mut v, 2.0))  // resolved
///     })
/// })
/// # }
/// ```
///
/// A launchable of one's own, say one that re-types a kernel's parameters, does not
/// compile:
///
/// ```compile_fail,E0277
/// use sluice_host::{Launchable, Mut};
/// struct Retyped;
/// // error[E0277]: the trait bound `Retyped: Resolve` is not satisfied (sealed)
/// impl Launchable for Retyped {
///     type Sig = (Mut<u8>, f32);
/// }
/// ```
///
/// Declare the kernel with its own parameters instead ([`Kernel::new`], `#[kernel]`).
pub trait Launchable: sealed::Resolve {
    /// The kernel's parameter list.
    type Sig: Signature;
}

impl<S: Signature> Launchable for Kernel<S> {
    type Sig = S;
}
impl<S: Signature> sealed::Resolve for Kernel<S> {
    fn resolve(&self, gpu: &Gpu) -> Result<LaunchTarget> {
        gpu.resolve::<S>(self.ptx, self.name)
    }
}

impl<S: Signature> Launchable for Function<S> {
    type Sig = S;
}
impl<S: Signature> sealed::Resolve for Function<S> {
    fn resolve(&self, gpu: &Gpu) -> Result<LaunchTarget> {
        // Two `Gpu`s of one device share its primary context, and with it the module
        // `self.gpu` keeps loaded.
        if self.gpu.ctx() != gpu.ctx() {
            return Err(Error::WrongDevice { what: self.target.name });
        }
        Ok(self.target)
    }
}

/// A loaded module and its `'static` PTX text.
pub(crate) struct LoadedModule {
    ptx: &'static str,
    pub(crate) module: RawModule,
}

/// What a launch needs of a resolved function: its handle and the limits a launch is
/// checked against. Nameable only in this crate, as [`ParamBuf`] is.
#[derive(Clone, Copy, Debug)]
pub struct LaunchTarget {
    pub(crate) name: &'static str,
    pub(crate) func: RawFunction,
    pub(crate) max_threads_per_block: u32,
    pub(crate) static_shared_bytes: u32,
}

/// An entry of a device's function cache: a function looked up in a loaded module, by
/// the address of its PTX text and its name, with the entry's parameter sizes in the PTX
/// so that every declaration resolved to it is checked, not only the first.
pub(crate) struct ResolvedFn {
    key: (usize, usize),
    params: Box<[usize]>,
    target: LaunchTarget,
}

impl Gpu {
    /// Loads `kernel`'s module (once per device) and looks the entry up, checking its
    /// parameters against the declaration.
    ///
    /// # Errors
    /// [`Error::LoadModule`], [`Error::DriverTooOld`] (the PTX needs a newer driver),
    /// [`Error::KernelNotFound`], [`Error::KernelSignature`],
    /// [`Error::KernelParamsUnreadable`] (the parameters could not be checked).
    ///
    /// ```no_run
    /// # use sluice_host::{Kernel, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
    /// let gpu = sluice_host::Gpu::new(0)?;
    /// let fill = gpu.function(&FILL)?;
    /// # let _ = fill;
    /// # Ok::<(), sluice_host::Error>(())
    /// ```
    pub fn function<S: Signature>(&self, kernel: &Kernel<S>) -> Result<Function<S>> {
        let target = self.resolve::<S>(kernel.ptx, kernel.name)?;
        Ok(Function { gpu: self.clone(), target, _sig: PhantomData })
    }

    /// The function `name` of `ptx` on this device, its PTX parameters checked against `S`
    /// on every call (the cache is shared by every declaration of the entry).
    pub(crate) fn resolve<S: Signature>(&self, ptx: &'static str, name: &'static str) -> Result<LaunchTarget> {
        let key = (ptx.as_ptr() as usize, ptx.len());
        let cached = lock(&self.inner.functions)
            .iter()
            .find(|f| f.key == key && f.target.name == name)
            .map(|f| check_sizes::<S>(name, &f.params).map(|()| f.target));
        if let Some(resolved) = cached {
            return resolved;
        }
        let module = self.load_module(ptx)?;
        let ctx = self.ctx();
        // SAFETY: the module stays loaded until the `GpuInner` drops.
        let func = unsafe { driver::module::function(ctx, module, name) }.map_err(|e| {
            if e.is_not_found() {
                Error::KernelNotFound { name }
            } else {
                Error::LoadModule(e)
            }
        })?;
        // The driver found the entry; if the text cannot show its parameters, they cannot
        // be checked, and an unchecked declaration is not launched.
        let params = ptx_param_sizes(ptx, name).map_err(|e| Error::KernelParamsUnreadable {
            name,
            reason: match e {
                PtxParamsError::NoEntry => "no `.entry` of this name in the text, though the driver found one",
                PtxParamsError::Unreadable(reason) => reason,
            },
        })?;
        let attr = |a| {
            // SAFETY: `func` belongs to a loaded module.
            unsafe { driver::module::attribute(ctx, func, a) }
                .map(|v| v.max(0) as u32)
                .map_err(|error| Error::Device { call: "cuFuncGetAttribute", error })
        };
        let target = LaunchTarget {
            name,
            func,
            max_threads_per_block: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        };
        // Cached before the check: the entry is what it is, whichever declaration asked.
        let checked = check_sizes::<S>(name, &params);
        lock(&self.inner.functions).push(ResolvedFn { key, params: params.into(), target });
        checked.map(|()| target)
    }

    fn load_module(&self, ptx: &'static str) -> Result<RawModule> {
        let mut modules = lock(&self.inner.modules);
        // By content: the same `const` text may sit at several addresses (one per codegen
        // unit), and must still be loaded (JIT-compiled) once.
        if let Some(m) = modules.iter().find(|m| m.ptx == ptx) {
            return Ok(m.module);
        }
        if let Some(needed) = ptx_needs_driver(ptx) {
            if self.driver_version() < needed {
                return Err(Error::DriverTooOld { found: self.driver_version(), needed });
            }
        }
        // The driver wants a NUL-terminated image.
        let image = CString::new(ptx).map_err(|_| Error::LoadModule(crate::DriverError::from_code(218)))?;
        // SAFETY: the context is retained while `self` lives; `image` outlives the call.
        let module = unsafe { driver::module::load_data(self.ctx(), &image) }.map_err(|e| {
            if e.is_unsupported_ptx_version() {
                Error::DriverTooOld { found: self.driver_version(), needed: ptx_needs_driver(ptx).unwrap_or(0) }
            } else {
                Error::LoadModule(e)
            }
        })?;
        modules.push(LoadedModule { ptx, module });
        Ok(module)
    }
}

/// Launches `f` with `args` on `stream` after checking `cfg`.
///
/// # Safety
/// - `args` lowers to `f`'s parameters: `f` was resolved for `S` (`Launchable` is sealed,
///   and both its impls resolve with their own `Sig`, checked against the PTX's parameter
///   sizes), `LaunchArgs` is sealed (its impls lower exactly `S`), and the PTX is the
///   kernel declared (the `Kernel::new` / `Kernel::of` contract). Every view among them
///   stays alive and is not accessed
///   conflictingly by other streams until `stream` passes the launch (guaranteed by the
///   brand: the views are bound to `stream` and borrow their memory for the scope).
pub(crate) unsafe fn launch_raw<'id, S: Signature, A: LaunchArgs<'id, S>>(
    gpu: &Gpu,
    stream: driver::RawStream,
    f: &LaunchTarget,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    cfg.validate(gpu.info())?;
    let threads = cfg.block.0 as u64 * cfg.block.1 as u64 * cfg.block.2 as u64;
    if threads > f.max_threads_per_block as u64 {
        return Err(Error::LaunchConfig {
            what: "threads per block (this kernel's limit)",
            requested: threads,
            limit: f.max_threads_per_block as u64,
        });
    }
    let shared = cfg.shared_mem_bytes as u64 + f.static_shared_bytes as u64;
    if shared > gpu.info().max_shared_memory_per_block as u64 {
        return Err(Error::LaunchConfig {
            what: "shared memory per block (static + dynamic)",
            requested: shared,
            limit: gpu.info().max_shared_memory_per_block as u64,
        });
    }
    let mut buf = ParamBuf::new(gpu.ctx().0 as usize);
    args.lower(&mut buf);
    if buf.foreign {
        return Err(Error::WrongDevice { what: f.name });
    }
    let mut ptrs = buf.pointers();
    // SAFETY: lowering: `ptrs[..n]` point to one value per kernel parameter — u64 words in
    // `buf` and scalars in `args`, both alive across this call, which is when the driver
    // reads them. Memory: the caller's duty (see above) keeps every address valid and
    // unshared until the stream passes the launch; the scope joins the stream before
    // any of that memory can be freed.
    unsafe { driver::launch(gpu.ctx(), f.func, stream, cfg.grid, cfg.block, cfg.shared_mem_bytes, &mut ptrs[..buf.n]) }
        .map_err(|error| Error::Launch { kernel: f.name, error })
}

/// Why an entry's parameter sizes could not be read from PTX text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PtxParamsError {
    /// The text declares no `.entry` of this name.
    NoEntry,
    /// The entry is declared, but its parameter list is not understood: why.
    Unreadable(&'static str),
}

/// The sizes in bytes of entry `name`'s parameters in PTX text.
///
/// Malformed text is an error, never a panic or a wrapped size: the text may come from
/// anywhere, and a wrong size here would let a mismatched declaration through.
pub(crate) fn ptx_param_sizes(ptx: &str, name: &str) -> Result<Vec<usize>, PtxParamsError> {
    let text = strip_ptx_comments(ptx);
    let list = entry_param_list(&text, name)?;
    let mut sizes = Vec::new();
    for decl in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let mut toks = decl.split_whitespace();
        if toks.next() != Some(".param") {
            return Err(PtxParamsError::Unreadable("a parameter not declared `.param`"));
        }
        let mut elem: Option<usize> = None;
        let mut count = 1usize;
        for tok in toks {
            let size = match tok {
                ".b8" | ".u8" | ".s8" => Some(1),
                ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => Some(2),
                ".b32" | ".u32" | ".s32" | ".f32" => Some(4),
                ".b64" | ".u64" | ".s64" | ".f64" => Some(8),
                ".b128" => Some(16),
                _ => None,
            };
            if elem.is_none() {
                elem = size;
            }
            if let Some(open) = tok.find('[') {
                let n = tok[open + 1..].strip_suffix(']').and_then(|n| n.parse().ok());
                count = n.ok_or(PtxParamsError::Unreadable("a parameter's array length"))?;
            }
        }
        let elem = elem.ok_or(PtxParamsError::Unreadable("a parameter of no known type"))?;
        let size = elem.checked_mul(count).ok_or(PtxParamsError::Unreadable("a parameter's size overflows"))?;
        sizes.push(size);
    }
    Ok(sizes)
}

/// The text between the parentheses of `.entry name ( ... )`: empty for an entry declared
/// without a parameter list.
fn entry_param_list<'t>(text: &'t str, name: &str) -> Result<&'t str, PtxParamsError> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%');
    let mut rest = text;
    while let Some(at) = rest.find(".entry") {
        let before = text[..text.len() - rest.len() + at].chars().next_back();
        rest = &rest[at + ".entry".len()..];
        if before.is_some_and(|c| is_ident(c) || c == '.') || !rest.starts_with(char::is_whitespace) {
            continue; // part of a longer word, such as `.entry_x`
        }
        let after = rest.trim_start();
        let ident_len = after.find(|c: char| !is_ident(c)).unwrap_or(after.len());
        if &after[..ident_len] != name {
            continue;
        }
        let after = after[ident_len..].trim_start();
        let Some(list) = after.strip_prefix('(') else { return Ok("") };
        let close = list.find(')').ok_or(PtxParamsError::Unreadable("an unclosed parameter list"))?;
        return Ok(&list[..close]);
    }
    Err(PtxParamsError::NoEntry)
}

/// `ptx` without its `//` and `/* */` comments (each replaced by a space), so that a
/// commented-out declaration is not taken for the entry's.
fn strip_ptx_comments(ptx: &str) -> std::borrow::Cow<'_, str> {
    if !ptx.contains("//") && !ptx.contains("/*") {
        return ptx.into();
    }
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(at) = [rest.find("//"), rest.find("/*")].into_iter().flatten().min() {
        let end = if rest[at..].starts_with("//") {
            rest[at..].find('\n').map_or(rest.len(), |e| at + e)
        } else {
            rest[at + 2..].find("*/").map_or(rest.len(), |e| at + 2 + e + 2)
        };
        out.push_str(&rest[..at]);
        out.push(' ');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.into()
}

/// The driver version a PTX module's `.version` needs, if known (`None` for a version
/// this table does not know, or malformed text).
pub(crate) fn ptx_needs_driver(ptx: &str) -> Option<u32> {
    let line = ptx.lines().map(str::trim).find(|l| l.starts_with(".version"))?;
    let v = line.strip_prefix(".version")?.trim();
    let (major, minor) = v.split_once('.')?;
    let (major, minor): (u32, u32) = (major.trim().parse().ok()?, minor.trim().parse().ok()?);
    // Checked: a minor such as 500000000 must not overflow into a small, wrong version.
    let cuda = |base: u32, m: u32| m.checked_mul(10)?.checked_add(base);
    // PTX ISA → CUDA: 7.m → 11.m; 8.0-8.5 → 12.0-12.5; 8.6 → 12.7; 8.7 → 12.8; 8.8 → 12.9; 9.m → 13.m.
    match (major, minor) {
        (7, m) => cuda(11000, m),
        (8, m @ 0..=5) => cuda(12000, m),
        (8, 6) => Some(12070),
        (8, 7) => Some(12080),
        (8, 8) => Some(12090),
        (9, m) => cuda(13000, m),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_info;

    const PTX: &str = r#"
.version 7.8
.target sm_90
.address_size 64
.visible .entry fill_column(
	.param .u64 .ptr .align 1 fill_column_param_0,
	.param .u64 fill_column_param_1,
	.param .f32 fill_column_param_2
)
{ ret; }
.visible .entry with_struct(
	.param .u64 with_struct_param_0,
	.param .align 4 .b8 with_struct_param_1[16]
)
{ ret; }
"#;

    #[test]
    fn ptx_signatures_are_parsed() {
        assert_eq!(ptx_param_sizes(PTX, "fill_column"), Ok(vec![8, 8, 4]));
        assert_eq!(ptx_param_sizes(PTX, "with_struct"), Ok(vec![8, 16]));
        assert_eq!(ptx_param_sizes(PTX, "fill"), Err(PtxParamsError::NoEntry));
        assert_eq!(ptx_needs_driver(PTX), Some(11080));
    }

    #[test]
    fn ptx_entries_are_found_by_whole_name_outside_comments() {
        let ptx = "// .visible .entry k(\n.param .f64 fake\n)\n/* .entry k(.param .f64 fake) */\n\
                   .visible .entry k_long(\n.param .f64 a\n)\n{ ret; }\n\
                   .visible .entry k(\n.param .u32 a\n)\n{ ret; }\n\
                   .visible .entry noargs\n{ ret; }\n.visible .entry empty()\n{ ret; }";
        assert_eq!(ptx_param_sizes(ptx, "k"), Ok(vec![4]));
        assert_eq!(ptx_param_sizes(ptx, "k_long"), Ok(vec![8]));
        assert_eq!(ptx_param_sizes(ptx, "noargs"), Ok(vec![]));
        assert_eq!(ptx_param_sizes(ptx, "empty"), Ok(vec![]));
        assert_eq!(ptx_param_sizes(ptx, "k_"), Err(PtxParamsError::NoEntry));
    }

    #[test]
    fn malformed_ptx_is_an_error_not_a_panic() {
        let unreadable = |ptx: &str| match ptx_param_sizes(ptx, "k") {
            Err(PtxParamsError::Unreadable(why)) => why,
            other => panic!("{ptx:?}: {other:?}"),
        };
        // 8 * 2^61 overflows usize: a panic in debug builds, a wrap to 0 in release.
        assert_eq!(unreadable(".entry k(.param .b64 p[2305843009213693952])"), "a parameter's size overflows");
        assert_eq!(unreadable(".entry k(.param .b8 p[99999999999999999999999])"), "a parameter's array length");
        assert_eq!(unreadable(".entry k(.param .b8 p[2][3])"), "a parameter's array length");
        assert_eq!(unreadable(".entry k(.param .b8 p[x])"), "a parameter's array length");
        assert_eq!(unreadable(".entry k(.param .pred p)"), "a parameter of no known type");
        assert_eq!(unreadable(".entry k(.reg .u64 p)"), "a parameter not declared `.param`");
        assert_eq!(unreadable(".entry k(.param .u64 p"), "an unclosed parameter list");
        // The version table: a huge minor must not wrap into a small, wrong version.
        assert_eq!(ptx_needs_driver(".version 7.500000000"), None);
        assert_eq!(ptx_needs_driver(".version 9.4294967295"), None);
        assert_eq!(ptx_needs_driver(".version 8.5"), Some(12050));
        assert_eq!(ptx_needs_driver(".version 9.0"), Some(13000));
        assert_eq!(ptx_needs_driver(".version x.y"), None);
    }

    #[test]
    fn unreadable_or_missing_entries_are_typed_errors_in_the_check() {
        // SAFETY: checked only, never launched.
        let k = unsafe { Kernel::<(Mut<f32>,)>::new(".entry k(.param .b64 p[2305843009213693952])", "k") };
        assert!(matches!(k.check_signature(), Err(Error::KernelParamsUnreadable { name: "k", .. })));
        // SAFETY: checked only, never launched.
        let k = unsafe { Kernel::<(Mut<f32>,)>::new(PTX, "missing") };
        assert_eq!(k.check_signature(), Err(Error::KernelNotFound { name: "missing" }));
    }

    #[test]
    fn signatures_match_exactly_their_own_sizes() {
        fn agrees<S: Signature>(found: &[usize]) {
            let mut sizes = Vec::new();
            S::sizes(&mut sizes);
            assert_eq!(S::matches(found), sizes == found, "{found:?}");
        }
        for found in [&[][..], &[8], &[8, 8], &[8, 8, 4], &[8, 8, 8], &[8, 8, 4, 4], &[8, 8, 16], &[4, 8, 8]] {
            agrees::<()>(found);
            agrees::<(Mut<f32>,)>(found);
            agrees::<(Mut<f32>, f32)>(found);
            agrees::<(Ref<u8>, f64)>(found);
            agrees::<(Mut<f32>, [f32; 4])>(found);
            agrees::<(f32, Ref<f32>)>(found);
        }
        assert!(<(Mut<f32>, f32)>::matches(&[8, 8, 4]));
        assert!(!<(Mut<f32>, f32)>::matches(&[8, 8, 4, 4]));
        assert!(!<(Mut<f32>, f32)>::matches(&[8, 8]));
    }

    #[test]
    fn a_second_declaration_of_a_cached_entry_is_checked_too() {
        // What a launch of a cached entry runs: the cached sizes against this declaration.
        let found = ptx_param_sizes(PTX, "fill_column").unwrap();
        assert_eq!(check_sizes::<(Mut<f32>, f32)>("fill_column", &found), Ok(()));
        assert_eq!(
            check_sizes::<(Mut<f32>, f64)>("fill_column", &found),
            Err(Error::KernelSignature { name: "fill_column", expected: vec![8, 8, 8], found: vec![8, 8, 4] })
        );
    }

    #[test]
    fn signatures_lower_views_to_two_words() {
        let mut v = Vec::new();
        <(Mut<f32>, Ref<[f32; 4]>, Ref<f32>, f32) as Signature>::sizes(&mut v);
        assert_eq!(v, [8, 8, 8, 8, 8, 8, 4]);
        let mut v = Vec::new();
        <(Mut<f32>, [f32; 4]) as Signature>::sizes(&mut v);
        assert_eq!(v, [8, 8, 16]);
    }

    #[test]
    fn launch_config_validation_names_the_dimension() {
        let info = test_info();
        assert_eq!(LaunchConfig::for_elements(1 << 20, 256).validate(&info), Ok(()));
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (2048, 1, 1), shared_mem_bytes: 0 };
        assert_eq!(cfg.validate(&info), Err(Error::LaunchConfig { what: "block.x", requested: 2048, limit: 1024 }));
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (32, 32, 2), shared_mem_bytes: 0 };
        assert_eq!(
            cfg.validate(&info),
            Err(Error::LaunchConfig { what: "threads per block", requested: 2048, limit: 1024 })
        );
        let cfg = LaunchConfig { grid: (1, 70000, 1), block: (32, 1, 1), shared_mem_bytes: 0 };
        assert!(matches!(cfg.validate(&info), Err(Error::LaunchConfig { what: "grid.y", .. })));
        let cfg = LaunchConfig::for_elements(0, 256);
        assert_eq!(cfg.validate(&info), Err(Error::EmptyLaunch { what: "grid.x" }));
        let cfg = LaunchConfig::for_elements(10, 0);
        assert_eq!(cfg.validate(&info), Err(Error::EmptyLaunch { what: "grid.x" }));
        let cfg = LaunchConfig::for_elements(10, 32).with_shared_mem(1 << 20);
        assert!(matches!(cfg.validate(&info), Err(Error::LaunchConfig { what: "dynamic shared memory per block", .. })));
        let huge = LaunchConfig::for_elements(usize::MAX, 1);
        assert!(matches!(huge.validate(&info), Err(Error::LaunchConfig { what: "grid.x", .. })));
    }

    #[test]
    fn params_point_at_their_values() {
        let x = 2.5f32;
        let mut buf = ParamBuf::new(0);
        buf.push_slice(0xabc, 7);
        buf.push_value(&x);
        let p = buf.pointers();
        // SAFETY: the pointers point into `buf` and at `x`, both alive here.
        unsafe {
            assert_eq!(*(p[0] as *const u64), 0xabc);
            assert_eq!(*(p[1] as *const u64), 7);
            assert_eq!(*(p[2] as *const f32), 2.5);
        }
        assert_eq!(buf.n, 3);
    }

    #[test]
    fn kernels_are_plain_send_sync_copy_values() {
        fn assert<T: Send + Sync + Copy>() {}
        assert::<Kernel<(Mut<f32>, Ref<f32>, f32)>>();
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Function<(Mut<f32>,)>>();
    }
}
