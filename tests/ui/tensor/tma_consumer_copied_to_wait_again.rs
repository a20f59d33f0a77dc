// A consumer walks the stages and their barrier phases in order; it cannot be copied, so no
// second walk can wait again for a phase that has passed (a stale phase, which on a GPU
// completes at once or never).
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::tma::Consumer;

type TA = Tile<bf16, Swizzled<128, 64>>;

fn consume(mut c: Consumer<TA, 4>) {
    let mut again = c.clone();
    drop(c.wait());
    drop(again.wait());
}

fn main() {}
