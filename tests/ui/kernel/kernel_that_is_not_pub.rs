// A kernel must be `pub`: the host crate's `include_kernels!` names it from outside the
// kernel crate, and a private kernel would fail there with a privacy error about code the
// user did not write. The macro says so where the kernel is declared.
use sluice_macros::kernel;

#[kernel]
fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
