// Dropping a `Full` hands the stage back to the producer, whose next copies overwrite it:
// a tile of the stage borrowed from the `Full` cannot be read after that.
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::tma::Consumer;

type TA = Tile<bf16, Swizzled<128, 64>>;

fn consume(mut c: Consumer<TA, 4>) -> f32 {
    let full = c.wait();
    let tile = full.tiles();
    drop(full);
    tile.get(0, 0).to_f32()
}

fn main() {}
