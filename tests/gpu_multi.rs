//! Several GPUs in one scope (`scope_multi`): peer copies and cross-device hand-offs with
//! exact results, the run-time device checks (the compile-time ones are `tests/ui/multi`),
//! and every collective (all-reduce, broadcast, all-gather, reduce-scatter) with exact
//! results, then the seed workload split over the devices.
//!
//! Each test runs on three sets of devices:
//!
//! * `on_cpu`: two CPU backend devices (always; the collectives run as host loops);
//! * `on_one_gpu`: CUDA device 0 — two `Gpu` values of it for the peer tests (every code path
//!   of a peer copy and a cross-device hand-off, as a device copy), one for the collectives
//!   (NCCL with one rank);
//! * `on_two_gpus`: CUDA devices 0 and 1 (peer access, NCCL with two ranks). On a machine with
//!   fewer GPUs these fail, saying so: they never pass without checking.
//!
//! The CUDA sets are ignored unless run with `--ignored` (a GPU machine):
//! `cargo test --test gpu_multi -- --ignored --test-threads=1`. Outputs are poisoned before
//! each run; inputs are fresh random numbers (`SLUICE_TEST_SEED` replays a run).

mod common;

use std::fmt::Debug;

use rand::Rng;
use sluice::{
    kernels, scope_multi, traced_scope_multi, Backend, Communicator, Error, Gpu, LaunchConfig, PeerPath, PinnedMatrix,
    ReduceOp, Reducible, SpanKind,
};

/// CUDA devices 0 and 1; without two GPUs the test fails, saying why.
fn two_gpus() -> Vec<Gpu> {
    let n = match Gpu::count() {
        Ok(n) => n,
        Err(e) => panic!("this test needs two NVIDIA GPUs (run it with --ignored on a machine with 2): {e}"),
    };
    assert!(n >= 2, "this test needs two NVIDIA GPUs (run it with --ignored on a machine with 2); this one has {n}");
    vec![Gpu::cuda(0).expect("CUDA device 0"), Gpu::cuda(1).expect("CUDA device 1")]
}

/// Whether the two devices have separate memories (two CUDA devices), as opposed to one
/// memory seen through two `Gpu` values (the CPU backend, or one GPU twice).
fn distinct(gpus: &[Gpu]) -> bool {
    gpus.len() > 1 && gpus[0].backend() == Backend::Cuda && gpus[0].info().ordinal != gpus[1].info().ordinal
}

/// Runs each test of `peers` on a pair of devices and each test of `collectives` on a
/// communicator's devices, on the three sets (see the module docs).
macro_rules! on_device_sets {
    (peers: [$($p:ident),* $(,)?], collectives: [$($c:ident),* $(,)?] $(,)?) => {
        mod on_cpu {
            $(#[test]
            fn $p() {
                super::$p(&[super::common::cpu(), super::common::cpu()])
            })*
            $(#[test]
            fn $c() {
                super::$c(&[super::common::cpu(), super::common::cpu()])
            })*
        }
        mod on_one_gpu {
            $(#[test]
            #[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
            fn $p() {
                super::$p(&[super::common::gpu(), super::common::gpu()])
            })*
            $(#[test]
            #[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
            fn $c() {
                super::$c(&[super::common::gpu()])
            })*
        }
        mod on_two_gpus {
            $(#[test]
            #[ignore = "needs two NVIDIA GPUs: run with --ignored on a machine with 2 GPUs"]
            fn $p() {
                super::$p(&super::two_gpus())
            })*
            $(#[test]
            #[ignore = "needs two NVIDIA GPUs: run with --ignored on a machine with 2 GPUs"]
            fn $c() {
                super::$c(&super::two_gpus())
            })*
        }
    };
}

on_device_sets!(
    peers: [
        peer_copies_are_exact_both_ways,
        cross_device_hand_offs_order_kernels,
        a_plain_fence_orders_work_across_devices,
        the_device_checks_are_typed_errors_at_run_time,
        peer_paths_are_reported,
    ],
    collectives: [
        all_reduce_is_exact,
        broadcast_is_exact,
        all_gather_is_exact,
        reduce_scatter_is_exact,
        collectives_refuse_ranks_that_do_not_fit,
        seed_workload_split_over_the_devices,
    ],
);

const POISON: u32 = 0xDEAD_BEEF;

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_elements(n, 256)
}

