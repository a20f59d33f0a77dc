// A tile is filled by asynchronous copies only inside a pipeline's fill or through
// `copy_async`, which hand the tile back after the wait: a `FillTile` made by hand
// (`TileSet::fill`) would let the tile be read while its copies are in flight.
use sluice_device::async_copy::Threads;
use sluice_device::tile::{dynamic_tiles, Matrix, RowMajor, Tile, TileSet};

fn kernel_body(src: Matrix<'_, f32>) {
    let threads = Threads::<64>::check();
    let mut tile: Tile<f32, RowMajor<8, 8>> = dynamic_tiles();
    tile.fill().copy_from(&threads, &src, 0, 0);
    let early = tile.get(0, 0);
}

fn main() {}
