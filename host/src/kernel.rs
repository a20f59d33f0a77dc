//! Kernels: typed descriptors ([`Kernel`], from a `#[kernel]`'s [`KernelDecl`] or by hand),
//! their parameter lists ([`Mut`], [`Ref`], plain [`Pod`] values; [`Signature`]), resolved
//! functions ([`Function`]) and what a lane can launch ([`Launchable`]).
//!
//! A kernel's declared parameters are checked against the PTX when it is resolved on a
//! device (sizes only: what a kernel *does* with them is the `unsafe` contract of
//! [`Kernel::new`] and [`KernelDecl`]). How arguments fit parameters at a launch is
//! [`launch`](crate::launch)'s business.
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

use std::any::TypeId;
use std::marker::PhantomData;
use std::sync::Arc;

use bytemuck::Pod;

use crate::capture::ParamSlot;
pub use crate::cpu::CpuEntry;
use crate::device::Gpu;
use crate::error::{Error, ParamKind, ParamLayout, Result};
use crate::module::{EntryPoint, LaunchTarget, PtxText, SourceSpan};
use crate::ptx::{self, AbiParam, EntryParams};

/// Parameter marker: a slice the kernel may write (`DeviceSliceMut<T>` in a `#[kernel]`).
/// Passed as `&mut ColumnViewMut<T>` bound to the launching lane.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, Mut};
/// // SAFETY: a kernel `fill(out: &mut [f32], v: f32)` that writes only `out`, in bounds.
/// const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("PTX text", "fill") };
/// # let _ = FILL;
/// ```
pub struct Mut<T>(PhantomData<fn() -> T>);

/// Parameter marker: a slice the kernel only reads (`&[T]` on the device side).
/// Passed as a [`ColumnView`](crate::ColumnView) (or `&ColumnView`, `&ColumnViewMut`) bound to the lane.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, Mut, Ref};
/// // SAFETY: `saxpy(y: &mut [f32], x: &[f32], a: f32)` writes only `y`, reads `x`, in bounds.
/// const SAXPY: Kernel<(Mut<f32>, Ref<f32>, f32)> = unsafe { Kernel::new("PTX text", "saxpy") };
/// # let _ = SAXPY;
/// ```
pub struct Ref<T>(PhantomData<fn() -> T>);

/// Parameter marker of unchecked kernels: a `*mut T` (or `&mut [T]`'s pointer alone) the
/// kernel may write through. Passed as `&mut ColumnViewMut<T>` bound to the lane; only the
/// address reaches the kernel (one `u64`), so staying in bounds is the launch's `unsafe`
/// contract.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, PtrMut, Unchecked};
/// // `#[kernel(unchecked)] unsafe fn fill_raw(out: *mut f32, n: u32)` on the host:
/// const FILL: Kernel<(PtrMut<f32>, u32), Unchecked> = Kernel::new_unchecked("", "fill_raw");
/// # let _ = FILL;
/// ```
pub struct PtrMut<T>(PhantomData<fn() -> T>);

/// Parameter marker of unchecked kernels: a `*const T` or `&T` the kernel reads. Passed as
/// a [`ColumnView`](crate::ColumnView) (or `&ColumnView`, `&ColumnViewMut`) bound to the
/// lane; only the address reaches the kernel.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, Ptr, PtrMut, Unchecked};
/// const ADD: Kernel<(Ptr<f32>, Ptr<f32>, PtrMut<f32>, u32), Unchecked> = Kernel::new_unchecked("", "vecadd");
/// # let _ = ADD;
/// ```
pub struct Ptr<T>(PhantomData<fn() -> T>);

/// Parameter marker of unchecked kernels: a value of any `Copy` type passed by value —
/// typically a `#[repr(C)]` struct holding device addresses (from
/// [`ColumnViewMut::device_address`](crate::ColumnViewMut::device_address)) or an enum.
/// Plain [`Pod`] values need no marker.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{ByValue, Kernel, Unchecked};
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Camera { origin: [f32; 3], pixels: u64 }
/// const RENDER: Kernel<(ByValue<Camera>,), Unchecked> = Kernel::new_unchecked("", "render");
/// # let _ = RENDER;
/// ```
pub struct ByValue<T>(PhantomData<fn() -> T>);

/// Parameter marker: a row-major matrix the kernel reads through Hopper's tensor-memory
/// accelerator (TMA), in boxes of `R` rows by `C` elements (`TmaMatrix<T, R, C>` in a
/// `#[kernel]`, `sluice_device::tma`). Passed as a [`RowMajor`](crate::RowMajor) view bound
/// to the launching lane (`view.row_major(rows, cols)?`); the launch lowers it to the
/// 128-byte tensor map (`cuTensorMapEncodeTiled`) the kernel's copies go through, which
/// describes that view and nothing else.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, Mut, Tma};
/// // A kernel `k(out: DeviceSliceMut<f32>, a: TmaMatrix<u16, 128, 64>)` on the host.
/// // SAFETY: declaration only, never launched.
/// const K: Kernel<(Mut<f32>, Tma<u16, 128, 64>)> = unsafe { Kernel::new("", "k") };
/// # let _ = K;
/// ```
pub struct Tma<T, const R: usize, const C: usize>(PhantomData<fn() -> T>);

/// The size in bytes of a tensor map, as a kernel parameter (`CUtensorMap`, 64-byte aligned).
pub(crate) const TENSOR_MAP_BYTES: usize = 128;

/// The private halves of the kernel traits. Outside this crate they cannot be named, so
/// the public traits built on them ([`Param`], [`Signature`], [`Launchable`]) cannot be
/// implemented there: every function a launch calls is resolved by an impl in this file,
/// and every parameter list it is checked against is one of the tuples here.
mod sealed {
    use super::{Gpu, LaunchTarget, Result};

