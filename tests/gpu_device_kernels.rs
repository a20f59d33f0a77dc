//! The kernels of `gpu-kernels` beyond the seed — `potential_tiled`, `sum_reduce`,
//! `transpose`, `histogram`, `column_sums` — and `device_selftest`, on a real GPU, each checked against
//! its CPU reference in `gpu_kernels::reference` (f64 or exact) with fresh random inputs.
//!
//! Every output is poisoned before the launch (NaN for `f32`, `0xDEADBEEF` for `u32`), or
//! zeroed where the kernel accumulates (its contract), and is followed in device memory by
//! [`TAIL`] poisoned elements that no launch may touch: an element never written, counted
//! twice, or written past the end fails the test. Each test prints a small table of its
//! largest errors and the seed (`SLUICE_TEST_SEED=<seed>` replays a run).
//!
//! `saxpy` and `fill_column` are covered by `kernels_smoke` and the host tests.
//!
//! Needs an NVIDIA GPU: `cargo test --test gpu_device_kernels -- --ignored`. Without one
//! every test here fails (never passes silently).

mod common;

use gpu_kernels::{reference, SELFTEST_DYNAMIC_SHARED, SELFTEST_LEN, SELFTEST_ROWS, SELFTEST_THREADS};
use rand::rngs::StdRng;
use rand::Rng;
use sluice::{
    kernels, scope, ColumnView, ColumnViewMut, Error, Gpu, Kernel, LaunchConfig, Mut, Particle, Ref, Result, Stream,
};

/// Poisoned elements after every output, checked untouched afterwards: more than the
/// largest block, so a thread past the last row that stored anyway lands in them.
const TAIL: usize = 1100;

/// Poison for `u32` outputs.
const POISON_U32: u32 = 0xDEAD_BEEF;

/// The unit roundoff of `f32` (round to nearest): every correctly rounded `f32` operation
/// has a relative error of at most `U`.
const U: f64 = f32::EPSILON as f64 / 2.0;

/// Softening of the potentials (as the seed tests and the benchmark).
const EPS2: f32 = 1e-3;

/// `f32` NaN with the exact bits the poison uses (a kernel never produces these bits here).
fn is_f32_poison(v: f32) -> bool {
    v.to_bits() == f32::NAN.to_bits()
}

/// A 1-D launch of `grid` blocks of `block` threads.
fn cfg_1d(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid: (grid, 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 }
}

/// The multiprocessor count, for the recommended grids.
fn sm_count(gpu: &Gpu) -> u32 {
    gpu.info().sm_count
}

// ---------------------------------------------------------------------------------------
// potential_tiled

type PotentialSig = (Mut<f32>, Ref<Particle>, Ref<Particle>, f32);

/// Runs a potential kernel, one thread per target and `block` threads per block (grid
/// `ceil(rows / block)`), into a NaN-poisoned output followed by a poisoned tail.
/// Returns (the `rows` outputs, the tail).
fn potential_on_gpu(
    gpu: &Gpu,
    kernel: &Kernel<PotentialSig>,
    targets: &[Particle],
    sources: &[Particle],
    block: u32,
) -> Result<(Vec<f32>, Vec<f32>)> {
    let rows = targets.len();
    let poison = vec![f32::NAN; rows + TAIL];
    let mut host = gpu.pinned_buffer::<f32>(rows + TAIL)?;
    host.fill(f32::NAN);
    scope(gpu, |s| {
        let (tgt, src) = (s.upload(targets)?, s.upload(sources)?);
        let out = s.alloc_buffer::<f32>(rows + TAIL)?;
        let (head_dst, tail_dst) = host.as_pinned_mut().split_at(rows).expect("rows <= rows + TAIL");
        s.lane()?.enter(|st| {
            let (tgt, src) = (st.await_fence(&tgt)?, st.await_fence(&src)?);
            let mut all = st.bind(out.as_columns_mut());
            st.copy_to_device(&poison, &mut all)?;
            let (mut head, tail) = all.split_rows(rows).expect("rows <= rows + TAIL");
            st.launch(kernel, LaunchConfig::for_elements(rows, block), (&mut head, &tgt, &src, EPS2))?;
            st.copy_to_host(&head, head_dst)?.wait()?;
            st.copy_to_host(&tail, tail_dst)?.wait().map(drop)
        })
    })?;
    Ok((host[..rows].to_vec(), host[rows..].to_vec()))
}

/// `reference::potential` on all cores (the f64 sums dominate the test's time).
fn potential_reference(targets: &[Particle], sources: &[Particle]) -> Vec<f64> {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let per = targets.len().div_ceil(threads).max(1);
    std::thread::scope(|sc| {
        let parts: Vec<_> =
            targets.chunks(per).map(|chunk| sc.spawn(move || reference::potential(chunk, sources, EPS2))).collect();
        parts.into_iter().flat_map(|h| h.join().expect("reference thread")).collect()
    })
}

