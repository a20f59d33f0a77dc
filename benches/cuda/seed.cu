// sluice-cuda-seed: the seed workload (DESIGN.md's north star) written by hand in CUDA C++,
// every way a careful CUDA programmer would write it, for `cargo xtask bench seed` and
// `cargo xtask bench graph` (the sluice side: examples/bench_seed.rs, bench_graph.rs).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o sluice-cuda-seed seed.cu
//   ./sluice-cuda-seed [all | CONFIG...] [--reps R] [--warmup W] [--seed S] [--only plain|graph]
//
// CONFIG is a name of the table below or ROWSxCOLSxSOURCES. The workload: `cols` columns of
// `rows` targets each; column j's potential (potential_tiled_rsqrt, block 256, grid
// ceil(rows/256), eps2 1e-3) over all `sources`, copied to pinned host memory.
//
// Inputs (sources, targets) are uploaded once per configuration, before anything is timed
// (persistent device buffers, as sluice's Gpu::upload). Streams, events and graphs are made
// once. One repetition is timed on the host clock from just before the first launch to the
// return of the last wait. Before each repetition, outside the timing: the device output is
// poisoned with NaN (cudaMemset 0xff; not for `copy-only`, which copies what is there) and so
// is the pinned host output (memset 0xff). After each repetition every host element is
// checked to be written (no NaN left); after the last one a sample of 1024 elements is
// checked against an f64 reference (relative error <= 1e-4) and the whole output summed.
//
// Variants (`n` = columns, stream j runs column j):
//   one-stream        every kernel, then one copy of the matrix, on one stream; sync it
//   devsync           kernel j on stream j; cudaDeviceSynchronize; one cudaMemcpy (the
//                     forum thread's fix)
//   per-stream        kernel j and the copy of column j on stream j; sync every stream
//   fan-in            kernel j on stream j, an event after it; stream n-1 waits for every
//                     event, copies the whole matrix; sync stream n-1
//   chunked-kK        fan-in per chunk of K adjacent columns (K = n/2, n/4, n/8, n/16, where
//                     at least 2): the chunk's last stream waits for the chunk's events and
//                     copies the K columns; sync those streams
//   kernels-1         every kernel on one stream, no copy (for the overlap bound)
//   kernels-n         kernel j on stream j, no copy (for the overlap bound)
//   copy-only         one copy of the whole matrix on one stream (for the overlap bound)
//   graph-per-stream  per-stream captured once into a CUDA graph (fork from an origin stream,
//                     every stream joined back), replayed: cudaGraphLaunch + sync origin
//   graph-fan-in      fan-in, captured and replayed the same way
//   graph-chunked-kK  chunked-kK, captured and replayed the same way (the best graph a careful
//                     C++ programmer could pick at each column size)
//
// Output: `# device,...` and `# impl,...` comment lines, then one CSV line per variant:
//   impl,variant,config,rows,cols,sources,median_ms,min_ms,max_ms,reps,check,verified,samples
// `check` is the f64 sum of the whole output; `verified` is `ok` or `FAIL:<why>`; `samples`
// are the timed repetitions in ms, `;`-separated (benches/join.py pools rounds from them).
// Exit status 2 on a CUDA error, 3 if a result check failed (after every line is printed).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.cuh"
#include "kernels.cuh"

namespace {

constexpr float EPS2 = 1e-3f;
constexpr unsigned BLOCK = 256;
constexpr int MAX_COLS = 128;

// Keep in step with examples/bench_common/mod.rs (CONFIGS): benches/join.py checks that both
// sides ran the same sizes.
struct Config {
    std::string name;
    size_t rows;
    int cols;
    size_t sources;
    int warmup;
    int reps;
};
const Config CONFIGS[] = {
    {"copy-bound", 4194304, 8, 16, 3, 40},    {"balanced", 1048576, 8, 256, 5, 60},
    {"compute-bound", 262144, 8, 8192, 3, 40}, {"many-small", 16384, 64, 256, 20, 200},
    {"many-small-128", 4096, 128, 256, 20, 200},
};

enum class Kind { OneStream, DevSync, PerStream, Chunked, Kernels1, KernelsN, CopyOnly, Graph };

struct Variant {
    std::string name;
    Kind kind;
    int chunk;              // Chunked: columns per chunk (fan-in: all of them)
    Kind captured;          // Graph: what was captured
    cudaGraphExec_t exec;   // Graph: the instantiated graph
};

using Clock = std::chrono::steady_clock;

struct Seed {
    Config c;
    size_t rows = 0, total = 0, n_src = 0;
    int n = 0;
    dim3 grid, block;
    std::vector<Particle> src, tgt;
    Particle *d_src = nullptr, *d_tgt = nullptr;
    float *d_out = nullptr, *h_out = nullptr;
    cudaStream_t* s = nullptr;  // MAX_COLS streams, made once
    cudaEvent_t* done = nullptr;
    cudaEvent_t* join = nullptr;
    cudaStream_t origin = nullptr;
    cudaEvent_t fork = nullptr;