    /// Seals [`Param`](super::Param). `'static` (every parameter type is): a signature's
    /// `TypeId` keys the memory of resolved kernels.
    pub trait ParamSealed: 'static {}

    /// Seals [`Signature`](super::Signature) (`'static`, as its parameters are).
    pub trait SignatureSealed: 'static {}

    /// Seals [`KernelKind`](super::KernelKind).
    pub trait KindSealed {}

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
/// A struct passed by value derives `Pod` and `Zeroable`, which needs
/// `bytemuck = { version = "1.16", features = ["derive"] }` among your own dependencies
/// (the derive names the `bytemuck` crate).
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, Mut, Ref};
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Params { scale: f32, offset: f32 }
/// // Mut<T>, Ref<T> and any Pod value (here a struct) are parameters.
/// // SAFETY: declaration only, never launched.
/// const K: Kernel<(Mut<f32>, Ref<u32>, Params)> = unsafe { Kernel::new("", "k") };
/// # let _ = K;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel parameter type",
    label = "not a kernel parameter type",
    note = "kernel parameters are `Mut<T>` and `Ref<T>` (columns written and read), `Tma<T, R, C>` (a matrix read through TMA), `PtrMut<T>` and `Ptr<T>` (unchecked kernels), `ByValue<T>`, or a `Pod` value (`#[repr(C)]` with `#[derive(Pod, Zeroable)]`)"
)]
pub trait Param: sealed::ParamSealed {
    /// Appends the sizes in bytes of the kernel parameters this one lowers to.
    #[doc(hidden)]
    fn sizes(out: &mut Vec<usize>);
    /// `found` without its leading sizes if they are this parameter's, else `None`.
    #[doc(hidden)]
    fn strip(found: &[usize]) -> Option<&[usize]>;
    /// The type of a value parameter (what a recorded graph may change), `None` for views.
    #[doc(hidden)]
    fn scalar() -> Option<(TypeId, &'static str)> {
        None
    }
    /// This parameter as `#[kernel]`'s record in the PTX describes it: kind letter (`r`,
    /// `m`, `t`, `p`, `q`, `v`), then the size and alignment of the element or value type.
    #[doc(hidden)]
    fn abi() -> (u8, usize, usize);
}

/// A parameter's record as the error reports it (sizes of over 4 GiB saturate: no
/// parameter type is that large).
fn layout_of((kind, size, align): (u8, usize, usize)) -> ParamLayout {
    ParamLayout {
        kind: ParamKind::from_letter(kind).unwrap_or(ParamKind::Value),
        size: u32::try_from(size).unwrap_or(u32::MAX),
        align: u16::try_from(align).unwrap_or(u16::MAX),
    }
}

/// Size and alignment of `T`.
fn layout<T>() -> (usize, usize) {
    (std::mem::size_of::<T>(), std::mem::align_of::<T>())
}

impl<T: Pod> sealed::ParamSealed for Mut<T> {}
impl<T: Pod> Param for Mut<T> {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b'm', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.extend([8, 8]);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[8, 8])
    }
}
impl<T: Pod> sealed::ParamSealed for Ref<T> {}
impl<T: Pod> Param for Ref<T> {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b'r', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.extend([8, 8]);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[8, 8])
    }
}
impl<T: Pod> sealed::ParamSealed for PtrMut<T> {}
impl<T: Pod> Param for PtrMut<T> {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b'q', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.push(8);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[8])
    }
}
impl<T: Pod> sealed::ParamSealed for Ptr<T> {}
impl<T: Pod> Param for Ptr<T> {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b'p', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.push(8);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[8])
    }
}
impl<T: Pod, const R: usize, const C: usize> sealed::ParamSealed for Tma<T, R, C> {}
impl<T: Pod, const R: usize, const C: usize> Param for Tma<T, R, C> {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b't', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.push(TENSOR_MAP_BYTES);
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        found.strip_prefix(&[TENSOR_MAP_BYTES])
    }
}
impl<T: Copy + 'static> sealed::ParamSealed for ByValue<T> {}
impl<T: Copy + 'static> Param for ByValue<T> {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b'v', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.push(std::mem::size_of::<T>());
    }
    fn scalar() -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<T>(), std::any::type_name::<T>()))
    }
    fn strip(found: &[usize]) -> Option<&[usize]> {
        match found {
            [size, rest @ ..] if *size == std::mem::size_of::<T>() => Some(rest),
            _ => None,
        }
    }
}
impl<T: Pod> sealed::ParamSealed for T {}
impl<T: Pod> Param for T {
    fn abi() -> (u8, usize, usize) {
        let (size, align) = layout::<T>();
        (b'v', size, align)
    }
    fn sizes(out: &mut Vec<usize>) {
        out.push(std::mem::size_of::<T>());
    }
    fn scalar() -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<T>(), std::any::type_name::<T>()))
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
/// # use sluice_host as sluice;
/// use sluice::{Kernel, Mut};
/// // `()`, `(Mut<f32>,)`, `(Mut<f32>, f32)`, ... up to 12 parameters.
/// // SAFETY: declaration only, never launched.
/// const NOTHING: Kernel<()> = unsafe { Kernel::new("", "noop") };
/// # let _ = NOTHING;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel parameter list",
    label = "not a tuple of kernel parameters",
    note = "a kernel's signature is a tuple of up to 12 parameters: `()`, `(Mut<f32>,)`, `(Mut<f32>, Ref<f32>, f32)`, ..."
)]
pub trait Signature: sealed::SignatureSealed {
    /// Appends the sizes in bytes of all lowered kernel parameters.
    #[doc(hidden)]
    fn sizes(out: &mut Vec<usize>);
    /// Whether `found` (an entry's parameter sizes) are exactly those this list lowers
    /// to; unlike comparing with [`sizes`](Signature::sizes), allocates nothing, so a
    /// launch can check every time.
    #[doc(hidden)]
    fn matches(found: &[usize]) -> bool;
    /// Each declared parameter's first lowered slot and scalar type (for recorded graphs).
    #[doc(hidden)]
    fn slots(out: &mut Vec<ParamSlot>);
    /// The first declared parameter whose kind, element size or alignment differs from the
    /// device's record (`found`), with what the host declares; `None` if all agree.
    /// Allocates nothing, so a launch can check every time.
    #[doc(hidden)]
    fn abi_mismatch(found: &[AbiParam]) -> Option<(usize, Option<ParamLayout>)>;
}

