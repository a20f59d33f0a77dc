//! The collectives of a [`MultiScope`]: all-reduce, broadcast, all-gather,
//! reduce-scatter over one [`Rank`] per device of a [`Communicator`], ordered by fences
//! like any other work. Each checks its ranks, then runs through NCCL ([`nccl`]) or, on
//! the CPU backend, as host loops on the lanes ([`cpu`]).

use std::sync::atomic::Ordering;

use bytemuck::Pod;

use super::comm::{CommKind, Communicator, Kind, Rank, ReduceOp, Reducible};
use super::scope::MultiScope;
use crate::error::{Error, Result};
use crate::fence::Fenced;
use crate::lane::Stream;
use crate::matrix::ColumnsMut;
use crate::trace::SpanKind;
use crate::view::ColumnViewMut;

mod cpu;
mod nccl;

use cpu::enqueue_cpu;
use nccl::enqueue_nccl;

impl<'scope, 'env> MultiScope<'scope, 'env> {
    /// All-reduce: every rank's output gets the element-wise `op` of every rank's input
    /// (`ncclAllReduce`). One rank per device of `comm`, in its order; inputs and outputs of
    /// one length. Returns each rank's output as a hand-off on its lane (rank order), to be
    /// awaited on its device (unbranded: [`Device::adopt`](crate::Device::adopt) brands it, checked).
    ///
    /// Each rank's NCCL call is enqueued on its lane — after everything enqueued there
    /// before, so the input's earlier writes and awaited fences come first — and all ranks'
    /// calls are issued in one `ncclGroupStart`/`ncclGroupEnd` from this thread.
    ///
    /// # Errors
    /// [`Error::Collective`] if the ranks do not fit (count, devices, lengths; nothing is
    /// enqueued); [`Error::Nccl`].
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let comm = sluice::Communicator::new(&gpus)?;
    /// let data = [vec![1i64, 5], vec![4, -2]];
    /// let mut host = gpus[1].pinned_buffer::<i64>(2)?;
    /// sluice::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let m = d.alloc_buffer::<i64>(2)?;
    ///         d.lane()?.enter(|st| {
    ///             let mut v = st.bind(m.as_columns_mut());
    ///             st.copy_to_device(&data[d.index()], &mut v)?;
    ///             st.rank_in_place(v)
    ///         })
    ///     })?;
    ///     let mut out = s.all_reduce(&comm, sluice::ReduceOp::Max, ranks)?;
    ///     let last = out.pop().unwrap();
    ///     s.device(1, |d| {
    ///         let v = d.adopt(last)?;
    ///         d.lane()?.enter(|st| st.copy_to_host(&st.await_fence(v)?, host.as_pinned_mut())).map(drop)
    ///     })
    /// })?;
    /// assert_eq!(&host[..], &[4, 5]);
    /// # Ok(()) }
    /// ```
    pub fn all_reduce<T: Reducible>(
        &'scope self,
        comm: &'scope Communicator,
        op: ReduceOp,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::AllReduce(op), Some(T::NCCL_TYPE), Some(combiner::<T>(op)), ranks)
    }

    /// Broadcast: every rank's output gets the input of rank `root` (`ncclBroadcast`). The
    /// root gives an input ([`Stream::rank`] or [`Stream::rank_in_place`]); the others may
    /// only receive ([`Stream::rank_receive`]). Any [`Pod`] element type.
    ///
    /// # Errors
    /// As [`all_reduce`](MultiScope::all_reduce); a root out of range or without an input.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let comm = sluice::Communicator::new(&gpus)?;
    /// let data = [9u16; 8];
    /// sluice::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let m = d.alloc_buffer::<u16>(8)?;
    ///         d.lane()?.enter(|st| {
    ///             let mut v = st.bind(m.as_columns_mut());
    ///             if d.index() == 0 {
    ///                 st.copy_to_device(&data, &mut v)?;
    ///                 st.rank_in_place(v)
    ///             } else {
    ///                 st.rank_receive(v)
    ///             }
    ///         })
    ///     })?;
    ///     let copies = s.broadcast(&comm, 0, ranks)?;    // device 1 gets device 0's data
    ///     assert_eq!(copies.len(), 2);
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn broadcast<T: Pod>(
        &'scope self,
        comm: &'scope Communicator,
        root: usize,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::Broadcast(root), None, None, ranks)
    }

    /// All-gather: every rank's output (`n * ranks` elements) gets every rank's input (`n`
    /// elements), in rank order (`ncclAllGather`). Inputs and outputs are separate buffers.
    /// Any [`Pod`] element type.
    ///
    /// # Errors
    /// As [`all_reduce`](MultiScope::all_reduce).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let comm = sluice::Communicator::new(&gpus)?;
    /// let parts = [[1u8, 2], [3, 4]];
    /// let mut host = gpus[0].pinned_buffer::<u8>(4)?;
    /// sluice::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let (input, out) = (d.upload(&parts[d.index()])?, d.alloc_buffer::<u8>(4)?);
    ///         d.lane()?.enter(|st| st.rank(st.await_fence(&input)?, st.bind(out.as_columns_mut())))
    ///     })?;
    ///     let mut all = s.all_gather(&comm, ranks)?;
    ///     let first = all.remove(0);
    ///     s.device(0, |d| d.lane()?.enter(|st| {
    ///         st.copy_to_host(&st.await_fence(d.adopt(first)?)?, host.as_pinned_mut()).map(drop)
    ///     }))
    /// })?;
    /// assert_eq!(&host[..], &[1, 2, 3, 4]);
    /// # Ok(()) }
    /// ```
    pub fn all_gather<T: Pod>(
        &'scope self,
        comm: &'scope Communicator,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::AllGather, None, None, ranks)
    }

    /// Reduce-scatter: the inputs (`n * ranks` elements each) are reduced element-wise with
    /// `op`, and rank `r`'s output (`n` elements) gets block `r` of the result
    /// (`ncclReduceScatter`). Inputs and outputs are separate buffers.
    ///
    /// # Errors
    /// As [`all_reduce`](MultiScope::all_reduce).
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let gpus = [sluice::Gpu::cpu(), sluice::Gpu::cpu()];
    /// let comm = sluice::Communicator::new(&gpus)?;
    /// let inputs = [[1u32, 2, 3, 4], [10, 20, 30, 40]];
    /// let mut host = gpus[1].pinned_buffer::<u32>(2)?;
    /// sluice::scope_multi(&gpus, |s| {
    ///     let ranks = s.each_device(|d| {
    ///         let (input, out) = (d.upload(&inputs[d.index()])?, d.alloc_buffer::<u32>(2)?);
    ///         d.lane()?.enter(|st| st.rank(st.await_fence(&input)?, st.bind(out.as_columns_mut())))
    ///     })?;
    ///     let mut blocks = s.reduce_scatter(&comm, sluice::ReduceOp::Sum, ranks)?;
    ///     let second = blocks.pop().unwrap();
    ///     s.device(1, |d| d.lane()?.enter(|st| {
    ///         st.copy_to_host(&st.await_fence(d.adopt(second)?)?, host.as_pinned_mut()).map(drop)
    ///     }))
    /// })?;
    /// assert_eq!(&host[..], &[33, 44]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_scatter<T: Reducible>(
        &'scope self,
        comm: &'scope Communicator,
        op: ReduceOp,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        self.collective(comm, Kind::ReduceScatter(op), Some(T::NCCL_TYPE), Some(combiner::<T>(op)), ranks)
    }

    /// Checks the ranks against `kind` and `comm`, enqueues every rank's part, and fences each
    /// output on its lane. `dtype`: NCCL's element type (`None`: bytes, for the
    /// non-reducing collectives).
    fn collective<T: Pod>(
        &'scope self,
        comm: &'scope Communicator,
        kind: Kind,
        dtype: Option<i32>,
        combine: Option<fn(T, T) -> T>,
        ranks: Vec<Rank<'scope, T>>,
    ) -> Result<Vec<Fenced<'scope, ColumnsMut<'scope, T>>>> {
        let n = check_collective(comm, kind, &ranks)?;
        // In a traced scope, each rank's part is bracketed by timing events on its lane.
        let mut opens = Vec::with_capacity(ranks.len());
        for r in &ranks {
            let shared = r.lane.shared;
            opens.push(match shared.recorder() {
                Some(rec) => Some(rec.begin(&shared.gpu, &r.lane.inner.stream)?),
                None => None,
            });
        }
        let enqueued = match &comm.kind {
            CommKind::Cuda { lib, comms } => enqueue_nccl(lib, comms, kind, dtype, n, &ranks),
            CommKind::Cpu => enqueue_cpu(kind, combine, n, &ranks),
        };
        // One operation on every rank's lane, counted as `Stream::traced` counts its own, failed
        // or not (a fence recorded before it must not make a join think the lane idle).
        for r in &ranks {
            r.lane.inner.enqueued.fetch_add(1, Ordering::AcqRel);
        }
        enqueued?;
        for (r, open) in ranks.iter().zip(opens) {
            if let (Some(open), Some(rec)) = (open, r.lane.shared.recorder()) {
                let name = collective_name(kind, n, std::any::type_name::<T>(), r, ranks.len());
                rec.end(&r.lane.shared.gpu, &r.lane.inner.stream, open, r.lane.id(), SpanKind::Collective, name)?;
            }
        }
        ranks
            .iter()
            .map(|r| {
                r.lane.inner.launches.fetch_add(1, Ordering::Relaxed);
                // The output, behind a fence after the collective: the only way out.
                Stream::new(r.lane).fence(ColumnViewMut::<T>::new(r.recv))
            })
            .collect()
    }
}

