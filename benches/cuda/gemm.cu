// sluice-cuda-gemm: the gemm kernels of ports/kernels (Rust, cuda_std style) written in
// CUDA C++, same algorithm, tile size, types and launch shape, timed as sluice-ports bench
// times the Rust ones (benches/run.sh ports puts the two side by side).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o sluice-cuda-gemm gemm.cu
//   ./sluice-cuda-gemm [all | SIZE...] [--warmup W] [--reps R] [--seed S]
//
// `all` (the default) runs the square sizes 1024, 2048 and 4096, as `sluice-ports bench`.
// C = A·B, row-major f32, A m×k, B k×n; inputs are xorshift64 floats in [-1, 1) from seed
// 0x5eed, A's elements first, then B's (common.cuh; sluice-ports draws the same floats).
// Each timed launch is bracketed by two cudaEventRecords and synchronised; 5 warm-up and
// 30 timed launches by default, inputs uploaded before. Output, after a `#` header:
//   impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers
// `check` is the f64 sum of C (the Rust kernels fuse the same multiply-adds in the same
// order, so the two programs' sums agree). A sample of C is checked against an f64
// reference with the f32 dot-product bound; a miss exits with status 3, a CUDA error 2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"

#define TILE 32  // ports_kernels::TILE

// One thread per element of C; blocks of 16 x 16 (ports' gemm_naive). The 2-D index is
// 32-bit, as cuda_std's thread::index_2d.
__global__ void gemm_naive(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    size_t col = blockIdx.x * blockDim.x + threadIdx.x;
    size_t row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (size_t i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];  // contracted: fma
        c[row * n + col] = sum;
    }
}

// One TILE x TILE block per tile of C, walking k one tile of A and one of B at a time
// through shared memory, zero-padded at the edges (ports' gemm_tiled).
__global__ void gemm_tiled(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    __shared__ float tile_a[TILE][TILE];
    __shared__ float tile_b[TILE][TILE];
    size_t tx = threadIdx.x, ty = threadIdx.y;
    size_t row = (size_t)blockIdx.y * TILE + ty;
    size_t col = (size_t)blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (size_t t = 0; t < k; t += TILE) {
        tile_a[ty][tx] = (row < m && t + tx < k) ? a[row * k + t + tx] : 0.0f;
        tile_b[ty][tx] = (t + ty < k && col < n) ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += tile_a[ty][i] * tile_b[i][tx];  // contracted: fma
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}

struct Options {
    int warmup = 5;
    int reps = 30;
    uint64_t seed = 0x5eed;
};

static unsigned ceil_div(uint64_t a, uint64_t b) { return (unsigned)((a + b - 1) / b); }

// A sample of C against the f64 reference, each within gamma_k * sum |a||b|.
static bool verify(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, size_t m,
                   size_t n, size_t k, const char* kernel) {
    const double u = 1.0 / (1 << 24), gamma = k * u / (1 - k * u);
    for (size_t s = 0; s < m * n; s += m * n / 97 + 1) {
        size_t row = s / n, col = s % n;
        double ref = 0, abs = 0;
        for (size_t i = 0; i < k; ++i) {
            double p = (double)a[row * k + i] * b[i * n + col];
            ref += p;
            abs += std::fabs(p);
        }
        if (!(std::fabs(c[s] - ref) <= gamma * abs)) {
            fprintf(stderr, "%s: C[%zu][%zu] = %.9g, reference %.9g (bound %.3g)\n", kernel, row, col, c[s], ref,
                    gamma * abs);
            return false;
        }
    }
    return true;
}

static bool bench_gemm(const Options& o, size_t size) {
    size_t m = size, n = size, k = size;
    Rng rng{o.seed};
    std::vector<float> a(m * k), b(k * n);
    for (auto& v : a) v = rng.next(-1, 1);
    for (auto& v : b) v = rng.next(-1, 1);
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
    CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
    CHECK(cudaMalloc(&dc, m * n * sizeof(float)));
    CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::string sizes = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    bool ok = true;
    for (int tiled = 0; tiled < 2; ++tiled) {
        dim3 block = tiled ? dim3(TILE, TILE) : dim3(16, 16);
        dim3 grid(ceil_div(n, block.x), ceil_div(m, block.y));
        auto ms = time_it(o, 0, [] {}, [&] {
            if (tiled)
                gemm_tiled<<<grid, block>>>(da, db, dc, m, n, k);
            else
                gemm_naive<<<grid, block>>>(da, db, dc, m, n, k);
        });
        std::vector<float> c(m * n);
        CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
        double sum = 0;
        for (float x : c) sum += x;
        const char* name = tiled ? "gemm_tiled" : "gemm_naive";
        report(name, sizes, block, grid, ms, sum, tiled ? registers_of(gemm_tiled) : registers_of(gemm_naive));
        ok = verify(a, b, c, m, n, k, name) && ok;
    }
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    return ok;
}

int main(int argc, char** argv) {
    Options o;
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; ++i) {
        bool has_value = i + 1 < argc;
        if (!strcmp(argv[i], "--warmup") && has_value) {
            o.warmup = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && has_value) {
            o.reps = std::max(1, atoi(argv[++i]));
        } else if (!strcmp(argv[i], "--seed") && has_value) {
            o.seed = strtoull(argv[++i], nullptr, 0);
        } else if (!strcmp(argv[i], "all")) {
            sizes.insert(sizes.end(), {1024, 2048, 4096});
        } else if (argv[i][0] >= '1' && argv[i][0] <= '9') {
            sizes.push_back(strtoull(argv[i], nullptr, 0));
        } else {
            fprintf(stderr, "usage: sluice-cuda-gemm [all | SIZE...] [--warmup W] [--reps R] [--seed S]\n");
            return 1;
        }
    }
    if (sizes.empty()) sizes = {1024, 2048, 4096};
    printf("# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers\n");
    bool ok = true;
    for (size_t s : sizes) ok = bench_gemm(o, s) && ok;
    return ok ? 0 : 3;
}
