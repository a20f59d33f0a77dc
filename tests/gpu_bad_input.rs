//! Bad input on a real GPU: mismatched copy lengths, launch configurations over the
//! device's limits, allocations larger than the device, zero-sized buffers, unknown or
//! mis-declared kernels — each a typed error, never a panic, and nothing leaked (free device
//! memory is the same before and after, measured with `cuMemGetInfo` after trimming the
//! memory pool, which keeps freed memory for reuse).
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_bad_input -- --ignored`. Without one it fails.

mod common;

use std::sync::Mutex;

use sluice::{kernels, scope, Error, Gpu, Kernel, LaunchConfig, Mut};

/// The memory checks need the device to themselves within this test binary.
static DEVICE: Mutex<()> = Mutex::new(());

/// Free memory may move by the driver's allocation granularity when streams and events
/// come and go; a leak of any buffer used here is far larger.
const SLACK: usize = 4 << 20;

fn assert_no_leak(gpu: &Gpu, what: &str, f: impl Fn(&Gpu)) {
    f(gpu); // warm up: module load, event and stream pools, lazily created driver state
            // Freed device memory stays in the pool (reserved, so not "free" to cuMemGetInfo) until
            // trimmed: trim before each reading, so a buffer still allocated shows as a leak.
    let before = common::free_device_memory(gpu);
    for _ in 0..3 {
        f(gpu);
    }
    let after = common::free_device_memory(gpu);
    assert!(
        after + SLACK >= before,
        "{what}: {} bytes of device memory leaked (free before {before}, after {after})",
        before - after
    );
}

fn mismatched_copy_lengths_are_typed_errors(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    assert_no_leak(&gpu, "mismatched copies", |gpu| {
        let mut small = gpu.pinned_buffer::<f32>(100).expect("pinned");
        let input = vec![1.0f32; 99];
        let r = scope(gpu, |s| {
            let m = s.alloc_buffer::<f32>(101)?;
            s.lane()?.enter(|st| {
                let mut v = st.bind(m.as_columns_mut());
                assert_eq!(
                    st.copy_to_device(&input, &mut v).unwrap_err(),
                    Error::LengthMismatch { expected: 99, got: 101 }
                );
                assert_eq!(
                    st.copy_to_host(&v, small.as_pinned_mut()).unwrap_err(),
                    Error::LengthMismatch { expected: 101, got: 100 }
                );
                // Nothing was enqueued for the failed copies.
                assert_eq!(st.stats().copies, 0);
                assert_eq!(st.stats().events_recorded, 0);
                Ok(())
            })
        });
        assert_eq!(r, Ok(()));
    });
}

fn launch_configs_over_the_limits_are_typed_errors(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let info = gpu.info().clone();
    assert_no_leak(&gpu, "bad launches", |gpu| {
        scope(gpu, |s| {
            let m = s.alloc_buffer::<f32>(1024)?;
            s.lane()?.enter(|st| {
                let mut v = st.bind(m.as_columns_mut());
                let too_wide =
                    LaunchConfig { grid: (1, 1, 1), block: (info.max_block_dims[0] + 1, 1, 1), shared_mem_bytes: 0 };
                assert!(matches!(
                    st.launch(&kernels::fill_column, too_wide, (&mut v, 1.0)),
                    Err(Error::LaunchConfig { kernel: Some("fill_column"), what: "block.x", .. })
                ));
                let too_many = LaunchConfig { grid: (1, 1, 1), block: (32, 32, 2), shared_mem_bytes: 0 };
                assert!(matches!(
                    st.launch(&kernels::fill_column, too_many, (&mut v, 1.0)),
                    Err(Error::LaunchConfig { what: "threads per block", requested: 2048, .. })
                ));
                let tall =
                    LaunchConfig { grid: (1, info.max_grid_dims[1] + 1, 1), block: (32, 1, 1), shared_mem_bytes: 0 };
                assert!(matches!(
                    st.launch(&kernels::fill_column, tall, (&mut v, 1.0)),
                    Err(Error::LaunchConfig { what: "grid.y", .. })
                ));
                // Dynamic shared memory goes up to the opt-in limit (227 KiB on an H200), past
                // the default 48 KiB; one byte more is refused.
                let shmem =
                    LaunchConfig::for_elements(1024, 256).with_shared_mem(info.max_shared_memory_per_block_optin + 1);
                assert!(matches!(
                    st.launch(&kernels::fill_column, shmem, (&mut v, 1.0)),
                    Err(Error::LaunchConfig { .. })
                ));
                let big = LaunchConfig::for_elements(1024, 256).with_shared_mem(info.max_shared_memory_per_block + 1);
                assert_eq!(st.launch(&kernels::fill_column, big, (&mut v, 1.0)), Ok(()));
                let launches = st.stats().launches;
                let empty = LaunchConfig::for_elements(0, 256);
                assert_eq!(
                    st.launch(&kernels::fill_column, empty, (&mut v, 1.0)),
                    Err(Error::EmptyLaunch { what: "grid.x" })
                );
                assert_eq!(st.stats().launches, launches);
                // The lane still works after the rejected launches.
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(1024, 256), (&mut v, 1.0))
            })
        })
        .expect("scope");
    });
}

/// `saxpy` is `#[kernel(dims = 1)]`: its build assumes a 1-D launch, so the host refuses
/// every other shape before anything runs (the output keeps its values), and a 1-D launch of
/// it still works (checked against an f64 reference, on random inputs).
fn launches_of_a_1d_kernel_in_2d_or_3d_are_typed_errors(gpu: Gpu) {
    use rand::Rng;
    let n = 1000usize;
    let mut rng = common::rng();
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y0: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut host = gpu.pinned_buffer::<f32>(n).expect("pinned");
    host.fill(f32::NAN);
    scope(&gpu, |s| {
        let xs = s.upload(&x)?;
        let y = s.alloc_buffer::<f32>(n)?;
        s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut yv = st.bind(y.as_columns_mut());
            st.copy_to_device(&y0, &mut yv)?;
            for (grid, block, names) in [
                ((4, 2, 1), (256, 1, 1), "grid.y = 2"),
                ((4, 1, 2), (256, 1, 1), "grid.z = 2"),
                ((4, 1, 1), (128, 2, 1), "block.y = 2"),
                ((4, 1, 1), (128, 1, 2), "block.z = 2"),
                ((1, 1, 1), (1, 1, 2), "block.z = 2"),
            ] {
                let cfg = LaunchConfig { grid, block, shared_mem_bytes: 0 };
                let launches = st.stats().launches;
                let r = st.launch(&kernels::saxpy, cfg, (&mut yv, &x, 2.0));
                assert_eq!(
                    r,
                    Err(Error::LaunchNot1d { kernel: "saxpy", grid, block }),
                    "grid {grid:?}, block {block:?}"
                );
                assert_eq!(st.stats().launches, launches, "a refused launch is not counted");
                let text = r.unwrap_err().to_string();
                assert!(text.contains("dims = 1") && text.contains("saxpy") && text.contains(names), "{text}");
            }
            // An empty input (at either end of the buffer: a `&[f32]` of length 0 in the
            // kernel, made without a test of the length) writes nothing.
            for empty in [x.slice_rows(0..0), x.slice_rows(n..n)] {
                let empty = empty.expect("an empty range of rows");
                st.launch(&kernels::saxpy, LaunchConfig::for_elements(n, 96), (&mut yv, &empty, 5.0))?;
            }
            // Untouched by the refused and empty launches; then one 1-D launch over a
            // ragged grid.
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(n, 96), (&mut yv, &x, 2.0))?;
            st.copy_to_host(&yv, host.as_pinned_mut())?.wait().map(drop)
        })
    })
    .expect("scope");
    for i in 0..n {
        let want = 2.0 * x[i] as f64 + y0[i] as f64;
        assert!((host[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0), "y[{i}] = {}, want {want}", host[i]);
    }
}