/// A padded matrix on device 0 goes to device 1 (same shape, contiguous there), then back
/// to a flat buffer on device 0 (same length, both contiguous): exact, the path reported,
/// each copy one copy and one event on its lane, each awaiting lane one wait.
fn peer_copies_are_exact_both_ways(gpus: &[Gpu]) {
    let mut rng = common::rng();
    let (rows, cols, ld) = (1000, 3, 1024);
    let data: Vec<u32> = (0..rows * cols).map(|_| rng.random()).collect();
    let poison = vec![POISON; rows * cols];
    let mut on_1 = gpus[1].pinned_matrix::<u32>(rows, cols).expect("pinned");
    let mut on_0 = gpus[0].pinned_buffer::<u32>(rows * cols).expect("pinned");
    on_1.fill(0);
    on_0.fill(0);
    let (links, traces) = traced_scope_multi(gpus, |s| {
        s.device(0, |d0| {
            s.device(1, |d1| {
                let src = d0.alloc_matrix_padded::<u32>(rows, cols, ld)?;
                let there = d1.alloc_matrix::<u32>(rows, cols)?;
                let back = d0.alloc_buffer::<u32>(rows * cols)?;
                // Poisoned destinations, handed to the host and back: no pending work.
                let there = d1
                    .lane()?
                    .enter(|st| {
                        let mut v = st.bind(there.as_columns_mut());
                        st.copy_to_device(&poison, &mut v)?;
                        st.fence(v)
                    })?
                    .wait()?;
                let (l0, l1, l2) = (d0.lane()?, d1.lane()?, d0.lane()?);
                let copied = l0.enter(|st| {
                    let mut v = st.bind(src.as_columns_mut());
                    st.copy_to_device(&data, &mut v)?;
                    st.copy_to_peer(&v, there)
                })?;
                assert_eq!((l0.stats().copies, l0.stats().events_recorded), (2, 1));
                let (p1, returned) = l1.enter(|st| {
                    let v = st.await_fence(copied)?;
                    let p = st.copy_to_host(&v, on_1.as_pinned_mut())?;
                    Ok::<_, Error>((p, st.copy_to_peer(&v, back.as_columns_mut())?))
                })?;
                assert_eq!(l1.stats().waits_enqueued, 1);
                let p0 = l2.enter(|st| {
                    let v = st.await_fence(returned)?;
                    st.copy_to_host(&v, on_0.as_pinned_mut())
                })?;
                assert_eq!(l2.stats().waits_enqueued, 1);
                p1.wait()?;
                p0.wait()?;
                Ok(s.peer_links())
            })
        })
    })
    .expect("scope");
    assert!(on_1.iter().zip(&data).all(|(a, b)| a == b), "device 0 -> 1: {:?} vs {:?}", &on_1[..4], &data[..4]);
    assert!(on_0.iter().zip(&data).all(|(a, b)| a == b), "device 1 -> 0: {:?} vs {:?}", &on_0[..4], &data[..4]);
    assert_eq!(links.len(), 2, "{links:?}");
    let bytes = (rows * cols * 4) as u64;
    assert_eq!((links[0].from, links[0].to, links[0].copies, links[0].bytes), (0, 1, 1, bytes));
    assert_eq!((links[1].from, links[1].to, links[1].copies, links[1].bytes), (1, 0, 1, bytes));
    let want = if distinct(gpus) { None } else { Some(PeerPath::SameDevice) };
    for l in &links {
        match want {
            Some(p) => assert_eq!(l.path, p),
            None => assert_ne!(l.path, PeerPath::SameDevice),
        }
    }
    // One peer-copy span per device, named with its path.
    for (d, trace) in traces.iter().enumerate() {
        let spans: Vec<_> = trace.spans.iter().filter(|sp| sp.kind == SpanKind::PeerCopy).collect();
        assert_eq!(spans.len(), 1, "device {d}: {:?}", trace.spans);
        assert!(spans[0].name.contains(&links[d].path.to_string()), "{}", spans[0].name);
        println!("device {d}: {} ({:.1} us)", spans[0].name, spans[0].gpu_end_us - spans[0].gpu_start_us);
    }
}

