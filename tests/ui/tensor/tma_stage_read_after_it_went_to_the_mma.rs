// A stage handed to `mma_async_full` is read by the MMA until its group retires, and goes
// back to the producer then, to be refilled: the `Full` is moved into the call, so the stage
// cannot be read (or kept) after it.
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::tma::Consumer;
use sluice_device::wgmma::{Warpgroup, WgAccum};

type TA = Tile<bf16, Swizzled<128, 64>>;
type TB = Tile<bf16, Swizzled<64, 64>>;

fn consume(mut c: Consumer<(TA, TB, TB), 4>) {
    let wg = Warpgroup::this();
    let acc = WgAccum::<128>::zero().in_flight();
    let full = c.wait();
    let acc = wg.mma_async_full(acc, full, |(ta, tb0, tb1)| (ta, 0, [tb0, tb1]));
    let x = full.tiles().0.get(0, 0);
    let _ = (acc.wait(), x);
}

fn main() {}