/// Calls `$m!` with every parameter-tuple shape sluice supports (0 to 12 parameters):
/// the one list behind [`Signature`]'s impls here and [`LaunchArgs`](crate::LaunchArgs)'s.
macro_rules! for_each_tuple {
    ($m:ident) => {
        $m! {
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
    };
}
pub(crate) use for_each_tuple;

macro_rules! signature_impls {
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
            #[allow(unused_variables, unused_mut, unused_assignments)]
            fn abi_mismatch(found: &[AbiParam]) -> Option<(usize, Option<ParamLayout>)> {
                let mut i = 0;
                $(
                    let host = $P::abi();
                    match found.get(i) {
                        Some(f) if (f.kind, f.size, f.align) == host => {}
                        _ => return Some((i, Some(layout_of(host)))),
                    }
                    i += 1;
                )*
                if i == found.len() { None } else { Some((i, None)) }
            }
            #[allow(unused_variables, unused_mut, unused_assignments)]
            fn slots(out: &mut Vec<ParamSlot>) {
                let mut first = 0;
                let mut sizes: Vec<usize> = Vec::new();
                $(
                    out.push(ParamSlot { first, scalar: $P::scalar() });
                    sizes.clear();
                    $P::sizes(&mut sizes);
                    first += sizes.len();
                )*
            }
        }
    )*};
}
for_each_tuple!(signature_impls);

/// A typed kernel descriptor: which PTX, which entry, which parameters. A plain `const`
/// value: `#[kernel]` emits a [`KernelDecl`] type, which [`Kernel::of`] pairs with the PTX
/// (the facade's `sluice::kernels::<name>`); [`Kernel::new`] declares one by hand. The
/// module is loaded on first use per device.
///
/// The std analogue is a function pointer type: `Kernel<(Mut<f32>, f32)>` is
/// `#[kernel] fn(DeviceSliceMut<f32>, f32)` on the device.
///
/// ```no_run
/// # use sluice_host as sluice;
/// use sluice::{Kernel, LaunchConfig, Mut};
/// // SAFETY: `fill_column(out: &mut [f32], value: f32)` writes `out[i]` for `i < len` only.
/// const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new(PTX, "fill_column") };
/// # const PTX: &str = "";
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
/// a read-only view (here an awaited upload, [rule 3](crate#safety-model)):
///
/// ```compile_fail,E0277
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu, data: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
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
pub struct Kernel<S, K = Checked> {
    ptx: &'static str,
    /// The kernel crate built for an architecture-specific target too (`sm_90a`), launched
    /// on devices of that architecture instead of `ptx`.
    specific: Option<SpecificPtx>,
    name: &'static str,
    /// The kernel compiled for the host, for the CPU backend (`#[kernel]` emits it).
    cpu: Option<CpuEntry>,
    /// Where a `#[kernel]` is declared (file, first and last line), for fault attribution.
    source: Option<SourceSpan>,
    /// The parameter list and kind; `fn() -> (S, K)` keeps `Kernel` `Send + Sync + Copy`
    /// whatever they are.
    _sig: PhantomData<fn() -> (S, K)>,
}

impl<S, K> Clone for Kernel<S, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, K> Copy for Kernel<S, K> {}

/// Whether a kernel's launch can be checked: [`Checked`] (`#[kernel]`, [`Kernel::new`]),
/// launched with [`Stream::launch`](crate::Stream::launch), or [`Unchecked`]
/// (`#[kernel(unchecked)]`, [`Kernel::new_unchecked`]), launched only with the `unsafe`
/// [`Stream::launch_unchecked`](crate::Stream::launch_unchecked). Sealed: these two are all.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Checked, Kernel, Mut, PtrMut, Unchecked};
/// // SAFETY: `fill` writes only `out`, in bounds.
/// const FILL: Kernel<(Mut<f32>, f32), Checked> = unsafe { Kernel::new("", "fill") };
/// const RAW: Kernel<(PtrMut<f32>, u32), Unchecked> = Kernel::new_unchecked("", "fill_raw");
/// # let _ = (FILL, RAW);
/// ```
pub trait KernelKind: sealed::KindSealed + 'static {}

/// The kind of kernel whose launches the types check ([`KernelKind`]).
#[derive(Debug)]
pub enum Checked {}

/// The kind of kernel whose body the types cannot vouch for — raw pointers, references,
/// arbitrary by-value structs (`#[kernel(unchecked)]`, a Rust-CUDA kernel ported through
/// `cuda_std`): launched only with the `unsafe` [`Stream::launch_unchecked`](crate::Stream::launch_unchecked)
/// ([`KernelKind`]).
#[derive(Debug)]
pub enum Unchecked {}

impl sealed::KindSealed for Checked {}
impl KernelKind for Checked {}
impl sealed::KindSealed for Unchecked {}
impl KernelKind for Unchecked {}

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
    /// # use sluice_host as sluice;
    /// use sluice::{Kernel, Mut};
    /// // SAFETY: `fill_column` writes `out[i]` for `i < out.len()` only.
    /// const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("...", "fill_column") };
    /// assert_eq!(FILL.name(), "fill_column");
    /// ```
    pub const unsafe fn new(ptx: &'static str, name: &'static str) -> Kernel<S> {
        Kernel { ptx, specific: None, name, cpu: None, source: None, _sig: PhantomData }
    }
}

