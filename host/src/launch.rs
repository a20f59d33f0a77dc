//! Typed kernels and launches: [`Kernel`] descriptors, [`LaunchConfig`], and the traits
//! that make a launch with wrong arguments a compile error.
//!
//! A kernel's parameters are described by a tuple type of [`Mut<T>`] (a slice the kernel
//! writes), [`Ref<T>`] (a slice it reads) and plain [`Pod`] values (scalars and structs).
//! Launching checks at compile time that each argument fits its parameter — a
//! [`ColumnViewMut`] for `Mut`, a [`ColumnView`] or `&ColumnViewMut` for `Ref`, the value
//! itself for a scalar — and that every view is bound to the launching lane (its brand).
//!
//! # ABI
//!
//! Each slice parameter becomes two kernel parameters, the device address (`u64`) and the
//! element count (`u64`); a scalar or `Pod` struct is passed by value. A view of several
//! columns lowers to its first element's address and the count from its first to its last
//! element, padding between columns included (the view owns that padding); pass the
//! leading dimension as a scalar when a kernel needs the columns.

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

/// Parameter marker: a slice the kernel may write (`&mut [T]` on the device side).
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

mod sealed {
    pub trait Sealed {}
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
}

impl<T: Pod> sealed::Sealed for Mut<T> {}
impl<T: Pod> Param for Mut<T> {
    fn sizes(out: &mut Vec<usize>) {
        out.extend([8, 8]);
    }
}
impl<T: Pod> sealed::Sealed for Ref<T> {}
impl<T: Pod> Param for Ref<T> {
    fn sizes(out: &mut Vec<usize>) {
        out.extend([8, 8]);
    }
}
impl<T: Pod> sealed::Sealed for T {}
impl<T: Pod> Param for T {
    fn sizes(out: &mut Vec<usize>) {
        out.push(std::mem::size_of::<T>());
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
pub trait Signature: SignatureSealed {
    /// Appends the sizes in bytes of all lowered kernel parameters.
    #[doc(hidden)]
    fn sizes(out: &mut Vec<usize>);
}

#[doc(hidden)]
pub trait SignatureSealed {}

/// The kernel parameters lowered for `cuLaunchKernel`: a value per parameter, held here
/// or pointed to in the caller's argument tuple.
#[doc(hidden)]
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

    #[doc(hidden)]
    pub fn push_value<T: Pod>(&mut self, v: &T) {
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
pub trait Arg<'id, P: Param> {
    /// Appends this argument's lowered parameters.
    #[doc(hidden)]
    fn lower(&self, buf: &mut ParamBuf);
}

impl<'id, T: Pod> Arg<'id, Mut<T>> for &mut ColumnViewMut<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, Ref<T>> for &ColumnViewMut<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, Ref<T>> for &ColumnView<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, Ref<T>> for ColumnView<'_, 'id, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'id, T: Pod> Arg<'id, T> for T {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_value(self);
    }
}

/// A tuple of arguments that fits the parameter tuple `S` on the lane branded `'id`.
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
pub trait LaunchArgs<'id, S: Signature> {
    /// Appends every argument's lowered parameters.
    #[doc(hidden)]
    fn lower(&self, buf: &mut ParamBuf);
}

