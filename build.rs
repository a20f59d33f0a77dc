//! With the `kernels` feature (sluice's own tests, examples and benchmarks), compiles
//! `gpu-kernels` to PTX and embeds it as `sluice::kernels` (see `sluice_builder::embed`),
//! for `SLUICE_ARCH` (default `sm_90`) and, when that is `sm_90`, also for `sm_90a`: the
//! Hopper kernels (the warpgroup MMA gemms) exist only there, and the host launches that
//! PTX on Hopper GPUs; without the feature (the host library alone, as a dependency),
//! nothing.

fn main() {
    #[cfg(feature = "kernels")]
    {
        use sluice_builder::{Arch, Builder};
        println!("cargo:rerun-if-env-changed=SLUICE_ARCH");
        let arch = match std::env::var("SLUICE_ARCH").ok().filter(|a| !a.is_empty()) {
            Some(a) => a.parse().unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1)
            }),
            None => Arch::default(),
        };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gpu-kernels");
        let mut b = Builder::new(dir).arch(arch);
        if arch == Arch::SM_90 {
            b = b.specific(Arch::SM_90A);
        }
        if let Err(e) = b.embed() {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
