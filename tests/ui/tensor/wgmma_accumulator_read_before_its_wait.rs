// A warpgroup MMA left in flight (`mma_async`) writes its accumulators after the call
// returns: PTX leaves reading them before `wgmma.wait_group` undefined. `WgInFlight` has no
// accessor; the accumulators come back from `wait`.
use sluice_device::async_copy::{Behind, Pipeline};
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

type Stage = (Tile<bf16, Swizzled<128, 64>>, Tile<bf16, Swizzled<64, 64>>, Tile<bf16, Swizzled<64, 64>>);

fn mainloop(pipe: &mut Pipeline<Stage, 4, Behind>) {
    let wg = Warpgroup::this();
    let acc = WgAccum::<128>::zero().in_flight();
    let (ready, _refill) = pipe.wait();
    let acc = wg.mma_async(acc, &ready, |(ta, tb0, tb1)| (ta, 0, [tb0, tb1]));
    let early = acc.get(0);
}

fn main() {}
