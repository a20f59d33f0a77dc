// A `#[kernel(block = ..)]` whose `MatrixMut` is split by `ThreadTiles<BM, BN, TX, TY>` for
// blocks of another shape: `partition()` would fail every launch, so the mismatch is a
// compile error, pointing at the parameter's tiling.
use sluice_device::kernel;
use sluice_device::tile::{MatrixMut, ThreadTiles};

#[kernel(block = (16, 16))]
pub fn fill(#[matrix(rows = n, cols = n)] out: Option<MatrixMut<f32, ThreadTiles<32, 32, 32, 8>>>, n: u32) {
    let _ = out;
}

fn main() {}
