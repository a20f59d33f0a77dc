//! cuda_std kernels on the CPU backend: kernels written as a Rust-CUDA user
//! writes them (`#[kernel] pub unsafe fn`, raw output pointers, `thread::index_1d()`,
//! `#[address_space(shared)] static mut` tiles, warp shuffles, float atomics,
//! `println!`), compiled for the host by cuda_std's `#[kernel]` and run through
//! the CPU entry it generates (what the host library's CPU backend calls: the
//! lowered parameters, then `sluice_device::cpu::launch`). Results are checked
//! against CPU references in `f64` on fresh random inputs (the seed is in every
//! failure message; `CUDA_STD_CPU_SEED` replays one), with outputs poisoned
//! (NaN) first so that an element no thread wrote shows; outputs a kernel adds to
//! start at zero. The rest of the API runs once in `api_sweep`, each result
//! checked in the kernel, and the host's answers where the CPU has no counterpart
//! (breakpoint, profiler counters, address spaces) have their own tests.

// Rust-CUDA's shared statics are `static mut`s reached through references
// (`TILE[i].write(x)`, `LOCAL.as_mut_ptr()`), as ported code has them.
#![allow(static_mut_refs)]

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering::Relaxed;

// The host library's launch descriptor, which `#[kernel]` implements (its `CPU` entry is
// what a CPU-backend launch calls).
use cuda_std::__sluice::__host::{CpuLaunch, KernelDecl};
use cuda_std::__sluice::cpu::CpuCheck;
use cuda_std::atomic::{
    mid, AtomicF32, AtomicF64, AtomicI64, AtomicU32, BlockAtomicF32, BlockAtomicU32, Ordering, SystemAtomicU64,
};
use cuda_std::prelude::*;
use cuda_std::ptr::{self as cptr, AddressSpace};
use cuda_std::warp::{self, WarpReductionOp};
use cuda_std::{intrinsics, mem, misc, shared, FloatExt, GpuFloat};

// ---------------------------------------------------------------------------------------
// The kernels.

