// sluice-cuda-wg-gemm: a Hopper (sm_90a) gemm on warpgroup MMA (wgmma.mma_async), the reference
// design for a Rust port; the mma.sync twin is tc_gemm.cu, whose CLI, inputs, check and output
// this program follows.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v [-DWG_BN=256] -o wg_gemm wg_gemm.cu -lcublas
//   nvcc ... -DWG_KERNELS_ONLY -o wg_gemm wg_gemm.cu          (no cuBLAS: the kernel alone)
//   ./wg_gemm [--warmup W] [--reps R] [--probe] [--dtype bf16,f16] SIZE...   (SIZE: N for N^3, or MxNxK)
//
// C = A B: A m x k row-major, B k x n row-major (bf16 or f16), f32 accumulation, C m x n row-major
// f32. Any m, n, k; the design assumes k % 8 == 0 (A's rows 16-byte aligned) and n % 8 == 0 (B's
// rows likewise) for the cp.async path; otherwise (or for a misaligned pointer) that operand is
// copied element by element, synchronously, as in tc_gemm.cu. Ragged tiles are zero-filled
// (cp.async's src-size operand = 0), C stores are clipped to m x n.
//
// ---------------------------------------------------------------------------------------------
// Block tile 128 x BN (BN = 128, -DWG_BN=256), BK = 64, STAGES = 4, 256 threads = 2 warpgroups.
// Warpgroup g (threads 128g..128g+127) computes rows 64g..64g+63 of the block tile with
// wgmma.mma_async.sync.aligned.m64n{BN}k16.f32.{bf16,f16}: 4 k-steps of 16 per k-tile, A and B
// both from shared memory through descriptors. Grouped block order (8 tile rows per group), as
// tc_gemm.cu.
//
// Shared memory per stage (each stage, and each tile in it, 1024-byte aligned):
//   A: 128 rows x 64 elements, K-major (k contiguous): row r = 128 bytes at r*128; its 16-byte
//      chunk c (elements 8c..8c+7) at r*128 + ((c ^ (r % 8)) * 16).             16 KiB
//   B: 64 (k) x BN, MN-major (n contiguous), in BN/64 panels of 64 columns: panel p at p*8192
//      (= p * 64 rows * 128 bytes); row kk of a panel at kk*128; its chunk c (columns
//      64p+8c..64p+8c+7) at p*8192 + kk*128 + ((c ^ (kk % 8)) * 16).             BN/64 * 8 KiB
// Both are exactly the 128-byte-swizzle canonical layouts, i.e. the swizzle is CuTe's
// Swizzle<3,4,3> on the byte address (bits [4,7) ^= bits [7,10)), which is why every tile base
// must be 1024-byte aligned (the pattern repeats every 8 rows x 128 bytes):
//   * PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout", Table "swizzle atom layouts": 128B
//     swizzle, K-major atom = 8 x 8 128-bit elements (8 rows of 64 bf16 along K); MN-major atom =
//     8 x 8 (64 bf16 along M/N, 8 rows along K).
//   * CUTLASS include/cute/atom/mma_traits_sm90_gmma.hpp: Layout_K_SW128_Atom =
//     Swizzle<3,4,3> o (8,64):(64,1) elements; Layout_MN_SW128_Atom = Swizzle<3,4,3> o
//     (64,8):(1,64); make_gmma_desc's canonical forms, in 16-byte (uint128) units, T = 8 bf16:
//       K-major  B128: Swizzle<3,4,3> o ((8,m),(T,2)):((8T,SBO),(1,T))
//       MN-major B128: Swizzle<3,4,3> o ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))
//     so for MN-major the LBO is the stride between 64-element M/N panels and the SBO the
//     stride between groups of 8 k-rows. The B layout above is this form with LBO = 8192 bytes
//     (panel stride) and SBO = 1024 bytes (8 rows x 128): the layout in the design brief IS the
//     canonical transposed layout; nothing had to change. (CUTLASS's own tile_to_shape of the atom
//     over (BN, 64) puts the panels 1 KiB apart and the 8-row groups BN*16 bytes apart, i.e. the
//     same canonical form with LBO = 1 KiB, SBO = BN*16. ThunderKittens' st tiles are laid out
//     exactly as here:
//     include/ops/group/wgmma/base/base.cuh, transpose mode: LBO = 2048*height = rows*128 =
//     the 64-column panel's size, SBO = 1024.)
//
// Matrix descriptors (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format"; CUTLASS
// include/cute/arch/mma_sm90_desc.hpp, union GmmaDescriptor):
//   bits  0-13  start address: (addr & 0x3FFFF) >> 4
//   bits 16-29  leading dimension byte offset >> 4   (LBO)
//   bits 32-45  stride dimension byte offset >> 4    (SBO)
//   bits 49-51  base offset: 0, because every swizzle pattern starts on a 1024-byte boundary
//               (PTX: "0 when the repeating pattern ... starts at a 1024-byte boundary"; CUTLASS
//               make_gmma_desc always writes 0)
//   bits 62-63  swizzle mode: 1 = 128B (PTX table; CUTLASS LayoutType::B128 = 1)
//   A (K-major, imm-trans-a = 0), warpgroup g, k-step s (0..3):
//       start = A stage + g*64*128 + s*32;  LBO = 16 B (field 1: "not used for swizzled K-major,
//       assumed 1": PTX strides table; CUTLASS sets stride_10 = 1; ThunderKittens sets 16 B);
//       SBO = 1024 B (field 64: 8 rows x 128 B to the next 8-row group along M).
//       Per k-step of 16: +32 bytes (= 16 bf16) on the start address, i.e. +2 in field 0, inside
//       the swizzled 128-byte row; the hardware applies the XOR to the computed addresses, so
//       the un-swizzled offset is right and base offset stays 0. CUTLASS: DescriptorIterator::
//       operator+ adds the k-block's offset (in 16-byte units of the un-swizzled layout) to
//       the low 32 bits; ThunderKittens chunk_descriptor: +(chunk % 4) * 32 bytes.
//   B (MN-major, imm-trans-b = 1), k-step s:
//       start = B stage + s*2048;  LBO = 8192 B (field 512: panel stride along N);
//       SBO = 1024 B (field 64: 8 k-rows x 128 B).
//       Per k-step of 16: +16 rows = +2048 bytes (+128 in field 0), keeping 1024-byte
//       alignment (ThunderKittens chunk_descriptor, transpose mode: + chunk * 2048).
//   Operand order (CUTLASS cute/arch/mma_sm90_gmma.hpp, MMA_64x128x16_F32BF16BF16_SS):
//       {d...}, desc-a, desc-b, p(scale-d), imm-scale-a=1, imm-scale-b=1, imm-trans-a=0,
//       imm-trans-b=1. PTX 9.7.15.5.1.2: imm-trans-b = 1 selects N-major B.
//
// Main loop, per k-tile kt (simple and correct first):
//   cp.async.wait_group(STAGES-2)   this thread's copies of k-tile kt have landed
//   fence.proxy.async.shared::cta   ... and are ordered before later async-proxy reads: wgmma
//                                   reads shared memory through the async proxy, and "an async
//                                   proxy fence must be used to establish an ordering between
//                                   prior writes to shared memory matrices and subsequent reads
//                                   of the same matrices in a wgmma.mma_async" (PTX 9.7.15.4 /
//                                   9.7.15.7.1); cp.async and st.shared write through the generic
//                                   proxy. NOTE: the brief put this fence after the barrier; it is
//                                   placed before it, by every writing thread, as NVIDIA's own
//                                   code does for generic writes consumed by the async proxy
//                                   (CUTLASS sm90_epilogue_tma_warpspecialized.hpp:
//                                   "fence_view_async_shared(); // ensure smem writes are visible
//                                   to TMA" then "synchronize(); // ensure all threads have issued
//                                   their async fence"). Same instruction count.
//   __syncthreads()                 everyone's copies have landed and been fenced; and both
//                                   warpgroups finished (waited for) the wgmmas of k-tile kt-1
//   wgmma.fence; 4 x wgmma (accumulate: the accumulators are zeroed once before the loop, so
//   scale-d is always 1); wgmma.commit_group; wgmma.wait_group 0
//   cp.async of k-tile kt+STAGES-1 into stage (kt-1) % STAGES (read by the wgmmas of kt-1, which
//   both warpgroups waited for before this iteration's barrier; wgmma's completion carries an
//   implicit async->generic proxy fence, PTX 9.7.15.4); cp.async.commit_group.
// A faster version would: issue that cp.async right after the barrier (the stage is already
// free there) so the copies overlap the wgmmas; keep one wgmma group in flight
// (wgmma.wait_group 1, with one more stage of lag before a stage is overwritten); and then move
// to TMA + mbarriers with a producer warp (warp specialisation, setmaxnreg) and a pipelined
// epilogue.
//
// Accumulator fragment (PTX ISA 9.7.15.5.1.1.1, Figure "WGMMA .m64nNk16 register fragment layout
// for accumulator matrix D"; CUTLASS CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))
// over the column-major 64 x N tile): thread t of the warpgroup, w = t / 32, l = t % 32, holds
// d[4i + 2h + j] (i < N/8, h, j < 2) = D[16w + l/4 + 8h][8i + 2(l%4) + j] — the mma.m16n8 C
// fragment repeated over N/8 column blocks, one 16-row slab per warp.
//
// Check: sampled elements of C (all of C when m*n*k <= 2^28) against an f64 reference of the
// rounded inputs, the worst |c - ref| / (sum_k |a b|) printed, > 1e-3 flagged FAIL.
// --probe: one block, one k-tile (m = 128, n = BN, k = 64), all of C checked, for random inputs
// and four index-revealing inputs (A or B a 0/1 selector, the other holding its own row or
// column index + 1), so a wrong descriptor field shows as which row/column was read instead.
// Output: # impl,dtype,m,n,k,median_ms,tflops,err — then a summary table (wg vs cuBLAS).
#ifndef WG_KERNELS_ONLY
#include <cublas_v2.h>
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common.cuh"

