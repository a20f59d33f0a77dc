//! CPU references of the kernels, for tests (host only): f64 sums for the
//! floating-point kernels, exact results for the others.

use crate::{histogram_bin, Particle};

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

/// The input generator every test, example and benchmark shares: xorshift64, uniform
/// floats in `[lo, hi)`. It is `benches/cuda/common.cuh`'s `Rng` with its arithmetic in the
/// same order (`(hi - lo) * k / 2^24`, then `lo +`), so that the Rust and the CUDA C++
/// benchmarks draw the same floats from the same seed. Tests seed it freshly every run.
///
/// ```
/// use gpu_kernels::reference::Rng;
/// let mut rng = Rng::new(0x5eed);
/// let x = rng.next(-1.0, 1.0);
/// assert!((-1.0..1.0).contains(&x));
/// ```
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator from `seed` (0 is replaced: xorshift would stay at 0 forever).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { seed })
    }

    /// The next float in `[lo, hi)`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (hi - lo) * (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `n` particles in the cube `[-1, 1)^3` with charges in `[0.5, 1.5)` (positive, so the
    /// sums do not cancel and relative errors stay meaningful), drawn x, y, z, q in turn.
    pub fn particles(&mut self, n: usize) -> Vec<Particle> {
        (0..n)
            .map(|_| Particle {
                x: self.next(-1.0, 1.0),
                y: self.next(-1.0, 1.0),
                z: self.next(-1.0, 1.0),
                q: self.next(0.5, 1.5),
            })
            .collect()
    }
}

/// Checks every element of a column-major `rows` x `cols` result of the potential
/// kernels, column `j` computed for `targets[j * rows..(j + 1) * rows]`, against the f64
/// reference, on every core. Returns the largest relative error, or says which element is
/// wrong: one never written (NaN, the poison tests fill outputs with), or off by more than
/// `tol`.
pub fn check_potential(
    out: &[f32],
    rows: usize,
    cols: usize,
    targets: &[Particle],
    sources: &[Particle],
    eps2: f32,
    tol: f64,
) -> Result<f64, String> {
    if out.len() != rows * cols || targets.len() < rows * cols {
        return Err(format!("{} results and {} targets for {rows} x {cols}", out.len(), targets.len()));
    }
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(cols.max(1));
    let per = cols.div_ceil(threads);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    let mut worst = 0.0f64;
                    for j in (t * per)..((t + 1) * per).min(cols) {
                        for i in 0..rows {
                            let got = out[j * rows + i];
                            if got.is_nan() {
                                return Err(format!("element ({i}, {j}) was never written (still NaN)"));
                            }
                            let want = potential_at(&targets[j * rows + i], sources, eps2);
                            let rel = (got as f64 - want).abs() / want.abs().max(1e-30);
                            if rel > tol {
                                return Err(format!(
                                    "element ({i}, {j}): got {got}, want {want}, relative error {rel:e} > {tol:e}"
                                ));
                            }
                            worst = worst.max(rel);
                        }
                    }
                    Ok(worst)
                })
            })
            .collect();
        handles.into_iter().try_fold(0.0f64, |w, h| Ok(w.max(h.join().map_err(|_| "checker panicked".to_string())??)))
    })
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
    use crate::{SELFTEST_LEN, SELFTEST_ROWS, SELFTEST_THREADS};
    const NAMES: [&str; SELFTEST_ROWS] = [
        "lane_id",
        "shfl_idx",
        "shfl_up",
        "shfl_down",
        "shfl_xor u64",
        "shfl_xor u64 halves",
        "ballot",
        "any/all",
        "match_any",
        "reduce_add_u32 (redux)",
        "sum_f32",
        "shfl_down f64",
        "active_mask",
        "sync_threads_count",
        "sync_threads_and",
        "sync_threads_or",
        "shared fetch_add",
        "shared fetch_max",
        "shared fetch_min",
        "shared CAS loop",
        "shared fetch_or",
        "dynamic_shared",
        "exp f32",
        "sin f32",
        "erf f32",
        "ln f32",
        "powf f32",
        "sqrt f32",
        "cos f64",
        "exp_fast f32",
        "powi/floor",
        "sqrt f64",
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
    let what =
        ["global add u32", "fetch_max", "fetch_min", "fetch_add f32", "fetch_xor", "CAS loop", "swap", "fetch_add i32"];
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
fn selftest_expected(tid: u32) -> [SelftestValue; crate::SELFTEST_ROWS] {
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
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let (rows, cols) = (37, 70);
        let input: Vec<f32> = (0..rows * cols).map(|_| rng.next(-1.0, 1.0)).collect();
        assert_eq!(transpose(&transpose(&input, rows, cols), cols, rows), input);
    }

    #[test]
    fn histogram_counts_in_range_values_once() {
        let mut rng = Rng::new(12345);
        let x: Vec<f32> = (0..10_000).map(|_| rng.next(-1.5, 1.5)).collect();
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
    fn the_potential_check_finds_unwritten_and_wrong_elements() {
        let mut rng = Rng::new(7);
        let (targets, sources) = (rng.particles(6), rng.particles(5));
        let mut out: Vec<f32> = potential(&targets, &sources, 1e-3).into_iter().map(|v| v as f32).collect();
        assert!(check_potential(&out, 3, 2, &targets, &sources, 1e-3, 1e-6).unwrap() < 1e-6);
        out[4] = f32::NAN;
        assert!(check_potential(&out, 3, 2, &targets, &sources, 1e-3, 1e-6)
            .unwrap_err()
            .contains("(1, 1) was never written"));
        out[4] = out[3] * 2.0;
        assert!(check_potential(&out, 3, 2, &targets, &sources, 1e-3, 1e-6).unwrap_err().contains("element (1, 1)"));
        assert!(check_potential(&out[..5], 3, 2, &targets, &sources, 1e-3, 1e-6).is_err());
    }

    #[test]
    fn the_generator_draws_what_the_cuda_benchmarks_draw() {
        // common.cuh's Rng{0x5eed}: the first four next(-1, 1).
        let mut rng = Rng::new(0x5eed);
        let got: Vec<f32> = (0..4).map(|_| rng.next(-1.0, 1.0)).collect();
        let mut s = 0x5eedu64;
        let want: Vec<f32> = (0..4)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                -1.0 + 2.0 * (s >> 40) as f32 / (1u64 << 24) as f32
            })
            .collect();
        assert_eq!(got, want);
        assert!(Rng::new(0).particles(100).iter().all(|p| (0.5..1.5).contains(&p.q) && (-1.0..1.0).contains(&p.x)));
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
