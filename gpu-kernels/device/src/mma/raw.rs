//! The warp MMA's instruction forms on the GPU, one `unsafe fn` each, its PTX in its doc.
//!
//! The forms are not predicated: the GPU backend (`gpu.rs`) runs a batch of them inside
//! one branch on the batch's check, as `ptxas` turns an `@p mma.sync` (or `@p ldmatrix`)
//! into a branch around that one instruction, which split the k-loop of a gemm into a block
//! per MMA. Not an API: the GPU backend calls these, after the typed layer
//! ([`crate::mma`]) checked what they leave to the caller — that every lane of the warp
//! executes the same instruction (`.sync.aligned`), that the fragments were loaded for the
//! shape and layout the instruction reads, and that an `ldmatrix` address is inside this
//! block's shared memory.

use core::arch::asm;

macro_rules! mma_16816 {
    ($(#[$doc:meta])* $name:ident, $ty:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// * Every lane of the warp executes this same instruction, converged (`.aligned`).
        /// * `a` and `b` hold this lane's A (row) and B (col) fragments as
        ///   [`crate::spec::mma`] lays them out (any bits are defined values; the layout
        ///   is what makes the product meaningful).
        #[inline(always)]
        pub(super) unsafe fn $name(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
            // SAFETY: registers only; convergence is the caller's duty (above).
            unsafe {
                asm!(
                    concat!("mma.sync.aligned.m16n8k16.row.col.f32.", $ty, ".", $ty, ".f32 ",
                        "{{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, ",
                        "{{{d0}, {d1}, {d2}, {d3}}};"),
                    d0 = inout(reg32) d[0], d1 = inout(reg32) d[1], d2 = inout(reg32) d[2], d3 = inout(reg32) d[3],
                    a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                    b0 = in(reg32) b[0], b1 = in(reg32) b[1],
                    // Not `pure`: a warp-synchronous instruction must stay where every lane
                    // runs it (LLVM knows nothing of convergence, and may sink pure code
                    // into a branch).
                    options(nomem, nostack, preserves_flags),
                );
            }
        }
    };
}

mma_16816! {
    /// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 d, a, b, d;` — `d += a · b`,
    /// bf16 operands, f32 accumulators (sm_80+).
    mma_m16n8k16_bf16, "bf16"
}
mma_16816! {
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 d, a, b, d;` — `d += a · b`,
    /// f16 operands, f32 accumulators (sm_80+).
    mma_m16n8k16_f16, "f16"
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, d;` — `d += a · b`, tf32
/// operands (f32 registers whose low 13 bits the tensor core ignores), f32 accumulators
/// (sm_80+).
///
/// # Safety
///
/// As [`mma_m16n8k16_bf16`]'s.
#[inline(always)]
pub(super) unsafe fn mma_m16n8k8_tf32(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: registers only; convergence is the caller's duty.
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{d0}, {d1}, {d2}, {d3}}};",
            d0 = inout(reg32) d[0], d1 = inout(reg32) d[1], d2 = inout(reg32) d[2], d3 = inout(reg32) d[3],
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b0 = in(reg32) b[0], b1 = in(reg32) b[1],
            // Not `pure`, as the forms above.
            options(nomem, nostack, preserves_flags),
        );
    }
}

macro_rules! ldmatrix {
    ($(#[$doc:meta])* $name:ident, $form:literal, $n:literal: $($r:ident)*) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// * Every lane of the warp executes this same instruction, converged (`.aligned`).
        /// * The address this lane gives (lanes `0..8` per matrix, see
        ///   [`crate::spec::mma`]) is 16-byte aligned and its 16 bytes are inside this
        ///   block's shared memory. (Lanes whose address the form does not use pass any
        ///   value.)
        #[inline(always)]
        pub(super) unsafe fn $name(addr: u32) -> [u32; $n] {
            $(let $r: u32;)*
            // SAFETY: a read of shared memory at addresses the caller vouches for.
            unsafe {
                asm!(
                    concat!("ldmatrix.sync.aligned.m8n8.", $form, ".shared.b16 {{", ldmatrix!(@regs $($r)*), "}}, [{addr}];"),
                    addr = in(reg32) addr,
                    $($r = out(reg32) $r,)*
                    // Not `pure` (warp-synchronous, see the MMA forms above).
                    options(readonly, nostack, preserves_flags),
                );
            }
            [$($r),*]
        }
    };
    (@regs $r:ident) => { concat!("{", stringify!($r), "}") };
    (@regs $r:ident $($rest:ident)+) => { concat!("{", stringify!($r), "}, ", ldmatrix!(@regs $($rest)+)) };
}

ldmatrix! {
    /// `ldmatrix.sync.aligned.m8n8.x1.shared.b16 {r0}, [addr];` — one 8 × 8 matrix of
    /// 16-bit elements; lanes `0..8` give its rows' addresses.
    ldmatrix_x1, "x1", 1: r0
}
ldmatrix! {
    /// `ldmatrix.sync.aligned.m8n8.x2.shared.b16 {r0, r1}, [addr];` — two matrices; lanes
    /// `0..16` give the rows' addresses.
    ldmatrix_x2, "x2", 2: r0 r1
}
ldmatrix! {
    /// `ldmatrix.sync.aligned.m8n8.x4.shared.b16 {r0, r1, r2, r3}, [addr];` — four
    /// matrices; every lane gives one row's address.
    ldmatrix_x4, "x4", 4: r0 r1 r2 r3
}
ldmatrix! {
    /// `ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {r0}, [addr];` — as
    /// [`ldmatrix_x1`], each matrix transposed.
    ldmatrix_x1_trans, "x1.trans", 1: r0
}
ldmatrix! {
    /// `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {r0, r1}, [addr];` — as
    /// [`ldmatrix_x2`], each matrix transposed.
    ldmatrix_x2_trans, "x2.trans", 2: r0 r1
}
ldmatrix! {
    /// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {r0, r1, r2, r3}, [addr];` — as
    /// [`ldmatrix_x4`], each matrix transposed.
    ldmatrix_x4_trans, "x4.trans", 4: r0 r1 r2 r3
}

/// `cvt.rna.tf32.f32 d, a;` — `a` rounded to tf32 (nearest, ties away from zero), as an
/// f32 bit pattern whose low 13 bits are zero (sm_80+). Safe: registers only.
#[inline(always)]
pub(super) fn cvt_tf32(a: f32) -> u32 {
    let r: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!("cvt.rna.tf32.f32 {r}, {a};", r = out(reg32) r, a = in(reg32) a, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

/// `activemask.b32 r;` — the lanes executing this instruction together. Safe: no operands.
#[inline(always)]
pub(super) fn active_mask() -> u32 {
    let r: u32;
    // SAFETY: no operands besides the result; not `pure` (the answer depends on where it runs).
    unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nomem, nostack, preserves_flags)) };
    r
}
