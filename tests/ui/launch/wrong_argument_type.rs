// A scalar of the wrong type: `fill_column` takes an f32 value, not an f64.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            let value: f64 = 1.0;
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut v, value))
        })
    })
}