#ifndef WG_KERNELS_ONLY
#define CUBLAS_CHECK(call)                                                                        \
    do {                                                                                          \
        cublasStatus_t s_ = (call);                                                               \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #call, (int)s_); \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)
#endif

#ifndef WG_BN
#define WG_BN 128
#endif
static_assert(WG_BN == 128 || WG_BN == 256, "WG_BN: 128 or 256");

constexpr int BM = 128, BN = WG_BN, BK = 64, STAGES = 4, THREADS = 256, GROUP = 8;
#ifndef WG_INFLIGHT
#define WG_INFLIGHT 0
#endif
// k-tiles loaded ahead of the one being multiplied (see the main loop).
constexpr int LEAD = STAGES - 1 - WG_INFLIGHT;
constexpr int ACC = BN / 2;                                   // f32 accumulators per thread (m64nBNk16)
constexpr uint32_t ROW_BYTES = 128;                           // one swizzled row: 64 x 16-bit
constexpr uint32_t A_BYTES = BM * BK * 2;                     // 16 KiB
constexpr uint32_t B_PANEL = BK * ROW_BYTES;                  // 8 KiB: 64 k-rows x 64 columns
constexpr uint32_t B_BYTES = (BN / 64) * B_PANEL;             // 16 or 32 KiB
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr size_t SMEM_BYTES = (size_t)STAGES * STAGE_BYTES + 1024;  // + slack to align to 1024
constexpr int A_CHUNKS = BM * BK / 8, B_CHUNKS = BK * BN / 8;       // 16-byte chunks per tile
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "tiles stay 1024-byte aligned");
static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "whole chunks per thread");

