//! sluice's kernels, written in `#![no_std]` Rust.
//!
//! # What builds where
//!
//! * For `nvptx64-nvidia-cuda` (through `sluice-builder`) each `#[kernel]`
//!   function below becomes an `extern "ptx-kernel"` PTX `.entry`; the root
//!   `build.rs` embeds that PTX into every host binary as `sluice::kernels::PTX`.
//! * For the host the same crate builds (with `std`) without the kernel bodies:
//!   `#[kernel]` turns each kernel into a typed descriptor of the same name
//!   (`sluice_host::KernelDecl`, the facade's `sluice::kernels::<name>`), and
//!   the crate provides the parameter types the host and device share ([`Particle`]), the launch
//!   constants ([`POTENTIAL_TILE`], [`TRANSPOSE_TILE`], ...), the binning rule the
//!   histogram kernel and its reference share ([`histogram_bin`]), and the CPU
//!   references the tests check the GPU against (`reference`, f64 or exact).
//!
//! # Kernels
//!
//! Signatures are the kernels' own: `&[T]` is read-only, `DeviceSliceMut<T>` (written
//! `Mut<T>` below for short) is the per-thread mutable slice; on the wire each slice is
//! two parameters (see ABI below). "any grid" kernels use grid-stride loops and are
//! correct for every grid size; the recommended sizes are those of the
//! benchmarks (H200, 132 SMs).
//!
//! | entry | what it does | launch |
//! | --- | --- | --- |
//! | `fill_column(out: Mut<f32>, value: f32)` | `out[i] = value` | 1-D, any grid; block 256 |
//! | `saxpy(y: Mut<f32>, x: &[f32], a: f32)` | `y[i] = a * x[i] + y[i]` for `i < min(len)` | 1-D, any grid; block 256, grid `ceil(n / 256)` |
//! | `potential(out: Mut<f32>, targets: &[Particle], sources: &[Particle], eps2: f32)` | `out[i] = Σ_k q_k / sqrt(\|t_i − s_k\|² + eps2)`, every thread reads every source from global memory | 1-D, one thread per row: block 256, grid `ceil(rows / 256)` |
//! | `potential_tiled(` same `)` | the same sum; each block stages [`POTENTIAL_TILE`] (256) sources at a time in shared memory (4 KiB) | 1-D, one thread per row: block 256 (any size up to 1024 works), grid `ceil(rows / block)` |
//! | `sum_reduce(out: Mut<f32>, x: &[f32])` | `out[0] += Σ x` in one launch: grid-stride partial sums (4 loads in flight per thread), warp shuffles, one shared-memory step, **one `red.global.add.f32` per block**. `out[0]` must be zeroed first; the order of the additions varies from run to run | 1-D; block 256 (a multiple of 32, up to 1024; else it traps), grid `min(ceil(n / 1024), 1056)` (8 blocks per SM) |
//! | `transpose(out: Mut<f32>, input: &[f32], rows: u32, cols: u32)` | `out[c * rows + r] = input[r * cols + c]`: `input` is `rows × cols` row-major, `out` is `cols × rows`; 32×32 tiles through shared memory padded to 33 columns (no bank conflicts). Does nothing if a slice is shorter than `rows * cols` | block **(32, 8)** (else it traps), grid `(ceil(cols / 32), ceil(rows / 32))` |
//! | `histogram(bins: Mut<u32>, x: &[f32], lo: f32, hi: f32)` | `bins[histogram_bin(v)] += 1` for each `v` in `[lo, hi)` (others ignored), `bins.len()` bins of equal width; per-block sub-histograms in shared memory (`red.shared.add.u32`), then one global atomic per non-empty bin per block. Adds to `bins` (zero it first). Up to [`HISTOGRAM_SHARED_BINS`] (4096) bins in shared memory; more bins fall back to global atomics | 1-D; block 256, grid `min(ceil(n / 256), 264)` (2 blocks per SM) |
//! | `device_selftest(out: Mut<u32>)` | exercises the device std (shuffles, votes, match, `redux`, predicate barriers, shared/global atomics of every kind, dynamic shared memory, libdevice math, `dprintln!`) and records the results; `reference::check_selftest` (host) says which operation is wrong, if any | grid 1, block [`SELFTEST_THREADS`] (64), dynamic shared memory [`SELFTEST_DYNAMIC_SHARED`] (256 B), `out.len() >= SELFTEST_LEN` |
//!
//! # ABI
//!
//! Every slice parameter is passed as two parameters: the device address
//! (`u64`) and the element count (`u64`); scalars and `Pod` structs are passed
//! by value. The host library lowers views the same way.
//!
//! # Writing style
//!
//! The kernels use the device std (`sluice_device`) the way a user would:
//! every kernel is a `#[kernel]` function, read-only slices are `&[T]`,
//! one-thread-one-element outputs go through
//! [`DeviceSliceMut`](sluice_device::slice::DeviceSliceMut), and every raw
//! access left (a transpose's scattered writes, unchecked loads in hot loops)
//! is an `unsafe` block whose `// SAFETY:` comment names the invariant and who
//! upholds it. `benches/cuda/` holds the same kernels in CUDA C++ for the
//! speed comparison.

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

