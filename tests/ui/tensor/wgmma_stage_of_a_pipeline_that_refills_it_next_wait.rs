// `mma_async` leaves its group reading the stage after the call returns. An ordinary
// pipeline refills the stage it handed out at the very next `wait`, while the group could
// still read it; only a `Behind` pipeline (refilled two waits later) is accepted.
use sluice_device::async_copy::Pipeline;
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

type Stage = (Tile<bf16, Swizzled<128, 64>>, Tile<bf16, Swizzled<64, 64>>, Tile<bf16, Swizzled<64, 64>>);

fn mainloop(pipe: &mut Pipeline<Stage, 4>) {
    let wg = Warpgroup::this();
    let acc = WgAccum::<128>::zero().in_flight();
    let (ready, _refill) = pipe.wait();
    let acc = wg.mma_async(acc, &ready, |(ta, tb0, tb1)| (ta, 0, [tb0, tb1]));
    let _ = acc.wait();
}

fn main() {}