/// c = a + b, one thread per element.
#[kernel]
pub unsafe fn vecadd(a: &[f32], b: &[f32], c: *mut f32) {
    let i = thread::index_1d() as usize;
    if i < a.len() {
        // SAFETY: the launch gives `c` at least `a.len()` elements; thread `i` alone writes `c[i]`.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}

/// The side of the gemm's square tiles and blocks.
const TILE: usize = 16;

/// c = a · b for row-major `a` (m × k), `b` (k × n), `c` (m × n): one thread per element
/// of `c` (x the column, y the row), the block's operands staged through two shared tiles.
#[kernel]
pub unsafe fn gemm(a: &[f32], b: &[f32], c: *mut f32, m: u32, n: u32, k: u32) {
    const AREA: usize = TILE * TILE;
    #[address_space(shared)]
    static mut A_TILE: [MaybeUninit<f32>; AREA] = [MaybeUninit::uninit(); AREA];
    #[address_space(shared)]
    static mut B_TILE: [MaybeUninit<f32>; AREA] = [MaybeUninit::uninit(); AREA];

    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (tx, ty) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
    let col = thread::block_idx_x() as usize * TILE + tx;
    let row = thread::block_idx_y() as usize * TILE + ty;
    let mut acc = 0.0f32;
    for t in 0..k.div_ceil(TILE) {
        // Each thread stages one element of each tile (zero outside the matrices).
        let (ak, bk) = (t * TILE + tx, t * TILE + ty);
        let av = if row < m && ak < k { a[row * k + ak] } else { 0.0 };
        let bv = if bk < k && col < n { b[bk * n + col] } else { 0.0 };
        // SAFETY: thread (tx, ty) alone writes element (ty, tx) of each tile between the two
        // barriers; nobody reads the tiles until the barrier below.
        unsafe {
            A_TILE[ty * TILE + tx].write(av);
            B_TILE[ty * TILE + tx].write(bv);
        }
        thread::sync_threads();
        for j in 0..TILE {
            // SAFETY: every element was written before the barrier above, and none is
            // written again before the barrier below.
            acc += unsafe { A_TILE[ty * TILE + j].assume_init() * B_TILE[j * TILE + tx].assume_init() };
        }
        thread::sync_threads();
    }
    if row < m && col < n {
        // SAFETY: `c` has m × n elements; this thread alone writes (row, col).
        unsafe { *c.add(row * n + col) = acc };
    }
}

/// `*out += Σ x[i]·y[i]` in `f64`: a grid-stride loop per thread, a shuffle-down tree per
/// warp, one float atomic per warp. Blocks are whole warps.
#[kernel]
pub unsafe fn dot(x: &[f32], y: &[f32], out: *mut f64) {
    let stride = (thread::grid_dim_x() * thread::block_dim_x()) as usize;
    let mut sum = 0.0f64;
    let mut i = thread::index_1d() as usize;
    while i < x.len() {
        sum += x[i] as f64 * y[i] as f64;
        i += stride;
    }
    let mut offset = 16;
    while offset > 0 {
        // SAFETY: every lane of every (whole) warp runs the same number of these shuffles.
        let (other, in_range) = unsafe { warp::warp_shuffle_down(u32::MAX, sum, offset, 32) };
        if in_range {
            sum += other;
        }
        offset /= 2;
    }
    if warp::lane_id() == 0 {
        // SAFETY: `out` is one f64 for the launch, accessed only atomically meanwhile.
        unsafe { AtomicF64::from_ptr(out) }.fetch_add(sum, Ordering::Relaxed);
    }
}

/// The most bins [`histogram`] counts.
const MAX_BINS: usize = 64;

/// `bins[key % nbins] += 1` for every key, and `*total += keys.len()`: lanes with the
/// same bin found with `warp_match_any`, one leader per bin and warp adding the group's
/// count to a block histogram in shared memory (a block-scope atomic), the block's
/// counts then added to `bins`; the total through `warp_reduce`. Blocks are whole warps.
#[kernel]
pub unsafe fn histogram(keys: &[u32], nbins: u32, bins: *mut u32, total: *mut u32) {
    #[address_space(shared)]
    static mut LOCAL: [MaybeUninit<u32>; MAX_BINS] = [MaybeUninit::uninit(); MAX_BINS];
    // SAFETY: the address of the block's shared array (no access yet).
    let local = unsafe { LOCAL.as_mut_ptr() } as *mut u32;
    let t = thread::thread_idx_x();
    if (t as usize) < MAX_BINS {
        // SAFETY: thread t alone clears element t; the barrier below orders it.
        unsafe { local.add(t as usize).write(0) };
    }
    thread::sync_threads();

    let lane = warp::lane_id();
    let stride = (thread::grid_dim_x() * thread::block_dim_x()) as usize;
    // A block-uniform loop: every lane of a warp runs the same iterations.
    let mut base = (thread::block_idx_x() * thread::block_dim_x()) as usize;
    while base < keys.len() {
        let i = base + t as usize;
        let valid = i < keys.len();
        // SAFETY: the whole warp is here (a block-uniform loop).
        let (valid_lanes, count) = unsafe {
            (warp::warp_vote_ballot(u32::MAX, valid), warp::warp_reduce(u32::MAX, valid as u32, WarpReductionOp::Add))
        };
        if lane == 0 {
            // SAFETY: `total` is one u32 for the launch, accessed only atomically.
            unsafe { AtomicU32::from_ptr(total) }.fetch_add(count, Relaxed);
        }
        if valid {
            let bin = keys[i] % nbins;
            // SAFETY: exactly the lanes of `valid_lanes` take this branch.
            let peers = unsafe { warp::warp_match_any(valid_lanes, bin) };
            if lane == peers.trailing_zeros() {
                // SAFETY: the block's shared array, `bin < nbins <= MAX_BINS`; only this
                // block touches it, only atomically until the barrier below.
                unsafe { BlockAtomicU32::from_ptr(local.add(bin as usize)).fetch_add(peers.count_ones(), Relaxed) };
            }
        }
        base += stride;
    }
    thread::sync_threads();
    if t < nbins {
        // SAFETY: the block's counts are final (barrier above); `bins` has `nbins` elements,
        // accessed only atomically during the launch.
        unsafe { AtomicU32::from_ptr(bins.add(t as usize)).fetch_add(*local.add(t as usize), Relaxed) };
    }
}

/// The prefix of every line [`say_hello`] prints.
const HELLO: &str = "cuda_std on the CPU:";

/// Prints one line per thread with Rust formatting and, from thread 0 of block 0, a line
/// of `long` more bytes, longer than the device's print buffer, twice: with the
/// prelude's `println!` (std's on the host) and with `cuda_std::println!` (the device's
/// text on the host too).
#[kernel]
pub unsafe fn say_hello(x: f32, long: u32) {
    let (b, t) = (thread::block_idx_x(), thread::thread_idx_x());
    println!("{HELLO} block {b} thread {t}: x = {:.3}, index {}", x * t as f32, thread::index());
    if thread::first() {
        let tail = "y".repeat(long as usize);
        println!("{HELLO} whole {tail}");
        cuda_std::println!("{HELLO} cut {tail}");
    }
}

/// A line in pieces (`cuda_std::print!` twice, then `cuda_std::println!()`), then an
/// empty line (launched alone: another thread's line cannot come between the pieces).
#[kernel]
pub unsafe fn print_pieces(first: u8) {
    cuda_std::print!("{HELLO} pieces {first}");
    cuda_std::print!(" {}", first + 1);
    cuda_std::println!();
    cuda_std::println!();
}

/// Every other cuda_std API once, each checked in the kernel against what CUDA defines
/// (a failed `assert!` fails the launch with the thread and the line). `seen` counts each
/// `thread::index()`; `sums` collects the atomics (f32, f64, u32 max, i64 min, u64 CAS);
/// `heap` points into host memory. Blocks of 64 threads; `dynamic` bytes of dynamic
/// shared memory, at least 256.
#[kernel]
pub unsafe fn api_sweep(seen: *mut u32, sums: *mut u64, heap: *const u32, dynamic: u32) {
    use cuda_std::glam::{UVec2, UVec3};

    // Indices: cuda_std's vectors, its linear index and the 32-bit global indices.
    let (t, b, d, g) = (thread::thread_idx(), thread::block_idx(), thread::block_dim(), thread::grid_dim());
    assert_eq!(t, UVec3::new(thread::thread_idx_x(), thread::thread_idx_y(), thread::thread_idx_z()));
    assert_eq!(b, UVec3::new(thread::block_idx_x(), thread::block_idx_y(), thread::block_idx_z()));
    assert_eq!(d, UVec3::new(thread::block_dim_x(), thread::block_dim_y(), thread::block_dim_z()));
    assert_eq!(g, UVec3::new(thread::grid_dim_x(), thread::grid_dim_y(), thread::grid_dim_z()));
    let block_linear = b.x + b.y * g.x + b.z * g.x * g.y;
    let linear = block_linear * d.element_product() + t.x + t.y * d.x + t.z * d.x * d.y;
    assert_eq!(thread::index(), linear);
    assert_eq!(thread::index_1d(), b.x * d.x + t.x);
    assert_eq!(thread::index_2d(), UVec2::new(b.x * d.x + t.x, b.y * d.y + t.y));
    assert_eq!(thread::index_3d(), b * d + t);
    assert_eq!(thread::first(), linear == 0);
    assert_eq!(thread::warp_size(), 32);
    // SAFETY: `seen` has one counter per thread of the launch, accessed only atomically.
    unsafe { AtomicU32::from_ptr(seen.add(linear as usize)) }.fetch_add(1, Relaxed);

    // Barriers with predicates (x is the fastest index: half the block has an odd x).
    let size = d.element_product();
    assert_eq!(thread::sync_threads_count(t.x & 1), size / 2);
    assert_eq!(thread::sync_threads_and(1), 1);
    assert_eq!(thread::sync_threads_and((t.x != 0) as u32), 0);
    assert_eq!(thread::sync_threads_or(0), 0);
    assert_eq!(thread::sync_threads_or(thread::first() as u32 + (linear % 64 == 5) as u32), 1);
    thread::grid_fence();
    thread::device_fence();
    thread::system_fence();
    mid::device_thread_fence(Ordering::SeqCst);
    mid::block_thread_fence(Ordering::Acquire);
    mid::system_thread_fence(Ordering::Relaxed);
    thread::nanosleep(100);
    let c0 = misc::clock();
    assert!(misc::clock() >= c0, "the clock runs forwards");
    misc::profiler_counter(3);

    // Shared memory: the dynamic region, a static array, their sizes and address space.
    let rank = (linear % size) as usize;
    assert_eq!(mem::dynamic_smem_size(), dynamic);
    let dyn_words: *mut u32 = shared::dynamic_shared_mem();
    let words: *mut u32 = cuda_std::shared_array![u32; 64];
    // SAFETY: each thread writes its own element of each array; the barrier orders the
    // writes before the reads of the neighbour's.
    unsafe {
        dyn_words.add(rank).write(linear);
        words.add(rank).write(!linear);
    }
    thread::sync_threads();
    let next = (rank + 1) % size as usize;
    let next_linear = linear - rank as u32 + next as u32;
    // SAFETY: written before the barrier above.
    unsafe {
        assert_eq!(dyn_words.add(next).read(), next_linear);
        assert_eq!(words.add(next).read(), !next_linear);
    }
    assert!(mem::total_smem_size() >= dynamic + 64 * 4, "{} bytes", mem::total_smem_size());
    let local = 7u32;
    // SAFETY: `is_in_address_space` only inspects addresses; the conversions are the
    // identity on the host and their results are compared, not dereferenced.
    unsafe {
        for p in [dyn_words as *const u32, words, dyn_words.add(dynamic as usize / 4 - 1)] {
            assert!(cptr::is_in_address_space(p, AddressSpace::Shared));
            assert!(!cptr::is_in_address_space(p, AddressSpace::Global));
        }
        for p in [heap, &local] {
            assert!(cptr::is_in_address_space(p, AddressSpace::Global));
            assert!(!cptr::is_in_address_space(p, AddressSpace::Shared));
        }
        for p in [heap, &local, words] {
            assert!(!cptr::is_in_address_space(p, AddressSpace::Local));
            assert!(!cptr::is_in_address_space(p, AddressSpace::Constant));
        }
        let specific = cptr::convert_generic_to_specific_address_space(words, AddressSpace::Shared);
        assert_eq!(cptr::convert_specific_address_space_to_generic(specific, AddressSpace::Shared), words);
    }

    // Warp operations, the whole warp converged at each.
    let lane = warp::lane_id();
    assert_eq!(lane, rank as u32 % 32);
    assert_eq!(warp::activemask(), u32::MAX);
    // SAFETY: every lane of every warp reaches each of these calls, with the full mask.
    unsafe {
        warp::sync_warp(u32::MAX);
        let (v, ok) = warp::warp_shuffle_idx(u32::MAX, lane as u128 * 10, 3, 8);
        assert_eq!((v, ok), ((lane / 8 * 8 + 3) as u128 * 10, true));
        let (v, ok) = warp::warp_shuffle_up(u32::MAX, lane as i8 - 20, 2, 16);
        let up = if lane % 16 >= 2 { lane - 2 } else { lane };
        assert_eq!((v, ok), (up as i8 - 20, lane % 16 >= 2));
        let (v, ok) = warp::warp_shuffle_down(u32::MAX, lane as f64 + 0.5, 4, 32);
        let down = if lane + 4 < 32 { lane + 4 } else { lane };
        assert_eq!((v, ok), (down as f64 + 0.5, lane + 4 < 32));
        let (v, ok) = warp::warp_shuffle_xor(u32::MAX, lane as f32, 5, 32);
        assert_eq!((v, ok), ((lane ^ 5) as f32, true));
        assert!(warp::warp_vote_all(u32::MAX, lane < 40));
        assert!(!warp::warp_vote_all(u32::MAX, lane != 7));
        assert!(warp::warp_vote_any(u32::MAX, lane == 3));
        assert_eq!(warp::warp_vote_ballot(u32::MAX, lane.is_multiple_of(2)), 0x5555_5555);
        assert_eq!(warp::warp_match_any(u32::MAX, lane / 4), 0xf << (lane / 4 * 4));
        assert_eq!(warp::warp_match_any(u32::MAX, 1.5f64), u32::MAX);
        assert_eq!(warp::warp_match_all(u32::MAX, 7i64), Some(u32::MAX));
        assert_eq!(warp::warp_match_all(u32::MAX, lane as f32), None);
        assert_eq!(warp::warp_reduce(u32::MAX, lane, WarpReductionOp::Add), 31 * 32 / 2);
        assert_eq!(warp::warp_reduce(u32::MAX, lane as i32 - 16, WarpReductionOp::Min), -16);
        assert_eq!(warp::warp_reduce(u32::MAX, lane, WarpReductionOp::Max), 31);
        assert_eq!(warp::warp_reduce(u32::MAX, lane | 0x100, WarpReductionOp::And), 0x100);
        assert_eq!(warp::warp_reduce(u32::MAX, 1 << lane, WarpReductionOp::Or), u32::MAX);
        assert_eq!(warp::warp_reduce(u32::MAX, lane, WarpReductionOp::Xor), 0);
    }

    // Atomics at every scope, in global and shared memory.
    // SAFETY: `sums` holds five 8-byte cells for the launch, each accessed only
    // atomically, through one type.
    unsafe {
        AtomicF32::from_ptr(sums as *mut f32).fetch_add(0.5, Ordering::AcqRel);
        AtomicF64::from_ptr(sums.add(1) as *mut f64).fetch_add(0.25, Ordering::SeqCst);
        AtomicU32::from_ptr(sums.add(2) as *mut u32).fetch_max(linear, Ordering::Release);
        AtomicI64::from_ptr(sums.add(3) as *mut i64).fetch_min(-(linear as i64), Ordering::Relaxed);
        let cas = SystemAtomicU64::from_ptr(sums.add(4));
        let mut old = cas.load(Ordering::Acquire);
        while let Err(now) = cas.compare_exchange(old, old + linear as u64, Ordering::AcqRel, Ordering::Acquire) {
            old = now;
        }
    }
    let block_sum: *mut f32 = cuda_std::shared_array![f32; 1];
    if rank == 0 {
        // SAFETY: one thread initialises the shared cell before the barrier.
        unsafe { block_sum.write(0.0) };
    }
    thread::sync_threads();
    // SAFETY: the block's shared cell, only this block's threads touch it, atomically,
    // until the barrier below.
    unsafe { BlockAtomicF32::from_ptr(block_sum).fetch_add(1.0, Ordering::Relaxed) };
    thread::sync_threads();
    // SAFETY: final after the barrier.
    assert_eq!(unsafe { block_sum.read() }, size as f32);

    // Math in a kernel (the values are checked in `math_on_the_host`).
    let x = (linear % 7) as f32 * 0.25 + 0.5;
    assert!((GpuFloat::sqrt(x) * GpuFloat::sqrt(x) - x).abs() < 1e-6);
    assert!((x.error_function() + x.complementary_error_function() - 1.0).abs() < 1e-6);
    assert_eq!(intrinsics::powif(x, 2), x * x);
}

/// Thread 5 of block 1 stops at a breakpoint.
#[kernel]
pub unsafe fn stops_at_a_breakpoint(hit: *mut u32) {
    if thread::block_idx_x() == 1 && thread::thread_idx_x() == 5 {
        misc::breakpoint();
        // SAFETY: (never reached) one thread writes the one u32.
        unsafe { *hit = 1 };
    }
}

/// Counts profiler event `counter`.
#[kernel]
pub unsafe fn counts_an_event(counter: u32) {
    misc::profiler_counter(counter);
}

/// Checks that the block's shared-memory window holds the dynamic region and static
/// arrays up to the 48 KiB limit, with alignment padding between them.
#[kernel]
pub unsafe fn shared_window_edges(dynamic: u32) {
    const BIG: usize = 48 * 1024 - 64;
    let byte: *mut u8 = cuda_std::shared_array![u8; 1];
    let big: *mut u8 = cuda_std::shared_array![u8; BIG];
    let wide: *mut u64 = cuda_std::shared_array![u64; 4];
    let dyn_end = shared::dynamic_shared_mem::<u8>().wrapping_add(dynamic as usize - 1);
    // SAFETY: `is_in_address_space` only inspects addresses (in bounds of each array).
    unsafe {
        for p in [dyn_end, byte, big, big.add(BIG - 1), wide as *mut u8, (wide.add(3) as *mut u8).add(7)] {
            assert!(cptr::is_in_address_space(p, AddressSpace::Shared), "{p:?}");
            assert!(!cptr::is_in_address_space(p, AddressSpace::Global), "{p:?}");
        }
    }
    assert!(mem::total_smem_size() as usize >= dynamic as usize + 1 + BIG + 32);
}

// ---------------------------------------------------------------------------------------
// Running them.

/// Runs kernel `K`'s CPU entry, as the host library's CPU backend launches it: `params`
/// holds one pointer per lowered parameter (`&[T]` as a pointer and a `u64` length).
///
/// # Safety
/// `params` matches `K`'s lowered parameters, and the memory they name obeys the
/// kernel's contract for the launch.
unsafe fn launch<K: KernelDecl>(grid: [u32; 3], block: [u32; 3], params: &[*mut c_void]) -> Result<(), String> {
    // SAFETY: forwarded to the caller.
    unsafe { launch_dyn::<K>(grid, block, 0, params) }
}

/// [`launch`] with `dynamic` bytes of dynamic shared memory per block.
///
/// # Safety
/// As [`launch`].
unsafe fn launch_dyn<K: KernelDecl>(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic: u32,
    params: &[*mut c_void],
) -> Result<(), String> {
    let entry = K::CPU.expect("cuda_std's #[kernel] gives every kernel a CPU entry");
    // Checked as the host's CPU backend checks by default (on with debug assertions).
    let launch = CpuLaunch { kernel: K::NAME, grid, block, dynamic_shared_bytes: dynamic, check: CpuCheck::auto() };
    // SAFETY: forwarded to the caller.
    unsafe { entry(params.as_ptr(), &launch) }.map_err(|e| e.to_string())
}

/// The lowered parameters of a launch, each a pointer to a local holding the value.
macro_rules! params {
    ($($v:expr),* $(,)?) => {
        [$(&$v as *const _ as *mut c_void),*]
    };
}

/// SplitMix64: fresh inputs each run, reproducible from the seed.
struct Rng(u64);

impl Rng {
    /// Seeded from `CUDA_STD_CPU_SEED`, or the clock (and `salt`, so tests differ).
    fn new(salt: u64) -> (Rng, u64) {
        let seed = std::env::var("CUDA_STD_CPU_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
            now.as_nanos() as u64 ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        });
        (Rng(seed), seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn f32(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

// ---------------------------------------------------------------------------------------
// The tests.

#[test]
fn vecadd_with_index_1d_matches_the_reference() {
    let (mut rng, seed) = Rng::new(1);
    let n = 10_000 + rng.below(5_000) as usize;
    let (a, b) = (rng.vec(n), rng.vec(n));
    // Poisoned, and longer than `n`: the threads past the end must leave theirs alone.
    let mut c = vec![f32::NAN; n + 100];
    let block = 128;
    let grid = (n as u32).div_ceil(block) + 1;
    let (a_ptr, a_len, b_ptr, b_len, c_ptr) = (a.as_ptr(), n as u64, b.as_ptr(), n as u64, c.as_mut_ptr());
    // SAFETY: (pointer, length) of `a` and `b`, alive for the call; `c` has n + 100 elements.
    unsafe {
        launch::<__sluice_kernel_vecadd>([grid, 1, 1], [block, 1, 1], &params![a_ptr, a_len, b_ptr, b_len, c_ptr])
    }
    .unwrap();
    for i in 0..n {
        let want = a[i] as f64 + b[i] as f64;
        assert!(
            (c[i] as f64 - want).abs() <= f32::EPSILON as f64 * want.abs(),
            "seed {seed}: c[{i}] = {}, want {want}",
            c[i]
        );
    }
    assert!(c[n..].iter().all(|v| v.is_nan()), "seed {seed}: a thread past the end wrote");
}

#[test]
fn tiled_gemm_with_shared_tiles_matches_the_reference() {
    let (mut rng, seed) = Rng::new(2);
    for _ in 0..3 {
        // Sizes that are not multiples of the tile, to reach the edges.
        let (m, n, k) = (20 + rng.below(60) as usize, 20 + rng.below(60) as usize, 1 + rng.below(90) as usize);
        let (a, b) = (rng.vec(m * k), rng.vec(k * n));
        let mut c = vec![f32::NAN; m * n];
        let grid = [(n as u32).div_ceil(TILE as u32), (m as u32).div_ceil(TILE as u32), 1];
        let (ap, al, bp, bl, cp) = (a.as_ptr(), a.len() as u64, b.as_ptr(), b.len() as u64, c.as_mut_ptr());
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        // SAFETY: (pointer, length) of `a` and `b`, alive for the call; `c` has m × n elements.
        unsafe {
            launch::<__sluice_kernel_gemm>(
                grid,
                [TILE as u32, TILE as u32, 1],
                &params![ap, al, bp, bl, cp, mu, nu, ku],
            )
        }
        .unwrap();
        for r in 0..m {
            for col in 0..n {
                let (mut want, mut magnitude) = (0.0f64, 0.0f64);
                for j in 0..k {
                    let p = a[r * k + j] as f64 * b[j * n + col] as f64;
                    want += p;
                    magnitude += p.abs();
                }
                let got = c[r * n + col] as f64;
                // f32 accumulation: k roundings of at most half an ulp of the running sum.
                let tol = (k as f64 + 1.0) * f32::EPSILON as f64 * magnitude;
                assert!(
                    (got - want).abs() <= tol,
                    "seed {seed}: {m}x{k} · {k}x{n}: c[{r}][{col}] = {got}, want {want} (tolerance {tol})"
                );
            }
        }
    }
}

#[test]
fn warp_shuffle_reduction_and_float_atomics_give_the_dot_product() {
    let (mut rng, seed) = Rng::new(3);
    let n = 50_000 + rng.below(20_000) as usize;
    let (x, y) = (rng.vec(n), rng.vec(n));
    let mut out = 0.0f64;
    let (xp, xl, yp, yl, op) = (x.as_ptr(), n as u64, y.as_ptr(), n as u64, &raw mut out);
    // SAFETY: (pointer, length) of `x` and `y`; `out` is one f64, untouched by the host meanwhile.
    unsafe { launch::<__sluice_kernel_dot>([7, 1, 1], [256, 1, 1], &params![xp, xl, yp, yl, op]) }.unwrap();
    let want: f64 = x.iter().zip(&y).map(|(&a, &b)| a as f64 * b as f64).sum();
    let magnitude: f64 = x.iter().zip(&y).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum();
    assert!((out - want).abs() <= 1e-13 * magnitude, "seed {seed}: dot = {out}, want {want}");
}

#[test]
fn warp_match_ballot_reduce_and_atomics_count_a_histogram() {
    let (mut rng, seed) = Rng::new(4);
    for nbins in [1u32, 7, 64] {
        let n = 3_000 + rng.below(3_000) as usize;
        // Few distinct keys per warp (so that lanes share bins) and some large ones.
        let keys: Vec<u32> = (0..n)
            .map(|_| if rng.below(4) == 0 { rng.next() as u32 } else { rng.below(3 * nbins as u64) as u32 })
            .collect();
        // Zeroed, not poisoned: the kernel adds to them (a count lost or added twice shows).
        let mut bins = vec![0u32; nbins as usize];
        let mut total = 0u32;
        let (kp, kl, bp, tp) = (keys.as_ptr(), n as u64, bins.as_mut_ptr(), &raw mut total);
        // SAFETY: (pointer, length) of `keys`; `bins` has `nbins` elements and `total` is one
        // u32, untouched by the host meanwhile.
        unsafe { launch::<__sluice_kernel_histogram>([5, 1, 1], [96, 1, 1], &params![kp, kl, nbins, bp, tp]) }.unwrap();
        let mut want = vec![0u32; nbins as usize];
        for &key in &keys {
            want[(key % nbins) as usize] += 1;
        }
        assert_eq!(bins, want, "seed {seed}: {nbins} bins");
        assert_eq!(total as usize, n, "seed {seed}: warp_reduce total");
    }
}

/// Runs [`say_hello`] in a child process (this test binary, this test alone) and reads
/// its stdout: a GPU thread's output goes to the process's stdout, not to the test
/// harness's capture.
#[test]
fn println_prints_from_a_kernel() {
    const CHILD: &str = "CUDA_STD_CPU_PRINT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        // The child: launch and print.
        let (x, long, first) = (1.5f32, 1_000u32, 1u8);
        // SAFETY: the values `say_hello` and `print_pieces` take.
        unsafe {
            launch::<__sluice_kernel_say_hello>([2, 1, 1], [3, 1, 1], &params![x, long]).unwrap();
            launch::<__sluice_kernel_print_pieces>([1, 1, 1], [1, 1, 1], &params![first]).unwrap();
        }
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "println_prints_from_a_kernel", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the child failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // The kernels' lines, without what the harness may have printed before one on its line
    // (`test name ... `).
    let lines: Vec<&str> = stdout.lines().map(|l| l.find(HELLO).map_or(l, |at| &l[at..])).collect();
    for b in 0..2 {
        for t in 0..3 {
            let want = format!("{HELLO} block {b} thread {t}: x = {:.3}, index {}", 1.5 * t as f32, b * 3 + t);
            assert_eq!(lines.iter().filter(|l| **l == want).count(), 1, "{want:?} once in:\n{stdout}");
        }
    }
    // std's `println!`: the whole line.
    let whole = format!("{HELLO} whole {}", "y".repeat(1_000));
    assert!(lines.contains(&whole.as_str()), "the whole long line in:\n{stdout}");
    // `cuda_std::println!`: cut to the device's buffer, 507 bytes of text, then `...`
    // and the newline.
    let head = format!("{HELLO} cut ");
    let cut = lines.iter().find(|l| l.starts_with(&head)).expect("the cut line");
    let want = format!("{head}{}...", "y".repeat(cuda_std::io::PRINT_BUFFER - 5 - head.len()));
    assert_eq!(*cut, want, "the long line is cut as on the device");
    // The pieces make one line, and `println!()` an empty one after it.
    let at = lines.iter().position(|l| *l == format!("{HELLO} pieces 1 2")).expect("the pieces' line");
    assert_eq!(lines.get(at + 1), Some(&""), "println!() in:\n{stdout}");
}

#[test]
fn every_other_api_runs_in_a_kernel_with_cudas_meaning() {
    let (grid, block, dynamic) = ([3u32, 2, 1], [16u32, 2, 2], 256u32);
    let threads = (3 * 2 * 64) as usize;
    let mut seen = vec![0u32; threads];
    let mut sums = [0u64; 5];
    sums[3] = i64::MAX as u64;
    let heap = Box::new([1u32; 4]);
    let (sp, up, hp) = (seen.as_mut_ptr(), sums.as_mut_ptr(), heap.as_ptr());
    // SAFETY: `seen` has one counter per thread, `sums` five cells, `heap` is alive and
    // only compared; the launch has 256 bytes of dynamic shared memory as `dynamic` says.
    unsafe { launch_dyn::<__sluice_kernel_api_sweep>(grid, block, dynamic, &params![sp, up, hp, dynamic]) }.unwrap();
    assert!(seen.iter().all(|&c| c == 1), "thread::index() is a bijection: {seen:?}");
    let n = threads as f64;
    assert_eq!(f32::from_bits(sums[0] as u32), 0.5 * n as f32);
    assert_eq!(f64::from_bits(sums[1]), 0.25 * n);
    assert_eq!(sums[2] as u32, threads as u32 - 1);
    assert_eq!(sums[3] as i64, -(threads as i64 - 1));
    assert_eq!(sums[4], (threads * (threads - 1) / 2) as u64);
}

#[test]
fn a_breakpoint_fails_the_launch_with_the_thread_and_the_call_site() {
    let mut hit = 0u32;
    let hp = &raw mut hit;
    // SAFETY: one u32, alive for the call.
    let err =
        unsafe { launch::<__sluice_kernel_stops_at_a_breakpoint>([2, 1, 1], [32, 1, 1], &params![hp]) }.unwrap_err();
    assert!(err.contains("block (1, 0, 0), thread (5, 0, 0)"), "{err}");
    assert!(err.contains("misc::breakpoint") && err.contains("no debugger"), "{err}");
    assert!(err.contains("tests/cpu.rs"), "the location is the kernel's call: {err}");
    assert_eq!(hit, 0, "the thread stopped at the breakpoint");
}

#[test]
fn profiler_counters_are_no_ops_but_checked() {
    for counter in 0..8u32 {
        // SAFETY: one value.
        unsafe { launch::<__sluice_kernel_counts_an_event>([2, 1, 1], [64, 1, 1], &params![counter]) }.unwrap();
    }
    let counter = 8u32;
    // SAFETY: one value.
    let err =
        unsafe { launch::<__sluice_kernel_counts_an_event>([1, 1, 1], [1, 1, 1], &params![counter]) }.unwrap_err();
    assert!(err.contains("profiler_counter: the counter must be in 0..=7"), "{err}");
}

#[test]
fn the_shared_window_holds_the_dynamic_region_and_statics_up_to_the_limit() {
    for dynamic in [1u32, 100, 4096 + 3] {
        // SAFETY: one value; the launch has `dynamic` bytes of dynamic shared memory.
        unsafe { launch_dyn::<__sluice_kernel_shared_window_edges>([2, 1, 1], [32, 1, 1], dynamic, &params![dynamic]) }
            .unwrap();
    }
}

#[test]
fn thread_functions_panic_outside_a_launch_and_pure_ones_work() {
    let err = std::panic::catch_unwind(thread::index_1d).unwrap_err();
    let msg = err.downcast_ref::<String>().map(String::as_str).unwrap_or("");
    assert!(msg.contains("outside a kernel launch"), "{msg}");
    let x = 3u32;
    // SAFETY: only inspects the address.
    let query = std::panic::catch_unwind(|| unsafe { cptr::is_in_address_space(&x, AddressSpace::Global) });
    assert!(query.is_err(), "is_in_address_space needs the calling block");
    // SAFETY: the identity on the host; the result is compared only.
    let same = unsafe { cptr::convert_generic_to_specific_address_space(&x, AddressSpace::Global) };
    assert_eq!(same, &x as *const u32);
    // Fences, atomics, math and cuda_std's println! need no launch.
    thread::grid_fence();
    mid::system_thread_fence(Ordering::SeqCst);
    assert_eq!(AtomicU32::new(4).fetch_add(1, Relaxed), 4);
    cuda_std::println!("cuda_std::println! outside a launch: {x}");
}

#[test]
fn math_on_the_host_is_the_device_functions_meaning() {
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b.abs().max(1.0);
    let (mut rng, seed) = Rng::new(5);
    for _ in 0..200 {
        let x = rng.f32() * 4.0;
        let xd = x as f64;
        // GpuFloat against std's f64.
        assert!(close(GpuFloat::exp(x) as f64, xd.exp(), 1e-6), "seed {seed}: exp({x})");
        assert!(close(GpuFloat::sin_cos(x).0 as f64, xd.sin(), 1e-6), "seed {seed}: sin({x})");
        assert!(close(GpuFloat::atan2(x, 1.5) as f64, xd.atan2(1.5), 1e-6), "seed {seed}: atan2({x})");
        assert!(close(GpuFloat::cbrt(x) as f64, xd.cbrt(), 1e-6), "seed {seed}: cbrt({x})");
        assert_eq!(GpuFloat::fract(x), x - x.trunc());
        assert_eq!(GpuFloat::div_euclid(xd, 0.75), xd.div_euclid(0.75));
        // FloatExt by its identities.
        assert!(close(x.error_function() as f64 + x.complementary_error_function() as f64, 1.0, 1e-6));
        let (s, c) = x.sincospi();
        assert!(close(s as f64, (std::f64::consts::PI * xd).sin(), 1e-5) || (s as f64).abs() < 1e-6);
        assert!(close(c as f64, (std::f64::consts::PI * xd).cos(), 1e-5) || (c as f64).abs() < 1e-6);
        let (m, e) = FloatExt::frexp(xd);
        assert_eq!(m * 2f64.powi(e), xd);
        let p = (x.abs() / 4.0).clamp(0.01, 0.99);
        assert!(close(p.inv_norm_cdf().norm_cdf() as f64, p as f64, 1e-5), "seed {seed}: Φ(Φ⁻¹({p}))");
        // Intrinsics: the same functions under libdevice's names.
        assert_eq!(intrinsics::expf(x), GpuFloat::exp(x));
        assert_eq!(intrinsics::jnf(0, x), x.j0());
        assert_eq!(intrinsics::ynf(1, x.abs() + 0.1), (x.abs() + 0.1).y1());
        assert_eq!(intrinsics::atan2(xd, 2.0), GpuFloat::atan2(xd, 2.0));
        let (mut s, mut c) = (0.0f32, 0.0f32);
        // SAFETY: two valid f32 destinations.
        unsafe { intrinsics::sincosf(x, &mut s, &mut c) };
        assert_eq!((s, c), GpuFloat::sin_cos(x));
        let mut e = 0i32;
        // SAFETY: a valid i32 destination.
        let m = unsafe { intrinsics::frexpf(x, &mut e) };
        assert_eq!((m, e), FloatExt::frexp(x));
    }
    assert_eq!(FloatExt::gamma(5.0f64), 24.0);
    assert_eq!((0.0f32.j0(), 0.0f32.j1()), (1.0, 0.0));
    assert_eq!(8.0f32.rcbrt(), 0.5);
    assert_eq!((8.0f32.unbiased_exp(), 1.5f32.scale_by_n(3)), (3, 12.0));
    assert_eq!((f32::NAN.saturate(), 2.0f32.saturate(), intrinsics::saturatef(-1.0)), (0.0, 1.0, 0.0));
    assert_eq!((intrinsics::rintf(2.5), intrinsics::roundf(2.5)), (2.0, 3.0));
    assert_eq!((intrinsics::fast_fdividef(1.0, 4.0), intrinsics::powi(2.0, 10)), (0.25, 1024.0));
}