    size_t bytes() const { return total * sizeof(float); }

    void kernel(int j, cudaStream_t st) const {
        size_t off = (size_t)j * rows;
        potential_tiled_rsqrt<<<grid, block, 0, st>>>(d_out + off, rows, d_tgt + off, rows, d_src, n_src, EPS2);
    }
    void copy(int j0, int cols, cudaStream_t st) const {
        size_t off = (size_t)j0 * rows;
        CHECK(cudaMemcpyAsync(h_out + off, d_out + off, (size_t)cols * rows * sizeof(float), cudaMemcpyDeviceToHost, st));
    }

    // Enqueues one repetition's work (what a graph captures); waits nothing.
    void enqueue(Kind kind, int chunk) const {
        switch (kind) {
            case Kind::OneStream:
                for (int j = 0; j < n; ++j) kernel(j, s[0]);
                copy(0, n, s[0]);
                break;
            case Kind::DevSync:
            case Kind::KernelsN:
                for (int j = 0; j < n; ++j) kernel(j, s[j]);
                break;
            case Kind::PerStream:
                for (int j = 0; j < n; ++j) {
                    kernel(j, s[j]);
                    copy(j, 1, s[j]);
                }
                break;
            case Kind::Chunked:
                for (int j = 0; j < n; ++j) {
                    kernel(j, s[j]);
                    int first = (j / chunk) * chunk, last = first + chunk - 1;
                    if (j != last) {
                        CHECK(cudaEventRecord(done[j], s[j]));
                    } else {
                        for (int i = first; i < last; ++i) CHECK(cudaStreamWaitEvent(s[j], done[i], 0));
                        copy(first, chunk, s[j]);
                    }
                }
                break;
            case Kind::Kernels1:
                for (int j = 0; j < n; ++j) kernel(j, s[0]);
                break;
            case Kind::CopyOnly:
                copy(0, n, s[0]);
                break;
            case Kind::Graph:
                break;
        }
    }

    // Waits for one repetition's work from the host: per stream or per event, except devsync.
    void wait(Kind kind, int chunk) const {
        switch (kind) {
            case Kind::OneStream:
            case Kind::Kernels1:
            case Kind::CopyOnly:
                CHECK(cudaStreamSynchronize(s[0]));
                break;
            case Kind::DevSync:
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaMemcpy(h_out, d_out, bytes(), cudaMemcpyDeviceToHost));
                break;
            case Kind::PerStream:
            case Kind::KernelsN:
                for (int j = 0; j < n; ++j) CHECK(cudaStreamSynchronize(s[j]));
                break;
            case Kind::Chunked:
                for (int j = chunk - 1; j < n; j += chunk) CHECK(cudaStreamSynchronize(s[j]));
                break;
            case Kind::Graph:
                CHECK(cudaStreamSynchronize(origin));
                break;
        }
    }

    // Captures `kind` into a graph: the streams fork from `origin` and join it again.
    cudaGraphExec_t capture(Kind kind, int chunk) const {
        CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
        CHECK(cudaEventRecord(fork, origin));
        for (int j = 0; j < n; ++j) CHECK(cudaStreamWaitEvent(s[j], fork, 0));
        enqueue(kind, chunk);
        for (int j = 0; j < n; ++j) {
            CHECK(cudaEventRecord(join[j], s[j]));
            CHECK(cudaStreamWaitEvent(origin, join[j], 0));
        }
        cudaGraph_t g;
        CHECK(cudaStreamEndCapture(origin, &g));
        cudaGraphExec_t exec;
        CHECK(cudaGraphInstantiate(&exec, g, 0));
        CHECK(cudaGraphDestroy(g));
        return exec;
    }
};

size_t count_nan(const float* p, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; ++i) c += (p[i] != p[i]);
    return c;
}

double reference(const Seed& b, size_t idx) {
    const Particle& t = b.tgt[idx];
    double acc = 0.0;
    for (const Particle& s : b.src) {
        double dx = (double)t.x - s.x, dy = (double)t.y - s.y, dz = (double)t.z - s.z;
        acc += (double)s.q / std::sqrt(dx * dx + dy * dy + dz * dz + (double)EPS2);
    }
    return acc;
}

