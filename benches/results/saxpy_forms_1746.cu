// Is the bench's saxpy twin (64-bit grid-stride, as in benches/cuda/kernels.cuh) the best a
// CUDA expert writes? Three C++ forms, same data, same launch, CUDA events, medians.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
__global__ void saxpy_u64(float* y, uint64_t y_len, const float* x, uint64_t x_len, float a) {
    uint64_t len = y_len < x_len ? y_len : x_len;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) y[i] = a * x[i] + y[i];
}
__global__ void saxpy_u32(float* y, const float* x, unsigned n, float a) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}
__global__ void saxpy_if(float* __restrict__ y, const float* __restrict__ x, int n, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
    const size_t n = 1u << 26;
    float *x, *y; cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
    std::vector<float> h(n); for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761u) % 1000) / 1000.f;
    cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(y, h.data(), n * 4, cudaMemcpyHostToDevice);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    unsigned grid = n / 256;
    std::vector<float> t[3];
    for (int round = 0; round < 3; ++round)
      for (int k = 0; k < 3; ++k) {
        for (int rep = 0; rep < 55; ++rep) {
            cudaEventRecord(a);
            if (k == 0) saxpy_u64<<<grid, 256>>>(y, n, x, n, 1.0001f);
            if (k == 1) saxpy_u32<<<grid, 256>>>(y, x, n, 1.0001f);
            if (k == 2) saxpy_if<<<grid, 256>>>(y, x, n, 1.0001f);
            cudaEventRecord(b); cudaEventSynchronize(b);
            float ms; cudaEventElapsedTime(&ms, a, b); if (rep >= 5) t[k].push_back(ms);
        }
      }
    const char* names[3] = {"u64 grid-stride (bench twin)", "u32 grid-stride", "int if (i < n), __restrict__"};
    for (int k = 0; k < 3; ++k) { std::sort(t[k].begin(), t[k].end()); printf("%-32s median %.4f ms  min %.4f\n", names[k], t[k][t[k].size() / 2], t[k][0]); }
    printf("error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
