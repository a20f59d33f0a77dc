// An f16 A fragment with a bf16 B fragment: mma.sync multiplies one element type.
use sluice_device::half::{bf16, f16};
use sluice_device::mma::{Accum, FragA, FragB, Warp, M16N8K16};

fn step(warp: &Warp, a: &FragA<f16, M16N8K16>, b: &FragB<bf16, M16N8K16>, acc: &mut Accum<M16N8K16>) {
    warp.mma(acc, a, b);
}

fn main() {}
