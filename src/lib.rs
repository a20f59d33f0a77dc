//! sluice: CUDA kernels in Rust, run on many streams at once; the borrow checker orders
//! the streams.
//!
//! This facade re-exports the host library ([`sluice_host`]) at the top, and gives a
//! project's own kernels typed handles: [`include_kernels!`] includes what
//! `sluice_builder::embed` generated in the project's `build.rs` (one `const` [`Kernel`]
//! per `#[kernel]`). See [`sluice_host`]'s docs for the model (scopes, lanes, views,
//! fences) and its safety rules.
//!
//! # Features
//!
//! * `kernels` (off by default): sluice's own example kernels (`gpu-kernels`), built to PTX
//!   by this crate's build script, as `kernels` (feature `kernels`). sluice's tests, examples and benchmarks
//!   turn it on (a dev-dependency of the package on itself); a project that depends on
//!   `sluice` for the host library builds no kernel and writes nothing outside its own
//!   target folder.
//!
//! ```no_run
//! # #[cfg(feature = "kernels")] {
//! use sluice::{kernels, scope, Gpu, LaunchConfig};
//! let gpu = Gpu::new(0)?;
//! let mut host = gpu.pinned_matrix::<f32>(4096, 8)?;
//! scope(&gpu, |s| {
//!     let out = s.alloc_matrix::<f32>(4096, 8)?;
//!     for (i, ((lane, col), dst)) in s.lanes(8)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate() {
//!         lane.enter(|st| {
//!             let mut col = st.bind(col);
//!             st.launch(&kernels::fill_column, LaunchConfig::for_elements(4096, 256), (&mut col, i as f32))?;
//!             st.copy_to_host(&col, dst)
//!         })?;
//!     }
//!     Ok(())
//! })?;
//! assert_eq!(host.column(3).unwrap()[0], 3.0);
//! # }
//! # Ok::<(), sluice::Error>(())
//! ```

// `::sluice::…` paths (those the macros below and the builder's generated files use) name
// this crate inside it too.
extern crate self as sluice;

#[cfg(feature = "kernels")]
pub use gpu_kernels::Particle;
/// The 16-bit floats of the tensor-core kernels (`half`'s types, the same as
/// `sluice_device::half::{bf16, f16}` in kernels), for the host's data.
///
/// ```
/// let x = sluice::bf16::from_f32(1.5);
/// assert_eq!(x.to_f32(), 1.5);
/// ```
pub use half::{bf16, f16};
pub use sluice_host as host;
pub use sluice_host::*;

