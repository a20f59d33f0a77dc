//! The exact versions of the kernel toolchain that setup installs, in one place.
//!
//! Setup never installs "the newest": a new `rustc-web`, `llvm-N` or `nvidia-cuda-nvcc`
//! would change every kernel build, every `ptxas` report and every CI run without a
//! commit saying so. It installs what this file names, the Python wheels by hash
//! (`pip install --require-hashes`); `cargo sluice doctor` (`cargo xtask setup` in sluice's
//! own workspace) prints these pins beside the versions it finds.
//!
//! **Moving to a newer version is one edit of this file**, then `cargo test -p
//! sluice-builder` (whose tests check that the pins agree with each other) and CI:
//!
//! * the kernel compiler: [`KERNEL_RUSTC`] (the rustc release, the same on both routes:
//!   Debian's `rustc-web` and rustup's `rustup toolchain install <release>`),
//!   [`DEBIAN_RUSTC`] (`apt-cache policy rustc-web` lists the versions apt offers),
//!   [`KERNEL_LLVM`] (`rustc -vV` prints it) and [`DEBIAN_LLVM`] (`apt-cache policy
//!   llvm-N`);
//! * ptxas and libdevice: [`NVCC_REQUIREMENTS`], a pip requirements file whose hashes come
//!   from PyPI; for a new version `X`, with any python3:
//!
//! ```text
//! for arch in x86_64 aarch64; do
//!   python3 -m pip install --dry-run --ignore-installed --only-binary=:all: --target /tmp/t \
//!     --platform manylinux2014_$arch --platform manylinux_2_28_$arch --python-version 3.11 \
//!     --report /tmp/nvcc-$arch.json nvidia-cuda-nvcc==X
//! done   # each report lists every wheel pip would install, with its sha256
//! ```
//!
//! The Debian route's pins are exact package versions: when Debian's security archive
//! replaces one, setup on a fresh machine stops with a message naming the version apt now
//! offers and this file, and moving the pin is that deliberate edit.
//!
//! ```
//! use sluice_builder::pins;
//! assert_eq!(pins::llvm_major(), 22);
//! assert!(pins::NVCC_REQUIREMENTS.contains(&format!("nvidia-cuda-nvcc=={}", pins::nvcc_version())));
//! ```

/// The kernel rustc's release (`rustc -vV`'s `release:`), on both install routes: Debian's
/// `rustc-web` and rustup's toolchain of that name (a stable release, used with
/// `RUSTC_BOOTSTRAP=1` as the builder does for every kernel build).
pub const KERNEL_RUSTC: &str = "1.96.0";

/// The LLVM that [`KERNEL_RUSTC`] was built with (`rustc -vV`'s `LLVM version:` on the
/// Debian route). `llvm-link`, `opt` and `llc` must be of its major version, since
/// `llvm-link` reads rustc's bitcode.
pub const KERNEL_LLVM: &str = "22.1.8";

/// The Debian package version of `rustc-web` and `rust-web-src` (one source package).
pub const DEBIAN_RUSTC: &str = "1.96.0+dfsg1-1~deb12u2";

/// The Debian package version of `llvm-N` (N: the major of [`KERNEL_LLVM`]).
pub const DEBIAN_LLVM: &str = "1:22.1.8-1~deb12u1";

/// The pip requirements of ptxas and libdevice: `nvidia-cuda-nvcc` and every wheel it
/// pulls in, each at one version and with the sha256 of each platform's wheel (Linux
/// x86_64 and aarch64), installed with `--require-hashes --only-binary=:all:`.
pub const NVCC_REQUIREMENTS: &str = "\
nvidia-cuda-nvcc==13.5.37 \\
    --hash=sha256:f5c4f7ead5d964fb4af42bbf1e6d3ec3c1e6e9d83b53749f691d387e7fcaa3a7 \\
    --hash=sha256:588eda18eb5076ae859fe272844b526459228af22df0b117f54eec3aa82bc9c8
nvidia-cuda-crt==13.5.37 \\
    --hash=sha256:e898b7f73d3035fa89915a3f7bf3b54a73e90249746111aed295822c4729bb29 \\
    --hash=sha256:9ed2c565fdf3244fa6719769a80a466b85bfd4b1467ea339353bc91c971d09e0
nvidia-cuda-runtime==13.5.37 \\
    --hash=sha256:df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d \\
    --hash=sha256:de2dc5a7367974228b0a69588a9acc9340d3768bef1bf38bf0801eb08497cd2d