// Byte offset of chunk `ch` (8 elements) of row `r` of an A stage (K-major, 128B swizzle).
__host__ __device__ constexpr uint32_t a_off(int r, int ch) { return r * ROW_BYTES + ((ch ^ (r & 7)) << 4); }
// Byte offset of chunk `cc` (columns 8cc..8cc+7) of k-row `kk` of a B stage (MN-major panels).
__host__ __device__ constexpr uint32_t b_off(int kk, int cc) {
    return (cc >> 3) * B_PANEL + kk * ROW_BYTES + (((cc & 7) ^ (kk & 7)) << 4);
}

// The 64-bit matrix descriptor; 128B swizzle, base offset 0 (see the header).
__host__ __device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 62);
}
constexpr uint32_t A_LBO = 16, A_SBO = 1024, A_KSTEP = 32;      // bytes
constexpr uint32_t B_LBO = B_PANEL, B_SBO = 1024, B_KSTEP = 16 * ROW_BYTES;

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Keeps the compiler from moving accumulator accesses across the asynchronous wgmma region
// (CUTLASS warpgroup_fence_operand).
__device__ __forceinline__ void fence_acc(float (&d)[ACC]) {
#pragma unroll
    for (int i = 0; i < ACC; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// One wgmma.mma_async m64n{BN}k16, A and B from shared memory, D += A B (scale-d = 1).
#define WG_D4(i) "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define WG_D16(i) WG_D4(i), WG_D4((i) + 4), WG_D4((i) + 8), WG_D4((i) + 12)
#define WG_D64(i) WG_D16(i), WG_D16((i) + 16), WG_D16((i) + 32), WG_D16((i) + 48)
#define WG_R64                                                                                                      \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
    "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, " \
    "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#if WG_BN == 128
#define WG_N "128"
#define WG_REGS WG_R64
#define WG_OPS "%64, %65, p"
#define WG_SCALE "%66"
#define WG_OUTS WG_D64(0)
#else
#define WG_N "256"
#define WG_REGS                                                                                                      \
    WG_R64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, "  \
           "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, " \
           "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, "    \
           "%121, %122, %123, %124, %125, %126, %127"
#define WG_OPS "%128, %129, p"
#define WG_SCALE "%130"
#define WG_OUTS WG_D64(0), WG_D64(64)
#endif
#define WG_MMA(TY)                                                                                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " WG_SCALE ", 0;\n"                                     \
                 "wgmma.mma_async.sync.aligned.m64n" WG_N "k16.f32." TY "." TY " {" WG_REGS "}, " WG_OPS \
                 ", 1, 1, 0, 1;\n}\n"                                                                       \
                 : WG_OUTS                                                                                  \
                 : "l"(da), "l"(db), "r"(1)                                                                 \
                 : "memory")

template <typename T>
__device__ __forceinline__ void wgmma_k16(float (&d)[ACC], uint64_t da, uint64_t db) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value) WG_MMA("bf16");
    else WG_MMA("f16");
}

// The epilogue of both kernels: d[4i + 2h + j] = D[16w + l/4 + 8h][8i + 2(l%4) + j] of the
// warpgroup's 64 x BN block at (row0, col0) of C, 8-byte stores where aligned, clipped to m x n.
__device__ __forceinline__ void store_acc(const float (&acc)[ACC], float* __restrict__ c, int m, int n, int row0, int col0,
                                          int t) {
    const int w = (t / 32) % 4, l = t % 32;
    const int r_lo = row0 + w * 16 + l / 4, c_lo = col0 + 2 * (l % 4);
#pragma unroll
    for (int i = 0; i < BN / 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = r_lo + 8 * h, col = c_lo + 8 * i;
            if (row >= m) continue;
            const float v0 = acc[4 * i + 2 * h], v1 = acc[4 * i + 2 * h + 1];
            float* p = c + (size_t)row * n + col;
            if (col + 1 < n && ((uintptr_t)p % 8) == 0) *(float2*)p = make_float2(v0, v1);
            else {
                if (col < n) p[0] = v0;
                if (col + 1 < n) p[1] = v1;
            }
        }
}

