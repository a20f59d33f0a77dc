//! Launches: [`LaunchConfig`] (checked against the device's and the kernel's limits), the
//! traits that make a launch with wrong arguments a compile error ([`Arg`], [`LaunchArgs`]),
//! the argument slots handed to the driver, and [`Stream::launch`].
//!
//! Launching checks at compile time that each argument fits its parameter — a `&mut`
//! [`ColumnViewMut`] for [`Mut`], a [`ColumnView`] or `&ColumnViewMut` for [`Ref`], the
//! value itself for a scalar — and that every view is bound to the launching lane (its
//! brand `'lane`): rules 1 and 3 at the launch. The ABI the arguments lower to is described
//! in [`kernel`](crate::kernel).

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use bytemuck::Pod;

use crate::capture::{Capture, KernelNode, KernelNodeRecord};
use crate::device::DeviceInfo;
use crate::error::{Error, Result, KERNEL_THREADS, KERNEL_THREADS_BY_REGISTERS};
use crate::kernel::{
    for_each_tuple, ByValue, CheckedLaunch, Launchable, Mut, Param, Ptr, PtrMut, Ref, Signature, Tma, TENSOR_MAP_BYTES,
};
use crate::lane::Stream;
use crate::module::LaunchTarget;
use crate::span::Span;
use crate::submit::Work;
use crate::view::{ColumnView, ColumnViewMut, RowMajor};

/// Grid and block shape and dynamic shared memory of a launch: CUDA's `<<<grid, block, shmem>>>`.
///
/// Checked against the device's and the kernel's limits before the driver is called;
/// a violation is an [`Error::LaunchConfig`] naming the dimension, never a driver error.
///
/// | CUDA C++ | sluice |
/// | --- | --- |
/// | `k<<<(n + 255) / 256, 256>>>` | [`LaunchConfig::for_elements`]`(n, 256)` |
/// | `dim3 b(32, 8); dim3 g((w + 31) / 32, (h + 7) / 8); k<<<g, b>>>` | [`LaunchConfig::for_elements_2d`]`((w, h), (32, 8))` |
/// | the same with `dim3(…, …, …)` | [`LaunchConfig::for_elements_3d`]`((w, h, d), (8, 8, 4))` |
/// | `k<<<dim3(gx, gy), dim3(bx, by)>>>` | [`LaunchConfig::new`]`((gx, gy, 1), (bx, by, 1))` |
/// | `k<<<g, b, bytes>>>` | `.with_shared_mem(bytes)` |
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::LaunchConfig;
/// let cfg = LaunchConfig::for_elements(1000, 256);
/// assert_eq!(cfg.grid, (4, 1, 1));
/// assert_eq!(cfg.block, (256, 1, 1));
/// let cfg = cfg.with_shared_mem(4096);
/// assert_eq!(cfg.shared_mem_bytes, 4096);
/// // A 1000 x 500 image in 32 x 8 tiles: 32 x 63 blocks.
/// let cfg = LaunchConfig::for_elements_2d((1000, 500), (32, 8));
/// assert_eq!((cfg.grid, cfg.block), ((32, 63, 1), (32, 8, 1)));
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
    /// # use sluice_host as sluice;
    /// let cfg = sluice::LaunchConfig::for_elements(1 << 20, 256);
    /// assert_eq!(cfg.grid.0, 4096);
    /// ```
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig {
        LaunchConfig { grid: (blocks_for(n, block), 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 }
    }

    /// Exactly these grid and block shapes (blocks along x, y, z; threads per block along
    /// x, y, z), no dynamic shared memory: CUDA's `<<<dim3(gx, gy, gz), dim3(bx, by, bz)>>>`.
    /// The same as writing the struct; [`validate`](Self::validate) (which every launch
    /// runs) rejects a zero or an excess.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let cfg = sluice::LaunchConfig::new((16, 16, 1), (32, 32, 1));
    /// assert_eq!(cfg.grid, (16, 16, 1));
    /// assert_eq!(cfg.block, (32, 32, 1));
    /// assert_eq!(cfg.shared_mem_bytes, 0);
    /// ```
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig { grid, block, shared_mem_bytes: 0 }
    }

    /// One thread per element of a `width x height` array, blocks of `block = (bx, by)`
    /// threads: `ceil(width / bx) x ceil(height / by)` blocks, so that the device's
    /// `thread::index_2d()` covers every element (threads past the edge check the bounds,
    /// as in CUDA). An empty side gives an empty grid, which a
    /// launch rejects.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// // A 1024 x 1024 gemm output in 32 x 32 tiles (CUDA: dim3 g(32, 32), b(32, 32)).
    /// let cfg = sluice::LaunchConfig::for_elements_2d((1024, 1024), (32, 32));
    /// assert_eq!(cfg.grid, (32, 32, 1));
    /// assert_eq!(cfg.block, (32, 32, 1));
    /// ```
    pub fn for_elements_2d((width, height): (usize, usize), (bx, by): (u32, u32)) -> LaunchConfig {
        Self::for_elements_3d((width, height, 1), (bx, by, 1))
    }

    /// One thread per element of a `width x height x depth` array, blocks of
    /// `block = (bx, by, bz)` threads: `ceil(width / bx) x ceil(height / by) x
    /// ceil(depth / bz)` blocks.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let cfg = sluice::LaunchConfig::for_elements_3d((100, 100, 10), (8, 8, 4));
    /// assert_eq!(cfg.grid, (13, 13, 3));
    /// assert_eq!(cfg.block, (8, 8, 4));
    /// ```
    pub fn for_elements_3d(
        (width, height, depth): (usize, usize, usize),
        (bx, by, bz): (u32, u32, u32),
    ) -> LaunchConfig {
        LaunchConfig {
            grid: (blocks_for(width, bx), blocks_for(height, by), blocks_for(depth, bz)),
            block: (bx, by, bz),
            shared_mem_bytes: 0,
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// let cfg = sluice::LaunchConfig::for_elements(64, 64).with_shared_mem(256);
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
    /// # use sluice_host as sluice;
    /// use sluice::{Error, Gpu, LaunchConfig};
    /// let gpu = Gpu::new(0)?;
    /// let too_big = LaunchConfig { grid: (1, 1, 1), block: (2048, 1, 1), shared_mem_bytes: 0 };
    /// assert!(matches!(too_big.validate(gpu.info()), Err(Error::LaunchConfig { what: "block.x", .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn validate(&self, info: &DeviceInfo) -> Result<()> {
        let (g, b) = (self.grid, self.block);
        for (what, v) in
            [("grid.x", g.0), ("grid.y", g.1), ("grid.z", g.2), ("block.x", b.0), ("block.y", b.1), ("block.z", b.2)]
        {
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
                return Err(Error::LaunchConfig { kernel: None, what, requested: v as u64, limit: limit as u64 });
            }
        }
        let threads = b.0 as u64 * b.1 as u64 * b.2 as u64;
        if threads > info.max_threads_per_block as u64 {
            return Err(Error::LaunchConfig {
                kernel: None,
                what: "threads per block",
                requested: threads,
                limit: info.max_threads_per_block as u64,
            });
        }
        let shared_limit = info.max_shared_memory_per_block_optin.max(info.max_shared_memory_per_block);
        if self.shared_mem_bytes > shared_limit {
            return Err(Error::LaunchConfig {
                kernel: None,
                what: "dynamic shared memory per block",
                requested: self.shared_mem_bytes as u64,
                limit: shared_limit as u64,
            });
        }
        Ok(())
    }
}

