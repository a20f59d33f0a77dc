// A and B of one warpgroup MMA have one element type (the instruction is `.bf16.bf16` or
// `.f16.f16`): a bf16 A with an f16 B does not type-check.
use sluice_device::async_copy::Pipeline;
use sluice_device::half::{bf16, f16};
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

type Stage = (Tile<bf16, Swizzled<128, 64>>, Tile<f16, Swizzled<64, 64>>, Tile<f16, Swizzled<64, 64>>);

fn k_tile(pipe: &mut Pipeline<Stage, 3>) {
    let wg = Warpgroup::this();
    let mut acc = WgAccum::<128>::zero();
    let (ready, _refill) = pipe.wait();
    wg.mma(&mut acc, &ready, |(ta, tb0, tb1)| (ta, 0, [tb0, tb1]));
}

fn main() {}