// 8 elements of row `r` from column `c` of the rows x cols matrix g (leading dimension ld), zero
// outside, stored as one 16-byte chunk at shared address dst (the synchronous fallback).
template <typename T>
__device__ __forceinline__ void chunk_sync(uint32_t dst, const T* g, int r, int c, int rows, int cols, int ld) {
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 8; e += 2) {
        unsigned short lo = 0, hi = 0;
        if (r < rows && c + e < cols) lo = __ldg((const unsigned short*)(g + (size_t)r * ld + c + e));
        if (r < rows && c + e + 1 < cols) hi = __ldg((const unsigned short*)(g + (size_t)r * ld + c + e + 1));
        w[e / 2] = (uint32_t)lo | ((uint32_t)hi << 16);
    }
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
}

// Copies k-tile kt of A (rows row0.., columns kt*BK..) and of B (rows kt*BK.., columns col0..)
// into the stage at shared address sa: 16-byte cp.async.cg chunks by all 256 threads, chunk i of
// a tile going to thread i % 256; src-size 0 zero-fills what lies outside the matrices.
template <typename T>
__device__ __forceinline__ void load_stage(uint32_t sa, const T* a, const T* b, int m, int n, int k, int row0, int col0,
                                           int kt, int t, bool a_fast, bool b_fast) {
    const uint32_t sb = sa + A_BYTES;
    const int k0 = kt * BK;
#pragma unroll
    for (int it = 0; it < A_CHUNKS / THREADS; ++it) {
        const int i = t + it * THREADS, r = i / (BK / 8), ch = i % (BK / 8);
        const int gr = row0 + r, gk = k0 + ch * 8;
        if (a_fast) {
            const int valid = (gr < m && gk < k) ? min(k - gk, 8) : 0;
            cp_async16(sa + a_off(r, ch), valid > 0 ? a + (size_t)gr * k + gk : a, valid * 2);
        } else {
            chunk_sync(sa + a_off(r, ch), a, gr, gk, m, k, k);
        }
    }
#pragma unroll
    for (int it = 0; it < B_CHUNKS / THREADS; ++it) {
        const int i = t + it * THREADS, kk = i / (BN / 8), cc = i % (BN / 8);
        const int gk = k0 + kk, gc = col0 + cc * 8;
        if (b_fast) {
            const int valid = (gk < k && gc < n) ? min(n - gc, 8) : 0;
            cp_async16(sb + b_off(kk, cc), valid > 0 ? b + (size_t)gk * n + gc : b, valid * 2);
        } else {
            chunk_sync(sb + b_off(kk, cc), b, gk, gc, k, n, n);
        }
    }
}

template <typename T>
__global__ __launch_bounds__(THREADS, 1) void wg_gemm(float* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b,
                                                      int m, int n, int k) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    // Grouped raster, as tc_gemm.cu.
    const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int rank_b = blockIdx.x;
    if (rank_b >= tiles_m * tiles_n) return;
    const int per_group = GROUP * tiles_n, first = (rank_b / per_group) * GROUP;
    const int size = min(tiles_m - first, GROUP), in_group = rank_b % per_group;
    const int row0 = (first + in_group % size) * BM, col0 = (in_group / size) * BN;

    const int t = threadIdx.x, wg = t / 128;
    const int k_tiles = (k + BK - 1) / BK;
    const bool a_fast = ((uintptr_t)a % 16) == 0 && k % 8 == 0;
    const bool b_fast = ((uintptr_t)b % 16) == 0 && n % 8 == 0;

    // LEAD k-tiles are loaded ahead: STAGES - 1, or (-DWG_INFLIGHT) STAGES - 2, since the
    // stage of k-tile kt-1 may still be read by the wgmma group left in flight.
#pragma unroll
    for (int s = 0; s < LEAD; ++s) {
        if (s < k_tiles) load_stage(base + s * STAGE_BYTES, a, b, m, n, k, row0, col0, s, t, a_fast, b_fast);
        cp_commit();
    }

    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;

#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_wait<LEAD - 1>();    // this thread's copies of k-tile kt have landed
        fence_proxy_async();    // ... and are ordered before async-proxy reads (writer-side fence)
        __syncthreads();        // everyone's are; both warpgroups are done with k-tile kt-1
        const uint32_t sa = base + (kt % STAGES) * STAGE_BYTES, sb = sa + A_BYTES;
        const uint32_t a_wg = sa + wg * 64 * ROW_BYTES;  // this warpgroup's 64 rows of A
        if (WG_INFLIGHT == 0) fence_acc(acc);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)
            wgmma_k16<T>(acc, make_desc(a_wg + ks * A_KSTEP, A_LBO, A_SBO), make_desc(sb + ks * B_KSTEP, B_LBO, B_SBO));
        wgmma_commit();
        // -DWG_INFLIGHT: this k-tile's group stays in flight (its stage is refilled two
        // iterations on, after everyone's wait below and the next barrier); k-tile kt-1's
        // is retired, so its stage (refilled after the next barrier) is free.
        wgmma_wait<WG_INFLIGHT>();
        // (No fence_acc while a group is in flight: an asm that "defines" the accumulators
        // between a wgmma and its wait makes ptxas serialize every wgmma, C7515.)
        if (WG_INFLIGHT == 0) fence_acc(acc);
        const int next = kt + LEAD;
        if (next < k_tiles) load_stage(base + (next % STAGES) * STAGE_BYTES, a, b, m, n, k, row0, col0, next, t, a_fast, b_fast);
        cp_commit();
    }
    wgmma_wait<0>();
    fence_acc(acc);
    cp_wait<0>();

    store_acc(acc, c, m, n, row0 + wg * 64, col0, t);
}

