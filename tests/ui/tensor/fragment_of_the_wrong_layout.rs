// B is k-major in this tile (row-major K × N): `ldmatrix` without `.trans` gives a fragment
// whose register pairs run along N (`Row`), and `mma.sync` reads B as `Col`. The fix is
// `load_b_trans`.
use sluice_device::half::bf16;
use sluice_device::mma::{Accum, Warp, M16N8K16};
use sluice_device::tile::{Swizzled, Tile};

fn step(warp: &Warp, a: &Tile<bf16, Swizzled<64, 32>>, b: &Tile<bf16, Swizzled<32, 64>>, acc: &mut Accum<M16N8K16>) {
    let fa = warp.load_a::<_, _, M16N8K16, 1>(a, 0, 0);
    let fb = warp.load_b::<_, _, M16N8K16, 1>(b, 0, 0);
    warp.mma(acc, &fa[0], &fb[0]);
}

fn main() {}
