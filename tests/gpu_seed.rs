//! The seed workload (DESIGN.md's north star) on a real GPU, for 1, 2, 8 and 64 lanes, per
//! column and fanned in, checked element by element against the f64 reference.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_seed -- --ignored`. Without one every test
//! here fails (never passes silently).

mod common;

use sluice::{kernels, scope, Gpu, LaunchConfig, Particle, Result};

const EPS2: f32 = 1e-3;
const TOL: f64 = 1e-4;

struct Inputs {
    rows: usize,
    cols: usize,
    targets: Vec<Particle>,
    sources: Vec<Particle>,
}

fn inputs(rows: usize, cols: usize, n_sources: usize) -> Inputs {
    let mut rng = common::rng();
    Inputs {
        rows,
        cols,
        targets: common::particles(&mut rng, rows * cols),
        sources: common::particles(&mut rng, n_sources),
    }
}

/// One lane per column: await the shared uploads, launch, copy the column back on the same lane.
fn per_column(gpu: &Gpu, inp: &Inputs) -> Result<Vec<f32>> {
    let (rows, n) = (inp.rows, inp.cols);
    let mut host = gpu.pinned_matrix::<f32>(rows, n)?;
    host.fill(f32::NAN); // poison: every element must be written
    scope(gpu, |s| {
        let sources = s.upload(&inp.sources)?;
        let targets = s.upload_matrix(&inp.targets, rows, n)?;
        let out = s.alloc_matrix::<f32>(rows, n)?;
        let cfg = LaunchConfig::for_elements(rows, 256);
        let mut pending = Vec::new();
        for (j, ((lane, col), dst)) in
            s.lanes(n)?.into_iter().zip(out.columns_mut()).zip(host.columns_mut()).enumerate()
        {
            pending.push(lane.enter(|st| {
                let src = st.await_fence(&sources)?;
                let tgt = st.await_fence(&targets)?.column(j).expect("column in range");
                let mut col = st.bind(col);
                st.launch(&kernels::potential, cfg, (&mut col, &tgt, &src, EPS2))?;
                st.copy_to_host(&col, dst)
            })?);
        }
        // Each column can be read as soon as its own copy is done.
        for p in pending {
            let col = p.wait()?;
            assert!(col.iter().all(|x| !x.is_nan()));
        }
        Ok(())
    })?;
    Ok(host.to_vec())
}

/// Fan-in: every lane computes its column and fences it; one collector lane awaits all the
/// fences and copies the whole matrix back at once.
fn fan_in(gpu: &Gpu, inp: &Inputs) -> Result<Vec<f32>> {
    let (rows, n) = (inp.rows, inp.cols);
    let mut host = gpu.pinned_matrix::<f32>(rows, n)?;
    host.fill(f32::NAN);
    scope(gpu, |s| {
        let sources = s.upload(&inp.sources)?;
        let targets = s.upload_matrix(&inp.targets, rows, n)?;
        let out = s.alloc_matrix::<f32>(rows, n)?;
        let cfg = LaunchConfig::for_elements(rows, 128);
        let mut handed = Vec::new();
        for (j, (lane, col)) in s.lanes(n)?.into_iter().zip(out.columns_mut()).enumerate() {
            handed.push(lane.enter(|st| {
                let src = st.await_fence(&sources)?;
                let tgt = st.await_fence(&targets)?.column(j).expect("column in range");
                let mut col = st.bind(col);
                st.launch(&kernels::potential, cfg, (&mut col, &tgt, &src, EPS2))?;
                st.fence(col)
            })?);
        }
        handed.reverse(); // order does not matter: await_all sorts the columns
        let collector = s.lane()?;
        let done = collector.enter(|st| {
            let all = st.await_all(handed)?;
            assert_eq!((all.rows(), all.cols()), (rows, n));
            st.copy_to_host(&all, host.as_pinned_mut())
        })?;
        assert_eq!(collector.stats().waits_enqueued, n as u64);
        done.wait().map(drop)
    })?;
    Ok(host.to_vec())
}

