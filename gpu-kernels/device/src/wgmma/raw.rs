//! Hopper's warpgroup MMA on the GPU, one `unsafe fn` per instruction form, its PTX in its
//! doc. Not an API: [`super::gpu`] calls them after the typed layer ([`crate::wgmma`])
//! checked what they leave to the caller. The `mma_*` forms list one `asm!` operand per
//! accumulator register (`asm!` takes no arrays), written out mechanically — the generator
//! was not kept; each form a kernel of the project uses is checked by what ptxas makes of it
//! (`cargo xtask check-ptx`: no serialized MMA) and by the gemm tests against the f64
//! product (no kernel uses the tf32 forms of N = 64 and 128 yet: those two are unchecked): `m64nNk16` for N = 64,
//! 128, 256, bf16 and f16, B read transposed (MN-major); `m64nNk8` tf32, both K-major.

use core::arch::asm;

/// `wgmma.fence.sync.aligned;` — orders this thread's register accesses to the accumulators
/// before the warpgroup MMAs that follow.
///
/// # Safety
///
/// Every thread of the warpgroup executes it, converged (`.aligned`).
#[inline(always)]
pub(super) unsafe fn fence() {
    // SAFETY: no operands; convergence is the caller's duty.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack, preserves_flags)) }
}

/// `wgmma.commit_group.sync.aligned;` — closes the group of the MMAs issued since the last.
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn commit_group() {
    // SAFETY: no operands; convergence is the caller's duty.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack, preserves_flags)) }
}

