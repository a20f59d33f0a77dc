//! The instruction forms of the atomic types on the GPU, one `unsafe fn` per
//! (operation, width), each expanding to one fixed `asm!` per (`.sem`, scope) pair:
//! `ld.{relaxed,acquire}.SCOPE.bW`, `st.{relaxed,release}.SCOPE.bW`,
//! `atom.SEM.SCOPE.OP`, `atom.SEM.SCOPE.cas.bW`. Generic addresses only. Not an
//! API: the atomic types (`types.rs`) choose `.sem` from a `core` ordering through
//! [`crate::spec::ordering`] and call these through the GPU backend (`gpu.rs`).

use crate::spec::ordering::Sem;
use crate::spec::scope::MemoryScope;
use core::arch::asm;

macro_rules! arms4 {
    ($sem:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
        match ($sem, $scope) {
            (Sem::Relaxed, MemoryScope::Block) => $m!(".relaxed", ".cta", $($args)*),
            (Sem::Relaxed, MemoryScope::Device) => $m!(".relaxed", ".gpu", $($args)*),
            (Sem::Relaxed, MemoryScope::System) => $m!(".relaxed", ".sys", $($args)*),
            (Sem::Acquire, MemoryScope::Block) => $m!(".acquire", ".cta", $($args)*),
            (Sem::Acquire, MemoryScope::Device) => $m!(".acquire", ".gpu", $($args)*),
            (Sem::Acquire, MemoryScope::System) => $m!(".acquire", ".sys", $($args)*),
            (Sem::Release, MemoryScope::Block) => $m!(".release", ".cta", $($args)*),
            (Sem::Release, MemoryScope::Device) => $m!(".release", ".gpu", $($args)*),
            (Sem::Release, MemoryScope::System) => $m!(".release", ".sys", $($args)*),
            (Sem::AcqRel, MemoryScope::Block) => $m!(".acq_rel", ".cta", $($args)*),
            (Sem::AcqRel, MemoryScope::Device) => $m!(".acq_rel", ".gpu", $($args)*),
            (Sem::AcqRel, MemoryScope::System) => $m!(".acq_rel", ".sys", $($args)*),
        }
    };
}

// Loads take relaxed/acquire only, stores relaxed/release only: the other
// qualifiers are not PTX, so they must not even appear in dead arms.
macro_rules! arms_ld {
    ($sem:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
        match ($sem, $scope) {
            (Sem::Relaxed, MemoryScope::Block) => $m!(".relaxed", ".cta", $($args)*),
            (Sem::Relaxed, MemoryScope::Device) => $m!(".relaxed", ".gpu", $($args)*),
            (Sem::Relaxed, MemoryScope::System) => $m!(".relaxed", ".sys", $($args)*),
            (_, MemoryScope::Block) => $m!(".acquire", ".cta", $($args)*),
            (_, MemoryScope::Device) => $m!(".acquire", ".gpu", $($args)*),
            (_, MemoryScope::System) => $m!(".acquire", ".sys", $($args)*),
        }
    };
}
macro_rules! arms_st {
    ($sem:expr, $scope:expr, $m:ident!($($args:tt)*)) => {
        match ($sem, $scope) {
            (Sem::Relaxed, MemoryScope::Block) => $m!(".relaxed", ".cta", $($args)*),
            (Sem::Relaxed, MemoryScope::Device) => $m!(".relaxed", ".gpu", $($args)*),
            (Sem::Relaxed, MemoryScope::System) => $m!(".relaxed", ".sys", $($args)*),
            (_, MemoryScope::Block) => $m!(".release", ".cta", $($args)*),
            (_, MemoryScope::Device) => $m!(".release", ".gpu", $($args)*),
            (_, MemoryScope::System) => $m!(".release", ".sys", $($args)*),
        }
    };
}