/// A kernel crate's PTX for an architecture-specific target (`sm_90a`), beside its portable
/// one: what [`Kernel::of_with_specific`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecificPtx {
    /// The target's name (`sm_90a`).
    pub arch: &'static str,
    /// The compute capability it runs on (`(9, 0)`).
    pub capability: (u32, u32),
    /// The PTX text.
    pub ptx: &'static str,
    /// Whether the entry is in this text only (not in the portable one): the builder knows,
    /// from the two builds' entries.
    pub only: bool,
}

impl<S: Signature> Kernel<S, Unchecked> {
    /// Declares entry `name` of the PTX module `ptx` with parameters `S`, as an unchecked
    /// kernel: safe to declare, because every launch of it is `unsafe`
    /// ([`Stream::launch_unchecked`](crate::Stream::launch_unchecked)) and its caller vouches
    /// for what the kernel does. The parameter sizes are still checked against the PTX.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Kernel, PtrMut, Unchecked};
    /// const FILL: Kernel<(PtrMut<f32>, u32, f32), Unchecked> = Kernel::new_unchecked("...", "fill_raw");
    /// assert_eq!(FILL.name(), "fill_raw");
    /// ```
    pub const fn new_unchecked(ptx: &'static str, name: &'static str) -> Kernel<S, Unchecked> {
        Kernel { ptx, specific: None, name, cpu: None, source: None, _sig: PhantomData }
    }
}

/// What `#[kernel]` (crate `sluice-macros`) emits on the host for each kernel: a zero-sized
/// type naming the entry and its parameter list, from the kernel's own Rust signature.
/// [`Kernel::of`] pairs it with the PTX that holds the entry.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Kernel, KernelDecl, Mut, Ref};
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
///     type Kind = sluice::Checked;
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
/// caller vouches for it.) For an [`Unchecked`] kernel only the parameter list is vouched
/// for: its launches are `unsafe`, and their callers vouch for the rest.
pub unsafe trait KernelDecl {
    /// The PTX entry name.
    const NAME: &'static str;
    /// The parameter list, as the host passes it.
    type Signature: Signature;
    /// [`Checked`] (`#[kernel]`) or [`Unchecked`] (`#[kernel(unchecked)]`).
    type Kind: KernelKind;
    /// The kernel compiled for the host, for the CPU backend ([`Gpu::cpu`]): `#[kernel]`
    /// emits it; `None` for a declaration of PTX alone.
    const CPU: Option<CpuEntry> = None;
    /// Where the kernel is declared: `file!()`, its first and last line (`#[kernel]` emits
    /// it), so that a fault the device records at a line of the kernel names the kernel.
    const SOURCE: Option<(&'static str, u32, u32)> = None;
}

impl<S: Signature, K: KernelKind> Kernel<S, K> {
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
    /// # use sluice_host as sluice;
    /// use sluice::{Kernel, KernelDecl, Mut};
    /// struct Fill;
    /// // SAFETY: (as `#[kernel]` emits it) `fill` writes only `out`, in bounds.
    /// unsafe impl KernelDecl for Fill {
    ///     const NAME: &'static str = "fill";
    ///     type Signature = (Mut<f32>, f32);
    ///     type Kind = sluice::Checked;
    /// }
    /// const FILL: Kernel<(Mut<f32>, f32)> = Kernel::of::<Fill>("any PTX"); // error[E0133]
    /// ```
    pub const unsafe fn of<D: KernelDecl<Signature = S, Kind = K>>(ptx: &'static str) -> Kernel<S, K> {
        Kernel { ptx, specific: None, name: D::NAME, cpu: D::CPU, source: D::SOURCE, _sig: PhantomData }
    }

    /// As [`Kernel::of`], with the kernel crate also built for an architecture-specific
    /// target (`sm_90a`): a device of `specific.capability` launches `specific.ptx`, any
    /// other device `ptx`. A kernel only the specific build has (one that uses Hopper's
    /// warpgroup MMA) is [`Error::KernelNeedsArch`] on other devices. `sluice::include_kernels!`
    /// calls it for a kernel crate its build script embedded with a specific target.
    ///
    /// # Safety
    /// As [`Kernel::of`], for both texts.
    pub const unsafe fn of_with_specific<D: KernelDecl<Signature = S, Kind = K>>(
        ptx: &'static str,
        specific: SpecificPtx,
    ) -> Kernel<S, K> {
        Kernel { ptx, specific: Some(specific), name: D::NAME, cpu: D::CPU, source: D::SOURCE, _sig: PhantomData }
    }

    /// The PTX this handle launches on a device of compute capability `cc` (`(0, 0)`: the
    /// CPU backend, which checks the declaration against whichever text has the entry), or
    /// [`Error::KernelNeedsArch`].
    fn ptx_for(&self, cc: (u32, u32)) -> Result<&'static str> {
        let Some(sp) = self.specific else { return Ok(self.ptx) };
        if sp.capability == cc || (sp.only && cc == (0, 0)) {
            Ok(sp.ptx)
        } else if sp.only {
            Err(Error::KernelNeedsArch { name: self.name, arch: sp.arch, device: cc })
        } else {
            Ok(self.ptx)
        }
    }
}

