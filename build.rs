//! With the `kernels` feature (sluice's own tests, examples and benchmarks), compiles
//! `gpu-kernels` to PTX and embeds it as `sluice::kernels` (see `sluice_builder::embed`);
//! without it (the host library alone, as a dependency), nothing.

fn main() {
    #[cfg(feature = "kernels")]
    sluice_builder::embed("gpu-kernels");
}
