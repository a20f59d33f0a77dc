// The warpgroup MMA reads A through a descriptor of the 128-byte swizzle: rows of 64 bf16.
// A tile of 64-byte rows (`Swizzled<128, 32>`, laid out for ldmatrix) is another layout,
// which the descriptor would read wrongly: it does not type-check.
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

fn k_tile(a: &Tile<bf16, Swizzled<128, 32>>, b0: &Tile<bf16, Swizzled<64, 64>>, b1: &Tile<bf16, Swizzled<64, 64>>) {
    let wg = Warpgroup::this();
    let mut acc = WgAccum::<128>::zero();
    wg.mma(&mut acc, a, 0, [b0, b1]);
}

fn main() {}
