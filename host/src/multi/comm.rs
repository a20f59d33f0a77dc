//! What the collectives run through and on: the [`Communicator`] (NCCL's communicators,
//! or host loops on the CPU backend), each lane's part ([`Rank`], made on the lane by
//! [`Stream::rank`]), the reductions ([`ReduceOp`], [`Reducible`]).

use std::marker::PhantomData;
use std::ops::{Add, Mul};

use bytemuck::Pod;

use super::scope::check_devices;
use super::sealed;
use crate::device::{Backend, Gpu};
use crate::error::{Error, Result};
use crate::lane::{Lane, Stream};
use crate::nccl::{self, RawComm};
use crate::span::Span;
use crate::view::{ColumnView, ColumnViewMut};

/// A reduction of a collective ([`MultiScope::all_reduce`](crate::MultiScope::all_reduce), [`MultiScope::reduce_scatter`](crate::MultiScope::reduce_scatter)),
/// element by element over the ranks.
///
/// ```
/// # use sluice_host as sluice;
/// assert_eq!(sluice::ReduceOp::Max.to_string(), "max");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (integers wrap, as NCCL's).
    Sum,
    /// The product (integers wrap).
    Prod,
    /// The largest.
    Max,
    /// The smallest.
    Min,
}

impl ReduceOp {
    pub(super) fn nccl(self) -> i32 {
        match self {
            ReduceOp::Sum => nccl::op::SUM,
            ReduceOp::Prod => nccl::op::PROD,
            ReduceOp::Max => nccl::op::MAX,
            ReduceOp::Min => nccl::op::MIN,
        }
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        })
    }
}

/// Element types the reducing collectives take: those NCCL reduces (`i8`, `u8`, `i32`,
/// `u32`, `i64`, `u64`, `f32`, `f64`). Broadcast and all-gather take any [`Pod`] type
/// (they move bytes).
///
/// ```
/// # use sluice_host as sluice;
/// fn sums<T: sluice::Reducible>() {}
/// sums::<f32>();
/// sums::<u64>();
/// ```
#[diagnostic::on_unimplemented(
    message = "NCCL cannot reduce `{Self}`",
    label = "not an element type NCCL reduces",
    note = "the reducing collectives (all-reduce, reduce-scatter) take i8, u8, i32, u32, i64, u64, f32 and f64; broadcast and all-gather take any `Pod` type"
)]
pub trait Reducible: Pod + sealed::Sealed {
    #[doc(hidden)]
    const NCCL_TYPE: i32;
    #[doc(hidden)]
    fn combine(op: ReduceOp, a: Self, b: Self) -> Self;
}

