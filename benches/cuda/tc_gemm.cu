// sluice-cuda-tc-gemm: the tensor-core gemm of gpu-kernels/src/gemm.rs (gemm_bf16, gemm_f16,
// gemm_tf32) written in CUDA C++ — same tiles (gpu_kernels::GEMM_BF16 / GEMM_TF32: 128 x 128
// per block, 4 warps of 64 x 64; -DTC_BN=256: 128 x 256, 8 warps, as GEMM_BF16_128X256),
// k-tiles of 32 (tf32: 16) in 4 stages through a cp.async pipeline of swizzled shared tiles
// (each thread's copies worked out once, as async_copy::CopyPlan), the k-steps of a k-tile
// unrolled, ldmatrix / ldmatrix.trans fragments, mma.sync m16n8k16 (tf32: m16n8k8), grouped
// block order, f32 output; --variants adds bf16 with k-tiles of 64 in 3 stages (built with
// -DTC_BN=256: the first design's shape, whose Rust form was retired: it spilled) and in 4 — timed side by side with cuBLAS
// (cublasGemmEx, f32 output; tf32 with CUBLAS_COMPUTE_32F_FAST_TF32) on the same random
// inputs, both checked before timing.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -Xptxas -v [-DTC_BN=256] -o tc_gemm tc_gemm.cu -lcublas
//   ./tc_gemm [--warmup W] [--reps R] [--sanitize] [--variants] SIZE...     (SIZE: N for N^3, or MxNxK)
//
// C = A B, A m x k, B k x n, row-major; inputs uniform in [-1, 1) (xorshift64, common.cuh).
// Check: 64 sampled elements of C against an f64 reference of the rounded inputs, the worst
// |c - ref| / (sum_k |a b|) printed (bf16/f16 inputs are exact in the reference, so only
// f32 accumulation error remains; tf32 adds the operands' rounding).
// Output: # impl,dtype,m,n,k,median_ms,tflops,err — then a summary table.
#ifndef TC_KERNELS_ONLY
#include <cublas_v2.h>
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <type_traits>
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"