impl<S: Signature, K: KernelKind> Kernel<S, K> {
    /// Checks, from the PTX text alone (no driver needed), that the entry exists and that its
    /// parameters have the sizes the declaration lowers to. Loading does the same check.
    /// Checked and unchecked kernels alike.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::{Error, Kernel, Mut};
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
        // Every text that has the entry (one at least).
        if let Some(sp) = self.specific {
            let found = ptx::entry_params(sp.ptx, self.name).map_err(|e| match e {
                ptx::ParamsError::NoEntry => Error::KernelNotFound { name: self.name },
                ptx::ParamsError::Unreadable(reason) => Error::KernelParamsUnreadable { name: self.name, reason },
            })?;
            check_params::<S>(self.name, &found)?;
            if sp.only {
                return Ok(());
            }
        }
        let found = ptx::entry_params(self.ptx, self.name).map_err(|e| match e {
            ptx::ParamsError::NoEntry => Error::KernelNotFound { name: self.name },
            ptx::ParamsError::Unreadable(reason) => Error::KernelParamsUnreadable { name: self.name, reason },
        })?;
        check_params::<S>(self.name, &found)
    }
}

/// `Ok` if `found` (what the PTX says of an entry's parameters) agrees with `S`: the sizes
/// the parameters lower to, and, where `#[kernel]` left its record, each parameter's kind
/// and the size and alignment of its element or value type.
pub(crate) fn check_params<S: Signature>(name: &'static str, found: &EntryParams) -> Result<()> {
    if !S::matches(&found.sizes) {
        let mut expected = Vec::new();
        S::sizes(&mut expected);
        return Err(Error::KernelSignature { name, expected, found: found.sizes.clone() });
    }
    let Some(abi) = &found.abi else { return Ok(()) };
    match S::abi_mismatch(abi) {
        None => Ok(()),
        Some((index, host)) => Err(Error::KernelParamType {
            name,
            index: index as u32,
            param: abi.get(index).map(|p| p.name.as_str().into()),
            host,
            device: abi.get(index).map(|p| layout_of((p.kind, p.size, p.align))),
        }),
    }
}

impl<S, K> Kernel<S, K> {
    /// The entry's name.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, Mut};
    /// # const K: Kernel<(Mut<f32>,)> = unsafe { Kernel::new("", "k") };
    /// assert_eq!(K.name(), "k");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX module text.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, Mut};
    /// # const K: Kernel<(Mut<f32>,)> = unsafe { Kernel::new(".version 7.8", "k") };
    /// assert!(K.ptx().starts_with(".version"));
    /// ```
    pub const fn ptx(&self) -> &'static str {
        self.ptx
    }
}

impl<S, K> std::fmt::Debug for Kernel<S, K> {
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
/// the signature again the first time a thread launches it; the thread then keeps the
/// last few kernels it launched, found again without a lock.)
///
/// ```no_run
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// let fill = gpu.function(&FILL)?; // loads and JIT-compiles the PTX now, not at first launch
/// sluice::scope(gpu, |s| {
///     let out = s.alloc_buffer::<f32>(256)?;
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(out.as_columns_mut());
///         st.launch(&fill, LaunchConfig::for_elements(256, 256), (&mut v, 2.0))
///     })
/// })
/// # }
/// ```
pub struct Function<S, K = Checked> {
    /// Keeps the context and the module holding `target.func` loaded.
    gpu: Gpu,
    target: LaunchTarget,
    _sig: PhantomData<fn() -> (S, K)>,
}

impl<S, K> Clone for Function<S, K> {
    fn clone(&self) -> Self {
        Function { gpu: self.gpu.clone(), target: self.target, _sig: PhantomData }
    }
}

impl<S, K> Function<S, K> {
    /// Registers per thread the driver compiled the kernel to (`CU_FUNC_ATTRIBUTE_NUM_REGS`),
    /// what bounds how many threads an SM holds at once; 0 on the CPU backend.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
    /// # use sluice::{Kernel, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill") };
    /// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
    /// let f = gpu.function(&FILL)?;
    /// println!("fill: {} registers per thread", f.registers());
    /// # Ok(())
    /// # }
    /// ```
    pub fn registers(&self) -> u32 {
        self.target.registers
    }
}

impl<S, K> std::fmt::Debug for Function<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("name", &self.target.name).finish_non_exhaustive()
    }
}

/// Something a lane can launch: a [`Kernel`] descriptor or a resolved [`Function`].
/// Sealed: these two are all there are, so the parameter list `Sig` a launch is checked
/// against is always the one the function was resolved (and checked) with.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// # use sluice::{Kernel, LaunchConfig, Mut};
/// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill") };
/// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
/// let resolved = gpu.function(&FILL)?;
/// sluice::scope(gpu, |s| {
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
/// # use sluice_host as sluice;
/// use sluice::{Launchable, Mut};
/// struct Retyped;
/// // error[E0277]: the trait bound `Retyped: Resolve` is not satisfied (sealed)
/// impl Launchable for Retyped {
///     type Sig = (Mut<u8>, f32);
/// }
/// ```
///
/// Declare the kernel with its own parameters instead ([`Kernel::new`], `#[kernel]`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel that can be launched",
    label = "not a `Kernel` or a `Function`",
    note = "launch a `Kernel` handle (from `#[kernel]` through `include_kernels!`, or `Kernel::new`) or a resolved `Function`; `Launchable` is sealed, so a type of one's own cannot be launched"
)]
pub trait Launchable: sealed::Resolve {
    /// The kernel's parameter list.
    type Sig: Signature;
    /// Whether its launches are checked ([`Checked`]) or `unsafe` ([`Unchecked`]).
    type Kind: KernelKind;
}