template __global__ void wg_gemm<__nv_bfloat16>(float*, const __nv_bfloat16*, const __nv_bfloat16*, int, int, int);
template __global__ void wg_gemm<__half>(float*, const __half*, const __half*, int, int, int);

// ------------------------------------------------------------------ warp-specialised, TMA-fed
// ws_gemm: the same block tile, k-tile, shared layouts, descriptors and epilogue as wg_gemm, fed
// by TMA instead of cp.async, with warp specialisation (the design of CUTLASS's
// KernelTmaWarpSpecializedCooperative, without clusters):
//   * 384 threads: warpgroup 0 is the producer (one thread issues every copy; setmaxnreg.dec to
//     40 registers), warpgroups 1 and 2 the consumers (rows 0..63 and 64..127 of the block tile;
//     setmaxnreg.inc to 232).
//   * a stage is filled by cp.async.bulk.tensor.2d (A: one 64 x 128 box; B: BN/64 boxes of 64 x
//     64, one per panel), 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B writes exactly the
//     layouts a_off / b_off describe), completing on the stage's `full` mbarrier (expect-tx of
//     the stage's bytes); the tensor maps zero-fill what lies outside the matrices.
//   * consumers wait on `full[s]` (phase parity), issue the k-tile's 4 wgmmas, commit, wait for
//     the group before (wait_group 1) and then release that group's stage (`empty`, 256
//     arrivals); the producer waits on `empty[s]` before refilling it.
// Needs k % 8 == 0 and n % 8 == 0 (TMA's 16-byte global strides) and 16-byte aligned A and B.
constexpr int WS_THREADS = 384;
constexpr uint32_t WS_SMEM_BYTES = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\nWAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"((uint64_t)map), "r"(x), "r"(y), "r"(bar)
        : "memory");
}

template <typename T>
__global__ __launch_bounds__(WS_THREADS, 1) void ws_gemm(float* __restrict__ c, const __grid_constant__ CUtensorMap map_a,
                                                         const __grid_constant__ CUtensorMap map_b, int m, int n, int k) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8;
    const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int rank_b = blockIdx.x;
    if (rank_b >= tiles_m * tiles_n) return;
    const int per_group = GROUP * tiles_n, first = (rank_b / per_group) * GROUP;
    const int size = min(tiles_m - first, GROUP), in_group = rank_b % per_group;
    const int row0 = (first + in_group % size) * BM, col0 = (in_group / size) * BN;
    const int t = threadIdx.x, wg = t / 128;
    const int k_tiles = max((k + BK - 1) / BK, 1);
    if (t == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (t == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % STAGES;
                // The first round finds every stage free (parity 1 of a fresh barrier passes).
                mbar_wait(empty + 8 * s, ((kt / STAGES) & 1) ^ 1);
                const uint32_t sa = base + s * STAGE_BYTES, bar = full + 8 * s;
                mbar_expect_tx(bar, STAGE_BYTES);
                tma_load_2d(sa, &map_a, kt * BK, row0, bar);
#pragma unroll
                for (int p = 0; p < BN / 64; ++p) tma_load_2d(sa + A_BYTES + p * B_PANEL, &map_b, col0 + 64 * p, kt * BK, bar);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1;  // consumer warpgroup: rows 64cw..64cw+63 of the block tile
    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;
#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        mbar_wait(full + 8 * s, (kt / STAGES) & 1);
        const uint32_t sa = base + s * STAGE_BYTES, sb = sa + A_BYTES, a_wg = sa + cw * 64 * ROW_BYTES;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)
            wgmma_k16<T>(acc, make_desc(a_wg + ks * A_KSTEP, A_LBO, A_SBO), make_desc(sb + ks * B_KSTEP, B_LBO, B_SBO));
        wgmma_commit();
        wgmma_wait<1>();
        // k-tile kt-1's group is retired: its stage may be refilled.
        if (kt > 0) mbar_arrive(empty + 8 * ((kt - 1) % STAGES));
    }
    wgmma_wait<0>();
    fence_acc(acc);
    store_acc(acc, c, m, n, row0 + cw * 64, col0, t);
}

// ------------------------------------------------------------------------------------- host side
struct Options {
    int warmup = 5, reps = 20;
};

template <typename T>
T from_float(float x);
template <>
__nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
template <>
__half from_float(float x) { return __float2half_rn(x); }
template <typename T>
double to_double(T x) { return (double)(float)x; }

template <typename T>
const char* dtype_name() { return std::is_same<T, __half>::value ? "f16" : "bf16"; }