use bytemuck::{Pod, Zeroable};

/// A point charge: position and charge, 16 bytes, the same layout on host and device.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct Particle {
    /// x position.
    pub x: f32,
    /// y position.
    pub y: f32,
    /// z position.
    pub z: f32,
    /// Charge (for targets: unused).
    pub q: f32,
}

/// Sources staged in shared memory per step by `potential_tiled` (4 KiB per block).
pub const POTENTIAL_TILE: usize = 256;

/// Side of the square tiles of `transpose`; blocks are `(TRANSPOSE_TILE, TRANSPOSE_BLOCK_ROWS)`.
pub const TRANSPOSE_TILE: u32 = 32;

/// Rows of a tile each thread of `transpose` moves (`TRANSPOSE_TILE / TRANSPOSE_BLOCK_ROWS` = 4 each).
pub const TRANSPOSE_BLOCK_ROWS: u32 = 8;

/// Bins `histogram` keeps per block in shared memory (16 KiB); above it, it
/// counts straight into global memory.
pub const HISTOGRAM_SHARED_BINS: usize = 4096;

/// Threads of the one block `device_selftest` runs as (two warps).
pub const SELFTEST_THREADS: u32 = 64;
/// Result rows of `device_selftest`: `out[row * 64 + tid]`.
pub const SELFTEST_ROWS: usize = 32;
/// Length of `device_selftest`'s output: the rows, then 8 words of global-atomic scratch.
pub const SELFTEST_LEN: usize = SELFTEST_ROWS * SELFTEST_THREADS as usize + 8;
/// Dynamic shared memory `device_selftest` must be launched with (bytes).
pub const SELFTEST_DYNAMIC_SHARED: usize = 4 * SELFTEST_THREADS as usize;

/// The bin of `v` among `n_bins` equal bins over `[lo, hi)`, or `None` if `v`
/// is outside (or NaN, or `n_bins == 0`).
///
/// The histogram kernel and `reference::histogram` both call this function,
/// so the GPU and the CPU bin with the same `f32` operations and the
/// comparison can be exact: `t = (v - lo) * (n_bins / (hi - lo))`, truncated,
/// clamped to `n_bins - 1` (rounding may push a `v` just below `hi` to `n_bins`).
///
/// ```
/// use gpu_kernels::histogram_bin;
/// assert_eq!(histogram_bin(0.5, 0.0, 1.0, 4), Some(2));
/// assert_eq!(histogram_bin(1.0, 0.0, 1.0, 4), None);
/// assert_eq!(histogram_bin(f32::NAN, 0.0, 1.0, 4), None);
/// ```
#[inline(always)]
pub fn histogram_bin(v: f32, lo: f32, hi: f32, n_bins: u32) -> Option<u32> {
    // `!(a && b)` rather than `v < lo || v >= hi`: NaN fails both tests and is dropped.
    if n_bins == 0 || !(v >= lo && v < hi) {
        return None;
    }
    let scale = n_bins as f32 / (hi - lo);
    let b = f32_to_u32_saturating((v - lo) * scale);
    Some(if b < n_bins { b } else { n_bins - 1 })
}