macro_rules! ld_asm {
    ($s:literal, $sc:literal, $w:literal, $cls:ident, $d:ident, $a:expr) => {
        asm!(concat!("ld", $s, $sc, ".b", $w, " {d}, [{a}];"), d = out($cls) $d, a = in(reg64) $a, options(nostack, preserves_flags))
    };
}
macro_rules! st_asm {
    ($s:literal, $sc:literal, $w:literal, $cls:ident, $a:expr, $v:expr) => {
        asm!(concat!("st", $s, $sc, ".b", $w, " [{a}], {v};"), a = in(reg64) $a, v = in($cls) $v, options(nostack, preserves_flags))
    };
}
macro_rules! atom_asm {
    ($s:literal, $sc:literal, $op:literal, $cls:ident, $d:ident, $a:expr, $v:expr) => {
        asm!(concat!("atom", $s, $sc, ".", $op, " {d}, [{a}], {v};"), d = out($cls) $d, a = in(reg64) $a, v = in($cls) $v, options(nostack, preserves_flags))
    };
}
macro_rules! cas_asm {
    ($s:literal, $sc:literal, $op:literal, $cls:ident, $d:ident, $a:expr, $b:expr, $c:expr) => {
        asm!(concat!("atom", $s, $sc, ".", $op, " {d}, [{a}], {b}, {c};"), d = out($cls) $d, a = in(reg64) $a, b = in($cls) $b, c = in($cls) $c, options(nostack, preserves_flags))
    };
}

macro_rules! ld_st {
    ($($ld:ident, $st:ident, $t:ty, $w:literal, $cls:ident;)*) => {$(
        /// # Safety
        /// `addr` is a valid, aligned generic address of a `$t`; `sem` is relaxed or acquire.
        #[inline(always)]
        pub(super) unsafe fn $ld(addr: u64, sem: Sem, scope: MemoryScope) -> $t {
            let d: $t;
            // SAFETY: the caller passes a valid, aligned address.
            unsafe { arms_ld!(sem, scope, ld_asm!($w, $cls, d, addr)) };
            d
        }
        /// # Safety
        /// `addr` is a valid, aligned generic address of a `$t`; `sem` is relaxed or release.
        #[inline(always)]
        pub(super) unsafe fn $st(addr: u64, v: $t, sem: Sem, scope: MemoryScope) {
            // SAFETY: the caller passes a valid, aligned address.
            unsafe { arms_st!(sem, scope, st_asm!($w, $cls, addr, v)) }
        }
    )*};
}
ld_st! {
    ld32, st32, u32, "32", reg32;
    ld64, st64, u64, "64", reg64;
}

macro_rules! rmw {
    ($($name:ident, $t:ty, $op:literal, $cls:ident;)*) => {$(
        /// # Safety
        /// `addr` is a valid, aligned generic address of the operand type.
        #[inline(always)]
        pub(super) unsafe fn $name(addr: u64, v: $t, sem: Sem, scope: MemoryScope) -> $t {
            let d: $t;
            // SAFETY: the caller passes a valid, aligned address.
            unsafe { arms4!(sem, scope, atom_asm!($op, $cls, d, addr, v)) };
            d
        }
    )*};
}
rmw! {
    add_u32, u32, "add.u32", reg32;
    add_u64, u64, "add.u64", reg64;
    add_f32, f32, "add.f32", reg32;
    add_f64, f64, "add.f64", reg64;
    min_u32, u32, "min.u32", reg32;
    max_u32, u32, "max.u32", reg32;
    min_s32, i32, "min.s32", reg32;
    max_s32, i32, "max.s32", reg32;
    min_u64, u64, "min.u64", reg64;
    max_u64, u64, "max.u64", reg64;
    min_s64, i64, "min.s64", reg64;
    max_s64, i64, "max.s64", reg64;
    and_32, u32, "and.b32", reg32;
    or_32, u32, "or.b32", reg32;
    xor_32, u32, "xor.b32", reg32;
    exch_32, u32, "exch.b32", reg32;
    and_64, u64, "and.b64", reg64;
    or_64, u64, "or.b64", reg64;
    xor_64, u64, "xor.b64", reg64;
    exch_64, u64, "exch.b64", reg64;
}

/// # Safety
/// `addr` is a valid, aligned generic address of a `u32`.
#[inline(always)]
pub(super) unsafe fn cas_32(addr: u64, current: u32, new: u32, sem: Sem, scope: MemoryScope) -> u32 {
    let d: u32;
    // SAFETY: the caller passes a valid, aligned address.
    unsafe { arms4!(sem, scope, cas_asm!("cas.b32", reg32, d, addr, current, new)) };
    d
}

/// # Safety
/// `addr` is a valid, aligned generic address of a `u64`.
#[inline(always)]
pub(super) unsafe fn cas_64(addr: u64, current: u64, new: u64, sem: Sem, scope: MemoryScope) -> u64 {
    let d: u64;
    // SAFETY: the caller passes a valid, aligned address.
    unsafe { arms4!(sem, scope, cas_asm!("cas.b64", reg64, d, addr, current, new)) };
    d
}
