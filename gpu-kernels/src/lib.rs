//! sluice's kernels, written in `#![no_std]` Rust.
//!
//! # What builds where
//!
//! * For `nvptx64-nvidia-cuda` (through `sluice-builder`) the `extern "ptx-kernel"`
//!   entries below become PTX `.entry` points; the root `build.rs` embeds that
//!   PTX into every host binary as `sluice::kernels::PTX`.
//! * For the host the same crate builds (with `std`) without the entries: it provides the
//!   parameter types the host and device share ([`Particle`]) and the f64 CPU
//!   references the tests check the GPU against ([`reference`]).
//!
//! # Kernels
//!
//! | entry | what it does | launch |
//! | --- | --- | --- |
//! | `fill_column(out: &mut [f32], value: f32)` | `out[i] = value` | 1-D, any grid (grid-stride loop) |
//! | `saxpy(y: &mut [f32], x: &[f32], a: f32)` | `y[i] = a * x[i] + y[i]` | 1-D, any grid |
//! | `potential(out: &mut [f32], targets: &[Particle], sources: &[Particle], eps2: f32)` | `out[i] = Σ_k q_k / sqrt(|t_i − s_k|² + eps2)` | 1-D, one thread per row |
//!
//! # ABI
//!
//! Every slice parameter is passed as two parameters: the device address
//! (`u64`) and the element count (`u64`); scalars and `Pod` structs are passed
//! by value. The host library lowers views the same way.

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, core_intrinsics))]
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

/// f64 CPU references of the kernels, for tests (host only).
#[cfg(not(target_arch = "nvptx64"))]
pub mod reference {
    use super::Particle;

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
}

#[cfg(target_arch = "nvptx64")]
mod device {
    use super::Particle;
    use sluice_device::thread;

    /// `out[i] = value` for `i < len`.
    ///
    /// # Safety
    /// `out` points to `len` writable `f32` on the device, not accessed by any
    /// other work during the launch; the host side (`sluice`) guarantees it.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn fill_column(out: *mut f32, len: u64, value: f32) {
        let mut i = thread::index_1d();
        while i < len {
            // SAFETY: i < len and `out` holds `len` elements (caller's contract);
            // each i is visited by exactly one thread.
            unsafe { *out.add(i as usize) = value };
            i += thread::grid_size_1d();
        }
    }

    /// `y[i] = a * x[i] + y[i]` for `i < min(y_len, x_len)`.
    ///
    /// # Safety
    /// `y` and `x` point to `y_len` and `x_len` device `f32`; `y` is not read or
    /// written by other work during the launch.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn saxpy(y: *mut f32, y_len: u64, x: *const f32, x_len: u64, a: f32) {
        let len = if y_len < x_len { y_len } else { x_len };
        let mut i = thread::index_1d();
        while i < len {
            // SAFETY: i < len <= both lengths (caller's contract on the lengths).
            unsafe {
                let yi = y.add(i as usize);
                *yi = a * *x.add(i as usize) + *yi;
            }
            i += thread::grid_size_1d();
        }
    }

    /// The softened Coulomb potential of the sources at each target:
    /// `out[i] = Σ_k q_k / sqrt(|t_i − s_k|² + eps2)` for `i < min(out_len, targets_len)`.
    ///
    /// # Safety
    /// Each pointer holds as many elements as its length says; `out` is written
    /// by this launch only.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn potential(
        out: *mut f32,
        out_len: u64,
        targets: *const Particle,
        targets_len: u64,
        sources: *const Particle,
        n_sources: u64,
        eps2: f32,
    ) {
        let rows = if out_len < targets_len { out_len } else { targets_len };
        let i = thread::index_1d();
        if i >= rows {
            return;
        }
        // SAFETY: i < rows <= targets_len.
        let t = unsafe { *targets.add(i as usize) };
        let mut acc = 0.0f32;
        let mut k = 0;
        while k < n_sources {
            // SAFETY: k < n_sources, the length of `sources`.
            let s = unsafe { *sources.add(k as usize) };
            let (dx, dy, dz) = (t.x - s.x, t.y - s.y, t.z - s.z);
            let r2 = dx * dx + dy * dy + dz * dz + eps2;
            // `sqrtf32` lowers to `sqrt.rn.f32`: correctly rounded, as CUDA C++'s `sqrtf`.
            acc += s.q / core::intrinsics::sqrtf32(r2);
            k += 1;
        }
        // SAFETY: i < rows, and `out` holds `rows` elements written by this thread alone.
        unsafe { *out.add(i as usize) = acc };
    }
}
