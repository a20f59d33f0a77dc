// `cp.async` moves 16-byte chunks of a row-major source into the tile as they are: a
// column-major tile would need them transposed. The tile must be row-major or swizzled.
use sluice_device::async_copy::Threads;
use sluice_device::half::bf16;
use sluice_device::tile::{ColMajor, Matrix, Tile};

fn load(tile: Tile<bf16, ColMajor<64, 32>>, src: Matrix<'_, bf16>) {
    let threads = Threads::<128>::check();
    let _tile = tile.copy_async(&threads, &src, 0, 0).wait();
}

fn main() {}
