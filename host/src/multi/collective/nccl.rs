//! The collectives on GPUs: every rank's NCCL call, in one group from this thread.

use bytemuck::Pod;

use super::super::comm::{nccl_error, Kind, Rank};
use crate::error::{Error, Result};
use crate::nccl::{self, RawComm};

/// Every rank's NCCL call, in one group from this thread.
pub(super) fn enqueue_nccl<T: Pod>(
    lib: &nccl::Lib,
    comms: &[RawComm],
    kind: Kind,
    dtype: Option<i32>,
    n: usize,
    ranks: &[Rank<'_, T>],
) -> Result<()> {
    let es = std::mem::size_of::<T>();
    // NCCL's element type, and the count in its elements: bytes for the collectives that
    // only move data.
    let (dtype, unit) = match dtype {
        Some(d) => (d, 1),
        None => (nccl::dtype::UINT8, es),
    };
    lib.group_start().map_err(nccl_error)?;
    let mut issued = Ok(());
    for (r, comm) in ranks.iter().zip(comms) {
        let Some(stream) = r.lane.inner.stream.raw_cuda() else {
            issued = Err(Error::Collective { op: kind.name(), problem: "a rank's lane is not a CUDA lane".into() });
            break;
        };
        let send = r.send.map_or(r.recv.ptr, |s| s.ptr);
        // SAFETY: each rank's communicator is of the device its lane runs on (checked in
        // `check_collective`), and the stream is alive (the lane is the scope's until it
        // joins). Both buffers are that device's memory (checked when the rank was made),
        // contiguous, of the lengths the operation reads and writes (checked in
        // `check_collective`); they were views bound to this lane, borrowed for the scope,
        // which joins every device's lanes before any memory is freed. The output is held
        // exclusively by the rank (then by the hand-off fenced after this call); the input
        // is only read.
        let r = unsafe {
            match kind {
                Kind::AllReduce(op) => lib.all_reduce(send, r.recv.ptr, n * unit, dtype, op.nccl(), *comm, stream),
                Kind::Broadcast(root) => lib.broadcast(send, r.recv.ptr, n * unit, dtype, root as i32, *comm, stream),
                Kind::AllGather => lib.all_gather(send, r.recv.ptr, n * unit, dtype, *comm, stream),
                Kind::ReduceScatter(op) => {
                    lib.reduce_scatter(send, r.recv.ptr, n * unit, dtype, op.nccl(), *comm, stream)
                }
            }
        };
        if let Err(e) = r {
            issued = Err(nccl_error(e));
            break;
        }
    }
    // The group is ended whatever happened: NCCL's group state is per thread.
    let ended = lib.group_end().map_err(nccl_error);
    issued?;
    ended?;
    Ok(())
}
