//! `cuda_std::ptr`: address-space queries and conversions of generic pointers.
//!
//! # On the host
//!
//! The CPU runtime has one flat address space: a kernel's pointers are host
//! pointers, and the only memory it sets apart is each block's shared-memory
//! buffer. So on the host:
//!
//! * [`is_in_address_space`]`(p, Shared)` is true iff `p` points into the
//!   calling block's shared-memory buffer: from [`dynamic_shared_mem`]'s
//!   address (the dynamic region comes first) for the dynamic size rounded up
//!   to 16 bytes plus 52 KiB (the 48 KiB a kernel may declare in static shared
//!   variables and 4 KiB for their alignment: where the runtime places them),
//!   whether or not a variable lies there yet, as `isspacep.shared` answers for
//!   the whole window;
//! * `(p, Global)` is the opposite: true for every other address (device
//!   buffers, which are host memory here, but also the thread's locals and
//!   anything else: the CPU runtime has no local or constant space);
//! * `(p, Constant)` and `(p, Local)` are always false;
//! * the `convert_*` functions return `ptr` unchanged (the identity: there is
//!   no state-space window to convert to or from), so the result of
//!   [`convert_generic_to_specific_address_space`] may even be dereferenced on
//!   the host, which it may not on the device.
//!
//! [`is_in_address_space`] reads the calling block, so on the host it works
//! only inside a kernel launch (outside one it panics, as every device function
//! that reads the current thread does); the conversions work anywhere.
//!
//! [`dynamic_shared_mem`]: crate::shared::dynamic_shared_mem

/// A PTX state space a generic address can point into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// Device memory (`cudaMalloc`, kernel parameters' pointees).
    Global,
    /// The block's shared memory.
    Shared,
    /// Constant memory.
    Constant,
    /// The thread's local memory (its stack).
    Local,
}

#[cfg(target_arch = "nvptx64")]
pub use imp::*;

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::AddressSpace;
    use core::arch::asm;

    /// Whether the generic `ptr` points into `address_space` (`isspacep`).
    /// Safe (it only inspects the address); `unsafe` for cuda_std compatibility.
    ///
    /// # Safety
    /// None beyond cuda_std's signature: any pointer value may be asked about.
    #[inline(always)]
    pub unsafe fn is_in_address_space<T>(ptr: *const T, address_space: AddressSpace) -> bool {
        let r: u32;
        macro_rules! q {
            ($sp:literal) => {
                asm!(concat!("{{ .reg .pred p; isspacep.", $sp, " p, {a}; selp.u32 {r}, 1, 0, p; }}"),
                     a = in(reg64) ptr, r = out(reg32) r, options(pure, nomem, nostack, preserves_flags))
            };
        }
        // SAFETY: inspects an address; no memory is accessed.
        unsafe {
            match address_space {
                AddressSpace::Global => q!("global"),
                AddressSpace::Shared => q!("shared"),
                AddressSpace::Constant => q!("const"),
                AddressSpace::Local => q!("local"),
            }
        }
        r != 0
    }

    /// The address of generic `ptr` within `address_space`'s window (`cvta.to.*`).
    ///
    /// # Safety
    /// `ptr` points into `address_space`; the result is only meaningful to
    /// instructions of that state space, not to Rust dereferences.
    #[inline(always)]
    pub unsafe fn convert_generic_to_specific_address_space<T>(ptr: *const T, address_space: AddressSpace) -> *const T {
        let r: *const T;
        macro_rules! c {
            ($sp:literal) => {
                asm!(concat!("cvta.to.", $sp, ".u64 {r}, {a};"), a = in(reg64) ptr, r = out(reg64) r,
                     options(pure, nomem, nostack, preserves_flags))
            };
        }
        // SAFETY: an address conversion; no memory is accessed.
        unsafe {
            match address_space {
                AddressSpace::Global => c!("global"),
                AddressSpace::Shared => c!("shared"),
                AddressSpace::Constant => c!("const"),
                AddressSpace::Local => c!("local"),
            }
        }
        r
    }

    /// The generic address of `ptr`, an address in `address_space`'s window (`cvta.*`).
    ///
    /// # Safety
    /// `ptr` is an address in `address_space`'s window (for example from
    /// [`convert_generic_to_specific_address_space`]).
    #[inline(always)]
    pub unsafe fn convert_specific_address_space_to_generic<T>(ptr: *const T, address_space: AddressSpace) -> *const T {
        let r: *const T;
        macro_rules! c {
            ($sp:literal) => {
                asm!(concat!("cvta.", $sp, ".u64 {r}, {a};"), a = in(reg64) ptr, r = out(reg64) r,
                     options(pure, nomem, nostack, preserves_flags))
            };
        }
        // SAFETY: an address conversion; no memory is accessed.
        unsafe {
            match address_space {
                AddressSpace::Global => c!("global"),
                AddressSpace::Shared => c!("shared"),
                AddressSpace::Constant => c!("const"),
                AddressSpace::Local => c!("local"),
            }
        }
        r
    }
}