fn allocations_larger_than_the_device_are_typed_errors(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let total = gpu.info().total_memory;
    assert_no_leak(&gpu, "huge allocations", |gpu| {
        match gpu.alloc_matrix::<f32>(total / 4 + 1, 2) {
            Err(Error::OutOfMemory { requested, free }) => {
                assert!(requested > total && free <= total, "requested {requested}, free {free}, total {total}");
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
        let r = scope(gpu, |s| s.alloc_matrix::<f64>(total / 8, 2).map(drop));
        assert!(matches!(r, Err(Error::OutOfMemory { .. })), "{r:?}");
        assert!(matches!(gpu.alloc_matrix::<f32>(usize::MAX / 2, 4), Err(Error::TooLarge { .. })));
        // An allocation that fits, then one that does not, in one scope: the first is freed at the end.
        let r = scope(gpu, |s| {
            let _ok = s.alloc_matrix::<u8>(64 << 20, 1)?;
            s.alloc_matrix::<u8>(total, 2).map(drop)
        });
        assert!(matches!(r, Err(Error::OutOfMemory { .. })), "{r:?}");
    });
}

fn zero_sized_buffers_are_typed_errors(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    assert_no_leak(&gpu, "zero-sized buffers", |gpu| {
        assert_eq!(gpu.alloc_matrix::<f32>(0, 4).unwrap_err(), Error::ZeroSized);
        assert_eq!(gpu.alloc_matrix::<f32>(4, 0).unwrap_err(), Error::ZeroSized);
        assert_eq!(gpu.alloc_buffer::<u8>(0).unwrap_err(), Error::ZeroSized);
        assert_eq!(gpu.pinned_buffer::<u8>(0).unwrap_err(), Error::ZeroSized);
        let empty: &[f32] = &[];
        let r = scope(gpu, |s| {
            assert_eq!(s.upload(empty).unwrap_err(), Error::ZeroSized);
            assert_eq!(s.alloc_buffer::<f32>(0).unwrap_err(), Error::ZeroSized);
            assert_eq!(s.pinned_buffer::<f32>(0).unwrap_err(), Error::ZeroSized);
            let m = s.alloc_matrix::<f32>(16, 2)?;
            let host = s.pinned_matrix::<f32>(16, 2)?;
            s.lane()?.enter(|st| {
                let (none, _all) = st.bind(m.as_columns_mut()).split_columns(0).expect("split at 0");
                let (no_dst, _) = host.split_columns_mut(0).expect("split at 0");
                assert_eq!(none.len(), 0);
                assert_eq!(st.copy_to_host(&none, no_dst).unwrap_err(), Error::ZeroSized);
                let mut none = none;
                assert_eq!(st.zero(&mut none).unwrap_err(), Error::ZeroSized);
                Ok(())
            })
        });
        assert_eq!(r, Ok(()));
    });
}

fn unknown_and_misdeclared_kernels_are_typed_errors(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: never launched successfully: resolution fails before any launch.
    const MISSING: Kernel<(Mut<f32>, f32)> = unsafe { Kernel::new(kernels::PTX, "no_such_kernel") };
    // SAFETY: as above; the PTX has (u64, u64, f32), this says (u64, u64, f64).
    const WRONG: Kernel<(Mut<f32>, f64)> = unsafe { Kernel::new(kernels::PTX, "fill_column") };
    assert_eq!(gpu.function(&MISSING).unwrap_err(), Error::KernelNotFound { name: "no_such_kernel" });
    assert!(matches!(gpu.function(&WRONG), Err(Error::KernelSignature { name: "fill_column", .. })));
    let r = scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(64)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&MISSING, LaunchConfig::for_elements(64, 64), (&mut v, 1.0))
        })
    });
    assert_eq!(r, Err(Error::KernelNotFound { name: "no_such_kernel" }));
}