/// A [`Launchable`] whose launches the types check: what the safe
/// [`Stream::launch`](crate::Stream::launch) takes. Kernels declared `#[kernel(unchecked)]`
/// (or with [`Kernel::new_unchecked`]) are not: their launches are `unsafe`.
///
/// ```compile_fail,E0277
/// # use sluice_host as sluice;
/// # use sluice::{Kernel, LaunchConfig, PtrMut, Unchecked};
/// const RAW: Kernel<(PtrMut<f32>, u32), Unchecked> = Kernel::new_unchecked("", "fill_raw");
/// # fn demo(gpu: &sluice::Gpu) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let m = s.alloc_buffer::<f32>(64)?;
///     s.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.launch(&RAW, LaunchConfig::for_elements(64, 64), (&mut v, 64u32)) // error[E0277]: needs `unsafe`
///     })
/// })
/// # }
/// ```
///
/// The fix: `unsafe { st.launch_unchecked(&RAW, cfg, (&mut v, 64u32)) }`, with a
/// `// SAFETY:` comment saying why the kernel stays within `v` and writes only it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is an unchecked kernel: its launch needs `unsafe`",
    label = "declared with `#[kernel(unchecked)]` (raw pointers, references or by-value structs)",
    note = "launch it with `unsafe {{ st.launch_unchecked(&kernel, cfg, args) }}` and a `// SAFETY:` comment saying why the kernel stays in bounds and writes only what it is given to write"
)]
pub trait CheckedLaunch: Launchable {}

impl<S: Signature, K: KernelKind> Launchable for Kernel<S, K> {
    type Sig = S;
    type Kind = K;
}
impl<S: Signature> CheckedLaunch for Kernel<S, Checked> {}
impl<S: Signature, K: KernelKind> sealed::Resolve for Kernel<S, K> {
    fn resolve(&self, gpu: &Gpu) -> Result<LaunchTarget> {
        let ptx = match self.specific {
            None => self.ptx,
            Some(_) => self.ptx_for(gpu.info().compute_capability)?,
        };
        let key = RecentKey::of(self, ptx, gpu);
        if let Some(target) = recent::find(&key) {
            return Ok(target);
        }
        let entry = EntryPoint { ptx: PtxText::Static(ptx), name: self.name, cpu: self.cpu, source: self.source };
        let (target, checked) = gpu.resolve_checked::<S>(entry)?;
        if checked {
            recent::remember(key, target);
        }
        Ok(target)
    }
}

/// A launch of a [`Kernel`] handle as [`recent`] remembers it: the device's module cache (its
/// process-unique id), the PTX text (address and length, as that cache keys it), the entry
/// name (address and length), the declared signature, and the rest of the handle that the
/// resolution reads (its CPU entry's address, its source lines).
#[derive(Clone, Copy, PartialEq)]
struct RecentKey {
    cache: u64,
    ptx: (usize, usize),
    name: (usize, usize),
    sig: TypeId,
    cpu: Option<usize>,
    /// The source lines, the file name by address and length (a static string, as the PTX
    /// and the name: compared without reading it).
    source: Option<(usize, usize, u32, u32)>,
}

impl RecentKey {
    /// The key of a launch of `k` (its text `ptx` for this device) on `gpu`.
    fn of<S: Signature, K: KernelKind>(k: &Kernel<S, K>, ptx: &'static str, gpu: &Gpu) -> RecentKey {
        RecentKey {
            cache: gpu.inner.modules.id(),
            ptx: (ptx.as_ptr() as usize, ptx.len()),
            name: (k.name.as_ptr() as usize, k.name.len()),
            sig: TypeId::of::<S>(),
            cpu: k.cpu.map(|e| e as usize),
            source: k.source.map(|(file, first, last)| (file.as_ptr() as usize, file.len(), first, last)),
        }
    }
}

/// The last few resolutions of [`Kernel`] handles on this thread whose signature was checked
/// against the entry's parameters and agreed: a launch of the same handle again (same
/// device, PTX, entry, signature type) takes no lock and checks nothing. Exact: the device's
/// cache never forgets a function, and its parameters and the check's verdict never change,
/// so the resolution would return this target again. Per thread, so no lock; each thread
/// checks a (module, kernel, signature) the first time it launches it.
mod recent {
    use std::cell::RefCell;

    use super::{LaunchTarget, RecentKey};

    /// How many resolutions a thread keeps (a loop usually launches a few kernels).
    const KEPT: usize = 4;

    /// The kept resolutions, which one is replaced next, and which one was found last.
    type Recent = ([Option<(RecentKey, LaunchTarget)>; KEPT], usize, usize);

    thread_local! {
        static RECENT: RefCell<Recent> = const { RefCell::new(([None; KEPT], 0, 0)) };
    }

    /// The target kept for `key`, if this thread keeps it. The one found last is looked at
    /// first: a loop launches the same kernel again, or a few in turn.
    pub(super) fn find(key: &RecentKey) -> Option<LaunchTarget> {
        RECENT
            .try_with(|r| {
                let mut r = r.try_borrow_mut().ok()?;
                if let Some((k, t)) = &r.0[r.2] {
                    if k == key {
                        return Some(*t);
                    }
                }
                let at = r.0.iter().position(|e| e.as_ref().is_some_and(|(k, _)| k == key))?;
                r.2 = at;
                r.0[at].as_ref().map(|(_, t)| *t)
            })
            .ok()
            .flatten()
    }

    /// Keeps `target` for `key`, in place of the oldest kept.
    pub(super) fn remember(key: RecentKey, target: LaunchTarget) {
        let _ = RECENT.try_with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                let (kept, next, last) = &mut *r;
                kept[*next] = Some((key, target));
                *last = *next;
                *next = (*next + 1) % KEPT;
            }
        });
    }
}

impl<S: Signature, K: KernelKind> Launchable for Function<S, K> {
    type Sig = S;
    type Kind = K;
}
impl<S: Signature> CheckedLaunch for Function<S, Checked> {}
impl<S: Signature, K: KernelKind> sealed::Resolve for Function<S, K> {
    fn resolve(&self, gpu: &Gpu) -> Result<LaunchTarget> {
        // Only on the `Gpu` (or a clone of it) that resolved it: each `Gpu::cuda` value loads
        // its own modules (and fault page), which the launch must not outlive; a lane of
        // another `Gpu` value would run code that value may unload while the kernel runs.
        if !Arc::ptr_eq(self.gpu.context(), gpu.context()) {
            return Err(Error::WrongDevice { what: self.target.name });
        }
        Ok(self.target)
    }
}

