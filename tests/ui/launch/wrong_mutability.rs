// The written parameter (`Mut<f32>`) needs `&mut view`; a shared `&view` is rejected.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&v, 1.0))
        })
    })
}
