// A design probe for issue 23 (not yet run on a GPU when written): can one CUDA graph run the
// seed workload's `n` independent kernels as concurrently as a graph of one branch per column
// while costing the host's `cudaGraphLaunch` what a graph of a few branches costs?
//
// A graph's launch takes about a microsecond of host time per branch (benches/results/
// graph_topology_run2.txt: 84 µs for 64 branches, 26 µs for 8), and a branch runs its kernels
// one after the other. Since CUDA 12.3 an edge out of a kernel node may leave from its
// *launch-completion* port (`cudaGraphKernelNodePortLaunchCompletion`: "activates when all
// blocks of the kernel have begun execution"), so a chain of kernels joined by such edges is
// one branch whose kernels still overlap on the GPU. The columns are independent (each kernel
// reads the shared inputs and writes its own column), so no kernel needs another's results;
// each merged copy of K columns waits for its K kernels with ordinary edges (full completion
// and memory visibility), as the graphs of graph_topology.cu do.
//
// Topologies, each built, instantiated and replayed 300 times (after 20) from the host:
//   branches B=64      captured: one branch per column (B = min(64, n)), copies merged per K
//                      (graph_topology.cu's best at 64 columns);
//   chain-lc-def C     built: C chains of n/C consecutive kernels, each kernel after the one
//                      before it in its chain by a launch-completion edge of default type;
//   chain-lc-prog C    the same with edges of programmatic type;
//   chain-full C       the same chains with ordinary edges (the kernels of a chain serialize:
//                      graph_topology.cu's B = C, for reference).
// Per topology: median host µs of cudaGraphLaunch and of launch + cudaStreamSynchronize, the
// minimum of the latter, and how many output elements differ (bit for bit) from the first
// topology's: the host output is poisoned (NaN) before every replay and compared after the
// last. A topology the driver refuses (instantiation error) is printed with the error.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o graph_launch_order graph_launch_order.cu
//   ./graph_launch_order ROWS COLS SOURCES    (16384 64 256: many-small; 4096 128 256: -128)
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "kernels.cuh"
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1);} } while (0)
using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

struct Setup {
    int rows, n, ns, K;
    Particle *src, *tgt;
    float *out, *host;
};

// The kernel of column j, as a graph node's parameters (`args` holds the values they point at).
struct ColumnArgs {
    float* out; uint64_t out_len; const Particle* tgt; uint64_t tgt_len; const Particle* src; uint64_t ns; float eps2;
    void* ptrs[7];
};

static cudaKernelNodeParams column_params(const Setup& s, int j, ColumnArgs& a) {
    a = ColumnArgs{s.out + (size_t)j * s.rows, (uint64_t)s.rows, s.tgt + (size_t)j * s.rows, (uint64_t)s.rows, s.src,
                   (uint64_t)s.ns, 1e-3f, {}};
    void* p[7] = {&a.out, &a.out_len, &a.tgt, &a.tgt_len, &a.src, &a.ns, &a.eps2};
    std::memcpy(a.ptrs, p, sizeof p);
    cudaKernelNodeParams k{};
    k.func = (void*)potential_tiled_rsqrt;
    k.gridDim = dim3((s.rows + 255) / 256);
    k.blockDim = dim3(256);
    k.sharedMemBytes = 0;
    k.kernelParams = a.ptrs;
    return k;
}

// C chains of consecutive kernels joined by edges `edge` (from_port, type); copies merged per K
// columns after their kernels (ordinary edges). Returns the instantiation's error, if any.
static cudaError_t build_chains(const Setup& s, int C, cudaGraphEdgeData edge, cudaGraphExec_t* ex) {
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    std::vector<cudaGraphNode_t> k(s.n);
    std::vector<ColumnArgs> args(s.n);
    int per = s.n / C;
    for (int j = 0; j < s.n; j++) {
        cudaKernelNodeParams p = column_params(s, j, args[j]);
        CK(cudaGraphAddKernelNode(&k[j], g, nullptr, 0, &p));
        if (j % per != 0) {
            cudaError_t e = cudaGraphAddDependencies(g, &k[j - 1], &k[j], &edge, 1);
            if (e != cudaSuccess) { cudaGraphDestroy(g); return e; }
        }
    }
    for (int c0 = 0; c0 < s.n; c0 += s.K) {
        cudaGraphNode_t copy;
        size_t bytes = (size_t)s.K * s.rows * sizeof(float);
        CK(cudaGraphAddMemcpyNode1D(&copy, g, &k[c0], s.K, s.host + (size_t)c0 * s.rows, s.out + (size_t)c0 * s.rows,
                                    bytes, cudaMemcpyDeviceToHost));
    }
    cudaError_t e = cudaGraphInstantiate(ex, g, 0);
    cudaGraphDestroy(g);
    return e;
}