/// `ceil(n / block)` blocks along one dimension (0 for an empty side or an empty block;
/// `u32::MAX`, which `validate` rejects against the device's limit, past `u32`).
fn blocks_for(n: usize, block: u32) -> u32 {
    let blocks = if block == 0 { 0 } else { n.div_ceil(block as usize) };
    u32::try_from(blocks).unwrap_or(u32::MAX)
}

/// The private halves of the argument traits. Outside this crate they cannot be named, so
/// [`Arg`] and [`LaunchArgs`] cannot be implemented there: every value a launch hands the
/// driver is lowered by an impl in this file.
mod sealed {
    use super::ParamBuf;

    /// How an argument lowers for parameter `P` on the lane branded `'lane`: seals
    /// [`Arg`](super::Arg). Without the seal, an impl elsewhere could push a pointer to a
    /// local (read by the driver after it is gone), too few parameters, or a view bound to
    /// another lane under this lane's brand.
    pub trait LowerArg<'lane, P> {
        /// Appends this argument's lowered parameters.
        fn lower(&self, buf: &mut ParamBuf);
    }

    /// How an argument tuple lowers for signature `S`: seals [`LaunchArgs`](super::LaunchArgs).
    pub trait LowerArgs<'lane, S> {
        /// Appends every argument's lowered parameters.
        fn lower(&self, buf: &mut ParamBuf);
    }
}

/// The kernel parameters lowered for `cuLaunchKernel`: a value per parameter, held here
/// or pointed to in the caller's argument tuple.
///
/// Nameable only in this crate: `pub` because the sealed traits' methods take it, but the
/// module is private and nothing re-exports it. Built only by [`launch_raw`], around one
/// launch call: what it points to in the argument tuple outlives it.
///
/// Only the `n` slots pushed are written (a launch writes a few of the 32, and nothing
/// zero-fills the rest): `ptrs[..n]` and `sizes[..n]` are initialized; `words[i]` is
/// initialized where bit `i` of `in_words` is set, and then `ptrs[i]` is a placeholder that
/// [`pointers`](ParamBuf::pointers) points at `words[i]` (where the buffer is then).
pub struct ParamBuf {
    /// The u64 values held here (view addresses and lengths).
    words: [MaybeUninit<u64>; MAX_PARAMS],
    /// Each slot's value: a scalar in the argument tuple, which outlives the launch call,
    /// or (for a word) a placeholder until `pointers`.
    ptrs: [MaybeUninit<*mut c_void>; MAX_PARAMS],
    /// Each slot's value size in bytes (what the CPU backend copies).
    sizes: [MaybeUninit<usize>; MAX_PARAMS],
    /// Bit `i`: slot `i` holds a word (in `words[i]`).
    in_words: u32,
    n: usize,
    /// Tensor maps held here (`maps[..n_maps]`), each the value of slot `map_slots[j]`.
    maps: [MaybeUninit<TensorMapValue>; MAX_MAPS],
    map_slots: [u8; MAX_MAPS],
    n_maps: usize,
    /// The launching lane's context; a view of another context's memory sets `foreign`.
    ctx: usize,
    foreign: bool,
    /// The CPU backend: tensor maps are then sluice's own description of the matrix.
    cpu: bool,
    /// The first argument that could not be lowered (a tensor map the driver refused).
    failed: Option<Error>,
}

/// A tensor map as a parameter value: 128 bytes, 64-byte aligned, as `CUtensorMap`.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct TensorMapValue([u64; TENSOR_MAP_BYTES / 8]);

/// Most tensor-map parameters one launch takes.
const MAX_MAPS: usize = 4;

/// Most lowered parameters one launch takes (12 views lower to 24); `ParamBuf::in_words`
/// has a bit for each.
const MAX_PARAMS: usize = 32;

impl ParamBuf {
    fn new(ctx: usize, cpu: bool) -> ParamBuf {
        ParamBuf {
            words: [const { MaybeUninit::uninit() }; MAX_PARAMS],
            ptrs: [const { MaybeUninit::uninit() }; MAX_PARAMS],
            sizes: [const { MaybeUninit::uninit() }; MAX_PARAMS],
            in_words: 0,
            n: 0,
            maps: [const { MaybeUninit::uninit() }; MAX_MAPS],
            map_slots: [0; MAX_MAPS],
            n_maps: 0,
            ctx,
            foreign: false,
            cpu,
            failed: None,
        }
    }