// Sampled f64 check of the host output (the same 1024 indices as the Rust side).
std::string verify(const Seed& b) {
    size_t nan = count_nan(b.h_out, b.total);
    if (nan) return "FAIL:" + std::to_string(nan) + "_unwritten";
    const size_t S = std::min<size_t>(1024, b.total);
    size_t stride = b.total / S;
    for (size_t k = 0; k < S; ++k) {
        size_t idx = k * stride + (k * 7919) % stride;
        double want = reference(b, idx), got = b.h_out[idx];
        double rel = std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
        if (!(rel <= 1e-4)) {
            char msg[160];
            snprintf(msg, sizeof msg, "FAIL:element_%zu_got_%.7g_want_%.7g", idx, got, want);
            return msg;
        }
    }
    return "ok";
}

double checksum(const Seed& b) {
    double sum = 0.0;
    for (size_t i = 0; i < b.total; ++i) sum += b.h_out[i];
    return sum;
}

bool run_variant(Seed& b, const Variant& v, int warmup, int reps) {
    bool writes_host = v.kind != Kind::Kernels1 && v.kind != Kind::KernelsN;
    bool poison_device = v.kind != Kind::CopyOnly;
    std::vector<double> ms;
    std::string verified = "ok";
    for (int r = 0; r < warmup + reps; ++r) {
        if (poison_device) {
            CHECK(cudaMemsetAsync(b.d_out, 0xff, b.bytes(), b.s[0]));
            CHECK(cudaStreamSynchronize(b.s[0]));
        }
        memset(b.h_out, 0xff, b.bytes());
        auto t0 = Clock::now();
        if (v.kind == Kind::Graph) {
            CHECK(cudaGraphLaunch(v.exec, b.origin));
        } else {
            b.enqueue(v.kind, v.chunk);
        }
        b.wait(v.kind, v.chunk);
        double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        CHECK(cudaGetLastError());
        if (r >= warmup) ms.push_back(t);
        if (writes_host && verified == "ok") {
            size_t nan = count_nan(b.h_out, b.total);
            if (nan) verified = "FAIL:rep_" + std::to_string(r) + "_left_" + std::to_string(nan) + "_unwritten";
        }
    }
    if (!writes_host) {  // the kernels' output, copied back outside the timing
        memset(b.h_out, 0xff, b.bytes());
        CHECK(cudaMemcpy(b.h_out, b.d_out, b.bytes(), cudaMemcpyDeviceToHost));
    }
    if (verified == "ok") verified = verify(b);
    double check = checksum(b);
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    size_t m = sorted.size();
    double median = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
    printf("cuda,%s,%s,%zu,%d,%zu,%.6f,%.6f,%.6f,%zu,%.9g,%s,", v.name.c_str(), b.c.name.c_str(), b.rows, b.n, b.n_src,
           median, sorted.front(), sorted.back(), m, check, verified.c_str());
    for (size_t i = 0; i < ms.size(); ++i) printf("%s%.4f", i ? ";" : "", ms[i]);
    printf("\n");
    fflush(stdout);
    if (verified != "ok") fprintf(stderr, "sluice-cuda-seed: %s %s: %s\n", b.c.name.c_str(), v.name.c_str(), verified.c_str());
    return verified == "ok";
}