/// Device 0's lanes each write a column with a long chain of kernels, then copy it to device
/// 1; device 1's lanes await the copies and compute from them: exact only if every wait held.
fn cross_device_hand_offs_order_kernels(gpus: &[Gpu]) {
    let mut rng = common::rng();
    let (rows, cols) = (1 << 16, 6);
    let fills: Vec<f32> = (0..cols).map(|_| rng.random_range(-1000i32..1000) as f32).collect();
    let a = rng.random_range(-4i32..4) as f32;
    let mut host = gpus[1].pinned_matrix::<f32>(rows, cols).expect("pinned");
    host.fill(f32::NAN);
    scope_multi(gpus, |s| {
        s.device(0, |d0| {
            s.device(1, |d1| {
                let src = d0.alloc_matrix::<f32>(rows, cols)?;
                let copies = d1.alloc_matrix::<f32>(rows, cols)?;
                let out = d1.alloc_matrix::<f32>(rows, cols)?;
                let handed: Vec<_> = d0
                    .lanes(cols)?
                    .into_iter()
                    .zip(src.columns_mut())
                    .zip(copies.columns_mut())
                    .zip(&fills)
                    .map(|(((lane, col), dst), fill)| {
                        lane.enter(|st| {
                            let mut v = st.bind(col);
                            for _ in 0..20 {
                                st.launch(&kernels::fill_column, cfg(rows), (&mut v, f32::NAN))?;
                            }
                            st.launch(&kernels::fill_column, cfg(rows), (&mut v, *fill))?;
                            st.copy_to_peer(&v, dst)
                        })
                    })
                    .collect::<sluice::Result<_>>()?;
                for (((lane, copied), col), dst) in
                    d1.lanes(cols)?.into_iter().zip(handed).zip(out.columns_mut()).zip(host.columns_mut())
                {
                    lane.enter(|st| {
                        let x = st.await_fence(copied)?;
                        let mut y = st.bind(col);
                        st.launch(&kernels::fill_column, cfg(rows), (&mut y, 1.0))?;
                        st.launch(&kernels::saxpy, cfg(rows), (&mut y, &x, a))?;
                        st.copy_to_host(&y, dst)
                    })?;
                }
                Ok(())
            })
        })
    })
    .expect("scope");
    for (j, fill) in fills.iter().enumerate() {
        let want = a * fill + 1.0;
        let col = host.column(j).unwrap();
        assert!(col.iter().all(|v| *v == want), "column {j}: want {want}, got {:?}", &col[..4]);
    }
}

/// A plain fence of device 0 awaited on a lane of device 1 (ordering only: one
/// `cuStreamWaitEvent`, no data), then a peer copy from device 1 into device 0's memory and
/// a hand-off awaited back on device 0: the cross-device paths compose, exactly.
fn a_plain_fence_orders_work_across_devices(gpus: &[Gpu]) {
    let n = 1 << 16;
    let mut rng = common::rng();
    let (fill, other) = (rng.random_range(-100i32..100) as f32, rng.random_range(-100i32..100) as f32);
    let mut host = gpus[0].pinned_buffer::<f32>(n).expect("pinned");
    host.fill(f32::NAN);
    scope_multi(gpus, |s| {
        s.device(0, |d0| {
            s.device(1, |d1| {
                let x = d0.alloc_buffer::<f32>(n)?;
                let z = d0.alloc_buffer::<f32>(n)?;
                let y = d1.alloc_buffer::<f32>(n)?;
                let (a, b, c) = (d0.lane()?, d1.lane()?, d0.lane()?);
                let written = a.enter(|st| {
                    let mut v = st.bind(x.as_columns_mut());
                    for _ in 0..30 {
                        st.launch(&kernels::fill_column, cfg(n), (&mut v, f32::NAN))?;
                    }
                    st.launch(&kernels::fill_column, cfg(n), (&mut v, fill))?;
                    st.fence(v)
                })?;
                let copied = b.enter(|st| {
                    st.await_fence(written.fence())?; // device 0's event on device 1's lane
                    let mut v = st.bind(y.as_columns_mut());
                    st.launch(&kernels::fill_column, cfg(n), (&mut v, other))?;
                    st.copy_to_peer(&v, z.as_columns_mut()) // into device 0's memory
                })?;
                assert_eq!(b.stats().waits_enqueued, 1, "one wait for the foreign fence");
                let done = c.enter(|st| {
                    let mut x = st.await_fence(written)?;
                    let z = st.await_fence(copied)?;
                    st.launch(&kernels::saxpy, cfg(n), (&mut x, &z, 2.0))?;
                    st.copy_to_host(&x, host.as_pinned_mut())
                })?;
                assert_eq!(c.stats().waits_enqueued, 2);
                done.wait().map(drop)
            })
        })
    })
    .expect("scope");
    let want = fill + 2.0 * other;
    assert!(host.iter().all(|v| *v == want), "want {want}, got {:?}", &host[..4]);
}