#ifndef TC_KERNELS_ONLY
#define CUBLAS_CHECK(call)                                                              \
    do {                                                                                \
        cublasStatus_t s_ = (call);                                                     \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #call, (int)s_); \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)
#endif

// The block's tile of C: 128 x 128 with 4 warps (gpu_kernels::GEMM_BF16, the default), or
// 128 x 256 with 8 (GEMM_BF16_128X256, GEMM_TF32): -DTC_BN=256.
#ifndef TC_BN
#define TC_BN 128
#endif
constexpr int BM = 128, BN = TC_BN, WM = 64, WN = 64, THREADS = (BM / WM) * (BN / WN) * 32, GROUP = 8;
constexpr int MI = WM / 16, NI = WN / 8;

// spec::layout::swizzle: CuTe Swizzle<3, 4, S> on byte offsets, S = log2(max(row_bytes, 128)) - 4.
__device__ __forceinline__ uint32_t swz(uint32_t off, uint32_t shift) { return off ^ (((off >> (shift + 4)) & 7) << 4); }
__host__ __device__ constexpr uint32_t sw_shift(int row_bytes) {
    int line = row_bytes > 128 ? row_bytes : 128;
    int l = 0;
    while ((1 << l) < line) ++l;
    return l - 4;
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
// 16 bytes if `read`, else 16 zeros without reading src (cp.async's ignore-src form).
__device__ __forceinline__ void cp_async16_or_zero(uint32_t dst, const void* src, bool read) {
    asm volatile("{ .reg .pred p; setp.eq.u32 p, %2, 0; cp.async.cg.shared.global [%0], [%1], 16, p; }\n" ::"r"(dst), "l"(src),
                 "r"((uint32_t)read));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
__device__ __forceinline__ void ldsm_x4(uint32_t* r, uint32_t a) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, uint32_t a) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ uint32_t tf32(uint32_t x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
}
template <typename T>
__device__ __forceinline__ void mma(float* d, const uint32_t* a, const uint32_t* b);
template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void mma<__half>(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void mma<float>(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <typename T>
struct Cfg;
template <>
struct Cfg<__nv_bfloat16> { static constexpr int BK = 32, STAGES = 4, KS = 16; };
template <>
struct Cfg<__half> { static constexpr int BK = 32, STAGES = 4, KS = 16; };
template <>
struct Cfg<float> { static constexpr int BK = 16, STAGES = 4, KS = 8; };

template <typename T, int BK = Cfg<T>::BK, int STAGES = Cfg<T>::STAGES>
constexpr size_t smem_bytes() { return (size_t)STAGES * (BM + BN) * BK * sizeof(T) + 112; }

// Copies the R x C tile of the row-major rows x cols matrix g (leading dimension ld) at
// (row0, col0) into the swizzled shared tile at s, zero-filling outside (cp.async src-size).
template <typename T, int R, int C>
__device__ __forceinline__ void copy_tile(uint32_t s, const T* g, int rows, int cols, int ld, int row0, int col0, int rank) {
    constexpr int V = 16 / sizeof(T), PER_ROW = C / V, CHUNKS = R * PER_ROW;
    constexpr uint32_t SH = sw_shift(C * sizeof(T));
    if (((uintptr_t)g % 16) != 0 || (ld * sizeof(T)) % 16 != 0) {
        // Not 16-byte aligned (a leading dimension that is not a multiple of 16 bytes):
        // element by element, synchronous, as the Rust kernel does.
        for (int i = rank; i < CHUNKS; i += THREADS) {
            int r = i / PER_ROW, cc = i % PER_ROW;
            int gr = row0 + r, gc = col0 + cc * V;
            T* d = (T*)__cvta_shared_to_generic(s + swz((uint32_t)(r * C + cc * V) * sizeof(T), SH));
            for (int e = 0; e < V; ++e) d[e] = (gr < rows && gc + e < cols) ? g[(size_t)gr * ld + gc + e] : T(0.0f);
        }
        return;
    }
#pragma unroll
    for (int it = 0; it < (CHUNKS + THREADS - 1) / THREADS; ++it) {
        int i = rank + it * THREADS;
        if (CHUNKS % THREADS != 0 && i >= CHUNKS) break;
        int r = i / PER_ROW, cc = i % PER_ROW;
        int gr = row0 + r, gc = col0 + cc * V;
        int valid = (gr < rows && gc < cols) ? min(cols - gc, V) : 0;
        const T* p = valid > 0 ? g + (size_t)gr * ld + gc : g;
        cp_async16(s + swz((uint32_t)(r * C + cc * V) * sizeof(T), SH), p, valid * (int)sizeof(T));
    }
}

// async_copy::CopyPlan: this thread's chunks of every k-tile copy of an R x C tile worked
// out once (chunk 0's tile position and source pointer, how far the source reaches past
// it; a thread's chunks share a tile column, THREADS / PER_ROW rows apart), so that a step
// costs a pointer, a compare and the cp.async per chunk. ALONG_COLS: step s copies the tile
// at (row0, col0 + s C) (A's k-tiles), else (row0 + s R, col0) (B's).
template <typename T, int R, int C, bool ALONG_COLS>
struct CopyPlan {
    static constexpr int V = 16 / sizeof(T), PER_ROW = C / V, CHUNKS = R * PER_ROW, MINE = CHUNKS / THREADS,
                         RA = THREADS / PER_ROW;
    static_assert(THREADS % PER_ROW == 0 && CHUNKS % THREADS == 0, "a thread's chunks share a tile column");
    static constexpr uint32_t SH = sw_shift(C * sizeof(T));
    const T* g;
    int rows, cols, ld, row0, col0, rank;
    bool aligned;
    const T* p0;
    long long rows_left, cols_left;
    uint32_t dst[MINE];
    __device__ __forceinline__ CopyPlan(const T* g_, int rows_, int cols_, int ld_, int row0_, int col0_, int rank_)
        : g(g_), rows(rows_), cols(cols_), ld(ld_), row0(row0_), col0(col0_), rank(rank_) {
        aligned = ((uintptr_t)g % 16) == 0 && (ld * sizeof(T)) % 16 == 0;
        int r0 = rank / PER_ROW, c0 = (rank % PER_ROW) * V;
        p0 = g + (long long)(row0 + r0) * ld + col0 + c0;
        rows_left = (long long)rows - (row0 + r0);
        cols_left = (long long)cols - (col0 + c0);
#pragma unroll
        for (int it = 0; it < MINE; ++it) dst[it] = swz((uint32_t)((r0 + it * RA) * C + c0) * sizeof(T), SH);
    }
    __device__ __forceinline__ void step(uint32_t s, int st) const {
        if (!aligned) {
            if (ALONG_COLS) copy_tile<T, R, C>(s, g, rows, cols, ld, row0, col0 + st * C, rank);
            else copy_tile<T, R, C>(s, g, rows, cols, ld, row0 + st * R, col0, rank);
            return;
        }
        long long adv = ALONG_COLS ? (long long)st * C : (long long)st * R * ld;
        long long rl = ALONG_COLS ? rows_left : rows_left - (long long)st * R;
        long long cl = ALONG_COLS ? cols_left - (long long)st * C : cols_left;
        unsigned rows_in = rl < 0 ? 0u : (rl > 0x7fffffffLL ? 0x7fffffffu : (unsigned)rl);
        int in_row = cl <= 0 ? 0 : (cl < V ? (int)cl : V);
        const T* base = p0 + adv;
        if (in_row == V) {
#pragma unroll
            for (int it = 0; it < MINE; ++it) cp_async16_or_zero(s + dst[it], base + (long long)it * RA * ld, rows_in > (unsigned)(it * RA));
        } else {
#pragma unroll
            for (int it = 0; it < MINE; ++it) {
                int valid = rows_in > (unsigned)(it * RA) ? in_row : 0;
                cp_async16(s + dst[it], valid > 0 ? base + (long long)it * RA * ld : g, valid * (int)sizeof(T));
            }
        }
    }
};

template <typename T, int BK = Cfg<T>::BK, int STAGES = Cfg<T>::STAGES>
__global__ __launch_bounds__(THREADS) void tc_gemm(float* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b, int m, int n, int k) {
    constexpr int KS = Cfg<T>::KS, V = 16 / sizeof(T);
    constexpr uint32_t A_BYTES = BM * BK * sizeof(T), B_BYTES = BK * BN * sizeof(T), STAGE = A_BYTES + B_BYTES;
    constexpr uint32_t SHA = sw_shift(BK * sizeof(T)), SHB = sw_shift(BN * sizeof(T));
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem) + 127) & ~127u;
    // Grouped raster (tile::Raster::Grouped).
    int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    int rank_b = blockIdx.x;
    if (rank_b >= tiles_m * tiles_n) return;
    int per_group = GROUP * tiles_n, first = (rank_b / per_group) * GROUP;
    int size = min(tiles_m - first, GROUP), in_group = rank_b % per_group;
    int row0 = (first + in_group % size) * BM, col0 = (in_group / size) * BN;
    int t = threadIdx.x, lane = t % 32, w = t / 32;
    int wr = (w / (BN / WN)) * WM, wc = (w % (BN / WN)) * WN;
    int k_tiles = (k + BK - 1) / BK;
    const CopyPlan<T, BM, BK, true> plan_a(a, m, k, k, row0, 0, t);
    const CopyPlan<T, BK, BN, false> plan_b(b, k, n, n, 0, col0, t);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) {
            plan_a.step(base + s * STAGE, s);
            plan_b.step(base + s * STAGE + A_BYTES, s);
        }
        commit();
    }
    float acc[MI][NI][4] = {};
    int head = 0;
    for (int kt = 0; kt < k_tiles; ++kt) {
        wait_group<STAGES - 2>();
        __syncthreads();
        int next = kt + STAGES - 1, free_s = (head + STAGES - 1) % STAGES;
        if (next < k_tiles) {
            plan_a.step(base + free_s * STAGE, next);
            plan_b.step(base + free_s * STAGE + A_BYTES, next);
        }
        commit();
        uint32_t sa = base + head * STAGE, sb = sa + A_BYTES;
        head = (head + 1) % STAGES;
        int j = lane / 8, r8 = lane % 8;
#pragma unroll
        for (int ks = 0; ks < BK / KS; ++ks) {
            uint32_t fa[MI][4], fb[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                int r = wr + 16 * i + 8 * (j % 2) + r8, col = ks * KS + V * (j / 2);
                ldsm_x4(fa[i], sa + swz((uint32_t)(r * BK + col) * sizeof(T), SHA));
                if (sizeof(T) == 4)
                    for (int q = 0; q < 4; ++q) fa[i][q] = tf32(fa[i][q]);
            }
            if constexpr (sizeof(T) == 2) {
#pragma unroll
                for (int p = 0; p < NI / 2; ++p) {
                    int r = ks * KS + 8 * (j % 2) + r8, col = wc + 16 * p + V * (j / 2);
                    uint32_t q[4];
                    ldsm_x4_t(q, sb + swz((uint32_t)(r * BN + col) * sizeof(T), SHB));
                    fb[2 * p][0] = q[0], fb[2 * p][1] = q[1], fb[2 * p + 1][0] = q[2], fb[2 * p + 1][1] = q[3];
                }
            } else {
                int g = lane / 4, tg = lane % 4;
#pragma unroll
                for (int f = 0; f < NI; ++f)
#pragma unroll
                    for (int q = 0; q < 2; ++q) {
                        int r = ks * KS + tg + 4 * q, col = wc + 8 * f + g;
                        uint32_t v;
                        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(sb + swz((uint32_t)(r * BN + col) * 4, SHB)));
                        fb[f][q] = tf32(v);
                    }
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int f = 0; f < NI; ++f) mma<T>(acc[i][f], fa[i], fb[f]);
        }
    }
    asm volatile("cp.async.wait_all;\n" ::);
    int g = lane / 4, tg = lane % 4;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int f = 0; f < NI; ++f)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                int row = row0 + wr + 16 * i + g + 8 * h, col = col0 + wc + 8 * f + 2 * tg;
                if (row >= m) continue;
                float* p = c + (size_t)row * n + col;
                if (col + 1 < n && ((uintptr_t)p % 8 == 0)) *(float2*)p = make_float2(acc[i][f][2 * h], acc[i][f][2 * h + 1]);
                else {
                    if (col < n) p[0] = acc[i][f][2 * h];
                    if (col + 1 < n) p[1] = acc[i][f][2 * h + 1];
                }
            }
}

