// Rule 5: memory owned by the scope's closure would be freed before the scope joins its lanes.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let mut m = gpu.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut v, 1.0))
        })
    })
}
