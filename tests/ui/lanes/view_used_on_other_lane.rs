// Rule 1: a view bound to lane `a` is used by a launch on lane `b` without a fence.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let (a, b) = (s.lane()?, s.lane()?);
        a.enter(|sa| {
            let mut v = sa.bind(m.as_columns_mut());
            b.enter(|sb| sb.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut v, 1.0)))
        })
    })
}
