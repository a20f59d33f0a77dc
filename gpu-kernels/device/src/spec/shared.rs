//! Shared-memory layout rules both backends follow: how a `shared_array!` or
//! `shared_static!` variable is aligned, which alignment each of its elements
//! then has, and the hash of the declaration site that names its `.shared` symbol
//! (public, hidden, as `shared::__array_align` and `shared::__symbol_hash`).

/// Alignment of the arrays the `shared` family declares: at least 16 bytes, so that
/// 16-byte elements can be moved with one vector instruction.
pub const fn array_align<T>() -> usize {
    let a = core::mem::align_of::<T>();
    if a > 16 {
        a
    } else {
        16
    }
}

/// The alignment every element of a 16-byte-aligned array of `T` has: the
/// largest power of two dividing `size_of::<T>()` (at most 16), or `align_of::<T>()`
/// if larger. The GPU loads and stores elements with the widest instructions it allows.
pub const fn element_align<T>() -> usize {
    let size = core::mem::size_of::<T>();
    let a = core::mem::align_of::<T>();
    if size == 0 {
        return a;
    }
    let low = size & size.wrapping_neg();
    let low = if low > 16 { 16 } else { low };
    if low > a {
        low
    } else {
        a
    }
}

/// FNV-1a of the invocation site (`module|file|line|column|name`); makes the
/// `.shared` symbols of `shared_array!` and `shared_static!` unique.
pub const fn symbol_hash(site: &str) -> u64 {
    let b = site.as_bytes();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut i = 0;
    while i < b.len() {
        h = (h ^ b[i] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_at_least_16_aligned() {
        assert_eq!(array_align::<[u8; 3]>(), 16);
        assert_eq!(array_align::<[f64; 2]>(), 16);
        #[repr(align(64))]
        struct Wide(#[allow(dead_code)] u8);
        assert_eq!(array_align::<Wide>(), 64);
    }

    #[test]
    fn elements_get_the_alignment_their_size_allows() {
        assert_eq!(element_align::<[f32; 3]>(), 4);
        assert_eq!(element_align::<u64>(), 8);
        assert_eq!(element_align::<[u8; 6]>(), 2);
        assert_eq!(element_align::<[u32; 8]>(), 16);
        assert_eq!(element_align::<()>(), 1);
    }

    #[test]
    fn the_hash_is_fnv_1a_of_the_site() {
        assert_eq!(symbol_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(symbol_hash("a"), 0xaf63_dc4c_8601_ec8c);
        let a = symbol_hash("m|f.rs|1|1|A");
        assert_ne!(a, symbol_hash("m|f.rs|1|1|B"));
        assert_ne!(a, symbol_hash("m|f.rs|2|1|A"));
    }
}
