// `ldmatrix .trans` transposes 16-bit elements: a tf32 B operand cannot come from a
// row-major (N-contiguous) f32 tile that way. Load it with `load_b_scalar`, or keep B
// column-major (K contiguous) and use `load_b`.
use sluice_device::mma::{Warp, M16N8K8};
use sluice_device::tile::{RowMajor, Tile};

fn step(warp: &Warp, b: &Tile<f32, RowMajor<32, 64>>) {
    let fb = warp.load_b_trans::<_, _, M16N8K8, 2>(b, 0, 0);
}

fn main() {}