fn potential_tiled_matches_the_f64_reference_and_the_naive_kernel(gpu: Gpu) {
    let mut rng = common::rng();
    // (rows, sources, block): rows below, at and past multiples of the block; sources
    // below, at and past multiples of the 256-source tile; blocks smaller than the tile
    // (each thread loads several sources), not a power of two, and larger than the tile
    // (some threads load none). The kernel takes any block up to 1024.
    let cases: [(usize, usize, u32); 12] = [
        (1, 1, 256),
        (255, 256, 256),
        (256, 255, 256),
        (1000, 257, 256),
        (4097, 1000, 256),
        (20_001, 513, 256),
        (3, 4099, 256),
        (5000, 2049, 100),
        (12_345, 768, 64),
        (40_000, 300, 1024),
        (777, 1024, 1024),
        (65_536 + 77, 256, 128),
    ];
    println!(
        "{:>7} {:>7} {:>5}  {:>12} {:>10}  {:>16}  {:>12}",
        "rows", "sources", "block", "max rel err", "tolerance", "bitwise = naive", "max rel diff"
    );
    for (rows, n_sources, block) in cases {
        let targets = common::particles(&mut rng, rows);
        let sources = common::particles(&mut rng, n_sources);
        let (tiled, tail) =
            potential_on_gpu(&gpu, &kernels::potential_tiled, &targets, &sources, block).expect("potential_tiled");
        let (naive, _) = potential_on_gpu(&gpu, &kernels::potential, &targets, &sources, 256).expect("potential");
        if let Some(k) = tail.iter().position(|v| !is_f32_poison(*v)) {
            panic!(
                "potential_tiled ({rows} rows, block {block}) wrote past its output: element {} = {}",
                rows + k,
                tail[k]
            );
        }
        let want = potential_reference(&targets, &sources);
        // Tolerance: every term q / sqrt(r2) is positive (positive charges), so the f32
        // sum has no cancellation and its relative error is bounded by the errors of the
        // terms plus those of the additions. A term takes 7 rounded operations (3
        // subtractions, a product, 2 fmas and `+ eps2` for r2, then sqrt and the
        // division): at most about 5 U relative after propagation (r2's relative error
        // halves through the square root). The additions run in a chain of `sources`:
        // at most (sources - 1) U relative for positive terms. 16 U covers the terms
        // with room to spare; the bound is a worst case, the observed error is far below.
        let tol = (n_sources as f64 + 16.0) * U;
        let (mut worst, mut worst_vs_naive, mut bitwise) = (0.0f64, 0.0f64, 0usize);
        for i in 0..rows {
            let got = tiled[i];
            assert!(!got.is_nan(), "potential_tiled ({rows} rows, block {block}): row {i} was never written");
            let rel = (got as f64 - want[i]).abs() / want[i].abs();
            assert!(
                rel <= tol,
                "potential_tiled ({rows} rows x {n_sources} sources, block {block}): row {i}: got {got}, \
                 want {}, relative error {rel:e} > {tol:e}",
                want[i]
            );
            worst = worst.max(rel);
            // The two kernels add the same terms in the same order with the same
            // operations: they should agree bit for bit; 1e-6 relative is the limit.
            if got.to_bits() == naive[i].to_bits() {
                bitwise += 1;
            } else {
                let diff = (got as f64 - naive[i] as f64).abs() / (naive[i] as f64).abs();
                assert!(
                    diff <= 1e-6,
                    "potential_tiled and potential differ at row {i} ({rows} rows x {n_sources} sources, \
                     block {block}): {got} vs {}, relative {diff:e}",
                    naive[i]
                );
                worst_vs_naive = worst_vs_naive.max(diff);
            }
        }
        println!(
            "{rows:>7} {n_sources:>7} {block:>5}  {worst:>12.3e} {tol:>10.2e}  {:>16}  {worst_vs_naive:>12.3e}",
            format!("{bitwise}/{rows}")
        );
    }
}

// ---------------------------------------------------------------------------------------
// sum_reduce

/// Runs `sum_reduce` on `x` with `out = [init, NaN]` (the kernel adds to `out[0]` and must
/// leave `out[1]` alone). Returns (`out[0]`, `out[1]`).
fn sum_on_gpu(gpu: &Gpu, x: &[f32], init: f32, block: u32, grid: u32) -> Result<(f32, f32)> {
    let start = [init, f32::NAN];
    let mut host = gpu.pinned_buffer::<f32>(2)?;
    host.fill(f32::NAN);
    scope(gpu, |s| {
        let xs = s.upload(x)?;
        let out = s.alloc_buffer::<f32>(2)?;
        s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut out = st.bind(out.as_columns_mut());
            // out[0] = init: zero for a plain sum (the kernel's contract), another value
            // to check that the kernel adds to it.
            st.copy_to_device(&start, &mut out)?;
            st.launch(&kernels::sum_reduce, cfg_1d(grid, block), (&mut out, &x))?;
            st.copy_to_host(&out, host.as_pinned_mut())?.wait().map(drop)
        })
    })?;
    Ok((host[0], host[1]))
}

/// The launch shapes tried for `n` inputs: the recommended one (block 256, grid
/// `min(ceil(n / 1024), 8 × SMs)`), the largest block, one warp alone (the whole input
/// through one thread block), and a block of 3 warps (not a power of two) on a few blocks.
fn sum_configs(n: usize, sms: u32) -> [(u32, u32); 4] {
    let recommended = (n.div_ceil(1024) as u32).min(8 * sms);
    [(256, recommended), (1024, recommended), (32, 1), (96, 7)]
}

/// The longest chain of rounded `f32` additions any input of `sum_reduce` goes through
/// (the height of its summation tree): per thread, `ceil(c / 4)` additions into one of its
/// four accumulators plus up to 3 in the remainder loop (`c` inputs per thread), 2 to
/// combine the accumulators, 5 shuffle steps in the warp, 5 in warp 0 over the warps'
/// sums, then the block sums are added one after another to `out[0]` (at most `grid`).
fn sum_chain(n: usize, block: u32, grid: u32) -> usize {
    let per_thread = n.div_ceil(block as usize * grid as usize);
    per_thread.div_ceil(4) + 3 + 2 + 5 + 5 + grid as usize
}

