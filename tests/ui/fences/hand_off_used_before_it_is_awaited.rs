// Rule 1: columns handed off behind a fence cannot be used by another lane until it awaits the fence.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let (a, b) = (s.lane()?, s.lane()?);
        let mut handed = a.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            st.fence(v)
        })?;
        b.enter(|st| st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut handed, 1.0)))
    })
}