    /// Appends the tensor map of `m` for boxes of `box_rows x box_cols` elements in the
    /// 128-byte swizzle: `cuTensorMapEncodeTiled`'s, or on the CPU backend sluice's own
    /// description (address, rows, columns, element size: what `sluice_device::tma` reads
    /// there). A map the driver refuses is kept as the launch's error ([`ParamBuf::failed`]).
    fn push_tensor_map<T>(&mut self, m: &RowMajor<'_, '_, T>, box_rows: usize, box_cols: usize) {
        self.foreign |= m.span().ctx != self.ctx;
        let (ptr, rows, cols, elem) = m.layout();
        let encoded = if self.cpu {
            let mut v = [0u64; TENSOR_MAP_BYTES / 8];
            v[..4].copy_from_slice(&[ptr, rows as u64, cols as u64, elem as u64]);
            Ok(v)
        } else {
            crate::driver::tensor_map::encode_tiled_2d(
                ptr,
                elem,
                rows as u64,
                cols as u64,
                cols as u64 * elem as u64,
                u32::try_from(box_rows).unwrap_or(u32::MAX),
                u32::try_from(box_cols).unwrap_or(u32::MAX),
                128,
            )
        };
        let value = match encoded {
            Ok(v) => v,
            Err(error) => {
                self.failed.get_or_insert(Error::TensorMap {
                    reason: format!(
                        "the driver refused the tensor map of a {rows} x {cols} matrix of {elem}-byte elements in \
                         boxes of {box_rows} x {box_cols}: {error}"
                    ),
                });
                [0; TENSOR_MAP_BYTES / 8]
            }
        };
        if self.n_maps < MAX_MAPS && self.n < MAX_PARAMS {
            self.maps[self.n_maps].write(TensorMapValue(value));
            self.map_slots[self.n_maps] = self.n as u8;
            self.n_maps += 1;
        } else {
            self.failed
                .get_or_insert(Error::TensorMap { reason: format!("a launch takes at most {MAX_MAPS} TMA matrices") });
        }
        self.push(std::ptr::null_mut(), TENSOR_MAP_BYTES);
    }

    /// Appends a slot whose value is at `p` (null for a word, pointed to by `pointers`).
    fn push(&mut self, p: *mut c_void, size: usize) {
        // The tuple impls stop at 12 arguments of at most 2 parameters each, so this
        // never overflows; a debug assertion documents it and the check keeps it safe.
        debug_assert!(self.n < MAX_PARAMS);
        if self.n < MAX_PARAMS {
            self.ptrs[self.n].write(p);
            self.sizes[self.n].write(size);
            self.n += 1;
        }
    }

    /// Appends a u64 held here.
    fn push_word(&mut self, w: u64) {
        if self.n < MAX_PARAMS {
            self.words[self.n].write(w);
            self.in_words |= 1 << self.n;
        }
        self.push(std::ptr::null_mut(), 8);
    }

    fn push_slice(&mut self, addr: u64, len: u64) {
        self.push_word(addr);
        self.push_word(len);
    }

    fn push_span(&mut self, s: &Span) {
        // A view is part of an allocation (never empty), so its pointer is never null, even
        // for an empty view: `#[kernel]` makes `&[T]` parameters without testing `len == 0`
        // (`sluice_device::slice::launch_slice`).
        debug_assert_ne!(s.ptr, 0, "a view's pointer is null");
        self.foreign |= s.ctx != self.ctx;
        self.push_slice(s.ptr, s.flat_len() as u64);
    }

    /// A view's address alone (a pointer parameter of an unchecked kernel).
    fn push_address(&mut self, s: &Span) {
        self.foreign |= s.ctx != self.ctx;
        self.push_word(s.ptr);
    }

    /// Points the next parameter at `v`, which must outlive the launch call: only the
    /// `Pod` impl of `LowerArg` calls this, with a field of the argument tuple
    /// `launch_raw` borrows across the call.
    fn push_value<T: Pod>(&mut self, v: &T) {
        self.push_value_any(v);
    }

    /// As `push_value`, for any `Copy` value (a [`ByValue`] parameter of an unchecked kernel).
    fn push_value_any<T: Copy>(&mut self, v: &T) {
        self.push((v as *const T).cast_mut().cast(), std::mem::size_of::<T>());
    }

    /// The pointer array `cuLaunchKernel` wants (one per parameter pushed) and each value's
    /// size; the pointers are valid while `self` and the argument tuple are neither moved
    /// nor dropped.
    fn pointers(&mut self) -> (&mut [*mut c_void], &[usize]) {
        let mut words = self.in_words;
        while words != 0 {
            let i = words.trailing_zeros() as usize;
            self.ptrs[i].write(self.words[i].as_mut_ptr().cast());
            words &= words - 1;
        }
        for j in 0..self.n_maps {
            self.ptrs[self.map_slots[j] as usize].write(self.maps[j].as_mut_ptr().cast());
        }
        // SAFETY: `push` initialized `ptrs[..n]` and `sizes[..n]` (n <= MAX_PARAMS), and
        // `MaybeUninit<T>` has `T`'s layout, so the first `n` elements are `n` valid values.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.ptrs.as_mut_ptr().cast::<*mut c_void>(), self.n),
                std::slice::from_raw_parts(self.sizes.as_ptr().cast::<usize>(), self.n),
            )
        }
    }
}

/// An argument that fits kernel parameter `P` on the lane branded `'lane`.
///
/// Implemented for: `&mut ColumnViewMut<'_, 'lane, T>` → [`Mut<T>`]; `&ColumnView`,
/// `ColumnView` and `&ColumnViewMut` (all `'lane`) → [`Ref<T>`]; a `Pod` value → itself.
/// Sealed: these are all the arguments there are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter `{P}`",
    label = "wrong argument for a `{P}` parameter",
    note = "a `Mut<T>` parameter takes `&mut ColumnViewMut<T>`; a `Ref<T>` parameter takes `&ColumnView<T>` or `&ColumnViewMut<T>`; a scalar parameter takes a value of exactly its type",
    note = "read-only data (`ColumnView`, e.g. an awaited upload) can never be passed where the kernel writes",
    note = "an upload or a hand-off (`Fenced`) is awaited on the lane first: `let x = st.await_fence(&x)?;`, then pass `&x`"
)]
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// # use sluice::{Kernel, LaunchConfig, Mut, Ref};
/// # const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("", "saxpy") };
/// // SAXPY: y = a·x + y, a `#[kernel]` of yours, or `sluice::kernels::saxpy` (feature "kernels")
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// use sluice::{Arg, ColumnViewMut, Mut};
/// struct OtherLane<'s, 'other>(ColumnViewMut<'s, 'other, f32>);
/// // error[E0277]: the trait bound `...: LowerArg<'lane, Mut<f32>>` is not satisfied (sealed)
/// impl<'lane, 's, 'other> Arg<'lane, Mut<f32>> for &mut OtherLane<'s, 'other> {}
/// ```
///
/// Hand a view to another lane through a fence instead (`Fenced`, `Stream::await_fence`).
pub trait Arg<'lane, P: Param>: sealed::LowerArg<'lane, P> {}

