// `kernel_handles!` pairs a kernel crate with a PTX text only its caller can vouch for (a
// hand-written entry of the same name and sizes could write through a read-only view):
// without `unsafe` it does not compile. `include_kernels!` (the builder's generated file)
// is the safe way.
mod handles {
    sluice::kernel_handles! {
        krate: gpu_kernels,
        ptx: "../../../target/any.ptx",
        arch: "sm_90",
        entries: [fill_column = __sluice_kernel_fill_column],
    }
}

fn main() {}
