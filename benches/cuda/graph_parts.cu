// A design probe for issue 23 (BENCHMARKS.md, "Issue 23: two ways to launch the scope's graph
// faster, tried on the H200"): the seed workload's graph (graph_topology.cu's topology) as one
// graph of all n lanes, or as P graphs of n/P lanes each, each on its own stream, launched one
// after another from one thread or at once from P threads (persistent, spinning on a counter).
// Prints, per variant, the median host time until every graph is launched and until every
// stream is synchronized, over 300 replays (after 20), the minimum, and how many replays
// left a NaN in the poisoned host output. Two rounds.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o graph_parts graph_parts.cu
//   ./graph_parts ROWS COLS SOURCES           (16384 64 256: many-small; 4096 128 256: -128)
//
// Results: benches/results/graph_parts_threads.txt.
#include <cuda_runtime.h>
#include <atomic>
#include <thread>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstring>
#include "kernels.cuh"
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1);} } while (0)
using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

int rows, n, ns;
Particle *src, *tgt; float* out; float* host;
std::vector<cudaStream_t> st;
std::vector<cudaEvent_t> ev;

// lanes [l0, l0+m) as B branches, copies merged per K.
cudaGraphExec_t build(int l0, int m, int B, int K, cudaStream_t origin) {
    int g = m / B, grid = (rows + 255) / 256;
    cudaGraph_t gr; cudaGraphExec_t ex;
    CK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
    CK(cudaEventRecord(ev[l0 * 4], origin));
    for (int b = 0; b < B; b++) CK(cudaStreamWaitEvent(st[l0 + b], ev[l0 * 4], 0));
    int evi = l0 * 4 + 1;
    for (int jj = 0; jj < m; jj++) {
        int j = l0 + jj, b = jj / g;
        potential_tiled_rsqrt<<<grid, 256, 0, st[l0 + b]>>>(out + (size_t)j * rows, rows, tgt + (size_t)j * rows, rows, src, ns, 1e-3f);
        if ((jj + 1) % K == 0) {
            int c0 = jj + 1 - K;
            for (int bb = c0 / g; bb < b; bb++) { CK(cudaEventRecord(ev[evi], st[l0 + bb])); CK(cudaStreamWaitEvent(st[l0 + b], ev[evi], 0)); evi++; }
            CK(cudaMemcpyAsync(host + (size_t)(l0 + c0) * rows, out + (size_t)(l0 + c0) * rows, (size_t)K * rows * 4, cudaMemcpyDeviceToHost, st[l0 + b]));
        }
    }
    for (int b = 0; b < B; b++) { CK(cudaEventRecord(ev[evi], st[l0 + b])); CK(cudaStreamWaitEvent(origin, ev[evi], 0)); evi++; }
    CK(cudaStreamEndCapture(origin, &gr));
    CK(cudaGraphInstantiate(&ex, gr, 0));
    CK(cudaGraphUpload(ex, origin));
    return ex;
}

int main(int argc, char** argv) {
    rows = atoi(argv[1]); n = atoi(argv[2]); ns = atoi(argv[3]);
    int reps = 300;
    CK(cudaMalloc(&src, ns * sizeof(Particle)));
    CK(cudaMalloc(&tgt, (size_t)rows * n * sizeof(Particle)));
    CK(cudaMalloc(&out, (size_t)rows * n * sizeof(float)));
    CK(cudaMallocHost(&host, (size_t)rows * n * sizeof(float)));
    std::vector<Particle> h(std::max((size_t)ns, (size_t)rows * n));
    for (size_t i = 0; i < h.size(); i++) h[i] = Particle{(float)(i % 97) * 0.1f, 0.5f, 0.25f, 1.0f};
    CK(cudaMemcpy(src, h.data(), ns * sizeof(Particle), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(tgt, h.data(), (size_t)rows * n * sizeof(Particle), cudaMemcpyHostToDevice));
    st.resize(n);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaStream_t> origin(8);
    for (auto& s : origin) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ev.resize(8 * n + 16);
    for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    printf("config %dx%dx%d\n", rows, n, ns);
    printf("%-34s %10s %10s %10s %6s\n", "variant", "launch_us", "total_us", "min_total", "bad");
    for (int round = 0; round < 2; round++)
    for (int K : {8, 32})
    for (int Bt : {64, 128})
    for (int P : {1, 2, 4})
    for (int threaded = 0; threaded < 2; threaded++) {
        if (Bt > n || K > n / P || (P == 1 && threaded)) continue;
        int m = n / P, B = Bt / P;
        std::vector<cudaGraphExec_t> ex(P);
        for (int p = 0; p < P; p++) ex[p] = build(p * m, m, B, K, origin[p]);
        CK(cudaDeviceSynchronize());
        std::atomic<int> go{0}, done{0};
        std::atomic<bool> quit{false};
        std::vector<std::thread> th;
        if (threaded)
            for (int p = 1; p < P; p++) th.emplace_back([&, p] {
                int seen = 0;
                while (true) {
                    int gval;
                    while ((gval = go.load(std::memory_order_acquire)) == seen) { if (quit.load()) return; }
                    seen = gval;
                    CK(cudaGraphLaunch(ex[p], origin[p]));
                    done.fetch_add(1, std::memory_order_release);
                }
            });
        std::vector<double> L, T;
        int bad = 0;
        for (int r = 0; r < reps + 20; r++) {
            memset(host, 0xff, (size_t)rows * n * 4);
            auto t0 = clk::now();
            if (threaded) {
                done.store(0);
                go.fetch_add(1, std::memory_order_release);
                CK(cudaGraphLaunch(ex[0], origin[0]));
                while (done.load(std::memory_order_acquire) < P - 1) {}
            } else {
                for (int p = 0; p < P; p++) CK(cudaGraphLaunch(ex[p], origin[p]));
            }
            auto t1 = clk::now();
            for (int p = 0; p < P; p++) CK(cudaStreamSynchronize(origin[p]));
            auto t2 = clk::now();
            for (size_t i = 0; i < (size_t)rows * n; i += 1021) if (host[i] != host[i]) { bad++; break; }
            if (host[(size_t)rows * n - 1] != host[(size_t)rows * n - 1]) bad++;
            if (r >= 20) { L.push_back(us(t0, t1)); T.push_back(us(t0, t2)); }
        }
        quit = true;
        for (auto& t : th) t.join();
        std::sort(L.begin(), L.end()); std::sort(T.begin(), T.end());
        char name[64]; snprintf(name, 64, "K=%d B=%d P=%d %s", K, Bt, P, threaded ? "threads" : "serial");
        printf("%-34s %10.1f %10.1f %10.1f %6d\n", name, L[L.size() / 2], T[T.size() / 2], T[0], bad);
        fflush(stdout);
        for (auto e : ex) CK(cudaGraphExecDestroy(e));
    }
    return 0;
}
