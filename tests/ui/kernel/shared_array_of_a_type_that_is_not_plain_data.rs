// Shared memory starts uninitialised and other threads write it: a shared array holds plain
// data only (`bytemuck::Pod`), which a struct with a `bool` (or padding) is not.
use sluice_device::slice::DeviceSliceMut;
use sluice_device::{kernel, shared_array, sync, thread};

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Cell {
    value: f32,
    seen: bool,
}

#[kernel]
pub fn mark(mut out: DeviceSliceMut<f32>) {
    let cells = shared_array!(CELLS: [Cell; 256]);
    let t = thread::thread_idx_x() as usize;
    cells.set(t, Cell { value: t as f32, seen: true });
    sync::sync_threads();
    if let Some(o) = out.for_thread_1d() {
        *o = cells.get(255 - t).value;
    }
}

fn main() {}
