// An option `#[kernel]` does not take (here `dim` for `dims`): the message lists the options
// and suggests the one meant.
use sluice_macros::kernel;

#[kernel(dim = 1)]
pub fn total(x: &[f32], scale: f32) {
    let _ = (x, scale);
}

fn main() {}
