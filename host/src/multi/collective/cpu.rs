//! The collectives on the CPU backend: host loops, each rank's part run on its lane in
//! stream order (no NCCL).

use std::sync::Arc;

use bytemuck::Pod;

use super::super::comm::{Kind, Rank};
use crate::error::{Error, Result};
use crate::lane::Stream;

/// An address moved into a CPU operation (it runs on a lane's worker thread).
#[derive(Clone, Copy)]
struct Addr(u64);

/// The CPU backend's collective: rank 0's lane waits for every other rank's lane (a fence
/// each), runs the whole collective as one host operation, and every other lane waits for
/// it (a fence). The same order as NCCL's: each rank's inputs before, its outputs after.
pub(super) fn enqueue_cpu<T: Pod>(
    kind: Kind,
    combine: Option<fn(T, T) -> T>,
    n: usize,
    ranks: &[Rank<'_, T>],
) -> Result<()> {
    let first = Stream::new(ranks[0].lane);
    for r in &ranks[1..] {
        let ready = Stream::new(r.lane).record()?;
        first.await_fence(&ready)?;
    }
    let parts: Vec<(Option<Addr>, Addr, usize, usize)> = ranks
        .iter()
        .map(|r| (r.send.map(|s| Addr(s.ptr)), Addr(r.recv.ptr), r.send.map_or(0, |s| s.len()), r.recv.len()))
        .collect();
    let work: crate::cpu::Work = Arc::new(move || {
        // SAFETY: every address is a rank's buffer of the length given, alive for the scope
        // (the views it came from borrowed it for 'scope); every rank's lane has reached this
        // point (rank 0's lane waited for each) and waits for this operation before its later
        // work, so no lane touches them meanwhile; inputs are read into copies first, so an
        // in-place rank's output may alias its input.
        let read = |a: Addr, len: usize| unsafe { std::slice::from_raw_parts(a.0 as usize as *const T, len) }.to_vec();
        let inputs: Vec<Vec<T>> =
            parts.iter().map(|(s, _, len, _)| s.map(|s| read(s, *len)).unwrap_or_default()).collect();
        let reduce = |block: usize| -> Vec<T> {
            let f = combine.expect("a reducing collective has a combiner");
            (0..n)
                .map(|i| inputs[1..].iter().fold(inputs[0][block * n + i], |acc, x| f(acc, x[block * n + i])))
                .collect()
        };
        for (r, (_, recv, _, len)) in parts.iter().enumerate() {
            let out: Vec<T> = match kind {
                Kind::AllReduce(_) => reduce(0),
                Kind::Broadcast(root) => inputs[root].clone(),
                Kind::AllGather => inputs.iter().flatten().copied().collect(),
                Kind::ReduceScatter(_) => reduce(r),
            };
            debug_assert_eq!(out.len(), *len);
            // SAFETY: `recv` is rank r's output, `len` elements, held by the collective (see
            // above); `out` holds exactly `len` (checked before anything was enqueued).
            unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), recv.0 as usize as *mut T, out.len().min(*len)) };
        }
        Ok(())
    });
    first.handle().enqueue_host(work).map_err(|error| Error::Stream { call: "enqueue (CPU collective)", error })?;
    let done = first.record()?;
    for r in &ranks[1..] {
        Stream::new(r.lane).await_fence(&done)?;
    }
    Ok(())
}