struct Result {
    std::string impl, dtype;
    int m, n, k;
    double ms, tflops, err;
};

template <typename T>
static void launch_wg(float* dc, const T* da, const T* db, int m, int n, int k, cudaStream_t s = 0) {
    int blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    wg_gemm<T><<<blocks, THREADS, SMEM_BYTES, s>>>(dc, da, db, m, n, k);
}

// A 2-D tensor map of a rows x cols row-major matrix of T, boxes of box_rows x 64 elements
// (128 bytes: the 128-byte swizzle's span), zero fill outside. Through the runtime's entry point
// to the driver (no -lcuda).
template <typename T>
static CUtensorMap tensor_map(const T* g, int rows, int cols, int box_rows) {
    using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    static Encode encode = nullptr;
    if (!encode) {
        cudaDriverEntryPointQueryResult q;
        CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&encode, 12000, cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !encode) {
            fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
            exit(2);
        }
    }
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)cols * sizeof(T)};
    cuuint32_t box[2] = {64, (cuuint32_t)box_rows};
    cuuint32_t estr[2] = {1, 1};
    CUtensorMapDataType ty = std::is_same<T, __half>::value ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    CUresult r = encode(&map, ty, 2, (void*)g, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled: error %d (rows %d, cols %d)\n", (int)r, rows, cols);
        exit(2);
    }
    return map;
}

// The warp-specialised kernel's launch; the maps are made once per operand (outside timing).
template <typename T>
struct WsMaps {
    CUtensorMap a, b;
    WsMaps(const T* da, const T* db, int m, int n, int k) : a(tensor_map(da, m, k, BM)), b(tensor_map(db, k, n, BK)) {}
};
template <typename T>
static void launch_ws(float* dc, const WsMaps<T>& maps, int m, int n, int k, cudaStream_t s = 0) {
    int blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    ws_gemm<T><<<blocks, WS_THREADS, WS_SMEM_BYTES, s>>>(dc, maps.a, maps.b, m, n, k);
}

// Worst |c - ref| / sum_k |a b| over sampled elements (all of C when m n k <= 2^28).
template <typename T>
static double check(const std::vector<T>& a, const std::vector<T>& b, const std::vector<float>& c, int m, int n, int k) {
    auto one = [&](int row, int col) {
        double ref = 0, mag = 0;
        for (int i = 0; i < k; ++i) {
            double x = to_double(a[(size_t)row * k + i]), y = to_double(b[(size_t)i * n + col]);
            ref += x * y;
            mag += std::fabs(x * y);
        }
        double e = std::fabs(c[(size_t)row * n + col] - ref) / (mag > 0 ? mag : 1);
        return e == e ? e : 1e30;  // NaN (the poison) counts as wrong
    };
    double worst = 0;
    if ((double)m * n * k <= (double)(1 << 28)) {
        for (int row = 0; row < m; ++row)
            for (int col = 0; col < n; ++col) worst = std::max(worst, one(row, col));
        return worst;
    }
    Rng rng{0x1234};
    for (int s = 0; s < 256; ++s) {
        int row = std::min(m - 1, (int)rng.next(0, (float)m)), col = std::min(n - 1, (int)rng.next(0, (float)n));
        if (s == 0) row = m - 1, col = n - 1;  // the ragged corner
        if (s == 1) row = 0, col = n - 1;
        if (s == 2) row = m - 1, col = 0;
        worst = std::max(worst, one(row, col));
    }
    return worst;
}