/// `x as u32`: truncation, saturating at 0 and `u32::MAX`, NaN to 0.
///
/// On the device this is one `cvt.rzi.u32.f32`, which has exactly these
/// semantics; LLVM lowers `as u32` to that instruction *plus* explicit
/// clamping selects, four extra instructions in the histogram's inner loop.
#[inline(always)]
fn f32_to_u32_saturating(x: f32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // SAFETY: register-only conversion; no memory, no preconditions.
        unsafe {
            core::arch::asm!("cvt.rzi.u32.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x,
                             options(pure, nomem, nostack, preserves_flags))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x as u32
    }
}

/// CPU references of the kernels, for tests (host only): f64 sums for the
/// floating-point kernels, exact results for the others.
#[cfg(not(target_arch = "nvptx64"))]
pub mod reference {
    use super::{histogram_bin, Particle};

    /// The potential at `t` of all `sources`, softened by `eps2`, in f64.
    pub fn potential_at(t: &Particle, sources: &[Particle], eps2: f32) -> f64 {
        sources
            .iter()
            .map(|s| {
                let (dx, dy, dz) = (t.x as f64 - s.x as f64, t.y as f64 - s.y as f64, t.z as f64 - s.z as f64);
                s.q as f64 / (dx * dx + dy * dy + dz * dz + eps2 as f64).sqrt()
            })
            .sum()
    }

    /// `potential` and `potential_tiled`: one f64 value per target.
    pub fn potential(targets: &[Particle], sources: &[Particle], eps2: f32) -> Vec<f64> {
        targets.iter().map(|t| potential_at(t, sources, eps2)).collect()
    }

    /// `saxpy`: `a * x[i] + y[i]` in f64, for `i < min(len)`.
    pub fn saxpy(y: &[f32], x: &[f32], a: f32) -> Vec<f64> {
        y.iter().zip(x).map(|(&y, &x)| a as f64 * x as f64 + y as f64).collect()
    }

    /// `sum_reduce`: the f64 sum of `x`, and the sum of `|x|`, which bounds the
    /// error of any f32 summation order: `|gpu - sum| <= n_terms * f32::EPSILON * abs_sum`
    /// is a safe tolerance (a pairwise/tree order is far better in practice).
    pub fn sum(x: &[f32]) -> (f64, f64) {
        x.iter().fold((0.0, 0.0), |(s, a), &v| (s + v as f64, a + (v as f64).abs()))
    }

    /// `transpose`: `rows × cols` row-major in, `cols × rows` row-major out (exact).
    pub fn transpose(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        assert!(input.len() >= rows * cols, "input shorter than rows * cols");
        let mut out = vec![0.0; rows * cols];
        for r in 0..rows {
            for c in 0..cols {
                out[c * rows + r] = input[r * cols + c];
            }
        }
        out
    }

    /// `histogram`: counts of [`histogram_bin`] over `x` (exact).
    pub fn histogram(x: &[f32], lo: f32, hi: f32, n_bins: usize) -> Vec<u32> {
        let mut bins = vec![0u32; n_bins];
        for &v in x {
            if let Some(b) = histogram_bin(v, lo, hi, n_bins as u32) {
                bins[b as usize] += 1;
            }
        }
        bins
    }