/// What the brands cannot see (unbranded memory) is checked when used: another device's
/// memory is `Error::WrongDevice`, nothing enqueued. Where both `Gpu`s share one memory (the
/// CPU backend, one GPU twice) the same operations are legitimate and succeed.
fn the_device_checks_are_typed_errors_at_run_time(gpus: &[Gpu]) {
    let separate = distinct(gpus);
    let mut on_1: Vec<_> = (0..4).map(|_| gpus[1].alloc_buffer::<f32>(256).expect("alloc on device 1")).collect();
    let [a, b, c, e] = &mut on_1[..] else { unreachable!() };
    let results = scope_multi(gpus, |s| {
        s.device(0, |d0| {
            let lane = d0.lane()?;
            let mine = d0.alloc_buffer::<f32>(256)?;
            let adopted = d0.adopt(a.as_columns_mut()).map(drop);
            // The unbranded path: a plain `Stream::bind`, checked when work is enqueued.
            let zeroed = lane.enter(|st| {
                let mut v = sluice::Stream::bind(st, b.as_columns_mut());
                st.zero(&mut v)
            });
            let copied = lane.enter(|st| {
                let v = sluice::Stream::bind(st, c.as_columns_mut());
                st.copy_to_peer(&v, mine.as_columns_mut()).map(drop)
            });
            let ranked = lane.enter(|st| st.rank_in_place(sluice::Stream::bind(st, e.as_columns_mut())).map(drop));
            Ok([adopted, zeroed, copied, ranked])
        })
    })
    .expect("scope");
    let what = ["adopt", "zero", "copy_to_peer (source)", "rank"];
    for (r, what) in results.iter().zip(what) {
        if separate {
            assert_eq!(r, &Err(Error::WrongDevice { what }));
        } else {
            assert_eq!(r, &Ok(()), "{what}");
        }
    }
    // A device set that mixes backends, and an empty one, are refused before anything runs.
    assert!(matches!(scope_multi(&[], |_| Ok(())), Err(Error::Devices { .. })));
    if gpus[0].backend() == Backend::Cuda {
        let mixed = [gpus[0].clone(), Gpu::cpu()];
        assert!(matches!(scope_multi(&mixed, |_| Ok(())), Err(Error::Devices { .. })));
    }
}

/// The path between the two devices: the same device for the CPU backend and one GPU twice;
/// direct (NVLink or PCIe peer access) or staged between two GPUs, and the same both ways.
fn peer_paths_are_reported(gpus: &[Gpu]) {
    let there = gpus[0].peer_path(&gpus[1]).expect("peer path");
    let back = gpus[1].peer_path(&gpus[0]).expect("peer path");
    println!("device {} -> {}: {there}", gpus[0].info().ordinal, gpus[1].info().ordinal);
    assert_eq!(there, back);
    if distinct(gpus) {
        assert_ne!(there, PeerPath::SameDevice);
    } else {
        assert_eq!(there, PeerPath::SameDevice);
    }
    assert_eq!(gpus[0].peer_path(&gpus[0]).expect("peer path"), PeerPath::SameDevice);
}

// ---------------------------------------------------------------------------------------
// Collectives

/// Pinned host buffers of `n` elements, one per device, poisoned (every byte 0xA5).
fn poisoned<T: bytemuck::Pod>(gpus: &[Gpu], n: usize) -> Vec<PinnedMatrix<T>> {
    gpus.iter()
        .map(|g| {
            let mut h = g.pinned_buffer::<T>(n).expect("pinned");
            bytemuck::cast_slice_mut::<T, u8>(&mut h).fill(0xA5);
            h
        })
        .collect()
}

/// How a collective's rank gets its data.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Input {
    /// Uploaded, read by the collective; the output is another buffer.
    Separate,
    /// Copied into the output buffer, which the collective reads and overwrites.
    InPlace,
    /// None (the receiving ranks of a broadcast).
    Receive,
}

