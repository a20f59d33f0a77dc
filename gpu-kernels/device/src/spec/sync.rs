//! Which block barrier each barrier operation uses. PTX has 16 barriers per block
//! (`barrier.sync 0..15`), and its `barrier.red` forms "should not be intermixed with
//! `barrier.sync` or `barrier.arrive` using the same active barrier" (execution is
//! then unpredictable). So the reductions get barriers of their own: a kernel that
//! reaches `sync_threads` in one branch and `sync_threads_count` in another then waits
//! at two different barriers — a hang (and, on the CPU backend, a report), never
//! undefined behaviour. Named barriers (`sync::barrier_sync`, `unsafe`) must keep off
//! these ids.
//!
//! | operation | PTX | barrier |
//! | --- | --- | --- |
//! | `sync_threads` | `barrier.sync 0` | [`BLOCK`] |
//! | `sync_threads_count` | `barrier.red.popc.u32` | [`COUNT`] |
//! | `sync_threads_and` | `barrier.red.and.pred` | [`AND`] |
//! | `sync_threads_or` | `barrier.red.or.pred` | [`OR`] |
//!
//! Every form is PTX's non-`.aligned` one, defined when reached in divergent code.

/// `sync_threads` (`__syncthreads()`).
pub const BLOCK: u32 = 0;
/// `sync_threads_count` (`__syncthreads_count`).
pub const COUNT: u32 = 1;
/// `sync_threads_and` (`__syncthreads_and`).
pub const AND: u32 = 2;
/// `sync_threads_or` (`__syncthreads_or`).
pub const OR: u32 = 3;
/// The barriers of a block (`barrier.sync 0..15`).
pub const BARRIERS: u32 = 16;
/// The barriers `sync_threads` and the reductions use: named barriers keep off them.
pub const RESERVED: core::ops::Range<u32> = BLOCK..OR + 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_has_its_own_barrier() {
        let ids = [BLOCK, COUNT, AND, OR];
        for (i, a) in ids.iter().enumerate() {
            assert!(*a < BARRIERS && RESERVED.contains(a));
            assert!(ids[i + 1..].iter().all(|b| b != a));
        }
        assert_eq!(RESERVED, 0..4);
    }
}
