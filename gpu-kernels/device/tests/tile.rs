//! Global-memory tiles on the CPU runtime: which tile each block gets ([`Raster`], through
//! `MatrixMut::block_tile`, whose fast paths for grids shaped like the tiles must agree
//! with `Raster::tile`), and a block's tile split among its threads
//! (`BlockTile::partition`): every element written once, by the thread that owns it, the
//! edges clipped.

use std::collections::HashMap;
use std::sync::Mutex;

use sluice_device::cpu;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::thread;
use sluice_device::tile::{
    __matrix_from_launch, ByColumns, ByRows, Grouped, MatrixMut, Order, Raster, ThreadTiles, Tiling, WarpTiles,
};

/// The raw pointer of a launch's output, shared by the CPU threads of the launch (each
/// makes its own `DeviceSliceMut` from it, as a kernel's parameter).
#[derive(Clone, Copy)]
struct Out(*mut f32, usize);
// SAFETY: the launches below write disjoint elements from different threads (what the
// tests check), and the buffer outlives them.
unsafe impl Sync for Out {}

impl Out {
    fn slice(&self) -> DeviceSliceMut<'static, f32> {
        // SAFETY: the pointer is a live, aligned `Vec<f32>` of `len` elements for the whole
        // launch; every CPU thread of the launch makes one `DeviceSliceMut` of it, as a
        // kernel's parameter.
        unsafe { DeviceSliceMut::from_raw_parts(self.0, self.1 as u64) }
    }

    /// The `rows × cols` matrix of this output, as `#[kernel]` makes a `#[matrix]` parameter.
    fn matrix<L: Tiling>(&self, rows: usize, cols: usize) -> MatrixMut<'static, f32, L> {
        // SAFETY: every thread of the launch passes the same shape (the test's constants) and
        // the same tiling `L`; nothing else writes the buffer.
        unsafe { __matrix_from_launch(self.slice(), rows, cols, None::<usize>) }.expect("the shape fits")
    }
}

/// The tile `block_tile()` gives each block of `grid` over a `rows × cols` matrix split in
/// 4 × 8 tiles in the order `O`, by the block's linear rank.
fn tiles_by_block<O: Order>(grid: [u32; 3], rows: usize, cols: usize) -> HashMap<u64, (usize, usize)> {
    let mut buf = vec![0.0f32; rows * cols];
    let out = Out(buf.as_mut_ptr(), buf.len());
    let seen = Mutex::new(HashMap::new());
    cpu::launch(grid, [1, 1, 1], 0, &|| {
        let m = out.matrix::<ThreadTiles<4, 8, 1, 1, O>>(rows, cols);
        if let Some(t) = m.block_tile() {
            seen.lock().unwrap().insert(thread::grid_block_rank(), (t.row0(), t.col0()));
        }
    })
    .unwrap();
    seen.into_inner().unwrap()
}

