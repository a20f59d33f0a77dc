// A and B of one warpgroup MMA have one element type (the instruction is `.bf16.bf16` or
// `.f16.f16`): a bf16 A with an f16 B does not type-check.
use sluice_device::half::{bf16, f16};
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

fn k_tile(a: &Tile<bf16, Swizzled<128, 64>>, b0: &Tile<f16, Swizzled<64, 64>>, b1: &Tile<f16, Swizzled<64, 64>>) {
    let wg = Warpgroup::this();
    let mut acc = WgAccum::<128>::zero();
    wg.mma(&mut acc, a, 0, [b0, b1]);
}

fn main() {}
