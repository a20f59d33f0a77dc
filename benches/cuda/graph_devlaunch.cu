// A design probe for issue 23 (BENCHMARKS.md, "Issue 23: two ways to launch the scope's graph
// faster, tried on the H200"): the seed workload's graph (graph_topology.cu's topology: B
// branches, copies merged per K columns) launched three ways — instantiated plainly and
// launched from the host (what sluice does); instantiated with
// cudaGraphInstantiateFlagDeviceLaunch and launched from the host; and launched from the GPU,
// fire-and-forget, by a one-kernel graph the host launches. Prints, per way and (K, B), the
// median host time of the launch and of launch + cudaStreamSynchronize over 300 replays
// (after 20), the minimum, and how many replays left a NaN in the poisoned host output.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -rdc=true -o graph_devlaunch graph_devlaunch.cu -lcudadevrt
//   ./graph_devlaunch ROWS COLS SOURCES       (16384 64 256: many-small; 4096 128 256: -128)
//
// Results: benches/results/graph_devlaunch_many_small.txt.
#include <cuda_runtime.h>
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

__global__ void launcher(cudaGraphExec_t g) { cudaGraphLaunch(g, cudaStreamGraphFireAndForget); }

int main(int argc, char** argv) {
    int rows = atoi(argv[1]), n = atoi(argv[2]), ns = atoi(argv[3]);
    int reps = 300;
    Particle *src, *tgt; float* out; float* host;
    CK(cudaMalloc(&src, ns * sizeof(Particle)));
    CK(cudaMalloc(&tgt, (size_t)rows * n * sizeof(Particle)));
    CK(cudaMalloc(&out, (size_t)rows * n * sizeof(float)));
    CK(cudaMallocHost(&host, (size_t)rows * n * sizeof(float)));
    std::vector<Particle> h(std::max((size_t)ns, (size_t)rows * n));
    for (size_t i = 0; i < h.size(); i++) h[i] = Particle{(float)(i % 97) * 0.1f, 0.5f, 0.25f, 1.0f};
    CK(cudaMemcpy(src, h.data(), ns * sizeof(Particle), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(tgt, h.data(), (size_t)rows * n * sizeof(Particle), cudaMemcpyHostToDevice));
    std::vector<cudaStream_t> st(n);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaStream_t origin; CK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(4 * n + 2);
    for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    int grid = (rows + 255) / 256;
    printf("config %dx%dx%d\n", rows, n, ns);
    printf("%-34s %10s %10s %10s %6s\n", "topology", "launch_us", "total_us", "min_total", "bad");
    for (int mode = 0; mode < 3; mode++)
    for (int K : {8, 32})
    for (int B : {16, 32, 64, 128}) {
        if (B > n || K > n) continue;
        int g = n / B;
        cudaGraph_t gr; cudaGraphExec_t ex;
        CK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
        CK(cudaEventRecord(ev[2 * n], origin));
        for (int b = 0; b < B; b++) CK(cudaStreamWaitEvent(st[b], ev[2 * n], 0));
        int evi = 0;
        for (int j = 0; j < n; j++) {
            int b = j / g;
            potential_tiled_rsqrt<<<grid, 256, 0, st[b]>>>(out + (size_t)j * rows, rows, tgt + (size_t)j * rows, rows, src, ns, 1e-3f);
            if ((j + 1) % K == 0) {
                int c0 = j + 1 - K;
                for (int bb = c0 / g; bb < b; bb++) { CK(cudaEventRecord(ev[evi], st[bb])); CK(cudaStreamWaitEvent(st[b], ev[evi], 0)); evi++; }
                CK(cudaMemcpyAsync(host + (size_t)c0 * rows, out + (size_t)c0 * rows, (size_t)K * rows * 4, cudaMemcpyDeviceToHost, st[b]));
            }
        }
        for (int b = 0; b < B; b++) { CK(cudaEventRecord(ev[evi], st[b])); CK(cudaStreamWaitEvent(origin, ev[evi], 0)); evi++; }
        CK(cudaStreamEndCapture(origin, &gr));
        cudaGraphExec_t lex = nullptr;
        if (mode == 0) {
            CK(cudaGraphInstantiate(&ex, gr, 0));
        } else {
            CK(cudaGraphInstantiateWithFlags(&ex, gr, cudaGraphInstantiateFlagDeviceLaunch));
            CK(cudaGraphUpload(ex, origin));
            if (mode == 2) {
                cudaGraph_t lg;
                CK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
                launcher<<<1, 1, 0, origin>>>(ex);
                CK(cudaStreamEndCapture(origin, &lg));
                CK(cudaGraphInstantiate(&lex, lg, 0));
                CK(cudaGraphUpload(lex, origin));
            }
        }
        CK(cudaStreamSynchronize(origin));
        std::vector<double> L, T;
        int bad = 0;
        for (int r = 0; r < reps + 20; r++) {
            memset(host, 0xff, (size_t)rows * n * 4);
            auto t0 = clk::now();
            CK(cudaGraphLaunch(mode == 2 ? lex : ex, origin));
            auto t1 = clk::now();
            CK(cudaStreamSynchronize(origin));
            auto t2 = clk::now();
            for (size_t i = 0; i < (size_t)rows * n; i += 1021) if (host[i] != host[i]) { bad++; break; }
            if (host[(size_t)rows * n - 1] != host[(size_t)rows * n - 1]) bad++;
            if (r >= 20) { L.push_back(us(t0, t1)); T.push_back(us(t0, t2)); }
        }
        std::sort(L.begin(), L.end()); std::sort(T.begin(), T.end());
        char name[64]; snprintf(name, 64, "%s K=%d B=%d", mode == 0 ? "host" : mode == 1 ? "host(devflag)" : "device-ff", K, B);
        printf("%-34s %10.1f %10.1f %10.1f %6d\n", name, L[L.size() / 2], T[T.size() / 2], T[0], bad);
        fflush(stdout);
    }
    return 0;
}
