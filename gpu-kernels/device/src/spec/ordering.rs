//! How a C++/Rust memory ordering maps to PTX (sm_70+), as pure logic that the
//! GPU code emits, the CPU runtime checks against, and the host tests pin (public as
//! [`atomic::ordering`](crate::atomic::ordering)).
//!
//! | operation | `Relaxed` | `Acquire` | `Release` | `AcqRel` | `SeqCst` |
//! | --- | --- | --- | --- | --- | --- |
//! | load | `ld.relaxed.S` | `ld.acquire.S` | invalid | invalid | `fence.sc.S; ld.acquire.S` |
//! | store | `st.relaxed.S` | invalid | `st.release.S` | invalid | `fence.sc.S; st.relaxed.S` |
//! | read-modify-write | `atom.relaxed.S` | `atom.acquire.S` | `atom.release.S` | `atom.acq_rel.S` | `fence.sc.S; atom.acquire.S` |
//! | fence | nothing | `fence.acq_rel.S` | `fence.acq_rel.S` | `fence.acq_rel.S` | `fence.sc.S` |
//!
//! `S` is the scope (`cta`, `gpu`, `sys`). This is the mapping of the PTX ISA's
//! memory-consistency model chapter and of libcu++ (`cuda::atomic`): a
//! sequentially consistent access is a `fence.sc` followed by the acquire (or,
//! for stores, relaxed) form. A compare-exchange has one instruction for both
//! outcomes, so it takes the stronger of its success and failure orderings
//! ([`cas_order`]). Invalid combinations (a `Release` load, an `Acquire` store)
//! are refused as `core::sync::atomic` refuses them: the device traps, the host panics.

use core::sync::atomic::Ordering;

/// The `.sem` qualifier of one PTX memory instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sem {
    /// `.relaxed`: atomic, orders nothing else.
    Relaxed,
    /// `.acquire`: later accesses of this thread stay after it.
    Acquire,
    /// `.release`: earlier accesses of this thread stay before it.
    Release,
    /// `.acq_rel`: both.
    AcqRel,
}

impl Sem {
    /// The PTX qualifier, with its dot (`".relaxed"`, ...).
    pub const fn ptx(self) -> &'static str {
        match self {
            Sem::Relaxed => ".relaxed",
            Sem::Acquire => ".acquire",
            Sem::Release => ".release",
            Sem::AcqRel => ".acq_rel",
        }
    }
}

/// One atomic access as PTX: an optional `fence.sc` before it, then the
/// instruction with `sem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PtxOrder {
    /// Emit `fence.sc.SCOPE` before the access (sequential consistency).
    pub fence_sc: bool,
    /// The access's own qualifier.
    pub sem: Sem,
}

const fn plain(sem: Sem) -> Option<PtxOrder> {
    Some(PtxOrder { fence_sc: false, sem })
}

const fn sc(sem: Sem) -> Option<PtxOrder> {
    Some(PtxOrder { fence_sc: true, sem })
}

/// An atomic load with `order`; `None` for `Release` and `AcqRel` (invalid for loads).
pub const fn load_order(order: Ordering) -> Option<PtxOrder> {
    match order {
        Ordering::Relaxed => plain(Sem::Relaxed),
        Ordering::Acquire => plain(Sem::Acquire),
        Ordering::SeqCst => sc(Sem::Acquire),
        _ => None,
    }
}

/// An atomic store with `order`; `None` for `Acquire` and `AcqRel` (invalid for stores).
pub const fn store_order(order: Ordering) -> Option<PtxOrder> {
    match order {
        Ordering::Relaxed => plain(Sem::Relaxed),
        Ordering::Release => plain(Sem::Release),
        Ordering::SeqCst => sc(Sem::Relaxed),
        _ => None,
    }
}

/// A read-modify-write (`atom`) with `order`; every ordering is valid.
pub const fn rmw_order(order: Ordering) -> PtxOrder {
    match order {
        Ordering::Relaxed => PtxOrder { fence_sc: false, sem: Sem::Relaxed },
        Ordering::Acquire => PtxOrder { fence_sc: false, sem: Sem::Acquire },
        Ordering::Release => PtxOrder { fence_sc: false, sem: Sem::Release },
        Ordering::AcqRel => PtxOrder { fence_sc: false, sem: Sem::AcqRel },
        // `SeqCst`, and any ordering a later `core` adds: the strongest mapping.
        _ => PtxOrder { fence_sc: true, sem: Sem::Acquire },
    }
}