nvidia-nvvm==13.5.37 \\
    --hash=sha256:c41bfa362e407405163f103c2229f0765f8cc2ed7d148b754dc77f228bf7e070 \\
    --hash=sha256:b659bd3115b7ac7ec8931e67d0e2c0dd09cd35b08a6a7372df6f8f22c67da80a
";

/// The major version of [`KERNEL_LLVM`] (`22`): the `llvm-N` package and folder.
///
/// ```
/// assert_eq!(sluice_builder::pins::llvm_major(), 22);
/// ```
pub fn llvm_major() -> u32 {
    major_of(KERNEL_LLVM)
}

/// The pinned `nvidia-cuda-nvcc` version, read from [`NVCC_REQUIREMENTS`] (so that it is
/// written once). It is also ptxas's own version (`ptxas --version`: `V13.5.37`).
///
/// ```
/// assert_eq!(sluice_builder::pins::nvcc_version(), "13.5.37");
/// ```
pub fn nvcc_version() -> &'static str {
    requirement_version(NVCC_REQUIREMENTS, "nvidia-cuda-nvcc").unwrap_or("")
}

/// The `==` version of `package` in a requirements text.
fn requirement_version<'a>(requirements: &'a str, package: &str) -> Option<&'a str> {
    requirements.lines().find_map(|l| {
        let rest = l.trim().strip_prefix(package)?.strip_prefix("==")?;
        rest.split_whitespace().next()
    })
}

fn major_of(version: &str) -> u32 {
    version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0)
}

/// The pins as `doctor` prints them, one line each.
///
/// ```
/// let text = sluice_builder::pins::summary();
/// assert!(text.contains("rustc-web=1.96.0"));
/// assert!(text.contains("nvidia-cuda-nvcc==13.5.37"));
/// ```
pub fn summary() -> String {
    format!(
        "  kernel rustc       {KERNEL_RUSTC} (Debian: rustc-web={DEBIAN_RUSTC} rust-web-src={DEBIAN_RUSTC}; \
         rustup: toolchain {KERNEL_RUSTC})\n  \
         LLVM               {KERNEL_LLVM} (Debian: llvm-{m}={DEBIAN_LLVM}, and llvm-{m}-dev={DEBIAN_LLVM} with g++ \
         for the range-check pass; rustup: component llvm-tools)\n  \
         ptxas, libdevice   nvidia-cuda-nvcc=={nvcc} (pip --require-hashes, {hashes} wheel hashes)",
        m = llvm_major(),
        nvcc = nvcc_version(),
        hashes = NVCC_REQUIREMENTS.matches("--hash=sha256:").count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pins_agree_with_each_other() {
        // rustc-web's version starts with the rustc release it packages.
        assert!(DEBIAN_RUSTC.starts_with(&format!("{KERNEL_RUSTC}+")), "{DEBIAN_RUSTC} vs {KERNEL_RUSTC}");
        // llvm-N's version (after its epoch) is the LLVM version rustc reports.
        let llvm = DEBIAN_LLVM.split_once(':').map_or(DEBIAN_LLVM, |(_, v)| v);
        assert!(llvm.starts_with(&format!("{KERNEL_LLVM}-")), "{DEBIAN_LLVM} vs {KERNEL_LLVM}");
        assert!(llvm_major() >= 17);
    }

    #[test]
    fn every_requirement_is_exact_and_hashed() {
        let text = NVCC_REQUIREMENTS.replace("\\\n", " ");
        let mut packages = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let spec = line.split(" --hash").next().unwrap_or(line);
            assert!(spec.contains("=="), "not pinned to one version: {line}");
            assert!(!spec.contains(['>', '<', '~', '*', ',']), "a range: {line}");
            let n = line.matches("--hash=sha256:").count();
            assert!(n >= 2, "every wheel needs its hash for x86_64 and aarch64: {line}");
            for h in line.split("sha256:").skip(1) {
                let h = h.split_whitespace().next().unwrap_or("");
                assert!(h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()), "not a sha256: {h}");
            }
            packages += 1;
        }
        assert_eq!(packages, 4, "nvidia-cuda-nvcc and the three wheels it pulls in");
        assert_eq!(nvcc_version(), "13.5.37");
        for dep in ["nvidia-cuda-crt", "nvidia-cuda-runtime", "nvidia-nvvm"] {
            assert_eq!(requirement_version(NVCC_REQUIREMENTS, dep), Some(nvcc_version()), "{dep}");
        }
    }
}
