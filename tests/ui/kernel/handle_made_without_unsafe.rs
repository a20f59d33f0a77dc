// `Kernel::of` pairs a `#[kernel]` declaration with PTX that only its caller can vouch for
// (another module may hold an entry of the same name and sizes that writes through a `Ref`):
// it is an `unsafe fn`, and calling it outside `unsafe` does not compile.
use sluice::{kernels, Kernel, Mut};

pub const FILL: Kernel<(Mut<f32>, f32)> = Kernel::of::<kernels::fill_column>(kernels::PTX);

fn main() {}
