//! `cuda_std::shared`: dynamic shared memory. Static shared memory is
//! `#[address_space(shared)] static mut` (see [`crate::address_space`]) or
//! [`shared_array!`](crate::shared_array).

/// A pointer to this launch's dynamic shared memory (`extern __shared__`),
/// uninitialised, 16-byte aligned; the same pointer on every call.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn dynamic_shared_mem<T>() -> *mut T {
    sluice_device::shared::dynamic_shared_ptr()
}
