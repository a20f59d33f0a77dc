// A kind of kernel argument of one's own: a wrapper that would pass a view bound to another
// lane under the launching lane's brand (no fence between them). `Arg` is sealed: only
// sluice's views and `Pod` values are arguments.
use sluice::{Arg, ColumnViewMut, Mut};

pub struct OtherLane<'s, 'other>(pub ColumnViewMut<'s, 'other, f32>);

impl<'lane, 's, 'other> Arg<'lane, Mut<f32>> for &mut OtherLane<'s, 'other> {}

fn main() {}