/// Runs one collective over `inputs` (one per rank): each device uploads its input, makes
/// its rank on a lane, the collective runs, and each device copies its output back.
/// Returns every rank's output.
fn run_collective<T: bytemuck::Pod + Debug>(
    gpus: &[Gpu],
    comm: &Communicator,
    inputs: &[Vec<T>],
    out_len: usize,
    input: impl Fn(usize) -> Input + Copy,
    collective: impl for<'s, 'e> FnOnce(
        &'s sluice::MultiScope<'s, 'e>,
        &'s Communicator,
        Vec<sluice::Rank<'s, T>>,
    ) -> sluice::Result<Vec<sluice::Fenced<'s, sluice::ColumnsMut<'s, T>>>>,
) -> Vec<Vec<T>> {
    let mut hosts = poisoned::<T>(gpus, out_len);
    let mut dsts: Vec<_> = hosts.iter_mut().map(|h| h.as_pinned_mut()).collect();
    scope_multi(gpus, |s| {
        let ranks = s.each_device(|d| {
            let i = d.index();
            let data = d.upload(&inputs[i])?;
            let out = d.alloc_buffer::<T>(out_len)?;
            d.lane()?.enter(|st| {
                let mut v = st.bind(out.as_columns_mut());
                match input(i) {
                    Input::Separate => st.rank(st.await_fence(&data)?, v),
                    Input::InPlace => {
                        st.copy_to_device(&inputs[i], &mut v)?;
                        st.rank_in_place(v)
                    }
                    Input::Receive => st.rank_receive(v),
                }
            })
        })?;
        let outs = collective(s, comm, ranks)?;
        assert_eq!(outs.len(), gpus.len());
        for (i, (out, dst)) in outs.into_iter().zip(dsts.drain(..)).enumerate() {
            s.device(i, |d| {
                let out = d.adopt(out)?;
                d.lane()?.enter(|st| {
                    let v = st.await_fence(out)?;
                    st.copy_to_host(&v, dst).map(drop)
                })
            })?;
        }
        Ok(())
    })
    .expect("scope");
    hosts.iter().map(|h| h.to_vec()).collect()
}

/// `op` over every rank's input, element by element, as the reference.
fn fold<T: Copy>(inputs: &[Vec<T>], f: impl Fn(T, T) -> T) -> Vec<T> {
    (0..inputs[0].len()).map(|i| inputs[1..].iter().fold(inputs[0][i], |a, x| f(a, x[i]))).collect()
}

fn check_reduce<T: Reducible + PartialEq + Debug>(
    gpus: &[Gpu],
    comm: &Communicator,
    op: ReduceOp,
    inputs: &[Vec<T>],
    in_place: bool,
    f: impl Fn(T, T) -> T,
) {
    let n = inputs[0].len();
    let how = if in_place { Input::InPlace } else { Input::Separate };
    let outs = run_collective(gpus, comm, inputs, n, |_| how, move |s, c, ranks| s.all_reduce(c, op, ranks));
    let want = fold(inputs, f);
    for (r, got) in outs.iter().enumerate() {
        assert!(
            got == &want,
            "{op} ({}) rank {r}: got {:?}, want {:?}",
            std::any::type_name::<T>(),
            &got[..4],
            &want[..4]
        );
    }
}

fn all_reduce_is_exact(gpus: &[Gpu]) {
    let comm = Communicator::new(gpus).expect("communicator");
    println!("{} ranks, NCCL: {}", comm.ranks(), comm.uses_nccl());
    let mut rng = common::rng();
    let k = gpus.len();
    let n = 4099; // not a multiple of anything NCCL might like
    let ints: Vec<Vec<i32>> =
        (0..k).map(|_| (0..n).map(|_| rng.random_range(-1_000_000..1_000_000)).collect()).collect();
    check_reduce(gpus, &comm, ReduceOp::Sum, &ints, true, |a, b| a.wrapping_add(b));
    // Small integers as f32: every sum is exact in any order.
    let floats: Vec<Vec<f32>> =
        (0..k).map(|_| (0..n).map(|_| rng.random_range(-4096i32..4096) as f32).collect()).collect();
    check_reduce(gpus, &comm, ReduceOp::Sum, &floats, false, |a, b| a + b);
    let words: Vec<Vec<u32>> = (0..k).map(|_| (0..n).map(|_| rng.random()).collect()).collect();
    check_reduce(gpus, &comm, ReduceOp::Max, &words, true, u32::max);
    let doubles: Vec<Vec<f64>> = (0..k).map(|_| (0..n).map(|_| rng.random_range(-1e6..1e6)).collect()).collect();
    check_reduce(gpus, &comm, ReduceOp::Min, &doubles, false, f64::min);
    let small: Vec<Vec<i64>> = (0..k).map(|_| (0..n).map(|_| rng.random_range(-3..4)).collect()).collect();
    check_reduce(gpus, &comm, ReduceOp::Prod, &small, false, |a, b| a.wrapping_mul(b));
}

