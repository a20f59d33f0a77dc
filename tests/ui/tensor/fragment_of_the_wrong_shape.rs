// bf16 fragments are loaded for m16n8k16; the accumulator is of the tf32 shape m16n8k8.
use sluice_device::half::bf16;
use sluice_device::mma::{Accum, FragA, FragB, Warp, M16N8K16, M16N8K8};

fn step(warp: &Warp, a: &FragA<bf16, M16N8K16>, b: &FragB<bf16, M16N8K16>) {
    let mut acc = Accum::<M16N8K8>::zero();
    warp.mma(&mut acc, a, b);
}

fn main() {}
