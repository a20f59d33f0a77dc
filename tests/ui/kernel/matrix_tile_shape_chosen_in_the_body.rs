// How a `MatrixMut` is split — the block tile's shape, the blocks' order, the threads' or
// warps' share — is its type's, the same in every thread: a block that took 64 × 64 tiles
// where another took 32 × 32 could write the other's elements. `block_tile` takes no shape.
use sluice_device::kernel;
use sluice_device::tile::{MatrixMut, ThreadTiles};

#[kernel]
pub fn fill(#[matrix(rows = n, cols = n)] out: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>>, n: u32) {
    if let Some(tile) = out.block_tile::<64, 64>() {
        let _ = tile;
    }
}

fn main() {}
