//! `cuda_std::mem`: shared-memory sizes. (cuda_std's device heap, its
//! `GLOBAL_ALLOCATOR` over `malloc`/`free`, is not provided: sluice kernels
//! have no device heap.)
//!
//! On the host (the CPU runtime) the sizes are those of the block the calling
//! thread belongs to: see [`sluice_device::shared`].

/// Bytes of dynamic shared memory this launch was given (`%dynamic_smem_size`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic_smem_size() -> u32 {
    sluice_device::shared::dynamic_shared_bytes()
}

/// Bytes of shared memory (static and dynamic) per block of this launch
/// (`%total_smem_size`), rounded up to the allocation unit. On the host: the
/// dynamic size plus the static shared variables the block has used so far
/// (the CPU runtime allocates each at its first use), not rounded.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn total_smem_size() -> u32 {
    sluice_device::shared::total_shared_bytes()
}
