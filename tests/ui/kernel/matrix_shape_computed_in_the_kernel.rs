// A `#[matrix]` dimension is an integer parameter of the kernel or an integer literal: a
// value every thread of the launch sees alike. An expression is refused, even one of
// parameters only, since `#[kernel]` cannot tell a uniform one from one that is not.
use sluice_device::kernel;
use sluice_device::tile::{MatrixMut, ThreadTiles};

#[kernel]
pub fn fill(#[matrix(rows = n * 2, cols = n)] out: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>>, n: u32) {
    let _ = out;
}

fn main() {}