/// Column ranges: each lane computes `k` columns (one launch per column, a padded matrix)
/// and copies its whole range back with one 2-D copy.
fn column_ranges(gpu: &Gpu, inp: &Inputs, k: usize, ld: usize) -> Result<Vec<f32>> {
    let (rows, n) = (inp.rows, inp.cols);
    let mut host = gpu.pinned_matrix::<f32>(rows, n)?;
    host.fill(f32::NAN);
    scope(gpu, |s| {
        let sources = s.upload(&inp.sources)?;
        let targets = s.upload_matrix(&inp.targets, rows, n)?;
        let out = s.alloc_matrix_padded::<f32>(rows, n, ld)?;
        let cfg = LaunchConfig::for_elements(rows, 256);
        let chunks = out.column_chunks_mut(k).zip(host.column_chunks_mut(k));
        for (c, ((range, dst), lane)) in chunks.zip(s.lanes(n.div_ceil(k))?).enumerate() {
            lane.enter(|st| {
                let src = st.await_fence(&sources)?;
                let tgt = st.await_fence(&targets)?;
                let mut range = st.bind(range);
                for j in 0..range.cols() {
                    let t = tgt.column(c * k + j).expect("column in range");
                    let mut col = range.column_mut(j).expect("column in range");
                    st.launch(&kernels::potential, cfg, (&mut col, &t, &src, EPS2))?;
                }
                st.copy_to_host(&range, dst)
            })?
            .wait()?;
        }
        Ok(())
    })?;
    Ok(host.to_vec())
}

fn run_seed(lanes: usize, rows: usize, sources: usize) {
    let gpu = common::gpu();
    let inp = inputs(rows, lanes, sources);
    let out = per_column(&gpu, &inp).expect("seed workload");
    let worst = common::check_potential(&out, rows, lanes, &inp.targets, &inp.sources, EPS2, TOL);
    println!("{lanes} lanes x {rows} rows x {sources} sources: worst relative error {worst:e}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn seed_workload_on_1_lane() {
    run_seed(1, 100_003, 300);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn seed_workload_on_2_lanes() {
    run_seed(2, 65_536, 512);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn seed_workload_on_8_lanes() {
    run_seed(8, 50_000, 512);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn seed_workload_on_64_lanes() {
    run_seed(64, 16_384, 256);
}

fn seed_workload_fanned_into_one_copy(gpu: Gpu) {
    for lanes in [1, 8, 64] {
        let inp = inputs(4096 + 17, lanes, 128);
        let out = fan_in(&gpu, &inp).expect("fan-in");
        common::check_potential(&out, inp.rows, lanes, &inp.targets, &inp.sources, EPS2, TOL);
    }
}

fn seed_workload_with_column_range_copies_of_a_padded_matrix(gpu: Gpu) {
    let inp = inputs(1000, 10, 64);
    for (k, ld) in [(3, 1000), (4, 1024), (10, 1031)] {
        let out = column_ranges(&gpu, &inp, k, ld).expect("column ranges");
        common::check_potential(&out, inp.rows, inp.cols, &inp.targets, &inp.sources, EPS2, TOL);
    }
}

fn results_match_between_one_lane_and_many(gpu: Gpu) {
    // The same inputs on 1 lane (columns in sequence) and on 16 lanes: bit-identical.
    let inp = inputs(8192, 16, 200);
    let many = per_column(&gpu, &inp).expect("16 lanes");
    let one = column_ranges(&gpu, &inp, 16, 8192).expect("one lane");
    assert!(many.iter().zip(&one).all(|(a, b)| a.to_bits() == b.to_bits()));
}

on_every_backend!(
    seed_workload_fanned_into_one_copy,
    seed_workload_with_column_range_copies_of_a_padded_matrix,
    results_match_between_one_lane_and_many,
);