fn broadcast_is_exact(gpus: &[Gpu]) {
    let comm = Communicator::new(gpus).expect("communicator");
    let mut rng = common::rng();
    let k = gpus.len();
    let n = 3001;
    let inputs: Vec<Vec<u16>> = (0..k).map(|_| (0..n).map(|_| rng.random()).collect()).collect();
    for root in [0, k - 1] {
        for root_in_place in [false, true] {
            let input = move |i: usize| match (i == root, root_in_place) {
                (true, false) => Input::Separate,
                (true, true) => Input::InPlace,
                (false, _) => Input::Receive,
            };
            let outs = run_collective(gpus, &comm, &inputs, n, input, move |s, c, ranks| s.broadcast(c, root, ranks));
            for (r, got) in outs.iter().enumerate() {
                assert!(got == &inputs[root], "root {root} (in place: {root_in_place}), rank {r}: {:?}", &got[..4]);
            }
        }
    }
}

fn all_gather_is_exact(gpus: &[Gpu]) {
    let comm = Communicator::new(gpus).expect("communicator");
    let mut rng = common::rng();
    let k = gpus.len();
    let n = 1027;
    let inputs: Vec<Vec<i64>> = (0..k).map(|_| (0..n).map(|_| rng.random()).collect()).collect();
    let outs = run_collective(gpus, &comm, &inputs, n * k, |_| Input::Separate, |s, c, ranks| s.all_gather(c, ranks));
    let want: Vec<i64> = inputs.concat();
    for (r, got) in outs.iter().enumerate() {
        assert!(got == &want, "rank {r}: {:?} vs {:?}", &got[..4], &want[..4]);
    }
}

fn reduce_scatter_is_exact(gpus: &[Gpu]) {
    let comm = Communicator::new(gpus).expect("communicator");
    let mut rng = common::rng();
    let k = gpus.len();
    let n = 2049;
    let inputs: Vec<Vec<f32>> =
        (0..k).map(|_| (0..n * k).map(|_| rng.random_range(-1000i32..1000) as f32).collect()).collect();
    let outs = run_collective(
        gpus,
        &comm,
        &inputs,
        n,
        |_| Input::Separate,
        |s, c, ranks| s.reduce_scatter(c, ReduceOp::Sum, ranks),
    );
    let sums = fold(&inputs, |a, b| a + b);
    for (r, got) in outs.iter().enumerate() {
        assert!(got[..] == sums[r * n..(r + 1) * n], "rank {r}: {:?} vs {:?}", &got[..4], &sums[r * n..r * n + 4]);
    }
    let words: Vec<Vec<u32>> = (0..k).map(|_| (0..n * k).map(|_| rng.random()).collect()).collect();
    let outs = run_collective(
        gpus,
        &comm,
        &words,
        n,
        |_| Input::Separate,
        |s, c, ranks| s.reduce_scatter(c, ReduceOp::Max, ranks),
    );
    let maxima = fold(&words, u32::max);
    for (r, got) in outs.iter().enumerate() {
        assert!(got[..] == maxima[r * n..(r + 1) * n], "max, rank {r}");
    }
}