fn failing_and_panicking_scopes_still_join_and_free(gpu: Gpu) {
    let _device = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    assert_no_leak(&gpu, "scopes that fail", |gpu| {
        let r: sluice::Result<()> = scope(gpu, |s| {
            let m = s.alloc_matrix::<f32>(1 << 20, 64)?; // 256 MiB
            s.lane()?.enter(|st| {
                let mut v = st.bind(m.as_columns_mut());
                st.launch(&kernels::fill_column, LaunchConfig::for_elements(64 << 20, 256), (&mut v, 1.0))
            })?;
            Err(Error::NotAdjacent) // any error: the scope still joins the lane and frees `m`
        });
        assert_eq!(r, Err(Error::NotAdjacent));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = scope(gpu, |s| {
                let m = s.alloc_matrix::<f32>(1 << 20, 64)?;
                s.lane()?.enter(|st| {
                    let mut v = st.bind(m.as_columns_mut());
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(64 << 20, 256), (&mut v, 1.0))
                })?;
                panic!("the closure panics with work in flight");
                #[allow(unreachable_code)]
                Ok(())
            });
        }));
        assert!(panicked.is_err(), "the panic is resumed after the join");
    });
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn no_device_with_that_ordinal_is_a_typed_error() {
    let count = Gpu::count().expect("count");
    assert_eq!(Gpu::new(count).unwrap_err(), Error::NoDevice { ordinal: count, count });
    let devices = Gpu::devices().expect("devices");
    assert_eq!(devices.len(), count);
    for d in &devices {
        assert!(d.sm_count > 0 && d.total_memory > 0 && d.max_threads_per_block >= 512, "{d:?}");
        println!("{d:?}");
    }
}

on_every_backend!(
    mismatched_copy_lengths_are_typed_errors,
    launch_configs_over_the_limits_are_typed_errors,
    launches_of_a_1d_kernel_in_2d_or_3d_are_typed_errors,
    allocations_larger_than_the_device_are_typed_errors,
    zero_sized_buffers_are_typed_errors,
    unknown_and_misdeclared_kernels_are_typed_errors,
    failing_and_panicking_scopes_still_join_and_free,
);
