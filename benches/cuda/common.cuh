// Shared by the CUDA C++ benchmarks (bench.cu, seed.cu, gemm.cu): error checking, the
// input generator (the Rust benchmarks' examples/common/mod.rs draws the same floats),
// and the CUDA-event timing and CSV line of the per-kernel benchmarks.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Any CUDA error: a message on stderr and exit status 2.
#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
            exit(2);                                                                                  \
        }                                                                                             \
    } while (0)

// xorshift64, uniform floats in [lo, hi).
struct Rng {
    uint64_t s;
    float next(float lo, float hi) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return lo + (hi - lo) * (float)(s >> 40) / (float)(1ull << 24);
    }
};

// Times `launch` (one kernel launch on `stream`) with CUDA events: `o.warmup` untimed
// runs, then `o.reps` timed ones, each after `reset` (outside the timed interval).
// Returns the sorted times in ms.
template <typename Options, typename Reset, typename Launch>
std::vector<float> time_it(const Options& o, cudaStream_t stream, Reset reset, Launch launch) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> ms;
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        reset();
        CHECK(cudaEventRecord(start, stream));
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start, stop));
        if (r >= o.warmup) ms.push_back(t);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(ms.begin(), ms.end());
    return ms;
}

// One CSV line; the last column is the kernel's registers per thread (`registers_of`).
inline void report(const char* kernel, const std::string& sizes, dim3 block, dim3 grid, const std::vector<float>& ms,
                   double check, int registers) {
    float median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5f * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    printf("cuda,%s,%s,%ux%ux%u,%ux%ux%u,%.6f,%.6f,%.6f,%zu,%.9g,%d\n", kernel, sizes.c_str(), block.x, block.y,
           block.z, grid.x, grid.y, grid.z, median, ms.front(), ms.back(), ms.size(), check, registers);
    fflush(stdout);
}

// Registers per thread of a compiled kernel (cudaFuncAttributes::numRegs).
template <typename F>
inline int registers_of(F* kernel) {
    cudaFuncAttributes a{};
    CHECK(cudaFuncGetAttributes(&a, kernel));
    return a.numRegs;
}