/// `Reducible` for NCCL's element types; `add` and `mul` as NCCL computes them (integers
/// wrap, floats round), for the CPU backend's host loops.
macro_rules! reducible {
    ($add:ident, $mul:ident: $($t:ty => $code:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            const NCCL_TYPE: i32 = nccl::dtype::$code;
            fn combine(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum => a.$add(b),
                    ReduceOp::Prod => a.$mul(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
        }
    )*};
}
reducible!(wrapping_add, wrapping_mul: i8 => INT8, u8 => UINT8, i32 => INT32, u32 => UINT32, i64 => INT64, u64 => UINT64);
reducible!(add, mul: f32 => FLOAT32, f64 => FLOAT64);

/// A group of NCCL communicators, one rank per device, in one process: what the
/// collectives of a [`MultiScope`](crate::MultiScope) run through. On the CPU backend, the same collectives
/// run as host loops on the lanes (no NCCL).
///
/// Making one is slow (NCCL connects every pair of GPUs and allocates its buffers on each:
/// hundreds of milliseconds): make it once, outside the scopes, and use it in many. It must
/// outlive the scopes that use it (collectives borrow it for the scope). Dropping it
/// destroys the communicators (`ncclCommDestroy`).
///
/// NCCL is loaded at the first `Communicator::new` (see [`Communicator::nccl_version`] for
/// where it is looked for); `NCCL_NVLS_ENABLE=0` is set first unless the environment
/// sets it.
///
/// ```
/// # use sluice_host as sluice;
/// # fn main() -> sluice::Result<()> {
/// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
/// let comm = sluice::Communicator::new(&gpus)?;
/// assert_eq!(comm.ranks(), 2);
/// # Ok(()) }
/// ```
pub struct Communicator {
    pub(super) gpus: Vec<Gpu>,
    pub(super) kind: CommKind,
}

pub(super) enum CommKind {
    Cuda { lib: &'static nccl::Lib, comms: Vec<RawComm> },
    Cpu,
}

impl Communicator {
    /// One rank per device of `gpus`, rank `i` on `gpus[i]` (`ncclCommInitAll`; on the CPU
    /// backend, host loops).
    ///
    /// # Errors
    /// [`Error::Devices`] for no device, mixed backends, or a CUDA device given twice (NCCL
    /// runs one rank per GPU); [`Error::NcclUnavailable`] (naming where it looked) if NCCL
    /// cannot be loaded; [`Error::Nccl`] if NCCL fails; [`Error::ContextLost`].
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus: Vec<_> = (0..sluice::Gpu::count()?).map(sluice::Gpu::cuda).collect::<Result<_, _>>()?;
    /// let comm = sluice::Communicator::new(&gpus)?;
    /// println!("{} ranks, NCCL {}", comm.ranks(), sluice::Communicator::nccl_version()?);
    /// # Ok(()) }
    /// ```
    pub fn new(gpus: &[Gpu]) -> Result<Communicator> {
        check_devices(gpus)?;
        if gpus[0].backend() == Backend::Cpu {
            return Ok(Communicator { gpus: gpus.to_vec(), kind: CommKind::Cpu });
        }
        let mut ordinals: Vec<i32> = Vec::with_capacity(gpus.len());
        for gpu in gpus {
            if let Some(error) = gpu.context().lost() {
                return Err(Error::ContextLost { error, lane: None, fault: None, kernels: Vec::new() });
            }
            let o = gpu.info().ordinal as i32;
            if ordinals.contains(&o) {
                return Err(Error::Devices {
                    problem: format!("CUDA device {o} is given twice: NCCL runs one rank per GPU"),
                });
            }
            ordinals.push(o);
        }
        let lib = nccl::lib().map_err(|e| Error::NcclUnavailable { searched: e.searched, reason: e.reason })?;
        let comms = lib.init_all(&ordinals).map_err(nccl_error)?;
        Ok(Communicator { gpus: gpus.to_vec(), kind: CommKind::Cuda { lib, comms } })
    }

    /// How many ranks (devices).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let comm = sluice::Communicator::new(&[sluice::Gpu::cpu()])?;
    /// assert_eq!(comm.ranks(), 1);
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn ranks(&self) -> usize {
        self.gpus.len()
    }

    /// The devices, rank order.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let comm = sluice::Communicator::new(&[sluice::Gpu::cpu()])?;
    /// assert_eq!(comm.gpus().len(), 1);
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Whether the collectives run through NCCL (CUDA devices) or as host loops (the CPU
    /// backend).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let comm = sluice::Communicator::new(&[sluice::Gpu::cpu()])?;
    /// assert!(!comm.uses_nccl());
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn uses_nccl(&self) -> bool {
        matches!(self.kind, CommKind::Cuda { .. })
    }

    /// Loads NCCL if it is not yet, and returns its version (`major * 10000 + minor * 100 +
    /// patch`: 22105 for 2.21.5). NCCL is looked for, in order: in `SLUICE_NCCL` (a path; if
    /// set, nowhere else), as `libnccl.so.2` and `libnccl.so` through the dynamic loader
    /// (`LD_LIBRARY_PATH`, `ld.so.cache`), then as `nvidia/nccl/lib/libnccl.so.2` in every
    /// Python `site-packages` folder found (`python3`'s, `/usr/lib`, `/usr/local/lib`,
    /// `~/.local/lib`, `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `/opt/conda`) — where PyTorch's pip
    /// package puts it.
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`] with every place tried.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// match sluice::Communicator::nccl_version() {
    ///     Ok(v) => println!("NCCL {}.{}.{}", v / 10000, v / 100 % 100, v % 100),
    ///     Err(e) => println!("{e}"), // says where it looked
    /// }
    /// ```
    pub fn nccl_version() -> Result<u32> {
        let lib = nccl::lib().map_err(|e| Error::NcclUnavailable { searched: e.searched, reason: e.reason })?;
        lib.version().map_err(nccl_error)
    }

    /// Where NCCL was loaded from (loading it if it is not yet).
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`] with every place tried.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// if let Ok(path) = sluice::Communicator::nccl_path() {
    ///     println!("NCCL from {path}");
    /// }
    /// ```
    pub fn nccl_path() -> Result<String> {
        let lib = nccl::lib().map_err(|e| Error::NcclUnavailable { searched: e.searched, reason: e.reason })?;
        Ok(lib.path().to_string())
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        if let CommKind::Cuda { lib, comms } = &self.kind {
            for (gpu, comm) in self.gpus.iter().zip(comms) {
                if gpu.context().is_dead() {
                    continue; // the device was reset: NCCL's resources went with its context
                }
                // SAFETY: made by `init_all`, destroyed once (here); collectives borrow the
                // communicator for their scope, which joined every lane that used it.
                if let Err(e) = unsafe { lib.destroy(*comm) } {
                    gpu.record_error(nccl_error(e));
                }
            }
        }
    }
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator").field("ranks", &self.gpus.len()).field("nccl", &self.uses_nccl()).finish()
    }
}

pub(super) fn nccl_error(e: nccl::NcclError) -> Error {
    Error::Nccl { call: e.call, code: e.code, message: e.message }
}

/// One lane's part of a collective: its input and output, bound on that lane. Made on the
/// lane ([`Stream::rank`], [`Stream::rank_in_place`], [`Stream::rank_receive`]), given to a
/// collective of the [`MultiScope`](crate::MultiScope), which enqueues the lane's NCCL call there and hands the
/// output back behind a fence recorded after it.
///
/// ```
/// # use sluice_host as sluice;
/// # let gpus = [sluice::Gpu::cpu()];
/// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
///     let m = d.alloc_buffer::<f32>(16)?;
///     let rank = d.lane()?.enter(|st| {
///         let mut v = st.bind(m.as_columns_mut());
///         st.zero(&mut v)?;
///         st.rank_in_place(v)
///     })?;
///     assert_eq!(rank.len(), 16);
///     Ok(())
/// }))?;
/// # Ok::<(), sluice::Error>(())
/// ```
pub struct Rank<'scope, T> {
    pub(super) lane: Lane<'scope>,
    /// The input (`None`: a receiving rank of a broadcast).
    pub(super) send: Option<Span>,
    /// The output.
    pub(super) recv: Span,
    /// The input and output are one buffer.
    pub(super) in_place: bool,
    /// The input read and the output written for the scope, as the views they came from.
    _borrow: PhantomData<(&'scope [T], &'scope mut [T])>,
}

impl<T> Rank<'_, T> {
    /// Elements of the output.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// # sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    /// # let m = d.alloc_buffer::<u8>(3)?;
    /// let rank = d.lane()?.enter(|st| st.rank_receive(st.bind(m.as_columns_mut())))?;
    /// assert_eq!(rank.len(), 3);
    /// # Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.recv.len()
    }

    /// Always false: ranks of zero elements are refused.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// # sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    /// # let m = d.alloc_buffer::<u8>(3)?;
    /// let rank = d.lane()?.enter(|st| st.rank_receive(st.bind(m.as_columns_mut())))?;
    /// assert!(!rank.is_empty());
    /// # Ok(()) }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.recv.len() == 0
    }
}