#ifdef TC_KERNELS_ONLY
template __global__ void tc_gemm<__nv_bfloat16>(float*, const __nv_bfloat16*, const __nv_bfloat16*, int, int, int);
template __global__ void tc_gemm<__half>(float*, const __half*, const __half*, int, int, int);
template __global__ void tc_gemm<float>(float*, const float*, const float*, int, int, int);
#else
struct Options {
    int warmup = 5, reps = 20;
    bool variants = false;
};

template <typename T>
T from_float(float x);
template <>
__nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
template <>
__half from_float(float x) { return __float2half_rn(x); }
template <>
float from_float(float x) { return x; }
template <typename T>
double to_double(T x) { return (double)(float)x; }
static double tf32_round(float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & 0xffffe000u;
    float r;
    memcpy(&r, &b, 4);
    return r;
}

struct Result {
    std::string impl, dtype;
    int m, n, k;
    double ms, tflops, err;
};

template <typename T>
static double check(const std::vector<T>& a, const std::vector<T>& b, const std::vector<float>& c, int m, int n, int k, bool tf) {
    double worst = 0;
    Rng rng{0x1234};
    for (int s = 0; s < 64; ++s) {
        int row = std::min(m - 1, (int)rng.next(0, (float)m)), col = std::min(n - 1, (int)rng.next(0, (float)n));
        if (s == 0) row = m - 1, col = n - 1;  // the ragged corner
        double ref = 0, mag = 0;
        for (int i = 0; i < k; ++i) {
            double x = to_double(a[(size_t)row * k + i]), y = to_double(b[(size_t)i * n + col]);
            if (tf) x = tf32_round((float)x), y = tf32_round((float)y);
            ref += x * y;
            mag += std::fabs(x * y);
        }
        double e = std::fabs(c[(size_t)row * n + col] - ref) / (mag > 0 ? mag : 1);
        if (!(e == e)) e = 1e30;
        worst = std::max(worst, e);
    }
    return worst;
}

