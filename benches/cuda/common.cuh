// Shared by the CUDA C++ benchmarks (bench.cu, seed.cu): error checking and the
// input generator (the Rust benchmarks' examples/common/mod.rs draws the same floats).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

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
