// What the driver does with a launch (and a few other stream-ordered calls) made while
// another context, or none, is current on the thread: the fact `driver::launch` relies on to
// skip its per-call `cuCtxGetCurrent` (host/src/driver.rs, `launch`).
//
//   nvcc -O2 -o ctx_probe ctx_probe.cu -lcuda && ./ctx_probe
//
// Context A (the primary context of device 0) loads a module and makes a stream and a buffer;
// then each case makes another context current (B: a second context of the same device;
// none: no context at all), launches A's function on A's stream, and reports the launch's
// result and whether the kernel's write landed in A's buffer. Then times 20,000 launches
// with A current, with B current, and with none.
#include <cuda.h>
#include <chrono>
#include <cstdio>
#include <vector>

static const char *PTX = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry fill(.param .u64 p, .param .u32 v)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<3>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [v];
    mov.u32 %r2, %tid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd1, %r2, 4;
    add.s64 %rd2, %rd2, %rd1;
    st.global.u32 [%rd2], %r1;
    ret;
}
)";

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *n; cuGetErrorName(r_, &n); printf("FAILED %s: %s\n", #x, n); return 1; } } while (0)

static const char *name(CUresult r) { const char *n = "?"; cuGetErrorName(r, &n); return n; }

int main() {
    CK(cuInit(0));
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    CUcontext a, b; CK(cuDevicePrimaryCtxRetain(&a, dev));
    CK(cuCtxSetCurrent(a));
    CUmodule m; CK(cuModuleLoadData(&m, PTX));
    CUfunction f; CK(cuModuleGetFunction(&f, m, "fill"));
    CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr buf; CK(cuMemAlloc(&buf, 256 * 4));
    CUevent ev; CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    int driver = 0; cuDriverGetVersion(&driver);
    printf("driver API version %d\n", driver);
#if CUDA_VERSION >= 13000
    CUctxCreateParams cp = {}; CK(cuCtxCreate(&b, &cp, 0, dev));
#else
    CK(cuCtxCreate(&b, 0, dev));
#endif
    struct Case { const char *what; CUcontext cur; } cases[] = {{"A current", a}, {"B current", b}, {"none current", nullptr}};
    unsigned v = 100;
    for (auto &c : cases) {
        v++;
        CK(cuCtxSetCurrent(a));
        CK(cuMemsetD32(buf, 0, 256));
        CK(cuCtxSetCurrent(c.cur));
        void *params[] = {&buf, &v};
        CUresult l = cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, params, nullptr);
        CUresult rec = cuEventRecord(ev, s);
        CUresult wait = cuStreamWaitEvent(s, ev, 0);
        CUresult sync = cuStreamSynchronize(s);
        CK(cuCtxSetCurrent(a));
        CK(cuStreamSynchronize(s));
        std::vector<unsigned> h(256);
        CK(cuMemcpyDtoH(h.data(), buf, 256 * 4));
        int ok = 0; for (unsigned x : h) ok += x == v;
        printf("%-13s launch %s, event record %s, wait %s, stream sync %s; %d of 256 written\n", c.what, name(l), name(rec), name(wait), name(sync), ok);
    }
    for (int round = 0; round < 3; round++) {
        for (auto &c : cases) {
            CK(cuCtxSetCurrent(c.cur));
            void *params[] = {&buf, &v};
            auto t0 = std::chrono::steady_clock::now();
            CUresult l = CUDA_SUCCESS;
            for (int i = 0; i < 20000 && l == CUDA_SUCCESS; i++) {
                l = cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, params, nullptr);
                if (i % 100 == 99) { auto t1 = std::chrono::steady_clock::now(); cuStreamSynchronize(s); t0 += std::chrono::steady_clock::now() - t1; }
            }
            double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / 20000;
            CK(cuCtxSetCurrent(a));
            CK(cuStreamSynchronize(s));
            printf("round %d, %-13s: %s, %.0f ns per launch (batches of 100)\n", round, c.what, name(l), ns);
        }
    }
    return 0;
}