bool parse_config(const std::string& arg, Config* out) {
    for (const Config& c : CONFIGS)
        if (c.name == arg) {
            *out = c;
            return true;
        }
    size_t rows = 0, src = 0;
    int cols = 0;
    if (sscanf(arg.c_str(), "%zux%dx%zu", &rows, &cols, &src) == 3 && rows > 0 && cols > 0 && cols <= MAX_COLS && src > 0) {
        *out = Config{arg, rows, cols, src, 5, 40};
        return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<Config> configs;
    int reps = 0, warmup = -1;
    uint64_t seed = 0x5eed;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc) reps = atoi(argv[++i]);
        else if (a == "--warmup" && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (a == "--seed" && i + 1 < argc) seed = strtoull(argv[++i], nullptr, 0);
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "all") configs.assign(std::begin(CONFIGS), std::end(CONFIGS));
        else {
            Config c;
            if (!parse_config(a, &c)) {
                fprintf(stderr,
                        "usage: %s [all | CONFIG...] [--reps R] [--warmup W] [--seed S] [--only plain|graph]\n"
                        "CONFIG: copy-bound, balanced, compute-bound, many-small, many-small-128 or ROWSxCOLSxSOURCES "
                        "(COLS <= %d)\n",
                        argv[0], MAX_COLS);
                return 1;
            }
            configs.push_back(c);
        }
    }
    if (configs.empty()) configs.assign(std::begin(CONFIGS), std::end(CONFIGS));

    int dev = 0, driver = 0, runtime = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&prop, dev));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    printf("# device,%s,cc,%d.%d,sms,%d,driver,%d,runtime,%d\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, driver, runtime);
    printf("# impl,variant,config,rows,cols,sources,median_ms,min_ms,max_ms,reps,check,verified,samples\n");

    cudaStream_t streams[MAX_COLS];
    cudaEvent_t done[MAX_COLS], join[MAX_COLS];
    for (int j = 0; j < MAX_COLS; ++j) {
        CHECK(cudaStreamCreateWithFlags(&streams[j], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&done[j], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&join[j], cudaEventDisableTiming));
    }
    cudaStream_t origin;
    cudaEvent_t fork;
    CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));

    bool all_ok = true;
    for (const Config& c : configs) {
        Seed b;
        b.c = c;
        b.rows = c.rows;
        b.n = c.cols;
        b.n_src = c.sources;
        b.total = c.rows * (size_t)c.cols;
        b.grid = dim3((unsigned)((c.rows + BLOCK - 1) / BLOCK));
        b.block = dim3(BLOCK);
        b.s = streams;
        b.done = done;
        b.join = join;
        b.origin = origin;
        b.fork = fork;
        // Sources first, then targets (column j's targets are rows j*rows..), from one generator:
        // what examples/bench_common draws from the same seed.
        Rng rng{seed};
        b.src.resize(c.sources);
        b.tgt.resize(b.total);
        for (auto* v : {&b.src, &b.tgt})
            for (auto& p : *v) {
                float x = rng.next(-1, 1), y = rng.next(-1, 1), z = rng.next(-1, 1), q = rng.next(0.5f, 1.5f);
                p = Particle{x, y, z, q};
            }
        CHECK(cudaMalloc(&b.d_src, c.sources * sizeof(Particle)));
        CHECK(cudaMalloc(&b.d_tgt, b.total * sizeof(Particle)));
        CHECK(cudaMalloc(&b.d_out, b.bytes()));
        CHECK(cudaMallocHost(&b.h_out, b.bytes()));
        CHECK(cudaMemcpy(b.d_src, b.src.data(), c.sources * sizeof(Particle), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b.d_tgt, b.tgt.data(), b.total * sizeof(Particle), cudaMemcpyHostToDevice));

        std::vector<Variant> variants;
        if (only != "graph") {
            variants.push_back({"one-stream", Kind::OneStream, 0, Kind::Graph, nullptr});
            variants.push_back({"devsync", Kind::DevSync, 0, Kind::Graph, nullptr});
            variants.push_back({"per-stream", Kind::PerStream, 0, Kind::Graph, nullptr});
            variants.push_back({"fan-in", Kind::Chunked, b.n, Kind::Graph, nullptr});
            for (int parts : {2, 4, 8, 16}) {
                int k = b.n / parts;
                if (k >= 2 && b.n % parts == 0)
                    variants.push_back({"chunked-k" + std::to_string(k), Kind::Chunked, k, Kind::Graph, nullptr});
            }
            variants.push_back({"kernels-1", Kind::Kernels1, 0, Kind::Graph, nullptr});
            variants.push_back({"kernels-n", Kind::KernelsN, 0, Kind::Graph, nullptr});
            variants.push_back({"copy-only", Kind::CopyOnly, 0, Kind::Graph, nullptr});
        }
        if (only != "plain") {
            variants.push_back({"graph-per-stream", Kind::Graph, 0, Kind::PerStream, b.capture(Kind::PerStream, 0)});
            variants.push_back({"graph-fan-in", Kind::Graph, b.n, Kind::Chunked, b.capture(Kind::Chunked, b.n)});
            for (int parts : {2, 4, 8, 16}) {
                int k = b.n / parts;
                if (k >= 2 && b.n % parts == 0)
                    variants.push_back({"graph-chunked-k" + std::to_string(k), Kind::Graph, k, Kind::Chunked,
                                        b.capture(Kind::Chunked, k)});
            }
        }
        int w = warmup >= 0 ? warmup : c.warmup, r = reps > 0 ? reps : c.reps;
        for (const Variant& v : variants) all_ok &= run_variant(b, v, w, r);
        for (const Variant& v : variants)
            if (v.exec) CHECK(cudaGraphExecDestroy(v.exec));
        CHECK(cudaFree(b.d_src));
        CHECK(cudaFree(b.d_tgt));
        CHECK(cudaFree(b.d_out));
        CHECK(cudaFreeHost(b.h_out));
    }
    return all_ok ? 0 : 3;
}