macro_rules! tuple_impls {
    ($( ($($P:ident $A:ident $i:tt),*) )*) => {$(
        impl<$($P: Param),*> SignatureSealed for ($($P,)*) {}
        impl<$($P: Param),*> Signature for ($($P,)*) {
            #[allow(unused_variables)]
            fn sizes(out: &mut Vec<usize>) {
                $($P::sizes(out);)*
            }
        }
        impl<'id, $($P: Param,)* $($A: Arg<'id, $P>),*> LaunchArgs<'id, ($($P,)*)> for ($($A,)*) {
            #[allow(unused_variables)]
            fn lower(&self, buf: &mut ParamBuf) {
                $(self.$i.lower(buf);)*
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
/// value (what a `#[kernel]` macro emits); the module is loaded on first use per device.
///
/// The std analogue is a function pointer type: `Kernel<(Mut<f32>, f32)>` is
/// `fn(&mut [f32], f32)` on the device.
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
/// // What `#[kernel] pub fn saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32)` expands to:
/// #[allow(non_camel_case_types)]
/// pub struct saxpy;
/// // SAFETY: (emitted by the macro) the entry's parameters are what the signature lowers to,
/// // and only the `Mut` slice is written.
/// unsafe impl KernelDecl for saxpy {
///     const NAME: &'static str = "saxpy";
///     type Signature = (Mut<f32>, Ref<f32>, f32);
/// }
/// const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = Kernel::of::<saxpy>("PTX text");
/// assert_eq!(SAXPY.name(), "saxpy");
/// ```
///
/// # Safety
/// The same duties as [`Kernel::new`]: the entry `NAME` takes, in order, the parameters
/// `Signature` lowers to; it writes only through its [`Mut`] parameters and only below the
/// lengths passed with them. `#[kernel]` upholds them by construction: it derives the
/// signature from the function it compiles, and a `&[T]` parameter cannot be written in
/// safe kernel code.
pub unsafe trait KernelDecl {
    /// The PTX entry name.
    const NAME: &'static str;
    /// The parameter list, as the host passes it.
    type Signature: Signature;
}

impl<S: Signature> Kernel<S> {
    /// The typed handle of a `#[kernel]`-declared entry in the PTX module `ptx`. Safe: the
    /// declaration's `unsafe impl` carries the duties [`Kernel::new`] asks of its caller.
    ///
    /// See [`KernelDecl`] for an example.
    pub const fn of<D: KernelDecl<Signature = S>>(ptx: &'static str) -> Kernel<S> {
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
    pub fn check_signature(&self) -> Result<()> {
        let found = ptx_param_sizes(self.ptx, self.name).ok_or(Error::KernelNotFound { name: self.name })?;
        let mut expected = Vec::new();
        S::sizes(&mut expected);
        if expected != found {
            return Err(Error::KernelSignature { name: self.name, expected, found });
        }
        Ok(())
    }
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
    gpu: Gpu,
    resolved: ResolvedFn,
    _sig: PhantomData<fn() -> S>,
}

impl<S> Clone for Function<S> {
    fn clone(&self) -> Self {
        Function { gpu: self.gpu.clone(), resolved: self.resolved, _sig: PhantomData }
    }
}

impl<S> std::fmt::Debug for Function<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("name", &self.resolved.name).finish_non_exhaustive()
    }
}

/// Something a lane can launch: a [`Kernel`] descriptor or a resolved [`Function`].
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
pub trait Launchable {
    /// The kernel's parameter list.
    type Sig: Signature;
    #[doc(hidden)]
    fn resolve(&self, gpu: &Gpu) -> Result<ResolvedFn>;
}

impl<S: Signature> Launchable for Kernel<S> {
    type Sig = S;
    fn resolve(&self, gpu: &Gpu) -> Result<ResolvedFn> {
        gpu.resolve::<S>(self.ptx, self.name)
    }
}

impl<S: Signature> Launchable for Function<S> {
    type Sig = S;
    fn resolve(&self, gpu: &Gpu) -> Result<ResolvedFn> {
        if self.gpu.ctx() != gpu.ctx() {
            return Err(Error::WrongDevice { what: self.resolved.name });
        }
        Ok(self.resolved)
    }
}

/// A loaded module and its `'static` PTX text.
pub(crate) struct LoadedModule {
    ptx: &'static str,
    pub(crate) module: RawModule,
}

/// A function looked up in a loaded module, with the limits a launch is checked against.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ResolvedFn {
    key: (usize, usize),
    pub(crate) name: &'static str,
    pub(crate) func: RawFunction,
    pub(crate) max_threads_per_block: u32,
    pub(crate) static_shared_bytes: u32,
}

impl Gpu {
    /// Loads `kernel`'s module (once per device) and looks the entry up, checking its
    /// parameters against the declaration.
    ///
    /// # Errors
    /// [`Error::LoadModule`], [`Error::DriverTooOld`] (the PTX needs a newer driver),
    /// [`Error::KernelNotFound`], [`Error::KernelSignature`].
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
        let resolved = self.resolve::<S>(kernel.ptx, kernel.name)?;
        Ok(Function { gpu: self.clone(), resolved, _sig: PhantomData })
    }

    pub(crate) fn resolve<S: Signature>(&self, ptx: &'static str, name: &'static str) -> Result<ResolvedFn> {
        let key = (ptx.as_ptr() as usize, ptx.len());
        if let Some(f) = lock(&self.inner.functions).iter().find(|f| f.key == key && f.name == name) {
            return Ok(*f);
        }
        let module = self.load_module(ptx)?;
        let ctx = self.ctx();
        // SAFETY: the module stays loaded until the `GpuInner` drops.
        let func = unsafe { driver::module::function(ctx, module, name) }.map_err(|e| {
            if e.raw() == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND {
                Error::KernelNotFound { name }
            } else {
                Error::LoadModule(e)
            }
        })?;
        if let Some(found) = ptx_param_sizes(ptx, name) {
            let mut expected = Vec::new();
            S::sizes(&mut expected);
            if expected != found {
                return Err(Error::KernelSignature { name, expected, found });
            }
        }
        let attr = |a| {
            // SAFETY: `func` belongs to a loaded module.
            unsafe { driver::module::attribute(ctx, func, a) }
                .map(|v| v.max(0) as u32)
                .map_err(|error| Error::Device { call: "cuFuncGetAttribute", error })
        };
        let resolved = ResolvedFn {
            key,
            name,
            func,
            max_threads_per_block: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        };
        lock(&self.inner.functions).push(resolved);
        Ok(resolved)
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
            if e.raw() == cudarc::driver::sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
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
/// - `args` lowers to `f`'s parameters (guaranteed by `Launchable::Sig` and the
///   `Kernel::new` contract), and every view among them stays alive and is not accessed
///   conflictingly by other streams until `stream` passes the launch (guaranteed by the
///   brand: the views are bound to `stream` and borrow their memory for the scope).
pub(crate) unsafe fn launch_raw<'id, S: Signature, A: LaunchArgs<'id, S>>(
    gpu: &Gpu,
    stream: driver::RawStream,
    f: &ResolvedFn,
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

/// The sizes of entry `name`'s parameters in PTX text, or `None` if it cannot be parsed.
pub(crate) fn ptx_param_sizes(ptx: &str, name: &str) -> Option<Vec<usize>> {
    let mut rest = ptx;
    let body = loop {
        let at = rest.find(".entry")?;
        rest = &rest[at + ".entry".len()..];
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix(name) {
            if let Some(params) = after.trim_start().strip_prefix('(') {
                break &params[..params.find(')')?];
            }
        }
    };
    let mut sizes = Vec::new();
    for decl in body.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let mut elem = None;
        let mut count = 1usize;
        for tok in decl.split_whitespace() {
            let size = match tok {
                ".b8" | ".u8" | ".s8" => Some(1),
                ".b16" | ".u16" | ".s16" | ".f16" => Some(2),
                ".b32" | ".u32" | ".s32" | ".f32" => Some(4),
                ".b64" | ".u64" | ".s64" | ".f64" => Some(8),
                _ => None,
            };
            if size.is_some() && elem.is_none() {
                elem = size;
            }
            if let (Some(open), true) = (tok.find('['), tok.ends_with(']')) {
                count = tok[open + 1..tok.len() - 1].parse().ok()?;
            }
        }
        sizes.push(elem? * count);
    }
    Some(sizes)
}

/// The driver version a PTX module's `.version` needs, if known.
pub(crate) fn ptx_needs_driver(ptx: &str) -> Option<u32> {
    let line = ptx.lines().map(str::trim).find(|l| l.starts_with(".version"))?;
    let v = line.strip_prefix(".version")?.trim();
    let (major, minor) = v.split_once('.')?;
    let (major, minor): (u32, u32) = (major.trim().parse().ok()?, minor.trim().parse().ok()?);
    // PTX ISA → CUDA: 7.m → 11.m; 8.0-8.5 → 12.0-12.5; 8.6 → 12.7; 8.7 → 12.8; 8.8 → 12.9; 9.m → 13.m.
    let cuda = match (major, minor) {
        (7, m) => 11000 + m * 10,
        (8, m @ 0..=5) => 12000 + m * 10,
        (8, 6) => 12070,
        (8, 7) => 12080,
        (8, 8) => 12090,
        (9, m) => 13000 + m * 10,
        _ => return None,
    };
    Some(cuda)
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
        assert_eq!(ptx_param_sizes(PTX, "fill_column"), Some(vec![8, 8, 4]));
        assert_eq!(ptx_param_sizes(PTX, "with_struct"), Some(vec![8, 16]));
        assert_eq!(ptx_param_sizes(PTX, "fill"), None);
        assert_eq!(ptx_needs_driver(PTX), Some(11080));
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
