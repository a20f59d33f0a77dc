// An argument tuple of one's own: it would lower to fewer parameters than the kernel
// reads. `LaunchArgs` is sealed: only tuples of `Arg`s, one per parameter, are arguments.
use sluice::{LaunchArgs, Mut};

pub struct TooFew;

impl<'lane> LaunchArgs<'lane, (Mut<f32>, f32)> for TooFew {}

fn main() {}
