// The kernels of `gpu-kernels` (gpu-kernels/src/device.rs) written in CUDA C++:
// the same algorithms, the same launch configurations, the same arithmetic
// (nvcc's default -fmad=true contractions are written out as fmaf in the Rust
// versions), so that `nvcc -O3 -arch=sm_90` and rustc's NVPTX backend are
// compared on equal terms. Keep the two in step: a change to one kernel is a
// change to both.
#pragma once
#include <cstdint>

struct Particle {
    float x, y, z, q;
};

// Launch constants, as in gpu-kernels/src/lib.rs.
constexpr int POTENTIAL_TILE = 256;
constexpr unsigned TRANSPOSE_TILE = 32;
constexpr unsigned TRANSPOSE_BLOCK_ROWS = 8;
constexpr int HISTOGRAM_SHARED_BINS = 4096;

// out[i] = value; grid-stride.
extern "C" __global__ void fill_column(float* out, uint64_t len, float value) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        out[i] = value;
    }
}

// y[i] = a * x[i] + y[i] for i < min(y_len, x_len); grid-stride.
extern "C" __global__ void saxpy(float* y, uint64_t y_len, const float* x, uint64_t x_len, float a) {
    uint64_t len = y_len < x_len ? y_len : x_len;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

// |t - s|^2 + eps2 the way it is written for speed: eps2 folded into the first of three
// fused multiply-adds (3 FADD + 3 FFMA; `dx*dx + dy*dy + dz*dz + eps2` contracts to one
// instruction more). The Rust kernels write the same fmaf chain (`r2` in device.rs).
__device__ __forceinline__ float softened_r2(const Particle& t, const Particle& s, float eps2) {
    float dx = t.x - s.x, dy = t.y - s.y, dz = t.z - s.z;
    return fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2)));
}

__device__ __forceinline__ float interaction(const Particle& t, const Particle& s, float eps2) {
    return s.q / sqrtf(softened_r2(t, s, eps2));
}

// One thread per target; every thread reads every source from global memory.
extern "C" __global__ void potential(float* out, uint64_t out_len, const Particle* targets, uint64_t targets_len,
                                     const Particle* sources, uint64_t n_sources, float eps2) {
    uint64_t rows = out_len < targets_len ? out_len : targets_len;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    Particle t = targets[i];
    float acc = 0.0f;
    for (uint64_t k = 0; k < n_sources; ++k) {
        acc += interaction(t, sources[k], eps2);
    }
    out[i] = acc;
}

// As `potential`, the sources staged through shared memory POTENTIAL_TILE at a time.
extern "C" __global__ void potential_tiled(float* out, uint64_t out_len, const Particle* targets, uint64_t targets_len,
                                           const Particle* sources, uint64_t n_sources, float eps2) {
    __shared__ float4 tile[POTENTIAL_TILE];
    uint64_t rows = out_len < targets_len ? out_len : targets_len;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    Particle t = i < targets_len ? targets[i] : Particle{0.0f, 0.0f, 0.0f, 0.0f};
    unsigned tid = threadIdx.x, step = blockDim.x;
    float acc = 0.0f;
    for (uint64_t base = 0; base < n_sources; base += POTENTIAL_TILE) {
        uint64_t left = n_sources - base;
        unsigned m = left < POTENTIAL_TILE ? (unsigned)left : POTENTIAL_TILE;
        __syncthreads();
        for (unsigned j = tid; j < m; j += step) {
            Particle s = sources[base + j];
            tile[j] = make_float4(s.x, s.y, s.z, s.q);
        }
        __syncthreads();
        for (unsigned k = 0; k < m; ++k) {
            float4 v = tile[k];
            Particle s{v.x, v.y, v.z, v.w};
            acc += interaction(t, s, eps2);
        }
    }
    if (i < rows) out[i] = acc;
}

// The interaction as written for speed: q * rsqrtf(r2), accumulated by one fma (nvcc
// contracts `acc += q * rsqrtf(r2)`): 8 floating-point instructions per interaction.
__device__ __forceinline__ float interaction_rsqrt(Particle t, Particle s, float eps2) {
    return s.q * rsqrtf(softened_r2(t, s, eps2));
}

// `potential_tiled` with rsqrtf and the inner loop unrolled 8 times: the seed workload's
// kernel as a CUDA programmer writes it (the Rust twin is gpu-kernels' potential_tiled_rsqrt).
extern "C" __global__ void potential_tiled_rsqrt(float* out, uint64_t out_len, const Particle* targets,
                                                 uint64_t targets_len, const Particle* sources, uint64_t n_sources,
                                                 float eps2) {
    __shared__ float4 tile[POTENTIAL_TILE];
    uint64_t rows = out_len < targets_len ? out_len : targets_len;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    Particle t = i < targets_len ? targets[i] : Particle{0.0f, 0.0f, 0.0f, 0.0f};
    unsigned tid = threadIdx.x, step = blockDim.x;
    float acc = 0.0f;
    for (uint64_t base = 0; base < n_sources; base += POTENTIAL_TILE) {
        uint64_t left = n_sources - base;
        unsigned m = left < POTENTIAL_TILE ? (unsigned)left : POTENTIAL_TILE;
        __syncthreads();
        for (unsigned j = tid; j < m; j += step) {
            Particle s = sources[base + j];
            tile[j] = make_float4(s.x, s.y, s.z, s.q);
        }
        __syncthreads();
#pragma unroll 8
        for (unsigned k = 0; k < m; ++k) {
            float4 v = tile[k];
            Particle s{v.x, v.y, v.z, v.w};
            acc += interaction_rsqrt(t, s, eps2);
        }
    }
    if (i < rows) out[i] = acc;
}

