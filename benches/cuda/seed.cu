// sluice-cuda-seed: the seed workload (DESIGN.md's north star) written by hand in
// CUDA C++, for the comparison with sluice's version (examples/bench_seed.rs).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o sluice-cuda-seed seed.cu
//   ./sluice-cuda-seed LANES ROWS SOURCES [--warmup W] [--reps R] [--seed S]
//
// One repetition, timed on the host clock from the first upload to the moment
// every column is in pinned host memory:
//   upload sources and targets once (pageable, on an upload stream, one event);
//   per stream j: wait for the upload event, potential kernel on column j,
//   copy column j to pinned host memory on the same stream;
//   synchronize each stream (no device-wide synchronization).
// Mode `devsync` is the version the forum thread started from: the kernels on
// their streams, cudaDeviceSynchronize, then one copy of the whole matrix.
// Streams, events and buffers are created once, outside the timed region, as a
// careful CUDA C++ programmer would.
//
// Output (the CSV of bench.cu): impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check
// with kernel `seed` (per-stream copies) and `seed_devsync`.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"
#include "kernels.cuh"

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s LANES ROWS SOURCES [--warmup W] [--reps R] [--seed S]\n", argv[0]);
        return 1;
    }
    int lanes = atoi(argv[1]);
    size_t rows = strtoull(argv[2], nullptr, 10), n_src = strtoull(argv[3], nullptr, 10);
    int warmup = 3, reps = 20;
    uint64_t seed = 0x5eed;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], nullptr, 0);
    }
    const float eps2 = 1e-3f;
    Rng rng{seed};
    std::vector<Particle> sources(n_src), targets(rows * lanes);
    for (auto* v : {&sources, &targets})
        for (auto& p : *v) p = Particle{rng.next(-1, 1), rng.next(-1, 1), rng.next(-1, 1), rng.next(0.5f, 1.5f)};

    Particle *d_src, *d_tgt;
    float* d_out;
    float* h_out;
    CHECK(cudaMalloc(&d_src, n_src * sizeof(Particle)));
    CHECK(cudaMalloc(&d_tgt, rows * lanes * sizeof(Particle)));
    CHECK(cudaMalloc(&d_out, rows * lanes * sizeof(float)));
    CHECK(cudaMallocHost(&h_out, rows * lanes * sizeof(float)));
    std::vector<cudaStream_t> streams(lanes);
    for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaStream_t up;
    CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    cudaEvent_t uploaded;
    CHECK(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming));
    dim3 block(256), grid((unsigned)((rows + 255) / 256));

    for (int mode = 0; mode < 2; ++mode) {
        std::vector<double> ms;
        double check = 0;
        for (int r = 0; r < warmup + reps; ++r) {
            std::fill(h_out, h_out + rows * lanes, NAN);
            auto t0 = std::chrono::steady_clock::now();
            CHECK(cudaMemcpyAsync(d_src, sources.data(), n_src * sizeof(Particle), cudaMemcpyHostToDevice, up));
            CHECK(cudaMemcpyAsync(d_tgt, targets.data(), rows * lanes * sizeof(Particle), cudaMemcpyHostToDevice, up));
            CHECK(cudaEventRecord(uploaded, up));
            for (int j = 0; j < lanes; ++j) {
                CHECK(cudaStreamWaitEvent(streams[j], uploaded, 0));
                potential<<<grid, block, 0, streams[j]>>>(d_out + j * rows, rows, d_tgt + j * rows, rows, d_src, n_src, eps2);
                CHECK(cudaGetLastError());
                if (mode == 0)
                    CHECK(cudaMemcpyAsync(h_out + j * rows, d_out + j * rows, rows * sizeof(float), cudaMemcpyDeviceToHost,
                                          streams[j]));
            }
            if (mode == 0) {
                for (auto& s : streams) CHECK(cudaStreamSynchronize(s));
            } else {
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaMemcpy(h_out, d_out, rows * lanes * sizeof(float), cudaMemcpyDeviceToHost));
            }
            auto t1 = std::chrono::steady_clock::now();
            if (r >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        for (size_t i = 0; i < rows * lanes; ++i) check += h_out[i];
        std::sort(ms.begin(), ms.end());
        double median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
        printf("cuda,%s,%dx%zux%zu,%ux1x1,%ux1x1,%.6f,%.6f,%.6f,%zu,%.9g\n", mode == 0 ? "seed" : "seed_devsync", lanes, rows,
               n_src, block.x, grid.x, median, ms.front(), ms.back(), ms.size(), check);
    }
    return 0;
}
