//! `cuda_std::shared`: dynamic shared memory. Static shared memory is
//! `#[address_space(shared)] static mut` (see [`crate::address_space`]) or
//! [`shared_array!`](crate::shared_array).

/// A pointer to this launch's dynamic shared memory (`extern __shared__`),
/// uninitialised, 16-byte aligned; the same pointer on every call. On the
/// host: the start of the calling block's shared-memory buffer in the CPU
/// runtime, every byte [`SHARED_POISON`](sluice_device::cpu::SHARED_POISON)
/// until written.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn dynamic_shared_mem<T>() -> *mut T {
    sluice_device::shared::dynamic_shared_ptr()
}