__device__ __forceinline__ float warp_sum_down(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// out[0] += sum(x): grid-stride partial sums with 4 loads in flight, warp
// shuffles, one shared-memory step, one atomicAdd per block.
extern "C" __global__ void sum_reduce(float* out, uint64_t out_len, const float* x, uint64_t x_len) {
    __shared__ float warp_sums[32];
    unsigned bdim = blockDim.x;
    if (bdim % 32 != 0 || blockDim.y != 1 || blockDim.z != 1) {
        printf("kernel failed: sum_reduce: the block must be 1-D with a multiple of 32 threads\n");
        __trap();
    }
    if (out_len == 0) return;
    size_t n = x_len;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (; i + 3 * stride < n; i += 4 * stride) {
        a0 += x[i];
        a1 += x[i + stride];
        a2 += x[i + 2 * stride];
        a3 += x[i + 3 * stride];
    }
    for (; i < n; i += stride) a0 += x[i];
    float v = (a0 + a1) + (a2 + a3);
    unsigned tid = threadIdx.x, lane = tid % 32, w = tid / 32;
    v = warp_sum_down(v);
    if (lane == 0) warp_sums[w] = v;
    __syncthreads();
    if (w == 0) {
        unsigned n_warps = bdim / 32;
        float s = lane < n_warps ? warp_sums[lane] : 0.0f;
        s = warp_sum_down(s);
        if (lane == 0) atomicAdd(out, s);
    }
}

// out[c * rows + r] = in[r * cols + c] through a 32x33 shared tile; block (32, 8).
extern "C" __global__ void transpose(float* out, uint64_t out_len, const float* in, uint64_t in_len, unsigned rows,
                                     unsigned cols) {
    constexpr unsigned T = TRANSPOSE_TILE, PITCH = TRANSPOSE_TILE + 1;
    __shared__ float tile[TRANSPOSE_TILE * (TRANSPOSE_TILE + 1)];
    if (blockDim.x != T || blockDim.y != TRANSPOSE_BLOCK_ROWS || blockDim.z != 1) {
        printf("kernel failed: transpose: the block must be (32, 8, 1)\n");
        __trap();
    }
    uint64_t n = (uint64_t)rows * cols;
    if (n > out_len || n > in_len) return;
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned c0 = blockIdx.x * T, r0 = blockIdx.y * T;
    unsigned c = c0 + tx;
    for (unsigned j = 0; j < T; j += TRANSPOSE_BLOCK_ROWS) {
        unsigned r = r0 + ty + j;
        if (r < rows && c < cols) tile[(ty + j) * PITCH + tx] = in[(size_t)r * cols + c];
    }
    __syncthreads();
    unsigned r = r0 + tx;
    for (unsigned j = 0; j < T; j += TRANSPOSE_BLOCK_ROWS) {
        unsigned cc = c0 + ty + j;
        if (r < rows && cc < cols) out[(size_t)cc * rows + r] = tile[tx * PITCH + ty + j];
    }
}

// gpu_kernels::histogram_bin
__device__ __forceinline__ bool histogram_bin(float v, float lo, float hi, unsigned n_bins, unsigned* bin) {
    if (n_bins == 0 || !(v >= lo && v < hi)) return false;
    float scale = (float)n_bins / (hi - lo);
    // Rust's `as u32` saturates; here the value is >= 0 and < 2^32 in practice,
    // and cvt.rzi.u32.f32 saturates as well.
    unsigned b = (unsigned)((v - lo) * scale);
    *bin = b < n_bins ? b : n_bins - 1;
    return true;
}

// bins[bin(v)] += 1: per-block sub-histograms in shared memory, then one global
// atomic per non-empty bin per block.
extern "C" __global__ void histogram(unsigned* bins, uint64_t n_bins, const float* x, uint64_t x_len, float lo,
                                     float hi) {
    __shared__ unsigned local[HISTOGRAM_SHARED_BINS];
    unsigned tid = threadIdx.x, bdim = blockDim.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned nb = (unsigned)n_bins;
    if (n_bins == 0 || n_bins > 0xffffffffull) return;
    if (n_bins > HISTOGRAM_SHARED_BINS) {
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < x_len; i += stride) {
            unsigned b;
            if (histogram_bin(x[i], lo, hi, nb, &b)) atomicAdd(&bins[b], 1u);
        }
        return;
    }
    for (unsigned j = tid; j < nb; j += bdim) local[j] = 0;
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < x_len; i += stride) {
        unsigned b;
        if (histogram_bin(x[i], lo, hi, nb, &b)) atomicAdd(&local[b], 1u);
    }
    __syncthreads();
    for (unsigned j = tid; j < nb; j += bdim) {
        unsigned count = local[j];
        if (count != 0) atomicAdd(&bins[j], count);
    }
}