/// Bytes of the host's shared-memory window after the dynamic region (module
/// docs): the CPU runtime's per-block buffer reserves 48 KiB for the block's
/// static shared variables (the most a kernel may declare) and 4 KiB for their
/// alignment, right after the dynamic region rounded up to 16 bytes
/// (`sluice_device`'s `shared/arena.rs`, `Arena::with_dynamic`; `tests/cpu.rs` checks
/// both ends).
#[cfg(not(target_arch = "nvptx64"))]
const HOST_STATIC_SHARED_WINDOW: usize = 48 * 1024 + 4 * 1024;

#[cfg(not(target_arch = "nvptx64"))]
pub use host::*;

/// The host: one flat address space (module docs).
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::{AddressSpace, HOST_STATIC_SHARED_WINDOW};
    use sluice_device::shared;

    /// Whether `ptr` points into the calling block's shared-memory window of
    /// the CPU runtime (module docs).
    #[track_caller]
    fn in_block_shared<T>(ptr: *const T) -> bool {
        let bytes = shared::dynamic_shared_bytes() as usize;
        let base = shared::dynamic_shared_ptr::<u8>() as usize;
        let end = base + bytes.next_multiple_of(16) + HOST_STATIC_SHARED_WINDOW;
        (base..end).contains(&(ptr as usize))
    }

    /// Whether the generic `ptr` points into `address_space` (`isspacep` on the
    /// device). On the host: `Shared` iff `ptr` is in the calling block's
    /// shared-memory window, `Global` iff it is not, `Constant` and `Local`
    /// never (module docs). Safe (it only inspects the address); `unsafe` for
    /// cuda_std compatibility.
    ///
    /// # Safety
    /// None beyond cuda_std's signature: any pointer value may be asked about.
    ///
    /// # Panics
    /// On the host, outside a kernel launch (there is no block to ask about).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn is_in_address_space<T>(ptr: *const T, address_space: AddressSpace) -> bool {
        match address_space {
            AddressSpace::Shared => in_block_shared(ptr),
            AddressSpace::Global => !in_block_shared(ptr),
            AddressSpace::Constant | AddressSpace::Local => false,
        }
    }

    /// The address of generic `ptr` within `address_space`'s window (`cvta.to.*`
    /// on the device). On the host: `ptr` itself (one flat address space).
    ///
    /// # Safety
    /// `ptr` points into `address_space`; on the device the result is only
    /// meaningful to instructions of that state space, not to Rust dereferences.
    #[inline(always)]
    pub unsafe fn convert_generic_to_specific_address_space<T>(ptr: *const T, address_space: AddressSpace) -> *const T {
        let _ = address_space;
        ptr
    }

    /// The generic address of `ptr`, an address in `address_space`'s window
    /// (`cvta.*` on the device). On the host: `ptr` itself.
    ///
    /// # Safety
    /// `ptr` is an address in `address_space`'s window (for example from
    /// [`convert_generic_to_specific_address_space`]).
    #[inline(always)]
    pub unsafe fn convert_specific_address_space_to_generic<T>(ptr: *const T, address_space: AddressSpace) -> *const T {
        let _ = address_space;
        ptr
    }
}