impl Gpu {
    /// Loads `kernel`'s module (once per device) and looks the entry up, checking its
    /// parameters against the declaration.
    ///
    /// # Errors
    /// [`Error::LoadModule`], [`Error::DriverTooOld`] (the PTX needs a newer driver),
    /// [`Error::KernelNotFound`], [`Error::KernelSignature`],
    /// [`Error::KernelParamsUnreadable`] (the parameters could not be checked),
    /// [`Error::KernelNeedsArch`] (a kernel only the crate's sm_90a build has, on another GPU).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # use sluice::{Kernel, Mut};
    /// # const FILL: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new("", "fill_column") };
    /// // FILL writes a value into a column: a `#[kernel]` of yours, or `sluice::kernels::fill_column` (feature "kernels")
    /// let gpu = sluice::Gpu::new(0)?;
    /// let fill = gpu.function(&FILL)?;
    /// # let _ = fill;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn function<S: Signature, K: KernelKind>(&self, kernel: &Kernel<S, K>) -> Result<Function<S, K>> {
        let target = self.resolve::<S>(EntryPoint {
            ptx: PtxText::Static(kernel.ptx_for(self.info().compute_capability)?),
            name: kernel.name,
            cpu: kernel.cpu,
            source: kernel.source,
        })?;
        Ok(Function { gpu: self.clone(), target, _sig: PhantomData })
    }

    /// The kernel `name` of PTX made at run time (generated, read from a file, compiled by
    /// NVRTC): [`function`](Gpu::function) for text that is not `'static`. The text is
    /// loaded once (as a module of this device, kept with the device's other modules until
    /// its last `Gpu` handle is dropped, and shared by every function of the same text);
    /// nothing is leaked. The entry name is kept for the process (a few bytes per distinct
    /// name), since errors and traces name kernels by `&'static str`.
    ///
    /// On the CPU backend it is [`Error::NoCpuEntry`]: PTX alone cannot run there.
    ///
    /// # Safety
    /// As [`Kernel::new`]: the entry `name` of `ptx` writes only through its [`Mut`]
    /// parameters (checked kernels), stays within every slice's length, and takes the
    /// parameters `S` lowers to, in order. For an [`Unchecked`] kernel, each launch is
    /// vouched for where it is made (`launch_unchecked`).
    ///
    /// # Errors
    /// As [`function`](Gpu::function).
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// use sluice::{Gpu, Mut};
    /// let ptx: String = std::fs::read_to_string("fill.ptx").expect("PTX");
    /// let gpu = Gpu::new(0)?;
    /// // SAFETY: `fill` writes out[i] for i < out.len() only, and reads nothing.
    /// let fill = unsafe { gpu.function_from_ptx::<(Mut<f32>, f32), sluice::Checked>(ptx, "fill") }?;
    /// # let _ = fill;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub unsafe fn function_from_ptx<S: Signature, K: KernelKind>(
        &self,
        ptx: impl Into<std::sync::Arc<str>>,
        name: &str,
    ) -> Result<Function<S, K>> {
        let target = self.resolve::<S>(EntryPoint {
            ptx: PtxText::Shared(ptx.into()),
            name: intern(name),
            cpu: None,
            source: None,
        })?;
        Ok(Function { gpu: self.clone(), target, _sig: PhantomData })
    }

    /// The function `name` of `ptx` on this device, its PTX parameters checked against `S`
    /// on every call (the cache is shared by every declaration of the entry).
    fn resolve<S: Signature>(&self, entry: EntryPoint) -> Result<LaunchTarget> {
        self.resolve_checked::<S>(entry).map(|(target, _)| target)
    }

    /// [`resolve`](Gpu::resolve), and whether `S` was checked against the entry's parameters
    /// (`false`: the CPU backend with no PTX of the entry, where nothing could be checked).
    fn resolve_checked<S: Signature>(&self, entry: EntryPoint) -> Result<(LaunchTarget, bool)> {
        let name = entry.name;
        let mut checked = false;
        let check = |found: &EntryParams| {
            checked = true;
            check_params::<S>(name, found)
        };
        let info = self.info();
        let shared = (info.max_shared_memory_per_block as usize, info.max_shared_memory_per_block_optin as usize);
        let target = self.inner.modules.resolve(self.context(), self.driver_version(), shared, entry, check)?;
        Ok((target, checked))
    }
}

