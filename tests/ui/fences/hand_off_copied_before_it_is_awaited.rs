// Rule 1: columns handed off behind a fence cannot be copied by another lane until it awaits the fence.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut host = gpu.pinned_buffer::<f32>(256)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let (a, b) = (s.lane()?, s.lane()?);
        let handed = a.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut v, 1.0))?;
            st.fence(v)
        })?;
        b.enter(|st| st.copy_to_host(&handed, host.as_pinned_mut()).map(drop))
    })
}