impl<'lane, T: Pod> Arg<'lane, Mut<T>> for &mut ColumnViewMut<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Mut<T>> for &mut ColumnViewMut<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'lane, T: Pod> Arg<'lane, Ref<T>> for &ColumnViewMut<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Ref<T>> for &ColumnViewMut<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'lane, T: Pod> Arg<'lane, Ref<T>> for &ColumnView<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Ref<T>> for &ColumnView<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'lane, T: Pod> Arg<'lane, Ref<T>> for ColumnView<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Ref<T>> for ColumnView<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_span(&self.span());
    }
}
impl<'lane, T: Pod, const R: usize, const C: usize> Arg<'lane, Tma<T, R, C>> for RowMajor<'_, 'lane, T> {}
impl<'lane, T: Pod, const R: usize, const C: usize> sealed::LowerArg<'lane, Tma<T, R, C>> for RowMajor<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_tensor_map(self, R, C);
    }
}
impl<'lane, T: Pod, const R: usize, const C: usize> Arg<'lane, Tma<T, R, C>> for &RowMajor<'_, 'lane, T> {}
impl<'lane, T: Pod, const R: usize, const C: usize> sealed::LowerArg<'lane, Tma<T, R, C>> for &RowMajor<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_tensor_map(self, R, C);
    }
}
impl<'lane, T: Pod> Arg<'lane, PtrMut<T>> for &mut ColumnViewMut<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, PtrMut<T>> for &mut ColumnViewMut<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_address(&self.span());
    }
}
impl<'lane, T: Pod> Arg<'lane, Ptr<T>> for &ColumnViewMut<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Ptr<T>> for &ColumnViewMut<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_address(&self.span());
    }
}
impl<'lane, T: Pod> Arg<'lane, Ptr<T>> for &ColumnView<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Ptr<T>> for &ColumnView<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_address(&self.span());
    }
}
impl<'lane, T: Pod> Arg<'lane, Ptr<T>> for ColumnView<'_, 'lane, T> {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, Ptr<T>> for ColumnView<'_, 'lane, T> {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_address(&self.span());
    }
}
impl<'lane, T: Copy + 'static> Arg<'lane, ByValue<T>> for T {}
impl<'lane, T: Copy + 'static> sealed::LowerArg<'lane, ByValue<T>> for T {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_value_any(self);
    }
}
impl<'lane, T: Pod> Arg<'lane, T> for T {}
impl<'lane, T: Pod> sealed::LowerArg<'lane, T> for T {
    fn lower(&self, buf: &mut ParamBuf) {
        buf.push_value(self);
    }
}

/// A tuple of arguments that fits the parameter tuple `S` on the lane branded `'lane`.
/// Sealed: implemented for tuples of [`Arg`]s only.
#[diagnostic::on_unimplemented(
    message = "these arguments do not fit a kernel with parameters `{S}`",
    label = "expected one argument per parameter of `{S}`, each of the matching kind",
    note = "pass a tuple with one argument per parameter, in order: `&mut view` for `Mut<T>`, `&view` for `Ref<T>`, the value for a scalar"
)]
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_buffer::<f32>(64)?;
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.launch(&FILL, LaunchConfig::for_elements(64, 64), (&mut v, 0.5)) // one tuple, in order
///     })
/// })
/// # }
/// ```
pub trait LaunchArgs<'lane, S: Signature>: sealed::LowerArgs<'lane, S> {}

macro_rules! launch_args_impls {
    ($( ($($P:ident $A:ident $i:tt),*) )*) => {$(
        impl<'lane, $($P: Param,)* $($A: Arg<'lane, $P>),*> LaunchArgs<'lane, ($($P,)*)> for ($($A,)*) {}
        impl<'lane, $($P: Param,)* $($A: Arg<'lane, $P>),*> sealed::LowerArgs<'lane, ($($P,)*)> for ($($A,)*) {
            #[allow(unused_variables)]
            fn lower(&self, buf: &mut ParamBuf) {
                $(sealed::LowerArg::<'lane, $P>::lower(&self.$i, buf);)*
            }
        }
    )*};
}
for_each_tuple!(launch_args_impls);

impl<'scope, 'lane> Stream<'scope, 'lane> {
    /// Launches `kernel` on this lane with `args`, one per parameter: `&mut view` for a
    /// [`Mut<T>`](crate::Mut), `&view`/`view` for a [`Ref<T>`](crate::Ref), the value for a
    /// scalar. Every view must be bound to this lane (compile-time).
    ///
    /// # Errors
    /// [`Error::LaunchConfig`]/[`Error::EmptyLaunch`] when `cfg` exceeds the device's limits,
    /// [`Error::KernelLimit`] (naming the kernel) when it exceeds the kernel's own,
    /// [`Error::LaunchNot1d`] when the kernel is `#[kernel(dims = 1)]` and
    /// `cfg` is not 1-D, [`Error::LaunchBlockShape`] when it is `#[kernel(block = ..)]` and
    /// `cfg.block` is another shape, [`Error::LaunchBlockFixed`] when the kernel sets register budgets
    /// for another block size (all checked before calling the driver; nothing is launched
    /// then); module and lookup errors on
    /// first use of the kernel on this device; [`Error::Launch`] (in a deferred scope, where
    /// the launch is submitted: the host wait that needs it, or the scope's end).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, LaunchConfig, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
    /// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let m = s.alloc_buffer::<f32>(1000)?;
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(m.as_columns_mut());
    ///         st.launch(&FILL, LaunchConfig::for_elements(v.len(), 128), (&mut v, 3.0))
    ///     })
    /// })
    /// # }
    /// ```
    pub fn launch<K, A>(&self, kernel: &K, cfg: LaunchConfig, args: A) -> Result<()>
    where
        K: CheckedLaunch,
        A: LaunchArgs<'lane, K::Sig>,
    {
        // SAFETY: `K: CheckedLaunch` — a `#[kernel]` or `Kernel::new` declaration, whose
        // contract (writes only through `Mut` parameters, within their lengths) is what the
        // rest of this launch's safety rests on; see `enqueue_launch`.
        unsafe { self.enqueue_launch(kernel, cfg, &args) }.map(drop)
    }