/// Declares the typed handles of a kernel crate's PTX: what `sluice-builder` writes into
/// `$OUT_DIR/sluice-kernels/<crate>.rs` and [`include_kernels!`] includes. One source of
/// truth: the entries are those of the PTX, each paired with the `#[kernel]` declaration of
/// the same name in `krate` (an entry without one does not compile).
///
/// Pairing a declaration with a PTX text is what no type can check: another module may
/// hold an entry of the same name and parameter sizes that writes through a read-only
/// parameter. So the call is `unsafe`: its body is `unsafe { .. }`, and the caller vouches
/// that `ptx` is `krate` compiled by sluice-builder. [`include_kernels!`] is the safe way:
/// the builder wrote the file it includes from the crate it compiled.
///
/// For each entry `e` (whose `#[kernel]` declaration is the type `d`, `__sluice_kernel_e`)
/// it declares, in the module where it is called:
/// * `e`: a `const` [`Kernel`] typed by the kernel's own signature and kind (the
///   declaration's [`KernelDecl::Signature`] and [`KernelDecl::Kind`]: a `#[kernel(unchecked)]`
///   one launches only through the `unsafe` `launch_unchecked`), in the value namespace;
/// * `pub use krate::d as e`: the declaration itself (a braced struct, type namespace only),
///   so that `e::args(..)` passes the arguments by name;
///
/// and once: `PTX` (the module's text), `ARCH` (its architecture), `ENTRIES` (the entry
/// names) and `check_signatures()`, which checks every handle against the PTX.
///
/// ```
/// // What `sluice_builder::embed` generates for a kernel crate `my_kernels`, written out
/// // here with sluice's own kernel crate and PTX:
/// # #[cfg(feature = "kernels")] {
/// mod my_kernels {
///     sluice::kernel_handles! {
///         // SAFETY: the build script compiled `gpu_kernels` into this file.
///         unsafe {
///             krate: gpu_kernels,
///             ptx: concat!(env!("OUT_DIR"), "/sluice-kernels/gpu_kernels.sm_90.ptx"),
///             arch: "sm_90",
///             entries: [saxpy = __sluice_kernel_saxpy, fill_column = __sluice_kernel_fill_column],
///         }
///     }
/// }
/// assert_eq!(my_kernels::saxpy.name(), "saxpy");
/// assert_eq!(my_kernels::ENTRIES, ["saxpy", "fill_column"]);
/// assert_eq!(my_kernels::check_signatures(), Ok(()));
/// # }
/// ```
///
/// Without `unsafe` it does not compile:
///
/// ```compile_fail
/// # #[cfg(feature = "kernels")] {
/// mod my_kernels {
///     sluice::kernel_handles! {
///         krate: gpu_kernels,
///         ptx: concat!(env!("OUT_DIR"), "/sluice-kernels/gpu_kernels.sm_90.ptx"),
///         arch: "sm_90",
///         entries: [saxpy = __sluice_kernel_saxpy],
///     }
/// }
/// # }
/// # #[cfg(not(feature = "kernels"))] compile_error!("needs the kernels");
/// ```
#[macro_export]
macro_rules! kernel_handles {
    (
        // SAFETY: not a block: the `unsafe` the caller must write, vouching for the PTX.
        unsafe {
            krate: $krate:ident,
            ptx: $ptx:expr,
            arch: $arch:literal,
            entries: [$($e:ident = $d:ident),* $(,)?] $(,)?
        }
    ) => {
        $crate::kernel_handles! {
            // SAFETY: the caller's, forwarded.
            unsafe {
                krate: $krate,
                ptx: $ptx,
                arch: $arch,
                entries: [$($e = $d),*],
                specific: [],
            }
        }
    };
    (
        // SAFETY: not a block: the `unsafe` the caller must write, vouching for both PTX texts.
        unsafe {
            krate: $krate:ident,
            ptx: $ptx:expr,
            arch: $arch:literal,
            entries: [$($e:ident = $d:ident),* $(,)?],
            specific: [$(
                $sarch:literal ($smaj:literal, $smin:literal): $sptx:expr,
                only: [$($only:ident),* $(,)?] $(,)?
            )?] $(,)?
        }
    ) => {
        /// The PTX module (text) of the kernel crate, built for [`ARCH`] and embedded.
        pub const PTX: &str = include_str!($ptx);
        /// The kernel crate built for an architecture-specific target too (`sm_90a`), if its
        /// build script asked for it: launched on devices of that architecture instead of
        /// [`PTX`].
        pub const SPECIFIC: ::core::option::Option<$crate::SpecificPtx> = {
            #[allow(unused_mut, unused_assignments)]
            let mut s = ::core::option::Option::None;
            $(
                s = ::core::option::Option::Some($crate::SpecificPtx {
                    arch: $sarch,
                    capability: ($smaj, $smin),
                    ptx: include_str!($sptx),
                    only: false,
                });
            )?
            s
        };
        /// The kernels only [`SPECIFIC`] has (they use instructions only its architecture has).
        pub const SPECIFIC_ONLY: &[&str] = &[$($(stringify!($only)),*)?];
        /// The architecture the PTX was built for (`SLUICE_ARCH` at build time, default `sm_90`).
        pub const ARCH: &str = $arch;
        /// The kernel entries in the PTX, in file order.
        pub const ENTRIES: &[&str] = &[$(stringify!($e)),*];
        $(
            #[doc = concat!(
                "Typed handle of the `#[kernel]` `", stringify!($e), "` of `",
                stringify!($krate), "`, in [`PTX`]. Launch it with `Stream::launch`; `",
                stringify!($e), "::args(..)` passes its arguments by name."
            )]
            #[allow(non_upper_case_globals)]
            pub const $e: $crate::Kernel<
                <$krate::$d as $crate::KernelDecl>::Signature,
                <$krate::$d as $crate::KernelDecl>::Kind,
            > =
                // SAFETY: the caller of `kernel_handles!` wrote `unsafe`, vouching that `PTX` is
                // the compilation of `$krate` itself by sluice-builder; `$krate::$d` is the
                // `#[kernel]` declaration of the entry of that name in the same crate, so the
                // entry is the kernel the declaration describes.
                unsafe { $crate::__kernel_of::<$krate::$d>(PTX, SPECIFIC, SPECIFIC_ONLY) };
            #[doc(inline)]
            #[allow(non_camel_case_types)]
            pub use $krate::$d as $e;
        )*

        /// Checks every handle against [`PTX`] (entry present, parameter sizes as the
        /// declaration lowers them, element types as the device recorded them), as loading
        /// the module does, without a GPU.
        ///
        /// # Errors
        /// The first handle's error: `Error::KernelNotFound`, `Error::KernelParamsUnreadable`,
        /// `Error::KernelSignature` or `Error::KernelParamType`.
        pub fn check_signatures() -> ::core::result::Result<(), $crate::Error> {
            $($e.check_signature()?;)*
            ::core::result::Result::Ok(())
        }
    };
    ($($rest:tt)*) => {
        ::core::compile_error!(
            "`kernel_handles!` pairs a kernel crate with a PTX text, which only its caller can vouch for: \
             write `sluice::kernel_handles! { unsafe \
             { krate: .., ptx: .., arch: .., entries: [e = __sluice_kernel_e, ..] } }` \
             with a `// SAFETY:` comment saying where the PTX comes from, or use `sluice::include_kernels!`, whose file \
             the builder generates from the crate it compiled"
        );
    };
}

