// sluice-cuda-mma-peak: the ceiling of warp-level mma.sync on this GPU, the bound of any
// gemm built on it (issue 24's path; Hopper's wgmma is issue 25's). Two kernels, both
// without global memory in the loop:
//
//   regs     each warp issues mma.sync m16n8k16 bf16 -> f32 on fragments held in registers,
//            ACC independent accumulators (no dependency stalls);
//   smem     the gemm's inner loop: per k-step, a 64 x 64 warp tile fed from shared memory
//            by 4 ldmatrix.x4 (A) and 4 ldmatrix.x4.trans (B), then 32 mma.sync.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o mma_peak mma_peak.cu
//   ./mma_peak        (prints: kernel,warps_per_block,blocks,median_ms,tflops)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>

#define CK(call)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            return 2;                                                               \
        }                                                                           \
    } while (0)

__device__ __forceinline__ void mma(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int ACC>
__global__ void regs(float* out, int iters, uint32_t seed) {
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = seed * (threadIdx.x + i + 1) & 0x3f803f80u;
    for (int i = 0; i < 2; ++i) b[i] = seed * (threadIdx.x + i + 7) & 0x3f803f80u;
    float acc[ACC][4] = {};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < ACC; ++j) mma(acc[j], a, b);
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < ACC; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    if (s == 12345.0f) out[threadIdx.x] = s;
}

// One warp's 64 x 64 tile per k-step of 16 from a 64 x 16 A tile and a 16 x 64 B tile in
// shared memory (rows of 128 bytes, swizzled so ldmatrix has no bank conflicts).
__global__ void smem(float* out, int iters) {
    extern __shared__ __align__(128) unsigned char sm[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned char* base = sm + warp * 2 * 64 * 128;  // per warp: A 64 rows x 128 B, B 64 rows x 128 B
    for (int i = threadIdx.x % 32; i < 2 * 64 * 128 / 4; i += 32) ((uint32_t*)base)[i] = 0x3f803f80u * (i & 3);
    __syncwarp();
    uint32_t sa = (uint32_t)__cvta_generic_to_shared(base), sb = sa + 64 * 128;
    float acc[4][8][4] = {};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) {  // 4 k-steps of 16 per 64-wide row of bytes
            uint32_t fa[4][4], fb[8][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                int row = mi * 16 + lane % 16, chunk = ks * 2 + lane / 16;
                uint32_t addr = sa + row * 128 + ((chunk ^ (row & 7)) << 4);
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(fa[mi][0]), "=r"(fa[mi][1]), "=r"(fa[mi][2]), "=r"(fa[mi][3])
                             : "r"(addr));
            }
#pragma unroll
            for (int nj = 0; nj < 4; ++nj) {
                int row = ks * 16 + lane % 16, chunk = nj * 2 + lane / 16;
                uint32_t addr = sb + row * 128 + ((chunk ^ (row & 7)) << 4);
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(fb[2 * nj][0]), "=r"(fb[2 * nj][1]), "=r"(fb[2 * nj + 1][0]), "=r"(fb[2 * nj + 1][1])
                             : "r"(addr));
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 8; ++ni) mma(acc[mi][ni], fa[mi], fb[ni]);
        }
    }
    float s = 0;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni) s += acc[mi][ni][0] + acc[mi][ni][3];
    if (s == 12345.0f) out[threadIdx.x] = s;
}

template <typename F>
static float median_ms(F launch) {
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    for (int i = 0; i < 3; ++i) launch();
    std::vector<float> v;
    for (int r = 0; r < 15; ++r) {
        cudaEventRecord(t0);
        launch();
        cudaEventRecord(t1);
        cudaEventSynchronize(t1);
        float ms;
        cudaEventElapsedTime(&ms, t0, t1);
        v.push_back(ms);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float* out;
    CK(cudaMalloc(&out, 4096 * sizeof(float)));
    const double flop_per_mma = 2.0 * 16 * 8 * 16;
    printf("# kernel,warps_per_block,blocks_per_sm,median_ms,tflops\n");
    const int iters = 4096;
    for (int warps : {4, 8, 16}) {
        for (int per_sm : {1, 2}) {
            int blocks = sms * per_sm;
            float ms = median_ms([&] { regs<16><<<blocks, warps * 32>>>(out, iters, 0x9e3779b9u); });
            double mmas = (double)blocks * warps * iters * 16;
            printf("regs,%d,%d,%.4f,%.1f\n", warps, per_sm, ms, mmas * flop_per_mma / (ms * 1e9));
        }
    }
    CK(cudaGetLastError());
    for (int warps : {4, 8}) {
        size_t bytes = (size_t)warps * 2 * 64 * 128;
        CK(cudaFuncSetAttribute(smem, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        for (int per_sm : {1, 2}) {
            int blocks = sms * per_sm;
            const int it2 = iters / 8;
            float ms = median_ms([&] { smem<<<blocks, warps * 32, bytes>>>(out, it2); });
            double mmas = (double)blocks * warps * it2 * 4 * 32;
            printf("smem,%d,%d,%.4f,%.1f\n", warps, per_sm, ms, mmas * flop_per_mma / (ms * 1e9));
        }
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return 0;
}
