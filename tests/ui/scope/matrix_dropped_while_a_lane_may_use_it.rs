// Rule 5: device memory cannot be freed while work that uses it may be pending.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut m = gpu.alloc_buffer::<f32>(256)?;
    scope(&gpu, |s| {
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut v, 1.0))
        })?;
        drop(m);
        Ok(())
    })
}
