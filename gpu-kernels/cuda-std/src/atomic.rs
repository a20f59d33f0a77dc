//! `cuda_std::atomic`: the atomic float types of Rust-CUDA (device, block and
//! system scope) and their integer twins, with `core::sync::atomic::Ordering`s;
//! see [`sluice_device::atomic`] for the PTX each ordering becomes.
//!
//! As in cuda_std, the `Block*` types' methods are `unsafe` (block scope does
//! not order threads of other blocks), and on the host every type works
//! through `core::sync::atomic`.

pub use core::sync::atomic::Ordering;
pub use sluice_device::atomic::{
    AtomicF32, AtomicF64, AtomicI32, AtomicI64, AtomicU32, AtomicU64, BlockAtomicF32, BlockAtomicF64, BlockAtomicI32,
    BlockAtomicI64, BlockAtomicU32, BlockAtomicU64, SystemAtomicF32, SystemAtomicF64, SystemAtomicI32, SystemAtomicI64,
    SystemAtomicU32, SystemAtomicU64,
};

/// cuda_std's `atomic::mid`: the fences by ordering (`device_thread_fence`,
/// `block_thread_fence`, `system_thread_fence`), mapped as CUDA does on sm_70+:
/// nothing for `Relaxed`, `fence.acq_rel` for `Acquire`/`Release`/`AcqRel`,
/// `fence.sc` for `SeqCst`. On the host: `core::sync::atomic::fence` (nothing
/// for `Relaxed`, `AcqRel` or `SeqCst`), whatever the scope.
pub mod mid {
    use core::sync::atomic::Ordering;
    use sluice_device::{atomic::fence, MemoryScope};

    /// `cuda::atomic_thread_fence(ordering, thread_scope_device)`.
    #[inline(always)]
    pub fn device_thread_fence(ordering: Ordering) {
        fence(ordering, MemoryScope::Device)
    }

    /// `cuda::atomic_thread_fence(ordering, thread_scope_block)`.
    #[inline(always)]
    pub fn block_thread_fence(ordering: Ordering) {
        fence(ordering, MemoryScope::Block)
    }

    /// `cuda::atomic_thread_fence(ordering, thread_scope_system)`.
    #[inline(always)]
    pub fn system_thread_fence(ordering: Ordering) {
        fence(ordering, MemoryScope::System)
    }
}
