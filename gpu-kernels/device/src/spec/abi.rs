//! The parameter record `#[kernel]` leaves in the PTX beside each entry, so that the host
//! can check, when it loads the module, that it declares every parameter with the element
//! type the device compiled (not only the same parameter *sizes*: a `u64` slice and a `u32`
//! slice both lower to a pointer and a length).
//!
//! For each kernel `k` the device build emits a `#[no_mangle]` byte array
//! `__sluice_abi_k`, which LLVM writes into the PTX as
//! `.visible .global .align 1 .b8 __sluice_abi_k[N] = {115, 108, ...};`. Its bytes are
//! ASCII text:
//!
//! ```text
//! sluice-abi 1;NAME:K:SSSSSSSS:AAAAAAAA;NAME:K:SSSSSSSS:AAAAAAAA;...
//! ```
//!
//! one field group per declared parameter, in order: its name, its kind `K` (`r` a read-only
//! slice `&[T]`, `m` a written slice `DeviceSliceMut<T>` or an unchecked kernel's
//! `&mut [T]`, `t` a `TmaMatrix<T, R, C>`, `p` a `*const T` or `&T`, `q` a `*mut T`, `v` a
//! value), then the size and the alignment in bytes (eight lowercase hex digits each) of the
//! element type (slices, TMA matrices, pointers) or of the value's type (values), as the *device* build sees them. The host
//! crate (`sluice_host`, module `ptx`) reads it back and compares it with the host
//! declaration; `sluice_host::__abi` decodes the same text, and this crate's tests check
//! that the two agree.
//!
//! The record is plain data written by a `const fn`: no runtime code, no `cfg`.

/// A type a kernel can take a slice of (`&[T]`, `DeviceSliceMut<T>`): any bit pattern the
/// host writes into the memory is a valid `T`, and `T` has no padding the kernel could leak,
/// on the device as on the host. `#[kernel]` checks it in the device build too, so a type
/// chosen per target (`cfg(target_arch = "nvptx64")`) cannot be a reference there.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the element type of a kernel's slice parameter",
    label = "not `bytemuck::Pod`",
    note = "a kernel's `&[T]` and `DeviceSliceMut<T>` hold memory the host fills: `T` must be `bytemuck::Pod` \
            (numbers, arrays of them, `#[repr(C)]` structs deriving `Pod` and `Zeroable`) in the device build too"
)]
pub trait KernelElement: bytemuck::Pod {}
impl<T: bytemuck::Pod> KernelElement for T {}

/// A type a kernel can take by value: plain bits (`bytemuck::Pod`), in the device build too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a kernel's by-value parameter",
    label = "not `bytemuck::Pod`",
    note = "a checked `#[kernel]` takes values the host passes as bits: the type must be `bytemuck::Pod` in the \
            device build too (a reference, a pointer or a `bool` is not; pass a slice, or declare the kernel \
            `#[kernel(unchecked)]`)"
)]
pub trait KernelValue: bytemuck::Pod {}
impl<T: bytemuck::Pod> KernelValue for T {}

/// Checks (at compile time, in the device build) that `T` can be a slice parameter's
/// element: what `#[kernel]` calls for every `&[T]` and `DeviceSliceMut<T>`.
#[inline(always)]
pub const fn element<T: KernelElement>() {}

/// Checks (at compile time, in the device build) that `T` can be a by-value parameter.
#[inline(always)]
pub const fn value<T: KernelValue>() {}

/// The text every record starts with (its format version).
pub const HEADER: &str = "sluice-abi 1;";

/// The bytes a record of parameters with these name lengths takes: what `#[kernel]`
/// computes at expansion time to size the array.
pub const fn record_len(name_lens: &[usize]) -> usize {
    let mut n = HEADER.len();
    let mut i = 0;
    while i < name_lens.len() {
        // NAME ':' K ':' 8 hex ':' 8 hex ';'
        n += name_lens[i] + 1 + 1 + 1 + 8 + 1 + 8 + 1;
        i += 1;
    }
    n
}

/// One declared parameter: its name, kind letter (see the module docs), and the size and
/// alignment of its element (slices, pointers) or value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name in the kernel's signature.
    pub name: &'static str,
    /// `r`, `m`, `t`, `p`, `q` or `v`.
    pub kind: u8,
    /// `size_of` of the element or value type.
    pub size: usize,
    /// `align_of` of the element or value type.
    pub align: usize,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The record of `params` as `N` bytes (`N` must be [`record_len`] of their name lengths;
/// evaluation fails at compile time otherwise).
pub const fn encode<const N: usize>(params: &[Param]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let h = HEADER.as_bytes();
    while at < h.len() {
        out[at] = h[at];
        at += 1;
    }
    let mut p = 0;
    while p < params.len() {
        let name = params[p].name.as_bytes();
        let mut i = 0;
        while i < name.len() {
            out[at] = name[i];
            at += 1;
            i += 1;
        }
        out[at] = b':';
        out[at + 1] = params[p].kind;
        out[at + 2] = b':';
        at += 3;
        at = hex8(&mut out, at, params[p].size);
        out[at] = b':';
        at = hex8(&mut out, at + 1, params[p].align);
        out[at] = b';';
        at += 1;
        p += 1;
    }
    assert!(at == N, "sluice: the kernel parameter record's length is wrong");
    out
}

/// Writes `v` as eight lowercase hex digits at `at`; returns the index after them.
const fn hex8<const N: usize>(out: &mut [u8; N], at: usize, v: usize) -> usize {
    assert!(v <= 0xffff_ffff, "sluice: a kernel parameter type larger than 4 GiB");
    let mut i = 0;
    while i < 8 {
        out[at + i] = HEX[(v >> (28 - 4 * i)) & 0xf];
        i += 1;
    }
    at + 8
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: [Param; 2] =
        [Param { name: "y", kind: b'm', size: 4, align: 4 }, Param { name: "eps2", kind: b'v', size: 8, align: 8 }];
    const LEN: usize = record_len(&[1, 4]);
    const RECORD: [u8; LEN] = encode::<LEN>(&PARAMS);

    #[test]
    fn the_record_is_the_documented_text() {
        assert_eq!(
            core::str::from_utf8(&RECORD).unwrap(),
            "sluice-abi 1;y:m:00000004:00000004;eps2:v:00000008:00000008;"
        );
        assert_eq!(record_len(&[]), HEADER.len());
    }

    #[test]
    fn the_host_reads_what_the_device_writes() {
        let decoded = sluice_host::__abi::decode(&RECORD).expect("the host decodes the record");
        assert_eq!(decoded.len(), 2);
        assert_eq!((decoded[0].name.as_str(), decoded[0].kind, decoded[0].size, decoded[0].align), ("y", b'm', 4, 4));
        assert_eq!(
            (decoded[1].name.as_str(), decoded[1].kind, decoded[1].size, decoded[1].align),
            ("eps2", b'v', 8, 8)
        );
    }
}