/// `wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 d, desc_a, desc_b, scale_d, 1, 1, 0, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 64` accumulators (32 per
/// thread), A K-major and B MN-major (transposed) in shared memory, named by descriptors.
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 16` (A) and `16 × 64` (B) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_64`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n64k16_bf16(d: &mut [f32; 32], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}", "}}, {da}, {db}, p, 1, 1, 0, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 d, desc_a, desc_b, scale_d, 1, 1, 0, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 64` accumulators (32 per
/// thread), A K-major and B MN-major (transposed) in shared memory, named by descriptors.
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 16` (A) and `16 × 64` (B) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_64`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n64k16_f16(d: &mut [f32; 32], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}", "}}, {da}, {db}, p, 1, 1, 0, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.wait_group.sync.aligned 0;` with the `64 × 64` accumulators as operands: every
/// MMA this thread issued has completed, and its results are in `d` (the registers pass
/// through the instruction, so the compiler cannot read them before it).
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn wait_group_64(d: &mut [f32; 32]) {
    // SAFETY: no memory; convergence is the caller's duty.
    unsafe {
        asm!(
            "wgmma.wait_group.sync.aligned 0;",
            "// {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 d, desc_a, desc_b, scale_d, 1, 1, 0, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 128` accumulators (64 per
/// thread), A K-major and B MN-major (transposed) in shared memory, named by descriptors.
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 16` (A) and `16 × 128` (B) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_128`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n128k16_bf16(d: &mut [f32; 64], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}", "}}, {da}, {db}, p, 1, 1, 0, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 d, desc_a, desc_b, scale_d, 1, 1, 0, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 128` accumulators (64 per
/// thread), A K-major and B MN-major (transposed) in shared memory, named by descriptors.
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 16` (A) and `16 × 128` (B) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_128`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n128k16_f16(d: &mut [f32; 64], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}", "}}, {da}, {db}, p, 1, 1, 0, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.wait_group.sync.aligned 0;` with the `64 × 128` accumulators as operands: every
/// MMA this thread issued has completed, and its results are in `d` (the registers pass
/// through the instruction, so the compiler cannot read them before it).
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn wait_group_128(d: &mut [f32; 64]) {
    // SAFETY: no memory; convergence is the caller's duty.
    unsafe {
        asm!(
            "wgmma.wait_group.sync.aligned 0;",
            "// {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 d, desc_a, desc_b, scale_d, 1, 1, 0, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 256` accumulators (128 per
/// thread), A K-major and B MN-major (transposed) in shared memory, named by descriptors.
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 16` (A) and `16 × 256` (B) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_256`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n256k16_bf16(d: &mut [f32; 128], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}", "}}, {da}, {db}, p, 1, 1, 0, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            d64 = inout(reg32) d[64],
            d65 = inout(reg32) d[65],
            d66 = inout(reg32) d[66],
            d67 = inout(reg32) d[67],
            d68 = inout(reg32) d[68],
            d69 = inout(reg32) d[69],
            d70 = inout(reg32) d[70],
            d71 = inout(reg32) d[71],
            d72 = inout(reg32) d[72],
            d73 = inout(reg32) d[73],
            d74 = inout(reg32) d[74],
            d75 = inout(reg32) d[75],
            d76 = inout(reg32) d[76],
            d77 = inout(reg32) d[77],
            d78 = inout(reg32) d[78],
            d79 = inout(reg32) d[79],
            d80 = inout(reg32) d[80],
            d81 = inout(reg32) d[81],
            d82 = inout(reg32) d[82],
            d83 = inout(reg32) d[83],
            d84 = inout(reg32) d[84],
            d85 = inout(reg32) d[85],
            d86 = inout(reg32) d[86],
            d87 = inout(reg32) d[87],
            d88 = inout(reg32) d[88],
            d89 = inout(reg32) d[89],
            d90 = inout(reg32) d[90],
            d91 = inout(reg32) d[91],
            d92 = inout(reg32) d[92],
            d93 = inout(reg32) d[93],
            d94 = inout(reg32) d[94],
            d95 = inout(reg32) d[95],
            d96 = inout(reg32) d[96],
            d97 = inout(reg32) d[97],
            d98 = inout(reg32) d[98],
            d99 = inout(reg32) d[99],
            d100 = inout(reg32) d[100],
            d101 = inout(reg32) d[101],
            d102 = inout(reg32) d[102],
            d103 = inout(reg32) d[103],
            d104 = inout(reg32) d[104],
            d105 = inout(reg32) d[105],
            d106 = inout(reg32) d[106],
            d107 = inout(reg32) d[107],
            d108 = inout(reg32) d[108],
            d109 = inout(reg32) d[109],
            d110 = inout(reg32) d[110],
            d111 = inout(reg32) d[111],
            d112 = inout(reg32) d[112],
            d113 = inout(reg32) d[113],
            d114 = inout(reg32) d[114],
            d115 = inout(reg32) d[115],
            d116 = inout(reg32) d[116],
            d117 = inout(reg32) d[117],
            d118 = inout(reg32) d[118],
            d119 = inout(reg32) d[119],
            d120 = inout(reg32) d[120],
            d121 = inout(reg32) d[121],
            d122 = inout(reg32) d[122],
            d123 = inout(reg32) d[123],
            d124 = inout(reg32) d[124],
            d125 = inout(reg32) d[125],
            d126 = inout(reg32) d[126],
            d127 = inout(reg32) d[127],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 d, desc_a, desc_b, scale_d, 1, 1, 0, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 256` accumulators (128 per
/// thread), A K-major and B MN-major (transposed) in shared memory, named by descriptors.
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 16` (A) and `16 × 256` (B) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_256`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n256k16_f16(d: &mut [f32; 128], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}", "}}, {da}, {db}, p, 1, 1, 0, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            d64 = inout(reg32) d[64],
            d65 = inout(reg32) d[65],
            d66 = inout(reg32) d[66],
            d67 = inout(reg32) d[67],
            d68 = inout(reg32) d[68],
            d69 = inout(reg32) d[69],
            d70 = inout(reg32) d[70],
            d71 = inout(reg32) d[71],
            d72 = inout(reg32) d[72],
            d73 = inout(reg32) d[73],
            d74 = inout(reg32) d[74],
            d75 = inout(reg32) d[75],
            d76 = inout(reg32) d[76],
            d77 = inout(reg32) d[77],
            d78 = inout(reg32) d[78],
            d79 = inout(reg32) d[79],
            d80 = inout(reg32) d[80],
            d81 = inout(reg32) d[81],
            d82 = inout(reg32) d[82],
            d83 = inout(reg32) d[83],
            d84 = inout(reg32) d[84],
            d85 = inout(reg32) d[85],
            d86 = inout(reg32) d[86],
            d87 = inout(reg32) d[87],
            d88 = inout(reg32) d[88],
            d89 = inout(reg32) d[89],
            d90 = inout(reg32) d[90],
            d91 = inout(reg32) d[91],
            d92 = inout(reg32) d[92],
            d93 = inout(reg32) d[93],
            d94 = inout(reg32) d[94],
            d95 = inout(reg32) d[95],
            d96 = inout(reg32) d[96],
            d97 = inout(reg32) d[97],
            d98 = inout(reg32) d[98],
            d99 = inout(reg32) d[99],
            d100 = inout(reg32) d[100],
            d101 = inout(reg32) d[101],
            d102 = inout(reg32) d[102],
            d103 = inout(reg32) d[103],
            d104 = inout(reg32) d[104],
            d105 = inout(reg32) d[105],
            d106 = inout(reg32) d[106],
            d107 = inout(reg32) d[107],
            d108 = inout(reg32) d[108],
            d109 = inout(reg32) d[109],
            d110 = inout(reg32) d[110],
            d111 = inout(reg32) d[111],
            d112 = inout(reg32) d[112],
            d113 = inout(reg32) d[113],
            d114 = inout(reg32) d[114],
            d115 = inout(reg32) d[115],
            d116 = inout(reg32) d[116],
            d117 = inout(reg32) d[117],
            d118 = inout(reg32) d[118],
            d119 = inout(reg32) d[119],
            d120 = inout(reg32) d[120],
            d121 = inout(reg32) d[121],
            d122 = inout(reg32) d[122],
            d123 = inout(reg32) d[123],
            d124 = inout(reg32) d[124],
            d125 = inout(reg32) d[125],
            d126 = inout(reg32) d[126],
            d127 = inout(reg32) d[127],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.wait_group.sync.aligned 0;` with the `64 × 256` accumulators as operands: every
/// MMA this thread issued has completed, and its results are in `d` (the registers pass
/// through the instruction, so the compiler cannot read them before it).
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn wait_group_256(d: &mut [f32; 128]) {
    // SAFETY: no memory; convergence is the caller's duty.
    unsafe {
        asm!(
            "wgmma.wait_group.sync.aligned 0;",
            "// {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            d64 = inout(reg32) d[64],
            d65 = inout(reg32) d[65],
            d66 = inout(reg32) d[66],
            d67 = inout(reg32) d[67],
            d68 = inout(reg32) d[68],
            d69 = inout(reg32) d[69],
            d70 = inout(reg32) d[70],
            d71 = inout(reg32) d[71],
            d72 = inout(reg32) d[72],
            d73 = inout(reg32) d[73],
            d74 = inout(reg32) d[74],
            d75 = inout(reg32) d[75],
            d76 = inout(reg32) d[76],
            d77 = inout(reg32) d[77],
            d78 = inout(reg32) d[78],
            d79 = inout(reg32) d[79],
            d80 = inout(reg32) d[80],
            d81 = inout(reg32) d[81],
            d82 = inout(reg32) d[82],
            d83 = inout(reg32) d[83],
            d84 = inout(reg32) d[84],
            d85 = inout(reg32) d[85],
            d86 = inout(reg32) d[86],
            d87 = inout(reg32) d[87],
            d88 = inout(reg32) d[88],
            d89 = inout(reg32) d[89],
            d90 = inout(reg32) d[90],
            d91 = inout(reg32) d[91],
            d92 = inout(reg32) d[92],
            d93 = inout(reg32) d[93],
            d94 = inout(reg32) d[94],
            d95 = inout(reg32) d[95],
            d96 = inout(reg32) d[96],
            d97 = inout(reg32) d[97],
            d98 = inout(reg32) d[98],
            d99 = inout(reg32) d[99],
            d100 = inout(reg32) d[100],
            d101 = inout(reg32) d[101],
            d102 = inout(reg32) d[102],
            d103 = inout(reg32) d[103],
            d104 = inout(reg32) d[104],
            d105 = inout(reg32) d[105],
            d106 = inout(reg32) d[106],
            d107 = inout(reg32) d[107],
            d108 = inout(reg32) d[108],
            d109 = inout(reg32) d[109],
            d110 = inout(reg32) d[110],
            d111 = inout(reg32) d[111],
            d112 = inout(reg32) d[112],
            d113 = inout(reg32) d[113],
            d114 = inout(reg32) d[114],
            d115 = inout(reg32) d[115],
            d116 = inout(reg32) d[116],
            d117 = inout(reg32) d[117],
            d118 = inout(reg32) d[118],
            d119 = inout(reg32) d[119],
            d120 = inout(reg32) d[120],
            d121 = inout(reg32) d[121],
            d122 = inout(reg32) d[122],
            d123 = inout(reg32) d[123],
            d124 = inout(reg32) d[124],
            d125 = inout(reg32) d[125],
            d126 = inout(reg32) d[126],
            d127 = inout(reg32) d[127],
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.wait_group.sync.aligned 1;` with the `64 × 64` accumulators as operands: every
/// MMA group this thread committed but the last has completed (the last one's results
/// are still being written into `d`, which only the next MMA or a wait may touch) (the registers pass
/// through the instruction, so the compiler cannot read them before it).
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn wait_group_1_64(d: &mut [f32; 32]) {
    // SAFETY: no memory; convergence is the caller's duty.
    unsafe {
        asm!(
            "wgmma.wait_group.sync.aligned 1;",
            "// {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.wait_group.sync.aligned 1;` with the `64 × 128` accumulators as operands: every
/// MMA group this thread committed but the last has completed (the last one's results
/// are still being written into `d`, which only the next MMA or a wait may touch) (the registers pass
/// through the instruction, so the compiler cannot read them before it).
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn wait_group_1_128(d: &mut [f32; 64]) {
    // SAFETY: no memory; convergence is the caller's duty.
    unsafe {
        asm!(
            "wgmma.wait_group.sync.aligned 1;",
            "// {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.wait_group.sync.aligned 1;` with the `64 × 256` accumulators as operands: every
/// MMA group this thread committed but the last has completed (the last one's results
/// are still being written into `d`, which only the next MMA or a wait may touch) (the registers pass
/// through the instruction, so the compiler cannot read them before it).
///
/// # Safety
///
/// As [`fence`].
#[inline(always)]
pub(super) unsafe fn wait_group_1_256(d: &mut [f32; 128]) {
    // SAFETY: no memory; convergence is the caller's duty.
    unsafe {
        asm!(
            "wgmma.wait_group.sync.aligned 1;",
            "// {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            d64 = inout(reg32) d[64],
            d65 = inout(reg32) d[65],
            d66 = inout(reg32) d[66],
            d67 = inout(reg32) d[67],
            d68 = inout(reg32) d[68],
            d69 = inout(reg32) d[69],
            d70 = inout(reg32) d[70],
            d71 = inout(reg32) d[71],
            d72 = inout(reg32) d[72],
            d73 = inout(reg32) d[73],
            d74 = inout(reg32) d[74],
            d75 = inout(reg32) d[75],
            d76 = inout(reg32) d[76],
            d77 = inout(reg32) d[77],
            d78 = inout(reg32) d[78],
            d79 = inout(reg32) d[79],
            d80 = inout(reg32) d[80],
            d81 = inout(reg32) d[81],
            d82 = inout(reg32) d[82],
            d83 = inout(reg32) d[83],
            d84 = inout(reg32) d[84],
            d85 = inout(reg32) d[85],
            d86 = inout(reg32) d[86],
            d87 = inout(reg32) d[87],
            d88 = inout(reg32) d[88],
            d89 = inout(reg32) d[89],
            d90 = inout(reg32) d[90],
            d91 = inout(reg32) d[91],
            d92 = inout(reg32) d[92],
            d93 = inout(reg32) d[93],
            d94 = inout(reg32) d[94],
            d95 = inout(reg32) d[95],
            d96 = inout(reg32) d[96],
            d97 = inout(reg32) d[97],
            d98 = inout(reg32) d[98],
            d99 = inout(reg32) d[99],
            d100 = inout(reg32) d[100],
            d101 = inout(reg32) d[101],
            d102 = inout(reg32) d[102],
            d103 = inout(reg32) d[103],
            d104 = inout(reg32) d[104],
            d105 = inout(reg32) d[105],
            d106 = inout(reg32) d[106],
            d107 = inout(reg32) d[107],
            d108 = inout(reg32) d[108],
            d109 = inout(reg32) d[109],
            d110 = inout(reg32) d[110],
            d111 = inout(reg32) d[111],
            d112 = inout(reg32) d[112],
            d113 = inout(reg32) d[113],
            d114 = inout(reg32) d[114],
            d115 = inout(reg32) d[115],
            d116 = inout(reg32) d[116],
            d117 = inout(reg32) d[117],
            d118 = inout(reg32) d[118],
            d119 = inout(reg32) d[119],
            d120 = inout(reg32) d[120],
            d121 = inout(reg32) d[121],
            d122 = inout(reg32) d[122],
            d123 = inout(reg32) d[123],
            d124 = inout(reg32) d[124],
            d125 = inout(reg32) d[125],
            d126 = inout(reg32) d[126],
            d127 = inout(reg32) d[127],
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 d, desc_a, desc_b, scale_d, 1, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 64` accumulators (32 per
/// thread), A and B both K-major (tf32 has no transposed form) in shared memory, named by descriptors:
/// their f32 elements read as tf32 (the low 13 mantissa bits ignored).
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 8` (A) and `64 × 8` (B, K-major) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_64`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n64k8_tf32(d: &mut [f32; 32], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}", "}}, {da}, {db}, p, 1, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 d, desc_a, desc_b, scale_d, 1, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 128` accumulators (64 per
/// thread), A and B both K-major (tf32 has no transposed form) in shared memory, named by descriptors:
/// their f32 elements read as tf32 (the low 13 mantissa bits ignored).
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 8` (A) and `128 × 8` (B, K-major) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_128`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n128k8_tf32(d: &mut [f32; 64], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}", "}}, {da}, {db}, p, 1, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 d, desc_a, desc_b, scale_d, 1, 1;`
/// — `d = a · b + (scale_d ? d : 0)` on the warpgroup's `64 × 256` accumulators (128 per
/// thread), A and B both K-major (tf32 has no transposed form) in shared memory, named by descriptors:
/// their f32 elements read as tf32 (the low 13 mantissa bits ignored).
///
/// # Safety
///
/// * Every thread of the warpgroup executes this same instruction, converged (`.aligned`),
///   with the same descriptors.
/// * The descriptors name `64 × 8` (A) and `256 × 8` (B, K-major) operands inside this block's
///   shared memory, 128-byte swizzled, made visible to the async proxy (`fence.proxy.async`, the pipelines' wait).
/// * The accumulators are not read or written until a [`wait_group_256`] with them.
#[inline(always)]
pub(super) unsafe fn mma_m64n256k8_tf32(d: &mut [f32; 128], desc_a: u64, desc_b: u64, scale_d: bool) {
    // SAFETY: the caller's duties above; registers and descriptors only.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {sd}, 0;",
            concat!("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{", "{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}", "}}, {da}, {db}, p, 1, 1;"),
            "}}",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4],
            d5 = inout(reg32) d[5],
            d6 = inout(reg32) d[6],
            d7 = inout(reg32) d[7],
            d8 = inout(reg32) d[8],
            d9 = inout(reg32) d[9],
            d10 = inout(reg32) d[10],
            d11 = inout(reg32) d[11],
            d12 = inout(reg32) d[12],
            d13 = inout(reg32) d[13],
            d14 = inout(reg32) d[14],
            d15 = inout(reg32) d[15],
            d16 = inout(reg32) d[16],
            d17 = inout(reg32) d[17],
            d18 = inout(reg32) d[18],
            d19 = inout(reg32) d[19],
            d20 = inout(reg32) d[20],
            d21 = inout(reg32) d[21],
            d22 = inout(reg32) d[22],
            d23 = inout(reg32) d[23],
            d24 = inout(reg32) d[24],
            d25 = inout(reg32) d[25],
            d26 = inout(reg32) d[26],
            d27 = inout(reg32) d[27],
            d28 = inout(reg32) d[28],
            d29 = inout(reg32) d[29],
            d30 = inout(reg32) d[30],
            d31 = inout(reg32) d[31],
            d32 = inout(reg32) d[32],
            d33 = inout(reg32) d[33],
            d34 = inout(reg32) d[34],
            d35 = inout(reg32) d[35],
            d36 = inout(reg32) d[36],
            d37 = inout(reg32) d[37],
            d38 = inout(reg32) d[38],
            d39 = inout(reg32) d[39],
            d40 = inout(reg32) d[40],
            d41 = inout(reg32) d[41],
            d42 = inout(reg32) d[42],
            d43 = inout(reg32) d[43],
            d44 = inout(reg32) d[44],
            d45 = inout(reg32) d[45],
            d46 = inout(reg32) d[46],
            d47 = inout(reg32) d[47],
            d48 = inout(reg32) d[48],
            d49 = inout(reg32) d[49],
            d50 = inout(reg32) d[50],
            d51 = inout(reg32) d[51],
            d52 = inout(reg32) d[52],
            d53 = inout(reg32) d[53],
            d54 = inout(reg32) d[54],
            d55 = inout(reg32) d[55],
            d56 = inout(reg32) d[56],
            d57 = inout(reg32) d[57],
            d58 = inout(reg32) d[58],
            d59 = inout(reg32) d[59],
            d60 = inout(reg32) d[60],
            d61 = inout(reg32) d[61],
            d62 = inout(reg32) d[62],
            d63 = inout(reg32) d[63],
            d64 = inout(reg32) d[64],
            d65 = inout(reg32) d[65],
            d66 = inout(reg32) d[66],
            d67 = inout(reg32) d[67],
            d68 = inout(reg32) d[68],
            d69 = inout(reg32) d[69],
            d70 = inout(reg32) d[70],
            d71 = inout(reg32) d[71],
            d72 = inout(reg32) d[72],
            d73 = inout(reg32) d[73],
            d74 = inout(reg32) d[74],
            d75 = inout(reg32) d[75],
            d76 = inout(reg32) d[76],
            d77 = inout(reg32) d[77],
            d78 = inout(reg32) d[78],
            d79 = inout(reg32) d[79],
            d80 = inout(reg32) d[80],
            d81 = inout(reg32) d[81],
            d82 = inout(reg32) d[82],
            d83 = inout(reg32) d[83],
            d84 = inout(reg32) d[84],
            d85 = inout(reg32) d[85],
            d86 = inout(reg32) d[86],
            d87 = inout(reg32) d[87],
            d88 = inout(reg32) d[88],
            d89 = inout(reg32) d[89],
            d90 = inout(reg32) d[90],
            d91 = inout(reg32) d[91],
            d92 = inout(reg32) d[92],
            d93 = inout(reg32) d[93],
            d94 = inout(reg32) d[94],
            d95 = inout(reg32) d[95],
            d96 = inout(reg32) d[96],
            d97 = inout(reg32) d[97],
            d98 = inout(reg32) d[98],
            d99 = inout(reg32) d[99],
            d100 = inout(reg32) d[100],
            d101 = inout(reg32) d[101],
            d102 = inout(reg32) d[102],
            d103 = inout(reg32) d[103],
            d104 = inout(reg32) d[104],
            d105 = inout(reg32) d[105],
            d106 = inout(reg32) d[106],
            d107 = inout(reg32) d[107],
            d108 = inout(reg32) d[108],
            d109 = inout(reg32) d[109],
            d110 = inout(reg32) d[110],
            d111 = inout(reg32) d[111],
            d112 = inout(reg32) d[112],
            d113 = inout(reg32) d[113],
            d114 = inout(reg32) d[114],
            d115 = inout(reg32) d[115],
            d116 = inout(reg32) d[116],
            d117 = inout(reg32) d[117],
            d118 = inout(reg32) d[118],
            d119 = inout(reg32) d[119],
            d120 = inout(reg32) d[120],
            d121 = inout(reg32) d[121],
            d122 = inout(reg32) d[122],
            d123 = inout(reg32) d[123],
            d124 = inout(reg32) d[124],
            d125 = inout(reg32) d[125],
            d126 = inout(reg32) d[126],
            d127 = inout(reg32) d[127],
            da = in(reg64) desc_a,
            db = in(reg64) desc_b,
            sd = in(reg32) scale_d as u32,
            // Not `pure`: a warpgroup-synchronous instruction stays where every thread runs it.
            options(nostack, preserves_flags),
        );
    }
}
