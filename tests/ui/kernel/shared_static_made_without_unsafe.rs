// A `SharedStatic` handle dereferences to the block's shared memory: every thread would
// get a `&mut` to the same variable, of uninitialised memory. Making one is `unsafe`
// (`shared_static!` declares a `static mut`, whose every use is `unsafe`).
use sluice_device::shared::SharedStatic;

static TILE: SharedStatic<[f32; 32], 7> = SharedStatic::__new();

fn main() {
    let _ = &TILE;
}