/// Ranks that do not fit the collective are refused with `Error::Collective` before anything
/// is enqueued: too few ranks, lengths that do not match, an in-place all-gather, padded
/// columns; a CUDA device given twice to a communicator is `Error::Devices`.
fn collectives_refuse_ranks_that_do_not_fit(gpus: &[Gpu]) {
    let comm = Communicator::new(gpus).expect("communicator");
    let k = gpus.len();
    let errors = scope_multi(gpus, |s| {
        let make = |len: usize, in_place: bool| {
            s.each_device(|d| {
                let m = d.alloc_buffer::<f32>(len + d.index())?; // rank i has len + i elements
                d.lane()?.enter(|st| {
                    let mut v = st.bind(m.as_columns_mut());
                    st.zero(&mut v)?;
                    if in_place {
                        st.rank_in_place(v)
                    } else {
                        st.rank_receive(v)
                    }
                })
            })
        };
        let mut too_few = make(64, true)?;
        too_few.pop();
        let too_few = s.all_reduce(&comm, ReduceOp::Sum, too_few).map(drop);
        let lengths = if k > 1 { s.all_reduce(&comm, ReduceOp::Sum, make(64, true)?).map(drop) } else { Ok(()) };
        let gather_in_place = s.all_gather(&comm, make(64, true)?).map(drop);
        let no_input = s.all_reduce(&comm, ReduceOp::Sum, make(64, false)?).map(drop);
        let padded = s.device(0, |d| {
            let m = d.alloc_matrix_padded::<f32>(10, 2, 16)?;
            d.lane()?.enter(|st| st.rank_in_place(st.bind(m.as_columns_mut())).map(drop))
        });
        Ok((too_few, lengths, gather_in_place, no_input, padded))
    })
    .expect("scope");
    let (too_few, lengths, gather_in_place, no_input, padded) = errors;
    let is_collective = |r: &sluice::Result<()>| matches!(r, Err(Error::Collective { .. }));
    assert!(is_collective(&too_few), "{too_few:?}");
    assert!(k == 1 || is_collective(&lengths), "{lengths:?}");
    assert!(is_collective(&gather_in_place), "{gather_in_place:?}");
    assert!(is_collective(&no_input), "{no_input:?}");
    assert!(is_collective(&padded), "{padded:?}");
    println!("e.g. {}", too_few.unwrap_err());
    if gpus[0].backend() == Backend::Cuda {
        let twice = Communicator::new(&[gpus[0].clone(), gpus[0].clone()]);
        assert!(matches!(twice, Err(Error::Devices { .. })), "{twice:?}");
    }
}