#[test]
fn every_grid_shape_gives_each_tile_to_one_block_as_raster_tile_says() {
    // 5 × 3 tiles of 4 × 8 (the last row and column ragged).
    let (rows, cols) = (19usize, 23usize);
    let (tm, tn) = (rows.div_ceil(4) as u64, cols.div_ceil(8) as u64);
    type Run = fn([u32; 3], usize, usize) -> HashMap<u64, (usize, usize)>;
    let rasters: [(Raster, Run); 5] = [
        (Raster::RowMajor, tiles_by_block::<ByRows>),
        (Raster::ColumnMajor, tiles_by_block::<ByColumns>),
        (Raster::Grouped(1), tiles_by_block::<Grouped<1>>),
        (Raster::Grouped(2), tiles_by_block::<Grouped<2>>),
        (Raster::Grouped(8), tiles_by_block::<Grouped<8>>),
    ];
    let grids: [[u32; 3]; 7] = [
        [tn as u32, tm as u32, 1],     // shaped like the tiles, row-major (the fast path)
        [tm as u32, tn as u32, 1],     // column-major's fast path
        [tn as u32, tm as u32 + 2, 1], // the fast paths with blocks to spare
        [tm as u32, tn as u32 + 1, 1],
        [(tm * tn) as u32, 1, 1], // 1-D
        [7, 3, 1],                // more blocks than tiles, another shape
        [2, 2, 4],                // 3-D
    ];
    for (raster, run) in rasters {
        for grid in grids {
            let got = run(grid, rows, cols);
            let blocks = grid.iter().map(|&g| g as u64).product::<u64>();
            let mut owners = HashMap::new();
            for rank in 0..blocks {
                let want = raster.tile(rank, tm, tn).map(|(r, c)| (r as usize * 4, c as usize * 8));
                assert_eq!(got.get(&rank).copied(), want, "{raster:?}, grid {grid:?}, block {rank}");
                if let Some(t) = want {
                    assert!(owners.insert(t, rank).is_none(), "{raster:?}, grid {grid:?}: tile {t:?} twice");
                }
            }
            assert_eq!(owners.len() as u64, (tm * tn).min(blocks), "{raster:?}, grid {grid:?}: tiles missed");
        }
    }
}

#[test]
fn a_partitioned_block_tile_writes_every_element_once_and_clips_the_edges() {
    // 37 × 45 in tiles of 16 × 32 (ragged both ways), blocks of (8, 4) threads: each
    // thread owns (16 / 4) × (32 / 8) = 16 elements.
    let (rows, cols) = (37usize, 45usize);
    let mut buf = vec![f32::NAN; rows * cols + 7]; // a tail the launch must not touch
    let out = Out(buf.as_mut_ptr(), rows * cols);
    let grid = [cols.div_ceil(32) as u32, rows.div_ceil(16) as u32, 1];
    cpu::launch(grid, [8, 4, 1], 0, &|| {
        let Some(tile) = out.matrix::<ThreadTiles<16, 32, 8, 4>>(rows, cols).block_tile() else {
            return;
        };
        let (row0, col0) = (tile.row0(), tile.col0());
        let mut mine = tile.partition();
        assert_eq!((mine.rows(), mine.cols()), (4, 4));
        let (x, y) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
        for i in 0..mine.rows() {
            for j in 0..mine.cols() {
                let (r, c) = mine.position(i, j);
                assert_eq!((r, c), (y + 4 * i, x + 8 * j));
                assert_eq!(mine.contains(i, j), row0 + r < rows && col0 + c < cols);
                mine.set(i, j, ((row0 + r) * 1000 + col0 + c) as f32);
            }
        }
    })
    .unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(buf[r * cols + c], (r * 1000 + c) as f32, "element ({r}, {c})");
        }
    }
    assert!(buf[rows * cols..].iter().all(|v| v.is_nan()), "wrote past the matrix");
}

/// The same with rows `ld` apart (`ld > cols`): each thread's element `(i, j)` lands at
/// `row * ld + col` (the share adds `i * TY * ld` to its first element's index), and the
/// padding between rows is never written.
#[test]
fn a_partitioned_block_tile_of_a_padded_matrix_writes_inside_the_rows_only() {
    let (rows, cols, ld) = (29usize, 45usize, 51usize);
    let len = (rows - 1) * ld + cols;
    let mut buf = vec![f32::NAN; len + 5];
    let out = Out(buf.as_mut_ptr(), len);
    let grid = [cols.div_ceil(32) as u32, rows.div_ceil(16) as u32, 1];
    cpu::launch(grid, [8, 4, 1], 0, &|| {
        // SAFETY: every thread passes the same shape and tiling; nothing else writes the buffer.
        let m = unsafe {
            __matrix_from_launch::<f32, ThreadTiles<16, 32, 8, 4>, _, _, _>(out.slice(), rows, cols, Some(ld))
        }
        .expect("the shape fits");
        let Some(tile) = m.block_tile() else { return };
        let (row0, col0) = (tile.row0(), tile.col0());
        let mut mine = tile.partition();
        for i in 0..mine.rows() {
            for j in 0..mine.cols() {
                let (r, c) = mine.position(i, j);
                mine.set(i, j, ((row0 + r) * 1000 + col0 + c) as f32);
            }
        }
    })
    .unwrap();
    for (k, v) in buf.iter().enumerate() {
        let (r, c) = (k / ld, k % ld);
        if r < rows && c < cols {
            assert_eq!(*v, (r * 1000 + c) as f32, "element ({r}, {c})");
        } else {
            assert!(v.is_nan(), "index {k} (row {r}, column {c}) is padding or past the matrix");
        }
    }
}