// --probe: one block, one k-tile. Returns true when all of C is right.
template <typename T>
static bool probe_case(bool ws, const char* name, const std::function<float(int, int)>& fa,
                       const std::function<float(int, int)>& fb, const char* meaning) {
    const int m = BM, n = BN, k = BK;
    std::vector<T> ha((size_t)m * k), hb((size_t)k * n);
    for (int r = 0; r < m; ++r)
        for (int kk = 0; kk < k; ++kk) ha[(size_t)r * k + kk] = from_float<T>(fa(r, kk));
    for (int kk = 0; kk < k; ++kk)
        for (int col = 0; col < n; ++col) hb[(size_t)kk * n + col] = from_float<T>(fb(kk, col));
    T *da, *db;
    float* dc;
    CHECK(cudaMalloc(&da, ha.size() * sizeof(T)));
    CHECK(cudaMalloc(&db, hb.size() * sizeof(T)));
    CHECK(cudaMalloc(&dc, (size_t)m * n * sizeof(float)));
    CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0xff, (size_t)m * n * sizeof(float)));
    if (ws) launch_ws<T>(dc, WsMaps<T>(da, db, m, n, k), m, n, k);
    else launch_wg<T>(dc, da, db, m, n, k);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float> hc((size_t)m * n);
    CHECK(cudaMemcpy(hc.data(), dc, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double max_err = 0;
    int bad = 0, shown = 0;
    std::string lines;
    for (int r = 0; r < m; ++r)
        for (int col = 0; col < n; ++col) {
            double ref = 0, mag = 0;
            for (int kk = 0; kk < k; ++kk) {
                double p = to_double(ha[(size_t)r * k + kk]) * to_double(hb[(size_t)kk * n + col]);
                ref += p;
                mag += std::fabs(p);
            }
            double got = hc[(size_t)r * n + col], e = std::fabs(got - ref);
            if (!(e == e)) e = 1e30;
            max_err = std::max(max_err, e);
            if (e > 1e-4 * std::max(1.0, mag)) {
                if (shown < 6) {
                    char buf[160];
                    snprintf(buf, sizeof buf, "    C[%d][%d] = %.6g, want %.6g\n", r, col, got, ref);
                    lines += buf;
                    ++shown;
                }
                ++bad;
            }
        }
    printf("probe,%s,%s,%s,max_abs_err=%.3e,bad=%d/%d%s   (%s)\n%s", ws ? "ws" : "wg", dtype_name<T>(), name, max_err, bad, m * n,
           bad ? ",FAIL" : ",ok", meaning, lines.c_str());
    fflush(stdout);
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    return bad == 0;
}

template <typename T>
static bool probe() {
    Rng rng{0x9e37};
    std::vector<float> ra((size_t)BM * BK), rb((size_t)BK * BN);
    for (auto& x : ra) x = rng.next(-1, 1);
    for (auto& x : rb) x = rng.next(-1, 1);
    auto sel_a = [](int r, int kk) { return kk == r % BK ? 1.0f : 0.0f; };   // C[r][c] = B[r % 64][c]
    auto sel_b = [](int kk, int col) { return col % BK == kk ? 1.0f : 0.0f; };  // C[r][c] = A[r][c % 64]
    bool ok = true;
    for (bool ws : {false, true}) {
        ok &= probe_case<T>(ws, "random", [&](int r, int kk) { return ra[(size_t)r * BK + kk]; },
                            [&](int kk, int col) { return rb[(size_t)kk * BN + col]; }, "both descriptors, the fragment layout");
        ok &= probe_case<T>(ws, "b_krow", sel_a, [](int kk, int) { return (float)(kk + 1); },
                            "A=selector, B[kk][c]=kk+1: got-1 = the k-row of B read; want r%64+1");
        ok &= probe_case<T>(ws, "b_ncol", sel_a, [](int, int col) { return (float)(col + 1); },
                            "A=selector, B[kk][c]=c+1: got-1 = the column of B read; want c+1");
        ok &= probe_case<T>(ws, "a_mrow", [](int r, int) { return (float)(r + 1); }, sel_b,
                            "B=selector, A[r][kk]=r+1: got-1 = the row of A read; want r+1");
        ok &= probe_case<T>(ws, "a_kcol", [](int, int kk) { return (float)(kk + 1); }, sel_b,
                            "B=selector, A[r][kk]=kk+1: got-1 = the k-column of A read; want c%64+1");
    }
    return ok;
}

template <typename T>
static bool run(int m, int n, int k, const Options& o, void* blas_handle, std::vector<Result>& out) {
    const char* dtype = dtype_name<T>();
    Rng rng{0x5eed ^ ((uint64_t)m << 20) ^ ((uint64_t)n << 40) ^ k};
    std::vector<T> ha((size_t)m * k), hb((size_t)k * n);
    for (auto& x : ha) x = from_float<T>(rng.next(-1, 1));
    for (auto& x : hb) x = from_float<T>(rng.next(-1, 1));
    T *da, *db;
    float* dc;
    CHECK(cudaMalloc(&da, std::max<size_t>(1, ha.size()) * sizeof(T)));
    CHECK(cudaMalloc(&db, std::max<size_t>(1, hb.size()) * sizeof(T)));
    CHECK(cudaMalloc(&dc, (size_t)m * n * sizeof(float)));
    CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
    std::vector<float> hc((size_t)m * n);
    std::vector<std::pair<const char*, std::function<void()>>> impls;
    impls.push_back({"wg", [&] { launch_wg<T>(dc, da, db, m, n, k); }});
    std::unique_ptr<WsMaps<T>> maps;
    if (k % 8 == 0 && n % 8 == 0) {
        maps.reset(new WsMaps<T>(da, db, m, n, k));
        impls.push_back({"ws", [&] { launch_ws<T>(dc, *maps, m, n, k); }});
    }
#ifndef WG_KERNELS_ONLY
    cublasHandle_t h = (cublasHandle_t)blas_handle;
    cudaDataType_t ty = std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF;
    float alpha = 1, beta = 0;
    impls.push_back({"cublas", [&, h, ty] {
                         // Row-major C = A B is column-major C^T = B^T A^T.
                         CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, db, ty, n, da, ty, k, &beta, dc,
                                                   CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                     }});
#else
    (void)blas_handle;
#endif
    bool ok = true;
    for (auto& [name, launch] : impls) {
        CHECK(cudaMemset(dc, 0xff, (size_t)m * n * sizeof(float)));  // poison: NaN
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(hc.data(), dc, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
        double err = check(ha, hb, hc, m, n, k);
        bool good = err <= 1e-3;
        ok &= good;
        double ms = 0;
        if (good) {
            auto t = time_it(o, 0, [] {}, launch);
            ms = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
        }
        out.push_back({name, dtype, m, n, k, ms, ms > 0 ? 2.0 * m * n * k / (ms * 1e-3) / 1e12 : 0, err});
        const Result& r = out.back();
        printf("%s,%s,%d,%d,%d,%.4f,%.1f,%.2e%s\n", r.impl.c_str(), r.dtype.c_str(), m, n, k, r.ms, r.tflops, r.err,
               good ? "" : ",FAIL (not timed)");
        fflush(stdout);
    }
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    return ok;
}

int main(int argc, char** argv) {
    Options o;
    bool do_probe = false, do_bf16 = true, do_f16 = true;
    std::vector<std::array<int, 3>> sizes;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        if (s == "--warmup" && i + 1 < argc) o.warmup = atoi(argv[++i]);
        else if (s == "--reps" && i + 1 < argc) o.reps = atoi(argv[++i]);
        else if (s == "--probe") do_probe = true;
        else if (s == "--dtype" && i + 1 < argc) {
            std::string d = std::string(argv[++i]) + ",";
            do_bf16 = do_f16 = false;
            for (size_t at = 0, comma; (comma = d.find(',', at)) != std::string::npos; at = comma + 1) {
                std::string one = d.substr(at, comma - at);
                if (one == "bf16") do_bf16 = true;
                else if (one == "f16") do_f16 = true;
                else {
                    fprintf(stderr, "--dtype: a comma-separated list of bf16, f16\n");
                    return 2;
                }
            }
        } else {
            int m, n, k;
            if (sscanf(s.c_str(), "%dx%dx%d", &m, &n, &k) == 3) sizes.push_back({m, n, k});
            else if (atoi(s.c_str()) > 0) sizes.push_back({atoi(s.c_str()), atoi(s.c_str()), atoi(s.c_str())});
            else {
                fprintf(stderr, "usage: %s [--warmup W] [--reps R] [--probe] [--dtype bf16,f16] SIZE...\n", argv[0]);
                return 2;
            }
        }
    }
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9 || prop.minor != 0) {
        fprintf(stderr, "%s: built for sm_90a; device 0 is %s (sm_%d%d)\n", argv[0], prop.name, prop.major, prop.minor);
        return 2;
    }
    CHECK(cudaFuncSetAttribute(wg_gemm<__nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES));
    CHECK(cudaFuncSetAttribute(wg_gemm<__half>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES));
    CHECK(cudaFuncSetAttribute(ws_gemm<__nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)WS_SMEM_BYTES));
    CHECK(cudaFuncSetAttribute(ws_gemm<__half>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)WS_SMEM_BYTES));
    printf("# kernel,registers,local_bytes,dynamic_smem,blocks_per_sm  (BM=%d BN=%d BK=%d STAGES=%d THREADS=%d)\n", BM, BN, BK,
           STAGES, THREADS);
    {
        cudaFuncAttributes fa;
        int occ = 0;
        CHECK(cudaFuncGetAttributes(&fa, wg_gemm<__nv_bfloat16>));
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, wg_gemm<__nv_bfloat16>, THREADS, SMEM_BYTES));
        printf("wg_bf16,%d,%zu,%zu,%d\n", fa.numRegs, fa.localSizeBytes, SMEM_BYTES, occ);
        CHECK(cudaFuncGetAttributes(&fa, wg_gemm<__half>));
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, wg_gemm<__half>, THREADS, SMEM_BYTES));
        printf("wg_f16,%d,%zu,%zu,%d\n", fa.numRegs, fa.localSizeBytes, SMEM_BYTES, occ);
    }
    bool ok = true;
    if (do_probe) {
        printf("# probe: m=%d n=%d k=%d, one block, one k-tile\n", BM, BN, BK);
        if (do_bf16) ok &= probe<__nv_bfloat16>();
        if (do_f16) ok &= probe<__half>();
        printf("# probe %s\n", ok ? "passed" : "FAILED");
        if (sizes.empty()) return ok ? 0 : 1;
    }
    if (sizes.empty()) sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
    void* handle = nullptr;