fn sum_reduce_matches_the_f64_sum(gpu: Gpu) {
    let mut rng = common::rng();
    println!(
        "{:>10} {:>5} {:>5}  {:>16} {:>12} {:>10} {:>10}",
        "n", "block", "grid", "f64 sum", "abs error", "tolerance", "err/tol"
    );
    for n in [1, 33, 1023, 1024, 1025, 100_003, (1 << 20) + 7, 10_000_019] {
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let (want, abs_sum) = reference::sum(&x);
        for (block, grid) in sum_configs(n, sm_count(&gpu)) {
            let (got, after) = sum_on_gpu(&gpu, &x, 0.0, block, grid).expect("sum_reduce");
            assert!(is_f32_poison(after), "sum_reduce wrote out[1] (= {after}): it may write only out[0]");
            // Tolerance: for any summation tree, |f32 sum - exact sum| <= gamma_h * sum |x|
            // with h the tree's height and gamma_h = h U / (1 - h U) (Higham, Accuracy and
            // Stability, §4.2): each input is multiplied by at most h factors (1 + d),
            // |d| <= U. `sum_chain` bounds h for this kernel's tree (whatever order the
            // atomics land in); the factor 2 covers gamma's denominator and leaves a
            // margin. Much tighter than `n * eps * sum |x|` (reference::sum's safe bound),
            // and still a worst case: the observed error is printed next to it.
            let tol = 2.0 * sum_chain(n, block, grid) as f64 * U * abs_sum;
            let err = (got as f64 - want).abs();
            assert!(
                err <= tol,
                "sum_reduce of {n} values (block {block}, grid {grid}): got {got}, want {want}, error {err:e} > {tol:e}"
            );
            println!("{n:>10} {block:>5} {grid:>5}  {want:>16.6} {err:>12.3e} {tol:>10.2e} {:>10.3e}", err / tol);
        }
    }
}

