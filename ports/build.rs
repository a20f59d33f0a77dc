//! Compiles the kernel crate in ./kernels to PTX (for `SLUICE_ARCH`, default sm_90) and
//! writes its typed handles, which `sluice::include_kernels!` includes in src/main.rs.
//! (Rust-CUDA: `CudaBuilder::new("kernels").copy_to(..).build()`.)

fn main() {
    sluice_builder::embed("kernels");
}