/// `name` as a `&'static str`: each distinct name is allocated once for the process.
fn intern(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let found = ptx::entry_params(PTX, "fill_column").unwrap();
        assert_eq!(check_params::<(Mut<f32>, f32)>("fill_column", &found), Ok(()));
        assert_eq!(
            check_params::<(Mut<f32>, f64)>("fill_column", &found),
            Err(Error::KernelSignature { name: "fill_column", expected: vec![8, 8, 8], found: vec![8, 8, 4] })
        );
    }

    /// The record `#[kernel]` leaves beside an entry: what the device compiled.
    fn recorded(params: &[(&str, u8, usize, usize)]) -> EntryParams {
        let abi = params.iter().map(|&(n, kind, size, align)| AbiParam { name: n.into(), kind, size, align }).collect();
        EntryParams { sizes: ptx::param_sizes(PTX, "fill_column").unwrap(), abi: Some(abi), launch: Default::default() }
    }

    #[test]
    fn element_types_are_checked_against_the_device_record() {
        let agreeing = recorded(&[("out", b'm', 4, 4), ("value", b'v', 4, 4)]);
        assert_eq!(check_params::<(Mut<f32>, f32)>("fill_column", &agreeing), Ok(()));
        // The same sizes (two words, four bytes) with another element type: refused, named.
        assert_eq!(
            check_params::<(Mut<u16>, f32)>("fill_column", &agreeing),
            Err(Error::KernelParamType {
                name: "fill_column",
                index: 0,
                param: Some("out".into()),
                host: Some(ParamLayout { kind: ParamKind::WrittenSlice, size: 2, align: 2 }),
                device: Some(ParamLayout { kind: ParamKind::WrittenSlice, size: 4, align: 4 }),
            })
        );
        // A read-only slice declared where the device writes: refused.
        assert!(matches!(
            check_params::<(Ref<f32>, f32)>("fill_column", &agreeing),
            Err(Error::KernelParamType { index: 0, .. })
        ));
        // A value of another type of the same size (i32 for f32) is the same bits: it passes
        // the size check; its kind and layout agree, so the record cannot tell them apart.
        assert_eq!(check_params::<(Mut<f32>, i32)>("fill_column", &agreeing), Ok(()));
        // A device element of 8 bytes under a host element of 4 (a `cfg` per target).
        let wide = recorded(&[("out", b'm', 8, 8), ("value", b'v', 4, 4)]);
        let err = check_params::<(Mut<f32>, f32)>("fill_column", &wide).unwrap_err();
        assert!(err.to_string().contains("`out`"), "{err}");
        // A record with a parameter more than the declaration has.
        let longer = recorded(&[("out", b'm', 4, 4), ("value", b'v', 4, 4), ("x", b'v', 4, 4)]);
        assert!(matches!(
            check_params::<(Mut<f32>, f32)>("fill_column", &longer),
            Err(Error::KernelParamType { index: 2, host: None, .. })
        ));
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

    /// A CPU entry that is never run (the tests below only resolve).
    // SAFETY: never called.
    unsafe fn never(
        _: *const *mut std::ffi::c_void,
        _: &crate::check::CpuLaunch,
    ) -> std::result::Result<(), crate::check::CpuLaunchError> {
        unreachable!()
    }

    /// `fill_column` of `ptx` declared with parameters `S` and a CPU entry.
    fn declared<S: Signature>(ptx: &'static str) -> Kernel<S> {
        Kernel { ptx, specific: None, name: "fill_column", cpu: Some(never), source: None, _sig: PhantomData }
    }

    fn key_of<S: Signature>(k: &Kernel<S>, gpu: &Gpu) -> RecentKey {
        RecentKey::of(k, k.ptx, gpu)
    }

    #[test]
    fn a_handle_with_a_specific_build_picks_the_text_by_compute_capability() {
        const PORTABLE: &str = ".visible .entry k(\n .param .u64 p0\n)\n{ ret; }";
        const HOPPER: &str =
            ".visible .entry k(\n .param .u64 p0\n)\n{ ret; }\n.visible .entry h(\n .param .u64 p0\n)\n{ ret; }";
        let sp = |only| SpecificPtx { arch: "sm_90a", capability: (9, 0), ptx: HOPPER, only };
        let both: Kernel<(u64,)> =
            Kernel { ptx: PORTABLE, specific: Some(sp(false)), name: "k", cpu: None, source: None, _sig: PhantomData };
        assert_eq!(both.ptx_for((9, 0)), Ok(HOPPER));
        assert_eq!(both.ptx_for((8, 0)), Ok(PORTABLE));
        assert_eq!(both.ptx_for((0, 0)), Ok(PORTABLE));
        assert_eq!(both.check_signature(), Ok(()));
        let only: Kernel<(u64,)> =
            Kernel { ptx: PORTABLE, specific: Some(sp(true)), name: "h", cpu: None, source: None, _sig: PhantomData };
        assert_eq!(only.ptx_for((9, 0)), Ok(HOPPER));
        assert_eq!(only.ptx_for((0, 0)), Ok(HOPPER), "the CPU backend checks against the text that has it");
        assert_eq!(only.ptx_for((10, 0)), Err(Error::KernelNeedsArch { name: "h", arch: "sm_90a", device: (10, 0) }));
        assert_eq!(only.check_signature(), Ok(()));
        let e = Error::KernelNeedsArch { name: "h", arch: "sm_90a", device: (8, 0) }.to_string();
        assert!(e.contains("sm_90a") && e.contains("8.0"), "{e}");
    }

    #[test]
    fn a_thread_keeps_a_resolution_only_once_its_signature_was_checked() {
        use sealed::Resolve;
        let gpu = Gpu::cpu();
        let good = declared::<(Mut<f32>, f32)>(PTX);
        assert!(recent::find(&key_of(&good, &gpu)).is_none());
        let first = good.resolve(&gpu).unwrap();
        assert!(recent::find(&key_of(&good, &gpu)).is_some(), "kept once checked");
        assert_eq!(good.resolve(&gpu).unwrap().name, first.name);
        // The same entry under another signature type: checked (and refused) every time,
        // although the entry's resolution is kept for the first.
        let bad = declared::<(Mut<f32>, f64)>(PTX);
        for _ in 0..2 {
            assert_eq!(
                bad.resolve(&gpu).unwrap_err(),
                Error::KernelSignature { name: "fill_column", expected: vec![8, 8, 8], found: vec![8, 8, 4] }
            );
            assert!(recent::find(&key_of(&bad, &gpu)).is_none());
        }
        // Another `Gpu` value has its own module cache: nothing kept for it yet.
        let other = Gpu::cpu();
        assert!(recent::find(&key_of(&good, &other)).is_none());
        // No PTX of the entry (nothing to check): resolved, not kept.
        let unchecked = declared::<(Mut<f32>, f32)>("");
        assert!(unchecked.resolve(&gpu).is_ok());
        assert!(recent::find(&key_of(&unchecked, &gpu)).is_none());
    }

    #[test]
    fn kernels_are_plain_send_sync_copy_values() {
        fn assert<T: Send + Sync + Copy>() {}
        assert::<Kernel<(Mut<f32>, Ref<f32>, f32)>>();
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Function<(Mut<f32>,)>>();
    }
}
