// A view of the wrong element type: `fill_column` writes f32, this view holds u32.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<u32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut v, 1.0))
        })
    })
}