// One branch per column (B = min(64, n) branches of consecutive columns), captured, copies
// merged per K columns: graph_topology.cu's graph.
static void capture_branches(const Setup& s, int B, cudaGraphExec_t* ex) {
    std::vector<cudaStream_t> st(B);
    for (auto& x : st) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    cudaStream_t origin; CK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(2 * s.n + B + 1);
    for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    int g = s.n / B, evi = 0, grid = (s.rows + 255) / 256;
    cudaGraph_t gr;
    CK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
    CK(cudaEventRecord(ev[evi], origin));
    for (int b = 0; b < B; b++) CK(cudaStreamWaitEvent(st[b], ev[evi], 0));
    evi++;
    for (int j = 0; j < s.n; j++) {
        int b = j / g;
        potential_tiled_rsqrt<<<grid, 256, 0, st[b]>>>(s.out + (size_t)j * s.rows, s.rows, s.tgt + (size_t)j * s.rows,
                                                       s.rows, s.src, s.ns, 1e-3f);
        if ((j + 1) % s.K == 0) {
            int c0 = j + 1 - s.K;
            for (int bb = c0 / g; bb < b; bb++) { CK(cudaEventRecord(ev[evi], st[bb])); CK(cudaStreamWaitEvent(st[b], ev[evi], 0)); evi++; }
            CK(cudaMemcpyAsync(s.host + (size_t)c0 * s.rows, s.out + (size_t)c0 * s.rows, (size_t)s.K * s.rows * 4,
                               cudaMemcpyDeviceToHost, st[b]));
        }
    }
    for (int b = 0; b < B; b++) { CK(cudaEventRecord(ev[evi], st[b])); CK(cudaStreamWaitEvent(origin, ev[evi], 0)); evi++; }
    CK(cudaStreamEndCapture(origin, &gr));
    CK(cudaGraphInstantiate(ex, gr, 0));
    CK(cudaGraphDestroy(gr));
}

int main(int argc, char** argv) {
    if (argc < 4) { printf("usage: graph_launch_order ROWS COLS SOURCES\n"); return 2; }
    Setup s{atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), 8, nullptr, nullptr, nullptr, nullptr};
    s.K = std::min(s.K, s.n);
    const int reps = 300;
    size_t elems = (size_t)s.rows * s.n;
    CK(cudaMalloc(&s.src, s.ns * sizeof(Particle)));
    CK(cudaMalloc(&s.tgt, elems * sizeof(Particle)));
    CK(cudaMalloc(&s.out, elems * sizeof(float)));
    CK(cudaMallocHost(&s.host, elems * sizeof(float)));
    // Fresh inputs (not zeros): the seed benchmarks' kind of particles.
    std::vector<Particle> h(std::max((size_t)s.ns, elems));
    unsigned long long x = 0x5eed;
    auto rnd = [&] { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (float)(x >> 40) / (float)(1ull << 24); };
    for (auto& p : h) p = Particle{rnd(), rnd(), rnd(), rnd() - 0.5f};
    CK(cudaMemcpy(s.src, h.data(), s.ns * sizeof(Particle), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(s.tgt, h.data(), elems * sizeof(Particle), cudaMemcpyHostToDevice));
    cudaStream_t stream; CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::vector<float> first;
    printf("config %dx%dx%d, copies merged per %d columns\n", s.rows, s.n, s.ns, s.K);
    printf("%-18s %10s %10s %10s %10s\n", "topology", "launch_us", "total_us", "min_total", "mismatch");
    auto measure = [&](const std::string& name, cudaGraphExec_t ex) {
        std::vector<double> L, T;
        for (int r = 0; r < reps + 20; r++) {
            std::memset(s.host, 0xff, elems * sizeof(float));
            auto t0 = clk::now();
            CK(cudaGraphLaunch(ex, stream));
            auto t1 = clk::now();
            CK(cudaStreamSynchronize(stream));
            auto t2 = clk::now();
            if (r >= 20) { L.push_back(us(t0, t1)); T.push_back(us(t0, t2)); }
        }
        size_t bad = 0;
        if (first.empty()) {
            first.assign(s.host, s.host + elems);
            for (float v : first) bad += v != v;  // a NaN: never written
        } else {
            for (size_t i = 0; i < elems; i++) bad += std::memcmp(&first[i], &s.host[i], 4) != 0;
        }
        std::sort(L.begin(), L.end());
        std::sort(T.begin(), T.end());
        printf("%-18s %10.1f %10.1f %10.1f %10zu\n", name.c_str(), L[L.size() / 2], T[T.size() / 2], T[0], bad);
        CK(cudaGraphExecDestroy(ex));
    };
    cudaGraphExec_t ex;
    int B = std::min(64, s.n);
    capture_branches(s, B, &ex);
    measure("branches B=" + std::to_string(B), ex);
    struct Kind { const char* name; cudaGraphEdgeData edge; };
    Kind kinds[3] = {};
    kinds[0].name = "chain-lc-def";
    kinds[0].edge.from_port = cudaGraphKernelNodePortLaunchCompletion;
    kinds[0].edge.type = cudaGraphDependencyTypeDefault;
    kinds[1].name = "chain-lc-prog";
    kinds[1].edge.from_port = cudaGraphKernelNodePortLaunchCompletion;
    kinds[1].edge.type = cudaGraphDependencyTypeProgrammatic;
    kinds[2].name = "chain-full";
    for (const Kind& kind : kinds) {
        for (int C : {1, 2, 4, 8, 16}) {
            if (C > s.n) continue;
            std::string name = std::string(kind.name) + " " + std::to_string(C);
            cudaError_t e = build_chains(s, C, kind.edge, &ex);
            if (e != cudaSuccess) {
                printf("%-18s refused: %s\n", name.c_str(), cudaGetErrorString(e));
                cudaGetLastError();
                continue;
            }
            measure(name, ex);
        }
    }
    return 0;
}
