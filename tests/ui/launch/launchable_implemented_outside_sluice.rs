// A launchable of one's own: it would re-type a kernel, `(Mut<u8>, f32)` for an entry that
// takes `(Mut<f32>, f32)`, and so write four times past the view. `Launchable` is sealed:
// only `Kernel` and `Function` are launched, each with the signature it was checked with.
use sluice::{Launchable, Mut};

pub struct Retyped;

impl Launchable for Retyped {
    type Sig = (Mut<u8>, f32);
}

fn main() {}