    /// Launches an unchecked kernel (`#[kernel(unchecked)]`, [`Kernel::new_unchecked`](crate::Kernel::new_unchecked)):
    /// raw pointers, references and by-value structs, as ported Rust-CUDA kernels take them.
    /// The arguments are typed and bound to this lane as for [`launch`](Stream::launch) —
    /// `&mut view` for a [`PtrMut<T>`](crate::PtrMut), `&view` for a [`Ptr<T>`](crate::Ptr),
    /// the value for a [`ByValue<T>`](crate::ByValue) — so the ordering between lanes stays
    /// checked; what the kernel does with them is not.
    ///
    /// # Safety
    /// - The kernel accesses each pointer argument only within the view it was passed as,
    ///   and each slice only below its length.
    /// - It writes only through arguments passed as `&mut` views ([`PtrMut`](crate::PtrMut),
    ///   [`Mut`]), never through [`Ptr`](crate::Ptr) or [`Ref`] ones.
    /// - Device addresses hidden inside by-value arguments point to memory that stays
    ///   allocated, and is not used by other lanes in a conflicting way, until this lane has
    ///   passed the launch (for example: views of the same scope, bound to this lane).
    /// - Threads of the launch do not write the same element without synchronizing.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, LaunchConfig, Ptr, PtrMut, Unchecked};
    /// const VECADD: Kernel<(Ptr<f32>, Ptr<f32>, PtrMut<f32>, u32), Unchecked> = Kernel::new_unchecked("", "vecadd");
    /// # fn demo(gpu: &sluice::Gpu, a: &[f32], b: &[f32]) -> sluice::Result<()> {
    /// sluice::scope(gpu, |s| {
    ///     let (a, b) = (s.upload(a)?, s.upload(b)?);
    ///     let c = s.alloc_buffer::<f32>(a.rows())?;
    ///     s.lane()?.enter(|st| {
    ///         let (a, b) = (st.await_fence(&a)?, st.await_fence(&b)?);
    ///         let mut c = st.bind(c.as_columns_mut());
    ///         let n = c.len() as u32;
    ///         // SAFETY: `vecadd` reads a[i], b[i] and writes c[i] for i < n only, one thread
    ///         // per i, and a, b, c each hold n elements.
    ///         unsafe { st.launch_unchecked(&VECADD, LaunchConfig::for_elements(c.len(), 256), (&a, &b, &mut c, n)) }
    ///     })
    /// })
    /// # }
    /// ```
    pub unsafe fn launch_unchecked<K, A>(&self, kernel: &K, cfg: LaunchConfig, args: A) -> Result<()>
    where
        K: Launchable,
        A: LaunchArgs<'lane, K::Sig>,
    {
        // SAFETY: the caller's duties are the kernel contract `enqueue_launch` rests on.
        unsafe { self.enqueue_launch(kernel, cfg, &args) }.map(drop)
    }

    /// Resolves `kernel` on this lane's device, checks `cfg`, lowers `args` and enqueues.
    ///
    /// # Safety
    /// - The kernel keeps the contract of its declaration ([`Kernel::new`] for checked
    ///   kernels; the caller's vouching for unchecked ones, see `launch_unchecked`).
    unsafe fn enqueue_launch<K, A>(&self, kernel: &K, cfg: LaunchConfig, args: &A) -> Result<Option<usize>>
    where
        K: Launchable,
        A: LaunchArgs<'lane, K::Sig>,
    {
        let gpu = self.gpu();
        let f = kernel.resolve(gpu)?;
        // SAFETY: `A: LaunchArgs<'lane, K::Sig>` lowers to the kernel's parameters (checked
        // against the PTX on load); every view in `args` carries this lane's brand 'lane, so it
        // is bound to this stream, and borrows its memory for 'scope — which ends after the
        // scope has submitted and joined this stream; the kernel's own conduct is the caller's
        // duty.
        unsafe { launch_raw(self, &f, cfg, args) }?;
        self.lane.inner.note_launch(&f);
        match self.lane.shared.capture() {
            None => Ok(None),
            Some(capture) => self.record_node::<K::Sig, A>(capture, &f, cfg, args).map(Some),
        }
    }

