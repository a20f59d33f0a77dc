//! With the `kernels` feature (sluice's own tests, examples and benchmarks), compiles
//! `gpu-kernels` to PTX and embeds it as `sluice::kernels` (see `sluice_builder::embed`),
//! for `SLUICE_ARCH` (default `sm_90`) and, for sm_90, also for `sm_90a`: the Hopper
//! kernels (the warpgroup MMA gemms) exist only there, and the host launches that PTX on
//! Hopper GPUs (`sluice_builder::embed_specific`); without the feature (the host library
//! alone, as a dependency), nothing.

fn main() {
    #[cfg(feature = "kernels")]
    sluice_builder::embed_specific("gpu-kernels", sluice_builder::Arch::SM_90A);
}
