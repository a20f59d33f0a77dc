//! `cuda_std::ptr`: address-space queries and conversions of generic pointers.

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