// The design variants timed beside the twin (bf16 only): (BK, STAGES).
template <typename T, int BK, int STAGES>
static void variant(const char* name, T* da, T* db, float* dc, int m, int n, int k, const Options& o, const std::vector<T>& ha,
                    const std::vector<T>& hb, std::vector<Result>& out) {
    size_t smem = smem_bytes<T, BK, STAGES>();
    CHECK(cudaFuncSetAttribute(tc_gemm<T, BK, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    auto launch = [&] { tc_gemm<T, BK, STAGES><<<blocks, THREADS, smem>>>(dc, da, db, m, n, k); };
    std::vector<float> hc((size_t)m * n);
    CHECK(cudaMemset(dc, 0xff, (size_t)m * n * sizeof(float)));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hc.data(), dc, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double err = check(ha, hb, hc, m, n, k, false);
    auto t = time_it(o, 0, [] {}, launch);
    double ms = t[t.size() / 2];
    out.push_back({name, "bf16", m, n, k, ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12, err});
    printf("%s,bf16,%d,%d,%d,%.4f,%.1f,%.2e\n", name, m, n, k, ms, out.back().tflops, err);
    fflush(stdout);
}

template <typename T>
static void run(const char* dtype, int m, int n, int k, const Options& o, cublasHandle_t h, std::vector<Result>& out, bool sanitize) {
    Rng rng{0x5eed ^ ((uint64_t)m << 20) ^ ((uint64_t)n << 40) ^ k};
    std::vector<T> ha((size_t)m * k), hb((size_t)k * n);
    for (auto& x : ha) x = from_float<T>(rng.next(-1, 1));
    for (auto& x : hb) x = from_float<T>(rng.next(-1, 1));
    T *da, *db;
    float* dc;
    CHECK(cudaMalloc(&da, ha.size() * sizeof(T)));
    CHECK(cudaMalloc(&db, hb.size() * sizeof(T)));
    CHECK(cudaMalloc(&dc, (size_t)m * n * sizeof(float)));
    CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
    std::vector<float> hc((size_t)m * n);
    bool tf = sizeof(T) == 4;
    size_t smem = smem_bytes<T>();
    CHECK(cudaFuncSetAttribute(tc_gemm<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    auto twin = [&] { tc_gemm<T><<<blocks, THREADS, smem>>>(dc, da, db, m, n, k); };
    cudaDataType_t ty = sizeof(T) == 4 ? CUDA_R_32F : (std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF);
    cublasComputeType_t ct = tf ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    float alpha = 1, beta = 0;
    auto blas = [&] {
        CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, db, ty, n, da, ty, k, &beta, dc, CUDA_R_32F, n, ct, CUBLAS_GEMM_DEFAULT));
    };
    const char* names[2] = {"cuda_twin", "cublas"};
    for (int which = 0; which < (sanitize ? 1 : 2); ++which) {
        auto launch = [&] { which == 0 ? twin() : blas(); };
        CHECK(cudaMemset(dc, 0xff, (size_t)m * n * sizeof(float)));  // poison: NaN
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(hc.data(), dc, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
        double err = check(ha, hb, hc, m, n, k, tf);
        double ms = 0;
        if (!sanitize) {
            auto t = time_it(o, 0, [] {}, launch);
            ms = t[t.size() / 2];
        }
        out.push_back({names[which], dtype, m, n, k, ms, ms > 0 ? 2.0 * m * n * k / (ms * 1e-3) / 1e12 : 0, err});
        const Result& r = out.back();
        printf("%s,%s,%d,%d,%d,%.4f,%.1f,%.2e\n", r.impl.c_str(), r.dtype.c_str(), m, n, k, r.ms, r.tflops, r.err);
        fflush(stdout);
    }
    if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        if (!sanitize && o.variants) {
            variant<T, 64, 3>("twin_bk64s3", da, db, dc, m, n, k, o, ha, hb, out);
            variant<T, 64, 4>("twin_bk64s4", da, db, dc, m, n, k, o, ha, hb, out);
        }
    }
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
}

int main(int argc, char** argv) {
    Options o;
    bool sanitize = false;
    std::vector<std::array<int, 3>> sizes;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        if (s == "--warmup" && i + 1 < argc) o.warmup = atoi(argv[++i]);
        else if (s == "--reps" && i + 1 < argc) o.reps = atoi(argv[++i]);
        else if (s == "--sanitize") sanitize = true;
        else if (s == "--variants") o.variants = true;
        else {
            int m, n, k;
            if (sscanf(s.c_str(), "%dx%dx%d", &m, &n, &k) == 3) sizes.push_back({m, n, k});
            else sizes.push_back({atoi(s.c_str()), atoi(s.c_str()), atoi(s.c_str())});
        }
    }
    if (sizes.empty()) sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    cudaFuncAttributes fa;
    int occ;
    printf("# kernel,registers,local_bytes,dynamic_smem,blocks_per_sm\n");
    CHECK(cudaFuncGetAttributes(&fa, tc_gemm<__nv_bfloat16>));
    CHECK(cudaFuncSetAttribute(tc_gemm<__nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes<__nv_bfloat16>()));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tc_gemm<__nv_bfloat16>, THREADS, smem_bytes<__nv_bfloat16>()));
    printf("twin_bf16,%d,%zu,%zu,%d\n", fa.numRegs, fa.localSizeBytes, smem_bytes<__nv_bfloat16>(), occ);
    CHECK(cudaFuncGetAttributes(&fa, tc_gemm<float>));
    CHECK(cudaFuncSetAttribute(tc_gemm<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes<float>()));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tc_gemm<float>, THREADS, smem_bytes<float>()));
    printf("twin_tf32,%d,%zu,%zu,%d\n", fa.numRegs, fa.localSizeBytes, smem_bytes<float>(), occ);
    printf("# impl,dtype,m,n,k,median_ms,tflops,err\n");
    std::vector<Result> out;
    for (auto& s : sizes) {
        run<__nv_bfloat16>("bf16", s[0], s[1], s[2], o, h, out, sanitize);
        run<__half>("f16", s[0], s[1], s[2], o, h, out, sanitize);
        run<float>("tf32", s[0], s[1], s[2], o, h, out, sanitize);
    }
    cublasDestroy(h);
    return 0;
}
#endif