fn sum_reduce_counts_every_element_once_and_adds_to_out(gpu: Gpu) {
    // Small integers: every partial sum (including the starting value) stays below 2^24
    // in magnitude, so every f32 addition is exact whatever the order, and the result must
    // be exactly `start + Σ x`: an element missed or counted twice changes it by at least 1.
    let mut rng = common::rng();
    const START: i64 = 1000;
    println!("{:>10} {:>5} {:>5}  {:>12} {:>12}", "n", "block", "grid", "want", "got");
    for n in [1usize, 1000, 1025, (1 << 20) + 7, 4_000_000] {
        assert!(START as usize + 4 * n < 1 << 24, "keep every partial sum exact in f32");
        let ints: Vec<i64> = (0..n).map(|_| rng.random_range(-4i64..=4)).collect();
        let x: Vec<f32> = ints.iter().map(|&v| v as f32).collect();
        let want = (START + ints.iter().sum::<i64>()) as f32;
        for (block, grid) in sum_configs(n, sm_count(&gpu)) {
            let (got, after) = sum_on_gpu(&gpu, &x, START as f32, block, grid).expect("sum_reduce");
            assert!(is_f32_poison(after), "sum_reduce wrote out[1] (= {after})");
            assert_eq!(got, want, "sum_reduce of {n} small integers onto {START} (block {block}, grid {grid})");
            println!("{n:>10} {block:>5} {grid:>5}  {want:>12} {got:>12}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// transpose

/// One lane runs `launch` on the first `out_len` elements of an output that has `TAIL`
/// more, all poisoned (NaN) first, with `input` uploaded; returns the head and the tail as the
/// host saw them (a kernel that wrote past its view would show in the tail).
fn on_a_poisoned_head<F>(gpu: &Gpu, input: &[f32], out_len: usize, launch: F) -> Result<(Vec<f32>, Vec<f32>)>
where
    F: for<'s, 'l> Fn(&Stream<'s, 'l>, &mut ColumnViewMut<'s, 'l, f32>, &ColumnView<'s, 'l, f32>) -> Result<()>,
{
    let poison = vec![f32::NAN; out_len + TAIL];
    let mut host = gpu.pinned_buffer::<f32>(out_len + TAIL)?;
    host.fill(f32::NAN);
    scope(gpu, |s| {
        let inp = s.upload(input)?;
        let out = s.alloc_buffer::<f32>(out_len + TAIL)?;
        let (head_dst, tail_dst) = host.as_pinned_mut().split_at(out_len).expect("out_len <= out_len + TAIL");
        s.lane()?.enter(|st| {
            let inp = st.await_fence(&inp)?;
            let mut all = st.bind(out.as_columns_mut());
            st.copy_to_device(&poison, &mut all)?;
            let (mut head, tail) = all.split_rows(out_len).expect("out_len <= out_len + TAIL");
            launch(st, &mut head, &inp)?;
            st.copy_to_host(&head, head_dst)?.wait()?;
            st.copy_to_host(&tail, tail_dst)?.wait().map(drop)
        })
    })?;
    Ok((host[..out_len].to_vec(), host[out_len..].to_vec()))
}

/// Runs `transpose` (block (32, 8), grid `(ceil(cols / 32), ceil(rows / 32))`) from
/// `input` into a NaN-poisoned output of `out_len` elements followed by a poisoned tail.
/// Returns (the output, the tail).
fn transpose_on_gpu(gpu: &Gpu, input: &[f32], rows: u32, cols: u32, out_len: usize) -> Result<(Vec<f32>, Vec<f32>)> {
    let cfg = LaunchConfig {
        grid: (cols.div_ceil(gpu_kernels::TRANSPOSE_TILE), rows.div_ceil(gpu_kernels::TRANSPOSE_TILE), 1),
        block: (gpu_kernels::TRANSPOSE_TILE, gpu_kernels::TRANSPOSE_BLOCK_ROWS, 1),
        shared_mem_bytes: 0,
    };
    on_a_poisoned_head(gpu, input, out_len, |st, out, inp| st.launch(&kernels::transpose, cfg, (out, inp, rows, cols)))
}

/// `#[kernel(block = (32, 8))]` on `transpose` reaches the three places that rely on it: the
/// handle's `BLOCK`, the PTX entry's `.reqntid` (which ptxas sizes the kernel for) and the
/// launch record the host checks every launch against. No GPU needed: the embedded PTX.
#[test]
fn transpose_declares_its_block_in_the_handle_and_the_ptx() {
    assert_eq!(kernels::transpose::BLOCK, (gpu_kernels::TRANSPOSE_TILE, gpu_kernels::TRANSPOSE_BLOCK_ROWS, 1));
    let ptx = sluice::kernels::PTX;
    let entry = ptx.find(".entry transpose(").expect("the transpose entry");
    let head = &ptx[entry..entry + ptx[entry..].find('{').expect("its body")];
    assert!(head.contains(".reqntid 32, 8, 1"), "{head}");
    let record: String = "block=32,8,1;".bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
    assert!(ptx.contains(&format!("__sluice_launch_transpose[13] = {{{record}}};")), "no launch record");
}

/// `transpose` is `#[kernel(block = (32, 8))]`: a launch with any other block is refused
/// before anything runs, naming the kernel and both shapes.
fn transpose_refuses_a_block_other_than_the_one_it_declares(gpu: Gpu) {
    let (rows, cols) = (64u32, 96u32);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    for block in [(16, 16, 1), (32, 4, 1), (256, 1, 1), (32, 8, 2)] {
        let cfg = LaunchConfig { grid: (cols / 32, rows / 32, 1), block, shared_mem_bytes: 0 };
        let got = on_a_poisoned_head(&gpu, &input, input.len(), |st, out, inp| {
            st.launch(&kernels::transpose, cfg, (out, inp, rows, cols))
        });
        match got {
            Err(Error::LaunchBlockShape { kernel: "transpose", block: b, required: (32, 8, 1) }) if b == block => {}
            other => panic!("transpose with block {block:?}: {other:?}"),
        }
    }
}

fn transpose_is_exact_for_any_shape(gpu: Gpu) {
    let mut rng = common::rng();
    // Square and not, below/at/past multiples of the 32-wide tile in each dimension,
    // single rows and columns.
    let shapes: [(u32, u32); 14] = [
        (1, 1),
        (1, 33),
        (33, 1),
        (31, 64),
        (32, 32),
        (64, 31),
        (100, 37),
        (257, 1000),
        (1000, 257),
        (1024, 1024),
        (2048, 4101),
        (4099, 3),
        (3, 70_001),
        (8, 8),
    ];
    println!("{:>6} {:>6}  {:>10}  {:>10}", "rows", "cols", "elements", "mismatches");
    for (rows, cols) in shapes {
        let n = rows as usize * cols as usize;
        let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let (out, tail) = transpose_on_gpu(&gpu, &input, rows, cols, n).expect("transpose");
        if let Some(k) = tail.iter().position(|v| !is_f32_poison(*v)) {
            panic!("transpose {rows}x{cols} wrote past its output: element {} = {}", n + k, tail[k]);
        }
        let want = reference::transpose(&input, rows as usize, cols as usize);
        let bad: Vec<usize> = (0..n).filter(|&k| out[k].to_bits() != want[k].to_bits()).collect();
        println!("{rows:>6} {cols:>6}  {n:>10}  {:>10}", bad.len());
        if let Some(&k) = bad.first() {
            // out is cols x rows row-major: element k is out[c * rows + r].
            let (c, r) = (k / rows as usize, k % rows as usize);
            panic!(
                "transpose {rows}x{cols}: {} of {n} elements wrong; first at out[{c} * {rows} + {r}] = {} \
                 (NaN: never written), want input[{r} * {cols} + {c}] = {}",
                bad.len(),
                out[k],
                want[k]
            );
        }
    }
}

fn transpose_does_nothing_when_the_output_is_shorter_than_rows_times_cols(gpu: Gpu) {
    let mut rng = common::rng();
    let (rows, cols) = (70u32, 45u32);
    let n = (rows * cols) as usize;
    let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let (out, tail) = transpose_on_gpu(&gpu, &input, rows, cols, n - 1).expect("transpose");
    let touched = out.iter().chain(&tail).filter(|v| !is_f32_poison(**v)).count();
    println!("output of {} elements for a {rows}x{cols} transpose: {touched} written", n - 1);
    assert_eq!(touched, 0, "transpose wrote into an output shorter than rows * cols");
}

// ---------------------------------------------------------------------------------------
// histogram

/// What one histogram run returned: the bins after one launch (zeroed before it), after a
/// second launch without zeroing (the kernel adds), and the poisoned tail.
struct HistogramRun {
    once: Vec<u32>,
    twice: Vec<u32>,
    tail: Vec<u32>,
}

/// Runs `histogram` (block 256, `grid` blocks) on `x` into `n_bins` bins over `[lo, hi)`.
fn histogram_on_gpu(gpu: &Gpu, x: &[f32], n_bins: usize, lo: f32, hi: f32, grid: u32) -> Result<HistogramRun> {
    let poison = vec![POISON_U32; n_bins + TAIL];
    let mut host = gpu.pinned_buffer::<u32>(2 * n_bins + TAIL)?;
    host.fill(POISON_U32);
    scope(gpu, |s| {
        let xs = s.upload(x)?;
        let bins = s.alloc_buffer::<u32>(n_bins + TAIL)?;
        let (once_dst, rest) = host.as_pinned_mut().split_at(n_bins).expect("2 n_bins + TAIL");
        let (twice_dst, tail_dst) = rest.split_at(n_bins).expect("n_bins + TAIL");
        s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut all = st.bind(bins.as_columns_mut());
            st.copy_to_device(&poison, &mut all)?;
            let (mut bins, tail) = all.split_rows(n_bins).expect("n_bins <= n_bins + TAIL");
            st.zero(&mut bins)?; // the kernel adds to the bins: zero them first
            st.launch(&kernels::histogram, cfg_1d(grid, 256), (&mut bins, &x, lo, hi))?;
            st.copy_to_host(&bins, once_dst)?.wait()?;
            st.launch(&kernels::histogram, cfg_1d(grid, 256), (&mut bins, &x, lo, hi))?;
            st.copy_to_host(&bins, twice_dst)?.wait()?;
            st.copy_to_host(&tail, tail_dst)?.wait().map(drop)
        })
    })?;
    Ok(HistogramRun {
        once: host[..n_bins].to_vec(),
        twice: host[n_bins..2 * n_bins].to_vec(),
        tail: host[2 * n_bins..].to_vec(),
    })
}

/// The next `f32` towards minus infinity (`f32::next_down` is newer than the MSRV).
fn below(v: f32) -> f32 {
    if v > 0.0 {
        f32::from_bits(v.to_bits() - 1)
    } else if v < 0.0 {
        f32::from_bits(v.to_bits() + 1)
    } else {
        -f32::from_bits(1)
    }
}

/// Uniform values in [-1.1, 1.1) (some outside every range used), with the edge cases
/// spread over the input when there is room: `lo`, `hi`, the floats just inside and outside
/// both ends, zeros, NaN, infinities and huge values.
fn histogram_input(rng: &mut StdRng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.1f32..1.1)).collect();
    let special =
        [lo, hi, below(hi), below(lo), -below(-lo), 0.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30];
    if n >= 4 * special.len() {
        for (k, v) in special.into_iter().enumerate() {
            x[k * (n / special.len())] = v;
        }
    }
    x
}

