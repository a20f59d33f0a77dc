// The warpgroup MMA reads A through a descriptor of the 128-byte swizzle: rows of 64 bf16.
// A tile of 64-byte rows (`Swizzled<128, 32>`, laid out for ldmatrix) is another layout,
// which the descriptor would read wrongly: it does not type-check.
use sluice_device::async_copy::Pipeline;
use sluice_device::half::bf16;
use sluice_device::tile::{Swizzled, Tile};
use sluice_device::wgmma::{Warpgroup, WgAccum};

type Stage = (Tile<bf16, Swizzled<128, 32>>, Tile<bf16, Swizzled<64, 64>>, Tile<bf16, Swizzled<64, 64>>);

fn k_tile(pipe: &mut Pipeline<Stage, 3>) {
    let wg = Warpgroup::this();
    let mut acc = WgAccum::<128>::zero();
    let (ready, _refill) = pipe.wait();
    wg.mma(&mut acc, &ready, |(ta, tb0, tb1)| (ta, 0, [tb0, tb1]));
}

fn main() {}
