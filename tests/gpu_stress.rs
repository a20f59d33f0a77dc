//! Randomized hand-off graphs on a real GPU: many columns wander between many lanes
//! through fences, each step a kernel on integer-valued floats, so every result is exact
//! and compared bit for bit with a CPU model of the same graph.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_stress -- --ignored`. Without one it fails.

mod common;

use rand::rngs::StdRng;
use rand::Rng;
use sluice::{kernels, scope, ColumnsMut, Fenced, Gpu, LaunchConfig, Result};

/// One step of a graph.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// `col = v` on `lane`.
    Fill { col: usize, lane: usize, v: f32 },
    /// `col += a * u` (the shared upload) on `lane`.
    AddShared { col: usize, lane: usize, a: f32 },
    /// `col += a * other` on `lane`: both columns are handed to `lane` and back out.
    Mix { col: usize, other: usize, lane: usize, a: f32 },
    /// Copy `col` back on `lane` and compare it, later, with the model at this point.
    Snapshot { col: usize, lane: usize },
}

fn graph(rng: &mut StdRng, cols: usize, lanes: usize, steps: usize) -> Vec<Op> {
    let mut ops: Vec<Op> = (0..cols)
        .map(|col| Op::Fill { col, lane: rng.random_range(0..lanes), v: rng.random_range(-8i32..8) as f32 })
        .collect();
    for _ in 0..steps {
        let col = rng.random_range(0..cols);
        let lane = rng.random_range(0..lanes);
        let a = rng.random_range(-2i32..=2) as f32;
        ops.push(match rng.random_range(0..10) {
            0 => Op::Fill { col, lane, v: rng.random_range(-8i32..8) as f32 },
            1..=3 => Op::AddShared { col, lane, a },
            4..=8 if cols > 1 => {
                let other = (col + rng.random_range(1..cols)) % cols;
                Op::Mix { col, other, lane, a }
            }
            _ => Op::Snapshot { col, lane },
        });
    }
    ops
}

/// The same graph on the CPU, in f32 (exact: every value is a small integer).
fn model(ops: &[Op], u: &[f32], cols: usize) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let n = u.len();
    let mut m = vec![vec![0.0f32; n]; cols];
    let mut snaps = Vec::new();
    for op in ops {
        match *op {
            Op::Fill { col, v, .. } => m[col].iter_mut().for_each(|x| *x = v),
            Op::AddShared { col, a, .. } => m[col].iter_mut().zip(u).for_each(|(y, x)| *y += a * x),
            Op::Mix { col, other, a, .. } => {
                let o = m[other].clone();
                m[col].iter_mut().zip(&o).for_each(|(y, x)| *y += a * x);
            }
            Op::Snapshot { col, .. } => snaps.push(m[col].clone()),
        }
    }
    (m, snaps)
}

