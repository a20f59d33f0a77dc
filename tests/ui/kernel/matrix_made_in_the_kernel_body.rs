// A `MatrixMut` is made only by `#[kernel]`, from a `#[matrix(..)]` parameter: a shape
// computed in the body could differ between threads, and threads that split the matrix
// differently would be handed the same elements. There is no `MatrixMut::new`.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;
use sluice_device::thread;
use sluice_device::tile::{MatrixMut, ThreadTiles};

#[kernel]
pub fn fill(out: DeviceSliceMut<f32>, n: u32) {
    let rows = n as usize + thread::thread_idx_x() as usize; // differs between threads
    let m: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>> = MatrixMut::new(out, rows, n as usize);
    let _ = m;
}

fn main() {}
