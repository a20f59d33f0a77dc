// `#[kernel(dims = 1)]` promises a 1-D launch, which the host checks and the compiler may
// assume; there is no `dims = 2` or `dims = 3` (a kernel launched in 2-D or 3-D takes no
// `dims`), and the message says so.
use sluice_macros::kernel;

#[kernel(dims = 2)]
pub fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