/// Runs the graph: every column is a `Fenced` token between steps; each step awaits the
/// tokens it needs on its lane and fences them again. At the end one lane fans them in.
fn run(gpu: &Gpu, ops: &[Op], u: &[f32], cols: usize, lanes: usize) -> Result<(Vec<f32>, Vec<Vec<f32>>)> {
    let n = u.len();
    let snapshots = ops.iter().filter(|o| matches!(o, Op::Snapshot { .. })).count();
    let mut host = gpu.pinned_matrix::<f32>(n, cols)?;
    host.fill(f32::NAN);
    let mut snap_host = gpu.pinned_matrix::<f32>(n, snapshots.max(1))?;
    snap_host.fill(f32::NAN);
    let cfg = LaunchConfig::for_elements(n, 128);
    scope(gpu, |s| {
        let shared = s.upload(u)?;
        let m = s.alloc_matrix::<f32>(n, cols)?;
        let lanes = s.lanes(lanes)?;
        let mut fresh: Vec<Option<ColumnsMut<'_, f32>>> = m.columns_mut().map(Some).collect();
        let mut tokens: Vec<Option<Fenced<'_, ColumnsMut<'_, f32>>>> = (0..cols).map(|_| None).collect();
        let mut snap_dst = snap_host.columns_mut();
        let mut pending = Vec::new();
        for op in ops {
            match *op {
                Op::Fill { col, lane, v } => {
                    let (f, t) = (fresh[col].take(), tokens[col].take());
                    tokens[col] = Some(lanes[lane].enter(|st| {
                        let mut y = match (f, t) {
                            (Some(f), _) => st.bind(f),
                            (None, Some(t)) => st.await_fence(t)?,
                            (None, None) => unreachable!("every column has a token"),
                        };
                        st.launch(&kernels::fill_column, cfg, (&mut y, v))?;
                        st.fence(y)
                    })?);
                }
                Op::AddShared { col, lane, a } => {
                    let t = tokens[col].take().expect("filled first");
                    tokens[col] = Some(lanes[lane].enter(|st| {
                        let x = st.await_fence(&shared)?;
                        let mut y = st.await_fence(t)?;
                        st.launch(&kernels::saxpy, cfg, (&mut y, &x, a))?;
                        st.fence(y)
                    })?);
                }
                Op::Mix { col, other, lane, a } => {
                    let (ty, tx) =
                        (tokens[col].take().expect("filled first"), tokens[other].take().expect("filled first"));
                    let (y, x) = lanes[lane].enter(|st| {
                        let mut y = st.await_fence(ty)?;
                        let x = st.await_fence(tx)?;
                        st.launch(&kernels::saxpy, cfg, (&mut y, &x, a))?;
                        Ok::<_, sluice::Error>((st.fence(y)?, st.fence(x)?))
                    })?;
                    tokens[col] = Some(y);
                    tokens[other] = Some(x);
                }
                Op::Snapshot { col, lane } => {
                    let t = tokens[col].take().expect("filled first");
                    let dst = snap_dst.next().expect("one destination per snapshot");
                    let (t, p) = lanes[lane].enter(|st| {
                        let y = st.await_fence(t)?;
                        let p = st.copy_to_host(&y, dst)?;
                        Ok::<_, sluice::Error>((st.fence(y)?, p))
                    })?;
                    tokens[col] = Some(t);
                    pending.push(p);
                }
            }
        }
        // Fan-in on the last lane: one copy of the whole matrix.
        let all: Vec<_> = tokens.into_iter().map(|t| t.expect("every column was filled")).collect();
        let done = lanes[lanes.len() - 1].enter(|st| {
            let v = st.await_all(all)?;
            st.copy_to_host(&v, host.as_pinned_mut())
        })?;
        done.wait()?;
        // Leave some pending copies unawaited: the scope's join covers them.
        for p in pending.into_iter().step_by(2) {
            p.wait()?;
        }
        Ok(())
    })?;
    let snaps = (0..snapshots).map(|k| snap_host.column(k).expect("snapshot").to_vec()).collect();
    Ok((host.to_vec(), snaps))
}

fn random_hand_off_graphs_give_exact_results(gpu: Gpu) {
    let mut rng = common::rng();
    for round in 0..24 {
        let lanes = [1, 2, 3, 5, 8, 16, 32][round % 7];
        let cols = rng.random_range(1..=12);
        let n = [1, 257, 4096, 65_536][round % 4];
        let steps = rng.random_range(20..200);
        let u: Vec<f32> = (0..n).map(|_| rng.random_range(-8i32..=8) as f32).collect();
        let ops = graph(&mut rng, cols, lanes, steps);
        let (want, want_snaps) = model(&ops, &u, cols);
        let (got, got_snaps) = run(&gpu, &ops, &u, cols, lanes).unwrap_or_else(|e| panic!("round {round}: {e}"));
        for c in 0..cols {
            for i in 0..n {
                assert_eq!(
                    got[c * n + i],
                    want[c][i],
                    "round {round} ({lanes} lanes, {cols} columns, {n} rows): column {c} element {i}"
                );
            }
        }
        for (k, (g, w)) in got_snaps.iter().zip(&want_snaps).enumerate() {
            assert!(g.iter().zip(w).all(|(a, b)| a == b), "round {round}: snapshot {k} differs");
        }
        println!("round {round}: {lanes} lanes, {cols} columns x {n}, {} steps: exact", ops.len());
    }
}

on_every_backend!(random_hand_off_graphs_give_exact_results,);