/// A handle of [`kernel_handles!`]: [`Kernel::of`], or with the specific PTX where there is
/// one (the entry marked `only` if `only` names it). Not an API.
///
/// # Safety
/// As [`Kernel::of`], for every text.
#[doc(hidden)]
pub const unsafe fn __kernel_of<D: KernelDecl>(
    ptx: &'static str,
    specific: Option<SpecificPtx>,
    only: &[&str],
) -> Kernel<D::Signature, D::Kind> {
    match specific {
        // SAFETY: forwarded (the caller's contract).
        None => unsafe { Kernel::of::<D>(ptx) },
        Some(sp) => {
            let sp = SpecificPtx { only: __contains(only, D::NAME), ..sp };
            // SAFETY: forwarded.
            unsafe { Kernel::of_with_specific::<D>(ptx, sp) }
        }
    }
}

/// Whether `names` holds `name` (in a `const`). Not an API.
#[doc(hidden)]
pub const fn __contains(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        let (a, b) = (names[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// Includes the typed kernel handles that `sluice_builder::embed` generated in this
/// crate's build script for the kernel crate `$krate` (its library name, `-` written
/// `_`): see [`kernel_handles!`] for what it declares.
///
/// ```ignore
/// // build.rs: fn main() { sluice_builder::embed("kernels"); }
/// mod kernels {
///     sluice::include_kernels!(my_kernels);
/// }
/// st.launch(&kernels::saxpy, cfg, kernels::saxpy::args(&mut y, &x, 2.0))?;
/// ```
///
/// It fails to compile with "couldn't read `…/sluice-kernels/my_kernels.rs`" when the
/// build script did not embed that crate (another path, another name), and says so when the
/// crate has no build script at all.
#[macro_export]
macro_rules! include_kernels {
    ($krate:ident) => {
        include!(concat!(
            env!(
                "OUT_DIR",
                "sluice::include_kernels! needs a build script that builds the kernels: add a build.rs with \
                 `fn main() { sluice_builder::embed(\"kernels\"); }` (the kernel crate's folder) and \
                 `sluice-builder` under [build-dependencies], as `cargo sluice new` writes them"
            ),
            "/sluice-kernels/",
            stringify!($krate),
            ".rs"
        ));
    };
}

/// The kernels of `gpu-kernels` (sluice's own examples; feature `kernels`), compiled to
/// PTX at build time and embedded, with a typed handle per kernel.
///
/// Each handle is a plain `const` [`Kernel`]: the entry's name and its parameter tuple,
/// both emitted by `#[kernel]` from the kernel's own Rust signature (and checked against
/// the PTX again when the module loads). Beside each handle (a `const`, in the value
/// namespace) the kernel's declaration type of the same name offers `args`, the arguments
/// by name: `st.launch(&kernels::saxpy, cfg, kernels::saxpy::args(&mut y, &x, 2.0))`.
///
/// ```
/// use sluice::kernels;
/// assert_eq!(kernels::potential.name(), "potential");
/// assert!(kernels::ENTRIES.contains(&"saxpy"));
/// ```
///
/// ```no_run
/// # use sluice::{kernels, LaunchConfig};
/// # fn demo(gpu: &sluice::Gpu, x: &[f32]) -> sluice::Result<()> {
/// sluice::scope(gpu, |s| {
///     let xs = s.upload(x)?;
///     let y = s.alloc_buffer::<f32>(x.len())?;
///     s.lane()?.enter(|st| {
///         let x = st.await_fence(&xs)?;
///         let mut y = st.bind(y.as_columns_mut());
///         st.zero(&mut y)?;
///         let cfg = LaunchConfig::for_elements(y.len(), 256);
///         st.launch(&kernels::saxpy, cfg, (&mut y, &x, 2.0))?;
///         // The same launch with the arguments by name (errors name `saxpy`'s parameters):
///         st.launch(&kernels::saxpy, cfg, kernels::saxpy::args(&mut y, &x, 2.0))
///     })
/// })
/// # }
/// ```
#[cfg(feature = "kernels")]
pub mod kernels {
    ::sluice::include_kernels!(gpu_kernels);
}

/// `docs/compile-errors.md`, every compile error of sluice's rules next to its fix, as
/// doctests: `cargo test --doc -p sluice` checks that each failing example fails with the
/// error code shown and that each fix compiles (and runs, on the CPU backend without a GPU).
#[cfg(all(doctest, feature = "kernels"))]
#[doc = include_str!("../docs/compile-errors.md")]
pub struct CompileErrorsDoc;

#[cfg(all(test, feature = "kernels"))]
mod tests {
    use super::kernels;

    /// Every handle, generated from the PTX's entries, matches the PTX (what loading checks
    /// again), and the PTX has the kernels the tests and examples launch.
    #[test]
    fn kernel_handles_match_the_ptx() {
        assert_eq!(kernels::check_signatures(), Ok(()));
        for name in [
            "fill_column",
            "saxpy",
            "vecadd",
            "potential",
            "potential_tiled",
            "potential_tiled_rsqrt",
            "sum_reduce",
            "transpose",
            "histogram",
        ] {
            assert!(kernels::ENTRIES.contains(&name), "{name} not in {:?}", kernels::ENTRIES);
        }
        assert_eq!(kernels::ARCH, std::env::var("SLUICE_ARCH").unwrap_or_else(|_| "sm_90".into()));
    }
}
