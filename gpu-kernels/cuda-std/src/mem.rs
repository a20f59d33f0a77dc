//! `cuda_std::mem`: shared-memory sizes. (cuda_std's device heap, its
//! `GLOBAL_ALLOCATOR` over `malloc`/`free`, is not provided: sluice kernels
//! have no device heap.)

/// Bytes of dynamic shared memory this launch was given (`%dynamic_smem_size`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn dynamic_smem_size() -> u32 {
    sluice_device::shared::dynamic_shared_bytes()
}

/// Bytes of shared memory (static and dynamic) per block of this launch
/// (`%total_smem_size`), rounded up to the allocation unit.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn total_smem_size() -> u32 {
    sluice_device::shared::total_shared_bytes()
}
