// A stage's barrier expects the bytes of its tiles, and the TMA writes a box in the swizzle
// of its shape: the boxes given to `fill` must be one per tile, of the tile's shape and
// element type. A 64-row box for a 128-row tile does not compile.
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::tma::{Producer, TmaMatrix};

type TA = Tile<bf16, Swizzled<128, 64>>;
type TB = Tile<bf16, Swizzled<64, 64>>;

fn produce(mut p: Producer<(TA, TB), 4>, a: &TmaMatrix<bf16, 64, 64>, b: &TmaMatrix<bf16, 64, 64>) {
    p.fill((a.tile_at(0, 0), b.tile_at(0, 0)));
}

fn main() {}