impl<T> std::fmt::Debug for Rank<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rank")
            .field("lane", &self.lane.id())
            .field("send", &self.send.map(|s| s.len()))
            .field("recv", &self.recv.len())
            .field("in_place", &self.in_place)
            .finish()
    }
}

/// Checks a rank's buffer: not empty, contiguous (NCCL takes flat buffers), this lane's
/// device's memory.
fn check_rank_span(st: &Stream<'_, '_>, s: &Span) -> Result<()> {
    if s.len() == 0 {
        return Err(Error::ZeroSized);
    }
    if s.cols > 1 && s.ld != s.rows {
        return Err(Error::Collective {
            op: "rank",
            problem: format!(
                "the view's {} columns are padded (ld {} > rows {}): a collective needs one contiguous buffer",
                s.cols, s.ld, s.rows
            ),
        });
    }
    if s.ctx != st.gpu().ctx_id() {
        return Err(Error::WrongDevice { what: "rank" });
    }
    Ok(())
}

impl<'scope, 'lane> Stream<'scope, 'lane> {
    /// This lane's part of a collective: it reads `send` and writes `recv`, both views on
    /// this lane (so their earlier work on the lane comes first, and any other lane's is
    /// awaited already). `recv` is handed back by the collective, behind a fence.
    ///
    /// # Errors
    /// [`Error::ZeroSized`]; [`Error::Collective`] for padded (non-contiguous) columns;
    /// [`Error::WrongDevice`] for memory of another device than this lane's.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let comm = sluice::Communicator::new(&gpus)?;
    /// let x = [1.5f32; 8];
    /// sluice::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let (input, out) = (d.upload(&x)?, d.alloc_buffer::<f32>(8)?);
    ///         d.lane()?.enter(|st| {
    ///             let send = st.await_fence(&input)?;
    ///             st.rank(send, st.bind(out.as_columns_mut()))
    ///         })
    ///     })?;
    ///     let _sums = s.all_reduce(&comm, sluice::ReduceOp::Sum, ranks)?; // 3.0 everywhere
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn rank<T: Pod>(
        &self,
        send: ColumnView<'scope, 'lane, T>,
        recv: ColumnViewMut<'scope, 'lane, T>,
    ) -> Result<Rank<'scope, T>> {
        let (s, r) = (send.span(), recv.span());
        check_rank_span(self, &s)?;
        check_rank_span(self, &r)?;
        Ok(Rank { lane: self.lane(), send: Some(s), recv: r, in_place: false, _borrow: PhantomData })
    }

    /// This lane's part of a collective that reads and writes `data` (an in-place
    /// all-reduce, or the root of an in-place broadcast).
    ///
    /// # Errors
    /// As [`rank`](Stream::rank).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u32>(4)?;
    ///     let rank = d.lane()?.enter(|st| st.rank_in_place(st.bind(m.as_columns_mut())))?;
    ///     assert_eq!(rank.len(), 4);
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn rank_in_place<T: Pod>(&self, data: ColumnViewMut<'scope, 'lane, T>) -> Result<Rank<'scope, T>> {
        let d = data.span();
        check_rank_span(self, &d)?;
        Ok(Rank { lane: self.lane(), send: Some(d), recv: d, in_place: true, _borrow: PhantomData })
    }

    /// This lane's part of a broadcast on a rank other than the root: it only receives.
    ///
    /// # Errors
    /// As [`rank`](Stream::rank).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # let gpus = [sluice::Gpu::cpu()];
    /// sluice::scope_multi(&gpus, |s| s.device(0, |d| {
    ///     let m = d.alloc_buffer::<u32>(4)?;
    ///     d.lane()?.enter(|st| st.rank_receive(st.bind(m.as_columns_mut())))?;
    ///     Ok(())
    /// }))?;
    /// # Ok::<(), sluice::Error>(())
    /// ```
    pub fn rank_receive<T: Pod>(&self, recv: ColumnViewMut<'scope, 'lane, T>) -> Result<Rank<'scope, T>> {
        let r = recv.span();
        check_rank_span(self, &r)?;
        Ok(Rank { lane: self.lane(), send: None, recv: r, in_place: false, _borrow: PhantomData })
    }
}

/// Which collective, with its parameter.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kind {
    AllReduce(ReduceOp),
    Broadcast(usize),
    AllGather,
    ReduceScatter(ReduceOp),
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::AllReduce(_) => "all_reduce",
            Kind::Broadcast(_) => "broadcast",
            Kind::AllGather => "all_gather",
            Kind::ReduceScatter(_) => "reduce_scatter",
        }
    }
}