#ifndef WG_KERNELS_ONLY
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    handle = h;
#endif
    printf("# impl,dtype,m,n,k,median_ms,tflops,err\n");
    std::vector<Result> out;
    for (auto& s : sizes) {
        if (do_bf16) ok &= run<__nv_bfloat16>(s[0], s[1], s[2], o, handle, out);
        if (do_f16) ok &= run<__half>(s[0], s[1], s[2], o, handle, out);
    }
#ifndef WG_KERNELS_ONLY
    cublasDestroy(h);
#endif
    printf("\n# summary (TFLOP/s, median)\n%-6s %-8s %-20s %10s %10s %8s\n", "impl", "dtype", "m x n x k", "TFLOP/s", "cublas", "/cublas");
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].impl == "cublas") continue;
        double blas = 0;
        for (size_t j = 0; j < out.size(); ++j)
            if (out[j].impl == "cublas" && out[j].dtype == out[i].dtype && out[j].m == out[i].m && out[j].n == out[i].n &&
                out[j].k == out[i].k)
                blas = out[j].tflops;
        char dims[64];
        snprintf(dims, sizeof dims, "%dx%dx%d", out[i].m, out[i].n, out[i].k);
        printf("%-6s %-8s %-20s %10.1f %10.1f %8.3f\n", out[i].impl.c_str(), out[i].dtype.c_str(), dims, out[i].tflops, blas,
               blas > 0 ? out[i].tflops / blas : 0.0);
    }
    return ok ? 0 : 1;
}