/// The seed workload, small, split over the devices: columns round-robin over the devices,
/// each copied back on its own lane; each device sums its columns (`sum_reduce`) into a
/// 1 x cols vector (zero where another device owns the column); an all-reduce gives every
/// device every column's sum. Checked against the f64 reference.
fn seed_workload_split_over_the_devices(gpus: &[Gpu]) {
    let comm = Communicator::new(gpus).expect("communicator");
    let (k, rows, cols, n_sources) = (gpus.len(), 4096, 6, 128);
    let seed: u64 = common::rng().random();
    let mut gen = gpu_kernels::reference::Rng::new(seed);
    let sources = gen.particles(n_sources);
    let targets = gen.particles(rows * cols);
    // Device d gets columns d, d + k, ...: their targets, contiguous.
    let owned: Vec<Vec<usize>> = (0..k).map(|d| (d..cols).step_by(k).collect()).collect();
    let local_targets: Vec<Vec<sluice::Particle>> =
        owned.iter().map(|js| js.iter().flat_map(|&j| targets[j * rows..(j + 1) * rows].to_vec()).collect()).collect();
    let mut host = gpus[0].pinned_matrix::<f32>(rows, cols).expect("pinned");
    host.fill(f32::NAN);
    let mut sums = poisoned::<f32>(gpus, cols);
    let mut sum_dsts: Vec<_> = sums.iter_mut().map(|h| h.as_pinned_mut()).collect();
    let mut col_dsts: Vec<Option<_>> = host.columns_mut().map(Some).collect();
    let eps2 = 1e-3f32;
    scope_multi(gpus, |s| {
        let ranks = s.each_device(|d| {
            let mine = &owned[d.index()];
            let src = d.upload(&sources)?;
            let tgt = d.upload_matrix(&local_targets[d.index()], rows, mine.len().max(1))?;
            let out = d.alloc_matrix::<f32>(rows, mine.len().max(1))?;
            let partial = d.alloc_matrix::<f32>(1, cols)?; // this device's column sums
            let mut partial_cols: Vec<Option<_>> = partial.columns_mut().map(Some).collect();
            let mut handed = Vec::new();
            for (c, ((lane, col), &j)) in d.lanes(mine.len())?.into_iter().zip(out.columns_mut()).zip(mine).enumerate()
            {
                let sum = partial_cols[j].take().expect("each column once");
                let dst = col_dsts[j].take().expect("each column once");
                handed.push(lane.enter(|st| {
                    let x = st.await_fence(&src)?;
                    let t = st.await_fence(&tgt)?.column(c).expect("a target column");
                    let mut v = st.bind(col);
                    st.launch(&kernels::potential, cfg(rows), (&mut v, &t, &x, eps2))?;
                    let _copy = st.copy_to_host(&v, dst)?; // its own lane, as soon as it is done
                    let mut s = st.bind(sum);
                    st.zero(&mut s)?;
                    st.launch(&kernels::sum_reduce, LaunchConfig::for_elements(rows.min(1 << 20), 256), (&mut s, &v))?;
                    st.fence(s)
                })?);
            }
            // The other devices' columns: zero here.
            let rest = d.lane()?;
            for sum in partial_cols.into_iter().flatten() {
                handed.push(rest.enter(|st| {
                    let mut s = st.bind(sum);
                    st.zero(&mut s)?;
                    st.fence(s)
                })?);
            }
            d.lane()?.enter(|st| st.rank_in_place(st.await_all(handed)?))
        })?;
        let reduced = s.all_reduce(&comm, ReduceOp::Sum, ranks)?;
        for (i, (r, dst)) in reduced.into_iter().zip(sum_dsts.drain(..)).enumerate() {
            s.device(i, |d| d.lane()?.enter(|st| st.copy_to_host(&st.await_fence(d.adopt(r)?)?, dst).map(drop)))?;
        }
        Ok(())
    })
    .expect("scope");
    let worst = common::check_potential(&host, rows, cols, &targets, &sources, eps2, 1e-4);
    println!("{k} device(s): every potential within 1e-4 (worst {worst:.2e})");
    for (d, got) in sums.iter().enumerate() {
        for j in 0..cols {
            let column: Vec<f32> = (0..rows).map(|i| host[j * rows + i]).collect();
            let (want, abs) = gpu_kernels::reference::sum(&column);
            let tol = rows as f64 * f32::EPSILON as f64 * abs;
            assert!(
                (got[j] as f64 - want).abs() <= tol,
                "device {d}, column {j}: sum {} vs {want} (tol {tol:e})",
                got[j]
            );
        }
    }
}

/// Without NCCL, asking for it is a typed error that names where sluice looked; with it, the
/// version and the file.
#[test]
fn nccl_is_found_or_the_error_says_where_it_looked() {
    match Communicator::nccl_version() {
        Ok(v) => {
            println!("NCCL {}.{}.{} from {}", v / 10000, v / 100 % 100, v % 100, Communicator::nccl_path().unwrap());
            assert!(v >= 20700, "NCCL {v} is older than 2.7");
        }
        Err(Error::NcclUnavailable { searched, reason }) => {
            println!("no NCCL here ({reason}): {searched:?}");
            assert!(searched.iter().any(|s| s.contains("libnccl.so")), "{searched:?}");
            let message = Error::NcclUnavailable { searched, reason }.to_string();
            assert!(message.contains("SLUICE_NCCL") && message.contains("LD_LIBRARY_PATH"), "{message}");
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// A closure that panics inside a multi-GPU scope: every device's lanes are joined, the
/// memory freed, then the panic resumes.
#[test]
fn a_panic_in_a_multi_scope_resumes_after_the_joins() {
    let gpus = [Gpu::cpu(), Gpu::cpu()];
    let caught: std::thread::Result<sluice::Result<()>> =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scope_multi(&gpus, |s| {
                s.each_device(|d| {
                    let m = d.alloc_buffer::<f32>(1 << 16)?;
                    d.lane()?.enter(|st| {
                        let mut v = st.bind(m.as_columns_mut());
                        st.launch(&kernels::fill_column, cfg(1 << 16), (&mut v, 1.0))
                    })
                })?;
                panic!("on purpose");
            })
        }));
    assert!(caught.is_err());
    // The devices are fine afterwards.
    scope_multi(&gpus, |s| s.each_device(|d| d.lanes(2).map(drop)).map(drop)).expect("scope after a panic");
}
