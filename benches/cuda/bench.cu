// sluice-cuda-bench: times the CUDA C++ versions of gpu-kernels' kernels
// (kernels.cuh) with cudaEvents, for the comparison with the Rust kernels
// (`cargo xtask bench kernels`). See README.md beside this file.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o sluice-cuda-bench bench.cu
//   ./sluice-cuda-bench <kernel> <sizes...> [--warmup W] [--reps R] [--seed S] [--pool]
//   ./sluice-cuda-bench all [--warmup W] [--reps R]
//
// Output: one CSV line per measurement after a `#` header:
//   impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers
// `check` is a checksum of the output (the sum of the output as f64, or the
// sum of the bins), for eyeballing against the Rust run with the same sizes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"
#include "kernels.cuh"

struct Options {
    int warmup = 5;
    int reps = 50;
    uint64_t seed = 0x5eed;
};

template <typename T>
T* upload(const std::vector<T>& h) {
    T* d = nullptr;
    CHECK(cudaMalloc(&d, h.size() * sizeof(T) + 1));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <typename T>
std::vector<T> download(const T* d, size_t n) {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

static int sm_count() {
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
}

static unsigned ceil_div(uint64_t a, uint64_t b) { return (unsigned)((a + b - 1) / b); }

static double sum_f32(const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += x;
    return s;
}


// --pool: device memory from the default stream-ordered pool (cudaMallocAsync, as sluice's
// allocations come from cuMemAllocFromPoolAsync), for telling a kernel's time from its
// memory's placement.
static bool g_pool = false;
template <typename T>
static cudaError_t dev_malloc(T** p, size_t bytes) {
    if (!g_pool) return cudaMalloc(p, bytes);
    cudaError_t e = cudaMallocAsync((void**)p, bytes, 0);
    return e != cudaSuccess ? e : cudaStreamSynchronize(0);
}
template <typename T>
static cudaError_t dev_free(T* p) {
    return g_pool ? cudaFreeAsync(p, 0) : cudaFree(p);
}
template <typename T>
static T* dev_upload(const std::vector<T>& h) {
    T* d = nullptr;
    CHECK(dev_malloc(&d, h.size() * sizeof(T) + 1));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

static void bench_fill_column(const Options& o, uint64_t n) {
    float* out = nullptr;
    CHECK(dev_malloc(&out, n * sizeof(float)));
    dim3 block(256), grid(ceil_div(n, 256));
    auto ms = time_it(o, 0, [] {}, [&] { fill_column<<<grid, block>>>(out, n, 1.5f); });
    report("fill_column", std::to_string(n), block, grid, ms, sum_f32(download(out, n)), registers_of(fill_column));
    CHECK(dev_free(out));
}

static void bench_saxpy(const Options& o, uint64_t n) {
    Rng rng{o.seed};
    std::vector<float> x(n), y(n);
    for (auto& v : x) v = rng.next(-1, 1);
    for (auto& v : y) v = rng.next(-1, 1);
    float *dx = dev_upload(x), *dy = dev_upload(y);
    dim3 block(256), grid(ceil_div(n, 256));
    // y changes at each launch (y = a x + y); the time does not depend on the values.
    auto ms = time_it(o, 0, [] {}, [&] { saxpy<<<grid, block>>>(dy, n, dx, n, 0.5f); });
    CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    saxpy<<<grid, block>>>(dy, n, dx, n, 0.5f);
    report("saxpy", std::to_string(n), block, grid, ms, sum_f32(download(dy, n)), registers_of(saxpy));
    CHECK(dev_free(dx));
    CHECK(dev_free(dy));
}

// variant: 0 potential, 1 potential_tiled, 2 potential_tiled_rsqrt (the seed kernel).
static void bench_potential(const Options& o, int variant, uint64_t rows, uint64_t n_sources) {
    Rng rng{o.seed};
    std::vector<Particle> t(rows), s(n_sources);
    for (auto& p : t) p = {rng.next(-1, 1), rng.next(-1, 1), rng.next(-1, 1), 0.0f};
    for (auto& p : s) p = {rng.next(-1, 1), rng.next(-1, 1), rng.next(-1, 1), rng.next(-1, 1)};
    Particle *dt = dev_upload(t), *ds = dev_upload(s);
    float* out = nullptr;
    CHECK(dev_malloc(&out, rows * sizeof(float)));
    dim3 block(256), grid(ceil_div(rows, 256));
    const float eps2 = 1e-3f;
    auto ms = time_it(o, 0, [] {}, [&] {
        if (variant == 2)
            potential_tiled_rsqrt<<<grid, block>>>(out, rows, dt, rows, ds, n_sources, eps2);
        else if (variant == 1)
            potential_tiled<<<grid, block>>>(out, rows, dt, rows, ds, n_sources, eps2);
        else
            potential<<<grid, block>>>(out, rows, dt, rows, ds, n_sources, eps2);
    });
    const char* names[] = {"potential", "potential_tiled", "potential_tiled_rsqrt"};
    decltype(&potential) kernels[] = {potential, potential_tiled, potential_tiled_rsqrt};
    report(names[variant], std::to_string(rows) + "x" + std::to_string(n_sources), block,
           grid, ms, sum_f32(download(out, rows)), registers_of(kernels[variant]));
    CHECK(dev_free(dt));
    CHECK(dev_free(ds));
    CHECK(dev_free(out));
}

static void bench_sum_reduce(const Options& o, uint64_t n) {
    Rng rng{o.seed};
    std::vector<float> x(n);
    for (auto& v : x) v = rng.next(-1, 1);
    float* dx = dev_upload(x);
    float* out = nullptr;
    CHECK(dev_malloc(&out, sizeof(float)));
    dim3 block(256), grid(std::min<unsigned>(ceil_div(n, 1024), 8u * sm_count()));
    auto ms = time_it(
        o, 0, [&] { CHECK(cudaMemsetAsync(out, 0, sizeof(float), 0)); },
        [&] { sum_reduce<<<grid, block>>>(out, 1, dx, n); });
    report("sum_reduce", std::to_string(n), block, grid, ms, download(out, 1)[0], registers_of(sum_reduce));
    CHECK(dev_free(dx));
    CHECK(dev_free(out));
}

static void bench_transpose(const Options& o, unsigned rows, unsigned cols) {
    uint64_t n = (uint64_t)rows * cols;
    Rng rng{o.seed};
    std::vector<float> in(n);
    for (auto& v : in) v = rng.next(-1, 1);
    float* din = dev_upload(in);
    float* out = nullptr;
    CHECK(dev_malloc(&out, n * sizeof(float)));
    dim3 block(TRANSPOSE_TILE, TRANSPOSE_BLOCK_ROWS), grid(ceil_div(cols, TRANSPOSE_TILE), ceil_div(rows, TRANSPOSE_TILE));
    auto ms = time_it(o, 0, [] {}, [&] { transpose<<<grid, block>>>(out, n, din, n, rows, cols); });
    // Check a few elements exactly, then report the sum.
    std::vector<float> h = download(out, n);
    for (uint64_t k = 0; k < n; k += n / 97 + 1) {
        uint64_t r = k / cols, c = k % cols;
        if (h[c * rows + r] != in[k]) {
            fprintf(stderr, "transpose mismatch at (%llu, %llu)\n", (unsigned long long)r, (unsigned long long)c);
            exit(3);
        }
    }
    report("transpose", std::to_string(rows) + "x" + std::to_string(cols), block, grid, ms, sum_f32(h),
           registers_of(transpose));
    CHECK(dev_free(din));
    CHECK(dev_free(out));
}

static void bench_histogram(const Options& o, uint64_t n, uint64_t n_bins) {
    Rng rng{o.seed};
    std::vector<float> x(n);
    for (auto& v : x) v = rng.next(-1.1f, 1.1f);
    float* dx = dev_upload(x);
    unsigned* bins = nullptr;
    CHECK(dev_malloc(&bins, n_bins * sizeof(unsigned)));
    dim3 block(256), grid(std::min<unsigned>(ceil_div(n, 256), 2u * sm_count()));
    auto ms = time_it(
        o, 0, [&] { CHECK(cudaMemsetAsync(bins, 0, n_bins * sizeof(unsigned), 0)); },
        [&] { histogram<<<grid, block>>>(bins, n_bins, dx, n, -1.0f, 1.0f); });
    std::vector<unsigned> h = download(bins, n_bins);
    double total = 0;
    for (unsigned c : h) total += c;
    report("histogram", std::to_string(n) + "x" + std::to_string(n_bins), block, grid, ms, total,
           registers_of(histogram));
    CHECK(dev_free(dx));
    CHECK(dev_free(bins));
}

static uint64_t num(const char* s) {
    char* end = nullptr;
    unsigned long long v = strtoull(s, &end, 0);
    if (!end || *end) {
        fprintf(stderr, "not a number: %s\n", s);
        exit(1);
    }
    return v;
}

static const char* USAGE =
    "usage: sluice-cuda-bench <kernel> <sizes...> [--warmup W] [--reps R] [--seed S] [--pool]\n"
    "  fill_column N | saxpy N | potential ROWS SOURCES | potential_tiled ROWS SOURCES\n"
    "  potential_tiled_rsqrt ROWS SOURCES\n"
    "  sum_reduce N | transpose ROWS COLS | histogram N BINS | all (default sizes)\n";

int main(int argc, char** argv) {
    Options o;
    std::vector<const char*> pos;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--warmup") && i + 1 < argc) o.warmup = (int)num(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) o.reps = (int)num(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) o.seed = num(argv[++i]);
        else if (!strcmp(argv[i], "--pool")) g_pool = true;
        else pos.push_back(argv[i]);
    }
    if (pos.empty() || o.reps < 1) {
        fputs(USAGE, stderr);
        return 1;
    }
    std::string k = pos[0];
    auto need = [&](size_t n) {
        if (pos.size() != n + 1) {
            fputs(USAGE, stderr);
            exit(1);
        }
    };
    printf("# impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers\n");
    if (k == "fill_column") need(1), bench_fill_column(o, num(pos[1]));
    else if (k == "saxpy") need(1), bench_saxpy(o, num(pos[1]));
    else if (k == "potential") need(2), bench_potential(o, 0, num(pos[1]), num(pos[2]));
    else if (k == "potential_tiled") need(2), bench_potential(o, 1, num(pos[1]), num(pos[2]));
    else if (k == "potential_tiled_rsqrt") need(2), bench_potential(o, 2, num(pos[1]), num(pos[2]));
    else if (k == "sum_reduce") need(1), bench_sum_reduce(o, num(pos[1]));
    else if (k == "transpose") need(2), bench_transpose(o, (unsigned)num(pos[1]), (unsigned)num(pos[2]));
    else if (k == "histogram") need(2), bench_histogram(o, num(pos[1]), num(pos[2]));
    else if (k == "all") {
        need(0);
        bench_fill_column(o, 1 << 26);
        bench_saxpy(o, 1 << 26);
        bench_potential(o, 0, 1 << 16, 1 << 14);
        bench_potential(o, 1, 1 << 16, 1 << 14);
        // The seed workload's kernel at its compute-bound and copy-bound sizes.
        bench_potential(o, 2, 262144, 8192);
        bench_potential(o, 2, 4194304, 16);
        bench_sum_reduce(o, 1 << 26);
        bench_transpose(o, 8192, 8192);
        bench_histogram(o, 1 << 26, 256);
    } else {
        fputs(USAGE, stderr);
        return 1;
    }
    return 0;
}
