// `#[kernel]` once per kernel: a second one (options split over two attributes, or a copy)
// is refused with a message that names the kernel and shows the options in one attribute,
// not the confusing errors of a kernel expanded twice.
use sluice_macros::kernel;

#[kernel(dims = 1)]
#[kernel(max_threads = 256)]
pub fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
