// `mma_async` leaves its group reading the tiles after it returns; the pipeline keeps the
// stage it handed out unwritten until the group is retired, but no other tile. So `pick`
// returns only tiles of the stage: one from elsewhere (here another set of handles, which
// could be written while the group reads it) does not type-check.
use sluice_device::async_copy::{Behind, Pipeline};
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

type TA = Tile<bf16, Swizzled<128, 64>>;
type TB = Tile<bf16, Swizzled<64, 64>>;

fn mainloop(pipe: &mut Pipeline<(TA, TB, TB), 4, Behind>, other: &(TA, TB, TB)) {
    let wg = Warpgroup::this();
    let acc = WgAccum::<128>::zero().in_flight();
    let (ready, _refill) = pipe.wait();
    let acc = wg.mma_async(acc, &ready, |_| (&other.0, 0, [&other.1, &other.2]));
    let _ = acc.wait();
}

fn main() {}