    /// Records the launch just captured as a kernel node of the recording (its node handle,
    /// the function, the shape and a copy of every argument value), for typed updates of its
    /// scalars before replays. Returns its index among the recording's nodes.
    fn record_node<S: Signature, A: LaunchArgs<'lane, S>>(
        &self,
        capture: &Capture,
        f: &LaunchTarget,
        cfg: LaunchConfig,
        args: &A,
    ) -> Result<usize> {
        // SAFETY: this lane's stream joined the capture when the lane was made.
        let node = unsafe { self.handle().last_captured_node() }
            .map_err(|error| Error::Stream { call: "cuStreamGetCaptureInfo", error })?
            .ok_or(Error::Recording { what: "finding the kernel node of a captured launch" })?;
        let gpu = self.gpu();
        let mut buf = ParamBuf::new(gpu.ctx_id(), gpu.backend() == crate::device::Backend::Cpu);
        args.lower(&mut buf);
        if let Some(e) = buf.failed.take() {
            return Err(e);
        }
        let mut sizes = Vec::new();
        S::sizes(&mut sizes);
        let (ptrs, _) = buf.pointers();
        let values = sizes
            .iter()
            .zip(ptrs.iter().copied())
            .map(|(&size, p)| {
                // SAFETY: `p` points to this slot's value (a word in `buf` or a scalar in `args`,
                // both alive here), which has `size` bytes: the signature's lowering of it.
                unsafe { std::slice::from_raw_parts(p.cast::<u8>(), size) }.into()
            })
            .collect();
        let mut params = Vec::new();
        S::slots(&mut params);
        let mut recorded = capture.recorded();
        recorded.nodes.push(KernelNodeRecord {
            node,
            func: f.func,
            name: f.name,
            grid: cfg.grid,
            block: cfg.block,
            shared_mem_bytes: cfg.shared_mem_bytes,
            values,
            params,
        });
        Ok(recorded.nodes.len() - 1)
    }

    /// [`launch`](Stream::launch), in a scope being recorded into a graph
    /// ([`graph`](crate::graph)): also returns the launch's node, whose scalar arguments
    /// [`Graph::set_scalar`](crate::Graph::set_scalar) can change between replays.
    ///
    /// # Errors
    /// [`Error::NotRecording`] outside a recording (nothing is launched then); as
    /// [`launch`](Stream::launch) otherwise.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, LaunchConfig, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
    /// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// let mut out = gpu.alloc_buffer::<f32>(256)?;
    /// let (graph, node) = sluice::graph(gpu, |s| {
    ///     s.lane()?.enter(|st| {
    ///         let mut v = st.bind(out.as_columns_mut());
    ///         st.launch_node(&FILL, LaunchConfig::for_elements(256, 256), (&mut v, 0.5))
    ///     })
    /// })?;
    /// # let _ = (graph, node);
    /// # Ok(()) }
    /// ```
    pub fn launch_node<K, A>(&self, kernel: &K, cfg: LaunchConfig, args: A) -> Result<KernelNode<K::Sig>>
    where
        K: CheckedLaunch,
        A: LaunchArgs<'lane, K::Sig>,
    {
        let Some(capture) = self.lane.shared.capture() else {
            return Err(Error::NotRecording { what: "Stream::launch_node" });
        };
        // SAFETY: as in `launch`.
        let index = unsafe { self.enqueue_launch(kernel, cfg, &args) }?;
        Ok(KernelNode {
            capture: capture.id,
            index: index.expect("a recording records its launches"),
            _sig: PhantomData,
        })
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
pub(crate) unsafe fn launch_raw<'lane, S: Signature, A: LaunchArgs<'lane, S>>(
    st: &Stream<'_, 'lane>,
    f: &LaunchTarget,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    let gpu = st.gpu();
    if !fits(&cfg, gpu.info(), f) {
        check_launch(&cfg, gpu.info(), f)?;
    }
    let mut buf = ParamBuf::new(gpu.ctx_id(), gpu.backend() == crate::device::Backend::Cpu);
    args.lower(&mut buf);
    if buf.foreign {
        return Err(Error::WrongDevice { what: f.name });
    }
    if let Some(e) = buf.failed.take() {
        return Err(e);
    }
    let (ptrs, sizes) = buf.pointers();
    // SAFETY: as for `submit` below.
    if let Some(launched) = unsafe { st.launch_now(f, (cfg.grid, cfg.block, cfg.shared_mem_bytes), ptrs, sizes) } {
        return launched;
    }
    let work = Work::Launch {
        func: f.func,
        name: f.name,
        grid: cfg.grid,
        block: cfg.block,
        shared_mem_bytes: cfg.shared_mem_bytes,
        ptrs,
        sizes,
    };
    // SAFETY: lowering: `ptrs` point to one value per kernel parameter — u64 words in
    // `buf` and scalars in `args`, both alive across this call, which is when the driver
    // reads them (or a deferred scope copies them). Memory: the caller's duty (see above)
    // keeps every address valid and unshared until the stream passes the launch; the scope
    // submits and joins the stream before any of that memory can be freed.
    unsafe { st.submit(work, None) }
}

/// Whether `cfg` passes every check of a launch of `f` — [`LaunchConfig::validate`] against
/// the device, then the kernel's own limits — computed without a branch per check: the
/// common case. `false` exactly when [`check_launch`] refuses it.
#[inline]
fn fits(cfg: &LaunchConfig, info: &DeviceInfo, f: &LaunchTarget) -> bool {
    let (g, b) = (cfg.grid, cfg.block);
    // `1 <= v <= limit` in one comparison: `v - 1` wraps to `u32::MAX` for 0, which no
    // limit exceeds.
    let within = |v: u32, limit: u32| v.wrapping_sub(1) < limit;
    let threads = b.0 as u64 * b.1 as u64 * b.2 as u64;
    let max_threads = info.max_threads_per_block.min(f.max_threads_per_block) as u64;
    let max_shared = info.max_shared_memory_per_block_optin.max(info.max_shared_memory_per_block);
    within(b.0, info.max_block_dims[0])
        & within(b.1, info.max_block_dims[1])
        & within(b.2, info.max_block_dims[2])
        & within(g.0, info.max_grid_dims[0])
        & within(g.1, info.max_grid_dims[1])
        & within(g.2, info.max_grid_dims[2])
        & (threads <= max_threads)
        & ((f.exact_threads == 0) | (threads == f.exact_threads as u64))
        & (!f.one_d | ((g.1 == 1) & (g.2 == 1) & (b.1 == 1) & (b.2 == 1)))
        & ((f.block.0 == 0) | ((b.0 == f.block.0) & (b.1 == f.block.1) & (b.2 == f.block.2)))
        & (cfg.shared_mem_bytes <= max_shared.min(f.dynamic_shared_limit))
}

/// The checks of a launch of `f`, one by one, each refusal naming what it broke: `cfg`
/// against the device ([`LaunchConfig::validate`]), then against the kernel's own limits.
/// Called only where [`fits`] said no.
#[cold]
#[inline(never)]
fn check_launch(cfg: &LaunchConfig, info: &DeviceInfo, f: &LaunchTarget) -> Result<()> {
    cfg.validate(info).map_err(|e| match e {
        Error::LaunchConfig { what, requested, limit, .. } => {
            Error::LaunchConfig { kernel: Some(f.name), what, requested, limit }
        }
        e => e,
    })?;
    // A declared block first: its own thread count is within the kernel's limit, so the fix
    // this error names is the one that also passes the checks below.
    if f.block.0 != 0 && cfg.block != f.block {
        return Err(Error::LaunchBlockShape { kernel: f.name, block: cfg.block, required: f.block });
    }
    let threads = cfg.block.0 as u64 * cfg.block.1 as u64 * cfg.block.2 as u64;
    if threads > f.max_threads_per_block as u64 {
        // The bound the kernel declares, or (none declared) what its registers leave.
        let declared = f.declared_threads != 0 && f.max_threads_per_block >= f.declared_threads;
        return Err(Error::KernelLimit {
            kernel: f.name,
            what: if declared { KERNEL_THREADS } else { KERNEL_THREADS_BY_REGISTERS },
            requested: threads,
            limit: f.max_threads_per_block as u64,
        });
    }
    if f.exact_threads != 0 && threads != f.exact_threads as u64 {
        return Err(Error::LaunchBlockFixed { kernel: f.name, requested: threads, required: f.exact_threads });
    }
    let (g, b) = (cfg.grid, cfg.block);
    if f.one_d && (g.1, g.2, b.1, b.2) != (1, 1, 1, 1) {
        return Err(Error::LaunchNot1d { kernel: f.name, grid: g, block: b });
    }
    if cfg.shared_mem_bytes > f.dynamic_shared_limit {
        return Err(Error::KernelLimit {
            kernel: f.name,
            what: "dynamic shared memory per block",
            requested: cfg.shared_mem_bytes as u64,
            limit: f.dynamic_shared_limit as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_info;

    #[test]
    fn launch_config_validation_names_the_dimension() {
        let info = test_info();
        assert_eq!(LaunchConfig::for_elements(1 << 20, 256).validate(&info), Ok(()));
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (2048, 1, 1), shared_mem_bytes: 0 };
        let too_wide = Error::LaunchConfig { kernel: None, what: "block.x", requested: 2048, limit: 1024 };
        assert_eq!(cfg.validate(&info), Err(too_wide));
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (32, 32, 2), shared_mem_bytes: 0 };
        assert_eq!(
            cfg.validate(&info),
            Err(Error::LaunchConfig { kernel: None, what: "threads per block", requested: 2048, limit: 1024 })
        );
        let cfg = LaunchConfig { grid: (1, 70000, 1), block: (32, 1, 1), shared_mem_bytes: 0 };
        assert!(matches!(cfg.validate(&info), Err(Error::LaunchConfig { what: "grid.y", .. })));
        let cfg = LaunchConfig::for_elements(0, 256);
        assert_eq!(cfg.validate(&info), Err(Error::EmptyLaunch { what: "grid.x" }));
        let cfg = LaunchConfig::for_elements(10, 0);
        assert_eq!(cfg.validate(&info), Err(Error::EmptyLaunch { what: "grid.x" }));
        let cfg = LaunchConfig::for_elements(10, 32).with_shared_mem(100 << 10);
        assert_eq!(cfg.validate(&info), Ok(()), "above 48 KiB, up to the opt-in limit");
        let cfg = LaunchConfig::for_elements(10, 32).with_shared_mem(1 << 20);
        assert!(matches!(
            cfg.validate(&info),
            Err(Error::LaunchConfig { what: "dynamic shared memory per block", .. })
        ));
        let huge = LaunchConfig::for_elements(usize::MAX, 1);
        assert!(matches!(huge.validate(&info), Err(Error::LaunchConfig { what: "grid.x", .. })));
    }

    /// A launch target on the CPU backend with these limits (its function is never called).
    fn target(name: &'static str, max_threads: u32, shared: u32, exact_threads: u32, one_d: bool) -> LaunchTarget {
        // SAFETY: never called; a function of `CpuEntry`'s type for the target.
        unsafe fn never(
            _: *const *mut c_void,
            _: &crate::check::CpuLaunch,
        ) -> std::result::Result<(), crate::check::CpuLaunchError> {
            unreachable!()
        }
        LaunchTarget {
            name,
            func: crate::handle::FunctionHandle::Cpu(never, name),
            max_threads_per_block: max_threads,
            registers: 0,
            dynamic_shared_limit: shared,
            source: None,
            exact_threads,
            one_d,
            block: (0, 0, 0),
            declared_threads: max_threads,
        }
    }

    /// A launch past the kernel's own limits names the kernel and the limit.
    #[test]
    fn a_kernels_own_limit_names_the_kernel() {
        let info = test_info();
        let f = target("gemm_ws_bf16", 384, 1000, 0, false);
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (512, 1, 1), shared_mem_bytes: 0 };
        let e = check_launch(&cfg, &info, &f).unwrap_err();
        assert_eq!(
            e,
            Error::KernelLimit { kernel: "gemm_ws_bf16", what: "threads per block", requested: 512, limit: 384 }
        );
        assert!(
            e.to_string().contains("kernel `gemm_ws_bf16`: threads per block = 512 is over its limit of 384"),
            "{e}"
        );
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (128, 1, 1), shared_mem_bytes: 2000 };
        let e = check_launch(&cfg, &info, &f).unwrap_err();
        assert!(matches!(e, Error::KernelLimit { what: "dynamic shared memory per block", limit: 1000, .. }), "{e}");
        assert!(e.to_string().contains("static shared memory"), "{e}");
        // No declared bound: the driver's limit came from the kernel's registers.
        let mut f = target("gemm_tiled", 640, 1000, 0, false);
        f.declared_threads = 0;
        let cfg = LaunchConfig { grid: (1, 1, 1), block: (32, 32, 1), shared_mem_bytes: 0 };
        let e = check_launch(&cfg, &info, &f).unwrap_err();
        assert!(matches!(e, Error::KernelLimit { what: KERNEL_THREADS_BY_REGISTERS, limit: 640, .. }), "{e}");
        assert!(e.to_string().contains("registers") && e.to_string().contains("max_threads = N"), "{e}");
    }

    /// A `#[kernel(block = ..)]` kernel launched with another block shape is refused, the
    /// message naming both shapes and the fix.
    #[test]
    fn a_declared_block_shape_is_the_only_one_launched() {
        let info = test_info();
        let mut f = target("transpose", 1024, 1000, 0, false);
        f.block = (32, 8, 1);
        let good = LaunchConfig { grid: (4, 4, 1), block: (32, 8, 1), shared_mem_bytes: 0 };
        assert!(fits(&good, &info, &f));
        for block in [(16, 16, 1), (256, 1, 1), (32, 8, 2), (8, 32, 1)] {
            let cfg = LaunchConfig { block, ..good };
            assert!(!fits(&cfg, &info, &f));
            let e = check_launch(&cfg, &info, &f).unwrap_err();
            assert_eq!(e, Error::LaunchBlockShape { kernel: "transpose", block, required: (32, 8, 1) });
            let text = e.to_string();
            assert!(text.contains("`#[kernel(block = (32, 8, 1))]`") && text.contains(&format!("{block:?}")), "{text}");
        }
    }

    #[test]
    fn params_point_at_their_values() {
        let x = 2.5f32;
        let mut buf = ParamBuf::new(0, false);
        buf.push_slice(0xabc, 7);
        buf.push_value(&x);
        buf.push_word(0xdef);
        let (p, sizes) = buf.pointers();
        assert_eq!((p.len(), sizes), (4, &[8, 8, 4, 8][..]));
        // SAFETY: the pointers point into `buf` and at `x`, both alive here.
        unsafe {
            assert_eq!(*(p[0] as *const u64), 0xabc);
            assert_eq!(*(p[1] as *const u64), 7);
            assert_eq!(*(p[2] as *const f32), 2.5);
            assert_eq!(*(p[3] as *const u64), 0xdef);
        }
        assert_eq!(buf.n, 4);
        // Moved: the words' pointers follow the buffer.
        let mut moved = buf;
        let (p, _) = moved.pointers();
        // SAFETY: as above, into `moved`.
        unsafe { assert_eq!(*(p[1] as *const u64), 7) };
    }

    #[test]
    fn a_full_buffer_points_at_every_slot() {
        let mut buf = ParamBuf::new(0, false);
        for i in 0..MAX_PARAMS as u64 {
            buf.push_word(i);
        }
        let (p, sizes) = buf.pointers();
        assert_eq!((p.len(), sizes.len()), (MAX_PARAMS, MAX_PARAMS));
        // SAFETY: the pointers point into `buf`, alive here.
        assert_eq!(unsafe { *(p[MAX_PARAMS - 1] as *const u64) }, MAX_PARAMS as u64 - 1);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// `validate` accepts a configuration exactly when every dimension is non-zero and
            /// within the device's limits, the block within its thread limit, and the dynamic
            /// shared memory within the opt-in limit; a refusal names a limit it broke.
            #[test]
            fn validate_accepts_exactly_what_the_device_allows(
                g in (0u32..70_000, 0u32..70_000, 0u32..70_000),
                b in (0u32..1100, 0u32..1100, 0u32..70),
                shmem in 0u32..300_000,
            ) {
                let info = test_info();
                let cfg = LaunchConfig { grid: g, block: b, shared_mem_bytes: shmem };
                let dims = [g.0, g.1, g.2, b.0, b.1, b.2];
                let fits = dims.iter().all(|&d| d > 0)
                    && b.0 <= info.max_block_dims[0] && b.1 <= info.max_block_dims[1] && b.2 <= info.max_block_dims[2]
                    && g.0 <= info.max_grid_dims[0] && g.1 <= info.max_grid_dims[1] && g.2 <= info.max_grid_dims[2]
                    && b.0 as u64 * b.1 as u64 * b.2 as u64 <= info.max_threads_per_block as u64
                    && shmem <= info.max_shared_memory_per_block_optin;
                match cfg.validate(&info) {
                    Ok(()) => prop_assert!(fits, "{:?} accepted", cfg),
                    Err(Error::EmptyLaunch { .. }) => prop_assert!(dims.contains(&0)),
                    Err(Error::LaunchConfig { requested, limit, .. }) => {
                        prop_assert!(!fits);
                        prop_assert!(requested > limit);
                    }
                    Err(e) => prop_assert!(false, "unexpected {:?}", e),
                }
            }

            /// The one-branch check of a launch (`fits`) says no exactly when the detailed
            /// checks (`check_launch`: the device's limits, then the kernel's) refuse.
            #[test]
            fn fits_agrees_with_the_detailed_checks(
                // y and z of 1 often: a 1-D launch of a `dims = 1` kernel passes.
                g in (0u32..70_000, prop_oneof![Just(1u32), 0u32..66_000], prop_oneof![Just(1u32), 0u32..66_000]),
                b in (0u32..1100, 0u32..4, 0u32..3),
                shmem in 0u32..300_000,
                kernel_threads in 0u32..1100,
                kernel_shared in 0u32..300_000,
                exact in proptest::bool::ANY,
                one_d in proptest::bool::ANY,
                // A `block = ..` kernel: none, the block asked for, or another.
                fixed in 0u8..3,
            ) {
                let info = test_info();
                let mut f = target("k", kernel_threads, kernel_shared, if exact { kernel_threads } else { 0 }, one_d);
                f.block = [(0, 0, 0), b, (32, 8, 1)][fixed as usize];
                let cfg = LaunchConfig { grid: g, block: b, shared_mem_bytes: shmem };
                prop_assert_eq!(fits(&cfg, &info, &f), check_launch(&cfg, &info, &f).is_ok(), "{:?}", cfg);
            }

            /// `for_elements` covers every element with whole blocks and no empty block.
            #[test]
            fn for_elements_covers_every_element(n in 1usize..10_000_000, block in 1u32..1025) {
                let cfg = LaunchConfig::for_elements(n, block);
                let threads = cfg.grid.0 as u64 * cfg.block.0 as u64;
                prop_assert!(threads >= n as u64);
                prop_assert!(threads - (n as u64) < block as u64);
            }

            /// `for_elements_3d` covers every element along each side with whole blocks and
            /// no empty block; `for_elements_2d` is its `depth = 1` case.
            #[test]
            fn for_elements_3d_covers_every_element(
                n in (1usize..100_000, 1usize..100_000, 1usize..1000),
                b in (1u32..1025, 1u32..1025, 1u32..65),
            ) {
                let cfg = LaunchConfig::for_elements_3d(n, b);
                prop_assert_eq!(cfg.block, b);
                for (side, blocks, block) in [(n.0, cfg.grid.0, b.0), (n.1, cfg.grid.1, b.1), (n.2, cfg.grid.2, b.2)] {
                    let threads = blocks as u64 * block as u64;
                    prop_assert!(threads >= side as u64);
                    prop_assert!(threads - (side as u64) < block as u64);
                }
                prop_assert_eq!(LaunchConfig::for_elements_2d((n.0, n.1), (b.0, b.1)),
                    LaunchConfig::for_elements_3d((n.0, n.1, 1), (b.0, b.1, 1)));
            }
        }
    }
}
