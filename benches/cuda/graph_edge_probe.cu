// What the driver does with the queries and edges `GraphHandle::chain_launches` (host/src/handle.rs)
// relies on, on a captured graph of three kernels (n1 on one stream, n2 then n3 on another):
// cuGraphNodeGetDependencies_v2 asked for the count of a root, then for an array of 0 entries;
// the same for n3 (one dependency: n2); a launch-order edge n1 -> n2 (two roots), then one
// n2 -> n3 (a pair that has an edge already); then the graph is instantiated and run.
// Measured (benches/results/graph_edge_probe_h200_1206.txt, driver 580): the count query
// works, an array query of 0 entries is refused (CUDA_ERROR_INVALID_VALUE), and so is a second
// edge between two nodes.
//
//   nvcc -O2 -arch=sm_90 -o graph_edge_probe graph_edge_probe.cu -lcuda && ./graph_edge_probe
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
__global__ void k(float* p) { p[threadIdx.x] += 1.0f; }
#define P(x) do { CUresult r_ = (x); const char* s_ = 0; cuGetErrorName(r_, &s_); printf("%-60s -> %s\n", #x, s_); } while (0)
int main() {
  float* buf; cudaMalloc(&buf, 4096);
  cudaStream_t o, a, b; cudaStreamCreateWithFlags(&o, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  cudaEvent_t f, ja, jb; cudaEventCreateWithFlags(&f, cudaEventDisableTiming); cudaEventCreateWithFlags(&ja, cudaEventDisableTiming); cudaEventCreateWithFlags(&jb, cudaEventDisableTiming);
  cudaStreamBeginCapture(o, cudaStreamCaptureModeRelaxed);
  cudaEventRecord(f, o); cudaStreamWaitEvent(a, f, 0); cudaStreamWaitEvent(b, f, 0);
  CUgraphNode n1, n2, n3; const CUgraphNode* d; size_t nd; CUstreamCaptureStatus st;
  k<<<1, 32, 0, a>>>(buf); cuStreamGetCaptureInfo((CUstream)a, &st, 0, 0, &d, 0, &nd); n1 = d[0];
  k<<<1, 32, 0, b>>>(buf + 32); cuStreamGetCaptureInfo((CUstream)b, &st, 0, 0, &d, 0, &nd); n2 = d[0];
  k<<<1, 32, 0, b>>>(buf + 32); cuStreamGetCaptureInfo((CUstream)b, &st, 0, 0, &d, 0, &nd); n3 = d[0];
  cudaEventRecord(ja, a); cudaStreamWaitEvent(o, ja, 0); cudaEventRecord(jb, b); cudaStreamWaitEvent(o, jb, 0);
  cudaGraph_t g; cudaStreamEndCapture(o, &g);
  size_t n = 0; CUgraphNode deps[4]; CUgraphEdgeData data[4];
  P(cuGraphNodeGetDependencies_v2(n2, 0, 0, &n)); printf("n2 deps %zu\n", n);
  n = 0; P(cuGraphNodeGetDependencies_v2(n2, deps, data, &n));
  n = 0; P(cuGraphNodeGetDependencies_v2(n3, 0, 0, &n)); printf("n3 deps %zu\n", n);
  n = 4; P(cuGraphNodeGetDependencies_v2(n3, deps, data, &n)); printf("n3 deps %zu first==n2 %d\n", n, n > 0 && deps[0] == n2);
  CUgraphEdgeData e = {}; e.from_port = CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
  P(cuGraphAddDependencies_v2((CUgraph)g, &n1, &n2, &e, 1));
  P(cuGraphAddDependencies_v2((CUgraph)g, &n2, &n3, &e, 1));
  cudaGraphExec_t x; printf("instantiate %s\n", cudaGetErrorString(cudaGraphInstantiate(&x, g, 0)));
  printf("launch %s\n", cudaGetErrorString(cudaGraphLaunch(x, o))); printf("sync %s\n", cudaGetErrorString(cudaStreamSynchronize(o)));
  float h[64]; cudaMemcpy(h, buf, 256, cudaMemcpyDeviceToHost); printf("h[0]=%g h[32]=%g (buf not zeroed: differences only)\n", h[0], h[32]);
}