    /// Checks the output of `device_selftest` (launched as grid 1, block
    /// [`SELFTEST_THREADS`](super::SELFTEST_THREADS), dynamic shared memory
    /// [`SELFTEST_DYNAMIC_SHARED`](super::SELFTEST_DYNAMIC_SHARED)) against what
    /// CUDA's semantics prescribe; the error lists every wrong value, with the
    /// operation it tests.
    pub fn check_selftest(out: &[u32]) -> Result<(), String> {
        use super::{SELFTEST_LEN, SELFTEST_ROWS, SELFTEST_THREADS};
        const NAMES: [&str; SELFTEST_ROWS] = [
            "lane_id", "shfl_idx", "shfl_up", "shfl_down", "shfl_xor u64", "shfl_xor u64 halves",
            "ballot", "any/all", "match_any", "reduce_add_u32 (redux)", "sum_f32", "shfl_down f64",
            "active_mask", "sync_threads_count", "sync_threads_and", "sync_threads_or",
            "shared fetch_add", "shared fetch_max", "shared fetch_min", "shared CAS loop", "shared fetch_or",
            "dynamic_shared", "exp f32", "sin f32", "erf f32", "ln f32", "powf f32", "sqrt f32",
            "cos f64", "exp_fast f32", "powi/floor", "sqrt f64",
        ];
        if out.len() < SELFTEST_LEN {
            return Err(format!("output has {} words, expected {SELFTEST_LEN}", out.len()));
        }
        let n = SELFTEST_THREADS as usize;
        let mut errors = Vec::new();
        for tid in 0..n as u32 {
            for (row, want) in selftest_expected(tid).into_iter().enumerate() {
                let got = out[row * n + tid as usize];
                match want {
                    SelftestValue::Exact(want) if got != want => {
                        errors.push(format!("{} (row {row}), thread {tid}: got {got:#x}, expected {want:#x}", NAMES[row]))
                    }
                    SelftestValue::Near(want, tol) => {
                        let err = ulps(f32::from_bits(got), want);
                        if err.is_nan() || err > tol {
                            errors.push(format!(
                                "{} (row {row}), thread {tid}: got {}, expected {want} ({err:.1} ulp > {tol})",
                                NAMES[row],
                                f32::from_bits(got)
                            ));
                        }
                    }
                    SelftestValue::Exact(_) => {}
                }
            }
        }
        let scratch = &out[SELFTEST_ROWS * n..SELFTEST_LEN];
        let want = [64, 63, 0, 32.0f32.to_bits(), 0, 128, 7, (-64i32) as u32];
        let what = ["global add u32", "fetch_max", "fetch_min", "fetch_add f32", "fetch_xor", "CAS loop", "swap", "fetch_add i32"];
        for k in 0..8 {
            if scratch[k] != want[k] {
                errors.push(format!("global {}: got {:#x}, expected {:#x}", what[k], scratch[k], want[k]));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }

    /// What one `device_selftest` result must be.
    #[derive(Debug, Clone, Copy)]
    enum SelftestValue {
        /// These exact bits.
        Exact(u32),
        /// An f32 within this many ulps of the f64 value.
        Near(f64, f64),
    }

    /// The distance from `got` to `want` in f32 ulps at `want`.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = (want as f32).abs();
        let spacing = (f32::from_bits(w.to_bits() + 1) - w) as f64;
        (got as f64 - want).abs() / spacing
    }

    /// The expected row values of thread `tid` (see `selftest.rs` for what each row runs).
    fn selftest_expected(tid: u32) -> [SelftestValue; super::SELFTEST_ROWS] {
        use SelftestValue::{Exact, Near};
        let (lane, w) = (tid % 32, tid / 32);
        let x = tid as f32 / 8.0 + 0.25;
        let xd = x as f64;
        let src_down2 = if lane < 30 { tid + 2 } else { tid };
        [
            Exact(lane),
            Exact((w * 32 + 5) * 3),
            Exact(if lane == 0 { tid } else { tid - 1 }),
            Exact(if lane == 31 { tid } else { tid + 1 }),
            Exact(tid ^ 1),
            Exact(2 * (tid ^ 2)),
            Exact(0x4924_9249),
            Exact(1),
            Exact(0xf << (4 * (lane / 4))),
            Exact(496),
            Exact(496),
            Exact((-(src_down2 as i32)) as u32),
            Exact(u32::MAX),
            Exact(22),
            Exact(1),
            Exact(1),
            Exact(64_001),
            Exact(63),
            Exact(0),
            Exact(64),
            Exact(u32::MAX),
            Exact(64_001),
            Near(xd.exp(), 4.0),
            Near(xd.sin(), 4.0),
            Near(erf(tid as f64 / 32.0), 4.0),
            Near(xd.ln(), 4.0),
            Near(xd.powf(1.5), 4.0),
            Near(xd.sqrt(), 1.0),
            Near(xd.cos(), 1.0),
            Near(xd.exp(), 64.0),
            Exact((1u32 << (tid % 20)) + x.floor() as u32),
            Near(xd.sqrt(), 1.0),
        ]
    }

    /// erf by its Taylor series (enough for |x| <= 2 in f64).
    fn erf(x: f64) -> f64 {
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// xorshift64: deterministic inputs without a dependency.
        struct Rng(u64);
        impl Rng {
            fn f32(&mut self, lo: f32, hi: f32) -> f32 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
            }
        }

        fn p(x: f32, y: f32, z: f32, q: f32) -> Particle {
            Particle { x, y, z, q }
        }

        #[test]
        fn potential_of_one_unit_charge_is_inverse_distance() {
            let got = potential(&[p(3.0, 4.0, 0.0, 0.0)], &[p(0.0, 0.0, 0.0, 1.0)], 0.0);
            assert_eq!(got, vec![0.2]);
        }

        #[test]
        fn potential_is_linear_in_the_charges_and_softened() {
            let s = [p(1.0, 0.0, 0.0, 2.0), p(-1.0, 0.0, 0.0, -0.5)];
            let v = potential_at(&p(0.0, 0.0, 0.0, 0.0), &s, 3.0);
            assert!((v - (2.0 / 2.0 - 0.5 / 2.0)).abs() < 1e-15);
        }

        #[test]
        fn saxpy_uses_the_shorter_length() {
            assert_eq!(saxpy(&[1.0, 2.0, 3.0], &[10.0, 20.0], 0.5), vec![6.0, 12.0]);
        }

        #[test]
        fn sum_and_abs_sum() {
            assert_eq!(sum(&[1.0, -2.0, 3.5]), (2.5, 6.5));
            assert_eq!(sum(&[]), (0.0, 0.0));
        }

        #[test]
        fn transpose_of_2x3() {
            let input = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
            assert_eq!(transpose(&input, 2, 3), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        }

        #[test]
        fn transpose_twice_is_identity() {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let (rows, cols) = (37, 70);
            let input: Vec<f32> = (0..rows * cols).map(|_| rng.f32(-1.0, 1.0)).collect();
            assert_eq!(transpose(&transpose(&input, rows, cols), cols, rows), input);
        }

        #[test]
        fn histogram_counts_in_range_values_once() {
            let mut rng = Rng(12345);
            let x: Vec<f32> = (0..10_000).map(|_| rng.f32(-1.5, 1.5)).collect();
            let bins = histogram(&x, -1.0, 1.0, 7);
            let inside = x.iter().filter(|v| (-1.0..1.0).contains(*v)).count();
            assert_eq!(bins.iter().map(|&c| c as usize).sum::<usize>(), inside);
        }

        #[test]
        fn selftest_check_accepts_the_prescribed_values() {
            let n = crate::SELFTEST_THREADS as usize;
            let mut out = vec![0u32; crate::SELFTEST_LEN];
            for tid in 0..n as u32 {
                for (row, v) in selftest_expected(tid).into_iter().enumerate() {
                    out[row * n + tid as usize] = match v {
                        SelftestValue::Exact(b) => b,
                        SelftestValue::Near(f, _) => (f as f32).to_bits(),
                    };
                }
            }
            let scratch = [64, 63, 0, 32.0f32.to_bits(), 0, 128, 7, (-64i32) as u32];
            out[crate::SELFTEST_ROWS * n..].copy_from_slice(&scratch);
            assert_eq!(check_selftest(&out), Ok(()));
        }

        #[test]
        fn selftest_check_rejects_zeros_and_names_the_operation() {
            let err = check_selftest(&vec![0; crate::SELFTEST_LEN]).unwrap_err();
            assert!(err.contains("shfl_idx (row 1), thread 0"), "{err}");
            assert!(err.contains("global CAS loop"), "{err}");
        }

        #[test]
        fn erf_series_matches_known_values() {
            assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
            assert!((erf(2.0) - 0.995_322_265_018_952_7).abs() < 1e-15);
        }

        #[test]
        fn histogram_bin_edges() {
            assert_eq!(histogram_bin(-1.0, -1.0, 1.0, 4), Some(0));
            assert_eq!(histogram_bin(-0.5, -1.0, 1.0, 4), Some(1));
            assert_eq!(histogram_bin(0.999_999_94, -1.0, 1.0, 4), Some(3));
            assert_eq!(histogram_bin(1.0, -1.0, 1.0, 4), None);
            assert_eq!(histogram_bin(-1.000_001, -1.0, 1.0, 4), None);
            assert_eq!(histogram_bin(0.0, 0.0, 1.0, 0), None);
            // The largest f32 below `hi` must not land in bin `n_bins`.
            let below = f32::from_bits(1.0f32.to_bits() - 1);
            assert_eq!(histogram_bin(below, 0.0, 1.0, 1000), Some(999));
        }
    }
}

mod device;
mod selftest;
pub use device::*;
pub use selftest::*;