fn collective_name<T>(kind: Kind, n: usize, elem: &str, r: &Rank<'_, T>, k: usize) -> String {
    let what = match kind {
        Kind::AllReduce(op) => format!("all_reduce {op}"),
        Kind::Broadcast(root) => format!("broadcast from rank {root}"),
        Kind::AllGather => "all_gather".to_string(),
        Kind::ReduceScatter(op) => format!("reduce_scatter {op}"),
    };
    format!("{what}, {n} x {elem}, {} of {k} ranks", r.lane.id())
}

/// The element-wise reduction of `op` for `T`.
fn combiner<T: Reducible>(op: ReduceOp) -> fn(T, T) -> T {
    match op {
        ReduceOp::Sum => |a, b| T::combine(ReduceOp::Sum, a, b),
        ReduceOp::Prod => |a, b| T::combine(ReduceOp::Prod, a, b),
        ReduceOp::Max => |a, b| T::combine(ReduceOp::Max, a, b),
        ReduceOp::Min => |a, b| T::combine(ReduceOp::Min, a, b),
    }
}

/// Checks `ranks` against `kind` and `comm` before anything is enqueued; returns `n`, the
/// count NCCL is given (the per-rank block for all-gather and reduce-scatter).
fn check_collective<T>(comm: &Communicator, kind: Kind, ranks: &[Rank<'_, T>]) -> Result<usize> {
    let op = kind.name();
    let bad = |problem: String| Err(Error::Collective { op, problem });
    let k = comm.ranks();
    if ranks.len() != k {
        return bad(format!("{} ranks given for a communicator of {k}", ranks.len()));
    }
    for (i, (r, gpu)) in ranks.iter().zip(&comm.gpus).enumerate() {
        let lane_gpu = &r.lane.shared.gpu;
        if lane_gpu.backend() != gpu.backend() || (comm.uses_nccl() && lane_gpu.ctx_id() != gpu.ctx_id()) {
            return bad(format!(
                "rank {i} runs on a lane of {} (device {}), but the communicator's rank {i} is {} (device {})",
                lane_gpu.info().name,
                lane_gpu.info().ordinal,
                gpu.info().name,
                gpu.info().ordinal
            ));
        }
    }
    let recv = ranks[0].recv.len();
    if ranks.iter().any(|r| r.recv.len() != recv) {
        return bad("the outputs have different lengths".into());
    }
    let needs_input = |r: &Rank<'_, T>| -> Result<usize> {
        r.send.map(|s| s.len()).ok_or(Error::Collective { op, problem: "a rank without an input".into() })
    };
    match kind {
        Kind::AllReduce(_) => {
            for r in ranks {
                if needs_input(r)? != recv {
                    return bad("input and output lengths differ".into());
                }
            }
            Ok(recv)
        }
        Kind::Broadcast(root) => {
            let Some(r) = ranks.get(root) else { return bad(format!("root {root} of {k} ranks")) };
            if needs_input(r)? != recv {
                return bad("the root's input and the outputs have different lengths".into());
            }
            Ok(recv)
        }
        Kind::AllGather | Kind::ReduceScatter(_) => {
            let gather = matches!(kind, Kind::AllGather);
            let (per_in, per_out) = if gather { (recv / k, recv) } else { (recv * k, recv) };
            if gather && !recv.is_multiple_of(k) {
                return bad(format!("outputs of {recv} elements are not {k} equal blocks"));
            }
            for r in ranks {
                if r.in_place {
                    return bad("in place: give the input and the output as separate buffers".into());
                }
                if needs_input(r)? != per_in {
                    return bad(format!(
                        "inputs of {} elements for outputs of {per_out} over {k} ranks (want {per_in})",
                        r.send.map_or(0, |s| s.len())
                    ));
                }
            }
            Ok(if gather { per_in } else { per_out })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combiners_reduce_like_nccl() {
        assert_eq!(combiner::<u8>(ReduceOp::Sum)(250, 10), 4); // wraps
        assert_eq!(combiner::<i32>(ReduceOp::Min)(-3, 2), -3);
        assert_eq!(combiner::<f64>(ReduceOp::Prod)(1.5, 4.0), 6.0);
        assert_eq!(combiner::<f32>(ReduceOp::Max)(1.5, 4.0), 4.0);
    }
}