/// A compare-exchange with `success` and `failure` orderings (one `atom.cas`
/// serves both outcomes, so it gets the union of their constraints); `None`
/// when `failure` is `Release` or `AcqRel`, which `core` refuses too.
pub const fn cas_order(success: Ordering, failure: Ordering) -> Option<PtxOrder> {
    let fail_acquire = match failure {
        Ordering::Relaxed => false,
        Ordering::Acquire => true,
        Ordering::SeqCst => return Some(rmw_order(Ordering::SeqCst)),
        _ => return None,
    };
    let s = rmw_order(success);
    if s.fence_sc {
        return Some(s);
    }
    let sem = match (s.sem, fail_acquire) {
        (Sem::Relaxed, true) => Sem::Acquire,
        (Sem::Release, true) => Sem::AcqRel,
        (sem, _) => sem,
    };
    Some(PtxOrder { fence_sc: false, sem })
}

/// The fence for `order` (`atomic_thread_fence`): `None` for `Relaxed` (no
/// instruction), `Some(false)` for `fence.acq_rel`, `Some(true)` for `fence.sc`.
pub const fn fence_order(order: Ordering) -> Option<bool> {
    match order {
        Ordering::Relaxed => None,
        Ordering::Acquire | Ordering::Release | Ordering::AcqRel => Some(false),
        _ => Some(true),
    }
}

/// The failure ordering `core`'s `compare_exchange` pairs with a single
/// ordering (as `compare_and_swap` did): `AcqRel` → `Acquire`, `Release` → `Relaxed`.
pub const fn failure_for(order: Ordering) -> Ordering {
    match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        Ordering::Acquire | Ordering::AcqRel => Ordering::Acquire,
        _ => Ordering::SeqCst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn loads_and_stores_take_their_valid_orderings_only() {
        assert_eq!(load_order(Relaxed), plain(Sem::Relaxed));
        assert_eq!(load_order(Acquire), plain(Sem::Acquire));
        assert_eq!(load_order(SeqCst), sc(Sem::Acquire));
        assert_eq!(load_order(Release), None);
        assert_eq!(load_order(AcqRel), None);
        assert_eq!(store_order(Relaxed), plain(Sem::Relaxed));
        assert_eq!(store_order(Release), plain(Sem::Release));
        assert_eq!(store_order(SeqCst), sc(Sem::Relaxed));
        assert_eq!(store_order(Acquire), None);
        assert_eq!(store_order(AcqRel), None);
    }

    #[test]
    fn rmw_seq_cst_is_a_fence_then_acquire() {
        assert_eq!(rmw_order(SeqCst), PtxOrder { fence_sc: true, sem: Sem::Acquire });
        assert_eq!(rmw_order(AcqRel).sem.ptx(), ".acq_rel");
        assert_eq!(rmw_order(Release).sem.ptx(), ".release");
        assert!(!rmw_order(Relaxed).fence_sc);
    }

    #[test]
    fn compare_exchange_takes_the_union_of_both_orderings() {
        assert_eq!(cas_order(Relaxed, Relaxed), plain(Sem::Relaxed));
        assert_eq!(cas_order(Relaxed, Acquire), plain(Sem::Acquire));
        assert_eq!(cas_order(Release, Acquire), plain(Sem::AcqRel));
        assert_eq!(cas_order(Release, Relaxed), plain(Sem::Release));
        assert_eq!(cas_order(AcqRel, Acquire), plain(Sem::AcqRel));
        assert_eq!(cas_order(Relaxed, SeqCst), sc(Sem::Acquire));
        assert_eq!(cas_order(SeqCst, Relaxed), sc(Sem::Acquire));
        assert_eq!(cas_order(Acquire, Release), None);
        assert_eq!(cas_order(Acquire, AcqRel), None);
    }

    #[test]
    fn fences_and_failure_orderings() {
        assert_eq!(fence_order(Relaxed), None);
        assert_eq!(fence_order(Acquire), Some(false));
        assert_eq!(fence_order(SeqCst), Some(true));
        assert_eq!(failure_for(AcqRel), Acquire);
        assert_eq!(failure_for(Release), Relaxed);
        assert_eq!(failure_for(SeqCst), SeqCst);
    }
}