/// A tile's read share (`MatrixTile::partition`): thread `(x, y)` reads element
/// `(y + i TY, x + j TX)` of its tile as `get(i, j)`, `None` outside the matrix, on a padded
/// matrix with tiles ragged both ways and past its edge, and with a block larger than the
/// layout.
#[test]
fn a_tiles_read_share_reads_each_threads_elements_of_a_padded_matrix() {
    let (rows, cols, ld) = (21usize, 19usize, 23usize);
    let data: Vec<f32> = (0..(rows - 1) * ld + cols).map(|k| k as f32).collect();
    let checked = std::sync::atomic::AtomicUsize::new(0);
    for (tile_row, tile_col) in [(0, 0), (1, 2), (2, 1), (2, 2), (3, 0), (0, 3)] {
        cpu::launch([1, 1, 1], [8, 6, 1], 0, &|| {
            let (x, y) = (thread::thread_idx_x() as usize, thread::thread_idx_y() as usize);
            let m = sluice_device::tile::Matrix::with_ld(&data, rows, cols, ld);
            let share = m.tile::<8, 8>(tile_row, tile_col).partition::<4, 2>();
            assert_eq!((share.rows(), share.cols()), (4, 2));
            for i in 0..=share.rows() {
                for j in 0..=share.cols() {
                    let (r, c) = (tile_row * 8 + y + 2 * i, tile_col * 8 + x + 4 * j);
                    let inside = i < share.rows() && j < share.cols() && y + 2 * i < 8 && x + 4 * j < 8;
                    let want = (inside && r < rows && c < cols).then(|| &data[r * ld + c]);
                    assert_eq!(share.get(i, j), want, "thread ({x}, {y}), tile ({tile_row}, {tile_col}), ({i}, {j})");
                    checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        })
        .unwrap();
    }
    assert_eq!(checked.into_inner(), 6 * 48 * 15);
}

#[test]
fn a_partition_for_another_block_shape_fails_the_launch() {
    let mut buf = vec![0.0f32; 64];
    let out = Out(buf.as_mut_ptr(), buf.len());
    let r = cpu::launch([1, 1, 1], [8, 8, 1], 0, &|| {
        if let Some(tile) = out.matrix::<ThreadTiles<8, 8, 8, 4>>(8, 8).block_tile() {
            let _ = tile.partition();
        }
    });
    let e = r.expect_err("a (8, 4) partition of an (8, 8) block must fail");
    assert!(e.contains("(TX, TY, 1)"), "{e}");
}

#[test]
fn warp_tiles_cover_the_block_tile_once_and_extra_warps_get_none() {
    // A 64 × 64 block tile in warp tiles of 32 × 16: 2 × 4 warps; the block has 10 warps.
    let mut buf = vec![0.0f32; 64 * 64];
    let out = Out(buf.as_mut_ptr(), buf.len());
    let seen = Mutex::new(Vec::new());
    cpu::launch([1, 1, 1], [320, 1, 1], 0, &|| {
        let Some(block) = out.matrix::<WarpTiles<64, 64, 32, 16>>(64, 64).block_tile() else {
            return;
        };
        let w = thread::thread_idx_x() / 32;
        let got = block.warp_tile().map(|t| (t.row0(), t.col0()));
        if thread::thread_idx_x().is_multiple_of(32) {
            seen.lock().unwrap().push((w, got));
        }
    })
    .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    let want: Vec<_> =
        (0..10u32).map(|w| (w, (w < 8).then(|| ((w as usize / 4) * 32, (w as usize % 4) * 16)))).collect();
    assert_eq!(seen, want);
}

#[test]
fn a_shape_that_does_not_fit_its_slice_is_none() {
    let mut buf = vec![0.0f32; 10];
    let out = Out(buf.as_mut_ptr(), buf.len());
    type L = ThreadTiles<4, 4, 1, 1>;
    let make = |rows: i64, cols: u32, ld: Option<u32>| {
        // SAFETY: one thread, one matrix of the slice at a time, nothing else writes it.
        unsafe { __matrix_from_launch::<f32, L, _, _, _>(out.slice(), rows, cols, ld) }
    };
    assert!(make(3, 4, None).is_none());
    assert!(make(-1, 4, None).is_none(), "a negative dimension");
    assert!(make(2, 4, Some(3)).is_none(), "ld < cols");
    let m = make(2, 4, Some(6)).expect("fits: 6 + 4 = 10");
    assert_eq!((m.rows(), m.cols()), (2, 4));
}

#[test]
fn a_dimension_past_u32_is_none_even_when_the_matrix_is_empty() {
    let mut buf = vec![0.0f32; 4];
    let out = Out(buf.as_mut_ptr(), buf.len());
    type L = ThreadTiles<4, 4, 1, 1>;
    let make = |rows: u64, cols: u64, ld: Option<u64>| {
        // SAFETY: one thread, one matrix of the slice at a time, nothing else writes it.
        unsafe { __matrix_from_launch::<f32, L, _, _, _>(out.slice(), rows, cols, ld) }
    };
    let big = u32::MAX as u64 + 1;
    assert!(make(big, 0, None).is_none(), "2^32 rows of nothing");
    assert!(make(0, big, None).is_none(), "2^32 columns, no rows");
    assert!(make(1, 4, Some(big)).is_none(), "ld of 2^32");
    assert!(make(u32::MAX as u64, 0, None).is_some(), "u32::MAX rows of nothing fit");
    assert!(make(2, 2, Some(2)).is_some());
    let data = [1.0f32; 4];
    assert!(sluice_device::tile::Matrix::try_new(&data, big as usize, 0).is_none());
    assert!(sluice_device::tile::Matrix::try_new(&data, 2, 2).is_some());
}

#[test]
fn too_few_blocks_fail_the_launch_on_the_fast_paths_too() {
    // 3 × 5 tiles of 4 × 8: each fast path's grid one row of blocks short, and the general
    // path's 1-D grid one block short.
    let (rows, cols) = (12usize, 40usize);
    let mut buf = vec![0.0f32; rows * cols];
    let out = Out(buf.as_mut_ptr(), buf.len());
    fn run<O: Order>(out: Out, grid: [u32; 3], rows: usize, cols: usize) -> Result<(), String> {
        cpu::launch(grid, [1, 1, 1], 0, &|| {
            let _ = out.matrix::<ThreadTiles<4, 8, 1, 1, O>>(rows, cols).block_tile();
        })
    }
    for (name, r) in [
        ("row-major, 5 across", run::<ByRows>(out, [5, 2, 1], rows, cols)),
        ("column-major, 3 across", run::<ByColumns>(out, [3, 4, 1], rows, cols)),
        ("1-D", run::<ByRows>(out, [14, 1, 1], rows, cols)),
    ] {
        let e = r.expect_err(name);
        assert!(e.contains("fewer blocks than the matrix has tiles"), "{name}: {e}");
    }
    assert!(run::<ByColumns>(out, [3, 5, 1], rows, cols).is_ok());
}