fn histogram_counts_exactly(gpu: Gpu) {
    let mut rng = common::rng();
    let sms = sm_count(&gpu);
    // Bin counts on both paths: up to HISTOGRAM_SHARED_BINS (4096) the block counts in shared
    // memory first; above it, straight into global memory.
    let shared_bins = gpu_kernels::HISTOGRAM_SHARED_BINS;
    let bin_counts = [1usize, 7, 256, 1000, shared_bins, shared_bins + 1, 10_000, 100_000];
    println!(
        "{:>8} {:>7}  {:>8}  {:>22}  {:>22}",
        "n", "bins", "launches", "counted in [-1, 1)", "counted in [-0.3, 0.7)"
    );
    for n in [1usize, 1000, 65_537, (1 << 22) + 13] {
        let ranges = [(-1.0f32, 1.0f32), (-0.3, 0.7)];
        let inputs: Vec<Vec<f32>> = ranges.iter().map(|&(lo, hi)| histogram_input(&mut rng, n, lo, hi)).collect();
        for n_bins in bin_counts {
            let mut launches = 0;
            let mut counted_per_range = Vec::new();
            for (&(lo, hi), x) in ranges.iter().zip(&inputs) {
                let want = reference::histogram(x, lo, hi, n_bins);
                let inside: u64 = want.iter().map(|&c| c as u64).sum();
                // Grids: recommended (min(ceil(n / 256), 2 x SMs)), one block (every value
                // through one block's grid-stride loop), and one thread per value.
                let recommended = (n.div_ceil(256) as u32).min(2 * sms);
                for grid in [recommended, 1, n.div_ceil(256) as u32] {
                    let run = histogram_on_gpu(&gpu, x, n_bins, lo, hi, grid).expect("histogram");
                    launches += 2;
                    let what = format!("histogram of {n} values into {n_bins} bins over [{lo}, {hi}), grid {grid}");
                    if let Some(k) = run.tail.iter().position(|&v| v != POISON_U32) {
                        panic!("{what}: wrote past the bins: element {} = {:#x}", n_bins + k, run.tail[k]);
                    }
                    let counted: u64 = run.once.iter().map(|&c| c as u64).sum();
                    if let Some(b) = (0..n_bins).find(|&b| run.once[b] != want[b]) {
                        let wrong = (0..n_bins).filter(|&b| run.once[b] != want[b]).count();
                        panic!(
                            "{what}: {wrong} bins wrong; first: bin {b} = {} ({:#x}), want {}; {counted} values \
                             counted, {inside} inside the range",
                            run.once[b], run.once[b], want[b]
                        );
                    }
                    assert_eq!(counted, inside, "{what}: values outside [lo, hi) were counted");
                    if let Some(b) = (0..n_bins).find(|&b| run.twice[b] != 2 * want[b]) {
                        panic!(
                            "{what}: a second launch without zeroing must add the same counts: bin {b} = {}, want {}",
                            run.twice[b],
                            2 * want[b]
                        );
                    }
                }
                counted_per_range.push(format!("{inside} of {n}"));
            }
            println!("{n:>8} {n_bins:>7}  {launches:>8}  {:>22}  {:>22}", counted_per_range[0], counted_per_range[1]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// device_selftest

fn device_selftest_reports_what_cuda_prescribes(gpu: Gpu) {
    let poison = vec![POISON_U32; SELFTEST_LEN + TAIL];
    let mut host = gpu.pinned_buffer::<u32>(SELFTEST_LEN + TAIL).expect("pinned buffer");
    host.fill(POISON_U32);
    // The launch its docs prescribe: one block of SELFTEST_THREADS (64), SELFTEST_DYNAMIC_SHARED
    // (256) bytes of dynamic shared memory, an output of SELFTEST_LEN words.
    let cfg = LaunchConfig {
        grid: (1, 1, 1),
        block: (SELFTEST_THREADS, 1, 1),
        shared_mem_bytes: SELFTEST_DYNAMIC_SHARED as u32,
    };
    scope(&gpu, |s| {
        let out = s.alloc_buffer::<u32>(SELFTEST_LEN + TAIL)?;
        let (head_dst, tail_dst) = host.as_pinned_mut().split_at(SELFTEST_LEN).expect("SELFTEST_LEN + TAIL");
        s.lane()?.enter(|st| {
            let mut all = st.bind(out.as_columns_mut());
            st.copy_to_device(&poison, &mut all)?;
            let (mut out, tail) = all.split_rows(SELFTEST_LEN).expect("SELFTEST_LEN <= SELFTEST_LEN + TAIL");
            st.launch(&kernels::device_selftest, cfg, (&mut out,))?;
            st.copy_to_host(&out, head_dst)?.wait()?;
            st.copy_to_host(&tail, tail_dst)?.wait().map(drop)
        })
    })
    .expect("device_selftest");
    let (out, tail) = host.split_at(SELFTEST_LEN);
    let unwritten = out[..SELFTEST_ROWS * SELFTEST_THREADS as usize].iter().filter(|&&v| v == POISON_U32).count();
    println!(
        "device_selftest: {SELFTEST_ROWS} rows x {SELFTEST_THREADS} threads + 8 global-atomic words; \
         {unwritten} result words still hold the poison"
    );
    assert!(tail.iter().all(|&v| v == POISON_U32), "device_selftest wrote past SELFTEST_LEN");
    match reference::check_selftest(out) {
        Ok(()) => println!("device_selftest: every operation returned what CUDA's semantics prescribe"),
        Err(report) => {
            println!("device_selftest: wrong results:\n{report}");
            panic!("device_selftest: wrong results (listed above):\n{report}");
        }
    }
}

/// The device std's second self-test (atomics with orderings, shuffles with a width and
/// the in-range predicate, the newer libdevice math), checked by
/// `sluice_device::selftest::check` against CUDA's semantics.
fn device_selftest_v2_reports_what_cuda_prescribes(gpu: Gpu) {
    use sluice_device::selftest::{check, LEN, THREADS};
    let mut host = gpu.pinned_buffer::<u32>(LEN).expect("pinned");
    host.fill(POISON_U32);
    let cfg = LaunchConfig { grid: (1, 1, 1), block: (THREADS as u32, 1, 1), shared_mem_bytes: 0 };
    let poison = vec![POISON_U32; LEN];
    scope(&gpu, |s| {
        let out = s.alloc_buffer::<u32>(LEN)?;
        s.lane()?.enter(|st| {
            let mut out = st.bind(out.as_columns_mut());
            st.copy_to_device(&poison, &mut out)?;
            st.launch(&kernels::device_selftest_v2, cfg, (&mut out,))?;
            st.copy_to_host(&out, host.as_pinned_mut())?.wait().map(drop)
        })
    })
    .expect("device_selftest_v2");
    let wrong = check(&host);
    println!("device_selftest_v2: {LEN} words, {} wrong", wrong.len());
    assert!(wrong.is_empty(), "device_selftest_v2: wrong results:\n{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------
// float-to-integer conversions: the device std's `to_u32_sat`/`to_i32_sat`, one `cvt.rzi` each

/// What the conversions compile to, read from the embedded PTX (no GPU needed): from `f32`,
/// `to_u32_sat` and `to_i32_sat` are one `cvt.rzi` each, with no compare or select of an `f32`
/// (which `as` adds), and `histogram`'s bin has no select at all; from `f64` they are `as`, whose
/// `i32` form keeps LLVM's NaN test (the bare instruction gives `i32::MIN` for an `f64` NaN).
#[test]
fn float_to_int_conversions_from_f32_are_one_instruction() {
    let ptx = sluice::kernels::PTX;
    let body = |name: &str| {
        let at = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no entry {name}"));
        let rest = &ptx[at..];
        &rest[..rest.find("\n}").expect("the entry's end")]
    };
    let convert = body("device_selftest_convert");
    for insn in ["cvt.rzi.u32.f32", "cvt.rzi.s32.f32", "cvt.rzi.u32.f64", "cvt.rzi.s32.f64", "setp.nan.f64"] {
        assert_eq!(convert.matches(insn).count(), 1, "{insn} in device_selftest_convert:\n{convert}");
    }
    let f32_tests = convert.lines().filter(|l| l.contains("setp") && l.contains(".f32")).count();
    assert_eq!((f32_tests, convert.matches("selp").count()), (0, 1), "device_selftest_convert:\n{convert}");
    let histogram = body("histogram");
    assert!(histogram.contains("cvt.rzi.u32.f32") && !histogram.contains("selp"), "histogram:\n{histogram}");
}

/// `DeviceFloat::to_u32_sat` and `to_i32_sat` equal Rust's `as` for every input: the edges (quiet
/// and signaling NaNs of both signs, infinities, each side of 0, of 1 and of every saturation
/// bound, subnormals) and values from fresh random bits (every exponent, NaNs among them), in
/// `f32` and `f64`.
fn float_to_int_conversions_equal_rusts_as(gpu: Gpu) {
    let mut rng = common::rng();
    let (below_1_32, below_1_64) = (1.0 - f32::EPSILON / 2.0, 1.0 - f64::EPSILON / 2.0);
    #[rustfmt::skip]
    let edges32 = [
        0.0f32, -0.0, 0.5, below_1_32, 1.0, -0.5, -below_1_32, -1.0, -1.5, 2.9, -2.9,
        f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001), f32::from_bits(0xff80_0001), f32::from_bits(0x7fbf_ffff),
        f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-45, -1e-45, f32::MAX, f32::MIN,
        2_147_483_520.0, 2_147_483_648.0, -2_147_483_648.0, -2_147_483_904.0, 4_294_967_040.0, 4_294_967_296.0,
    ];
    #[rustfmt::skip]
    let edges64 = [
        0.0f64, -0.0, 0.5, below_1_64, -below_1_64, -1.0, -1.5, 2.9, -2.9,
        f64::NAN, -f64::NAN, f64::from_bits(0x7ff0_0000_0000_0001), f64::from_bits(0xfff0_0000_0000_0001),
        f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, 5e-324, -5e-324, f64::MAX, f64::MIN,
        2_147_483_647.0, 2_147_483_647.999, 2_147_483_648.0, -2_147_483_648.0, -2_147_483_648.999, -2_147_483_649.0,
        4_294_967_295.0, 4_294_967_295.999, 4_294_967_296.0, 1e300, -1e300,
    ];
    let n = 5000;
    let x: Vec<f32> = edges32.iter().copied().chain((edges32.len()..n).map(|_| f32::from_bits(rng.random()))).collect();
    let y: Vec<f64> = edges64.iter().copied().chain((edges64.len()..n).map(|_| f64::from_bits(rng.random()))).collect();
    let poison = vec![POISON_U32; 4 * n + TAIL];
    let mut host = gpu.pinned_buffer::<u32>(4 * n + TAIL).expect("pinned");
    host.fill(POISON_U32);
    scope(&gpu, |s| {
        let (xd, yd) = (s.upload(&x)?, s.upload(&y)?);
        let out = s.alloc_buffer::<u32>(4 * n + TAIL)?;
        let (head_dst, tail_dst) = host.as_pinned_mut().split_at(4 * n).expect("4 n <= 4 n + TAIL");
        s.lane()?.enter(|st| {
            let (xd, yd) = (st.await_fence(&xd)?, st.await_fence(&yd)?);
            let mut all = st.bind(out.as_columns_mut());
            st.copy_to_device(&poison, &mut all)?;
            let (mut head, tail) = all.split_rows(4 * n).expect("4 n <= 4 n + TAIL");
            // 7 blocks of 256: fewer threads than outputs, so the grid-stride loop goes round.
            st.launch(&kernels::device_selftest_convert, cfg_1d(7, 256), (&mut head, &xd, &yd))?;
            st.copy_to_host(&head, head_dst)?.wait()?;
            st.copy_to_host(&tail, tail_dst)?.wait().map(drop)
        })
    })
    .expect("device_selftest_convert");
    assert!(host[4 * n..].iter().all(|&v| v == POISON_U32), "device_selftest_convert wrote past its output");
    let mut wrong = Vec::new();
    for i in 0..n {
        let want = [x[i] as u32, x[i] as i32 as u32, y[i] as u32, y[i] as i32 as u32];
        for (k, (&got, want)) in host[4 * i..4 * i + 4].iter().zip(want).enumerate() {
            if got != want {
                let what = ["f32 to_u32_sat", "f32 to_i32_sat", "f64 to_u32_sat", "f64 to_i32_sat"][k];
                let input = if k < 2 { format!("{:e}", x[i]) } else { format!("{:e}", y[i]) };
                wrong.push(format!("{what}({input}) = {got:#x}, `as` gives {want:#x}"));
            }
        }
    }
    println!("device_selftest_convert: {} conversions, {} differ from `as`", 4 * n, wrong.len());
    assert!(wrong.is_empty(), "conversions that differ from Rust's `as`:\n{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------
// column_sums: a bounds check of stride `cols` in a loop (the range-check pass's case)

/// Runs `column_sums` over `m` (`rows × cols`, row-major; `m` may be shorter) with `grid`
/// blocks of 64 threads into `cols` NaN-poisoned outputs and a poisoned tail.
fn column_sums_on_gpu(gpu: &Gpu, m: &[f32], rows: usize, cols: usize, grid: u32) -> Result<(Vec<f32>, Vec<f32>)> {
    on_a_poisoned_head(gpu, m, cols, |st, out, input| {
        st.launch(&kernels::column_sums, cfg_1d(grid, 64), (out, input, rows, cols))
    })
}

fn column_sums_match_the_f64_reference(gpu: Gpu) {
    let mut rng = common::rng();
    // Row counts around the unrolled loop's four steps (0, 1, 3, 4, 5, 1027), columns below,
    // at and past the grid's threads (2 blocks of 64), a tall thin and a wide flat matrix.
    let shapes: [(usize, usize); 9] =
        [(0, 5), (1, 1), (3, 7), (4, 33), (5, 1000), (1000, 3), (1027, 257), (4096, 64), (17, 70_001)];
    println!("{:>6} {:>6}  {:>12}", "rows", "cols", "max err/bound");
    for (rows, cols) in shapes {
        // (An upload holds at least one element: with no rows the kernel reads none of it.)
        let m: Vec<f32> = (0..(rows * cols).max(1)).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let (out, tail) = column_sums_on_gpu(&gpu, &m, rows, cols, 2).expect("column_sums");
        if let Some(k) = tail.iter().position(|v| !is_f32_poison(*v)) {
            panic!("column_sums {rows}x{cols} wrote past its output: element {} = {}", cols + k, tail[k]);
        }
        let mut worst = 0.0f64;
        for (j, &got) in out.iter().enumerate() {
            let column = (0..rows).map(|i| m[i * cols + j] as f64);
            let want: f64 = column.clone().sum();
            // A chain of `rows` f32 additions: each rounding at most U of a partial sum.
            let bound = rows as f64 * U * column.map(f64::abs).sum::<f64>() + f64::MIN_POSITIVE;
            assert!(!got.is_nan(), "column_sums {rows}x{cols}: column {j} never written");
            worst = worst.max((got as f64 - want).abs() / bound);
        }
        println!("{rows:>6} {cols:>6}  {worst:>12.3}");
        assert!(worst <= 1.0, "column_sums {rows}x{cols}: an error beyond the bound ({worst:.3}x)");
    }
}

on_every_backend!(
    column_sums_match_the_f64_reference,
    float_to_int_conversions_equal_rusts_as,
    device_selftest_v2_reports_what_cuda_prescribes,
    potential_tiled_matches_the_f64_reference_and_the_naive_kernel,
    sum_reduce_matches_the_f64_sum,
    sum_reduce_counts_every_element_once_and_adds_to_out,
    transpose_is_exact_for_any_shape,
    transpose_refuses_a_block_other_than_the_one_it_declares,
    transpose_does_nothing_when_the_output_is_shorter_than_rows_times_cols,
    histogram_counts_exactly,
    device_selftest_reports_what_cuda_prescribes,
);

/// The CPU backend computes what the GPU computes: the same kernels on both, with the same
/// fresh inputs. Correctly rounded arithmetic in the same order gives the same bits
/// (`potential`, `potential_tiled`: `sqrt`, division and `fma` are IEEE on both), data
/// movement is exact (`transpose`, `histogram`); `potential_tiled_rsqrt` uses the GPU's
/// approximate `rsqrt` (≤ 2 ulp against the host's exact one) and `sum_reduce` adds the
/// blocks' sums in whatever order the atomics land, so those two agree within their error
/// bounds.
#[test]
#[ignore = "needs an NVIDIA GPU: run with --ignored on a GPU machine"]
fn the_cpu_backend_computes_what_the_gpu_computes() {
    let (cuda, cpu) = (common::gpu(), common::cpu());
    let mut rng = common::rng();
    let (targets, sources) = (common::particles(&mut rng, 3001), common::particles(&mut rng, 777));
    println!("{:<22} {:>14}", "kernel", "max rel diff");
    for (name, kernel, exact) in [
        ("potential", &kernels::potential, true),
        ("potential_tiled", &kernels::potential_tiled, true),
        ("potential_tiled_rsqrt", &kernels::potential_tiled_rsqrt, false),
    ] {
        let (g, _) = potential_on_gpu(&cuda, kernel, &targets, &sources, 256).expect("cuda");
        let (c, _) = potential_on_gpu(&cpu, kernel, &targets, &sources, 256).expect("cpu");
        let diff = g.iter().zip(&c).map(|(&a, &b)| ((a - b) / a).abs() as f64).fold(0.0, f64::max);
        println!("{name:<22} {diff:>14.3e}");
        if exact {
            assert!(g.iter().zip(&c).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: CPU and GPU differ ({diff:e})");
        } else {
            assert!(diff < 1e-5, "{name}: CPU and GPU differ by {diff:e}");
        }
    }
    let (rows, cols) = (300u32, 517u32);
    let input: Vec<f32> = (0..rows * cols).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let (g, _) = transpose_on_gpu(&cuda, &input, rows, cols, input.len()).expect("cuda");
    let (c, _) = transpose_on_gpu(&cpu, &input, rows, cols, input.len()).expect("cpu");
    assert_eq!(g, c, "transpose: CPU and GPU differ");
    println!("{:<22} {:>14}", "transpose", "exact");
    let x = histogram_input(&mut rng, 200_003, -1.0, 1.0);
    let (g, c) = (
        histogram_on_gpu(&cuda, &x, 1000, -1.0, 1.0, 64).expect("cuda"),
        histogram_on_gpu(&cpu, &x, 1000, -1.0, 1.0, 64).expect("cpu"),
    );
    assert_eq!((g.once, g.twice), (c.once, c.twice), "histogram: CPU and GPU differ");
    println!("{:<22} {:>14}", "histogram", "exact");
    let x: Vec<f32> = (0..1_000_003).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let ((g, _), (c, _)) =
        (sum_on_gpu(&cuda, &x, 0.0, 256, 64).expect("cuda"), sum_on_gpu(&cpu, &x, 0.0, 256, 64).expect("cpu"));
    let bound = sum_chain(x.len(), 256, 64) as f64 * U * x.iter().map(|v| v.abs() as f64).sum::<f64>();
    println!("{:<22} {:>14.3e} (bound {bound:.1e})", "sum_reduce", (g - c).abs());
    assert!(((g - c).abs() as f64) <= 2.0 * bound, "sum_reduce: CPU {c} and GPU {g} differ by more than 2x the bound");
}
