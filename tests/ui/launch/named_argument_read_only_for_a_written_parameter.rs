// With the arguments by name, passing a shared `&view` for the written parameter `y` of
// `saxpy` is reported against `y`.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let x = s.alloc_buffer::<f32>(256)?;
        let y = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let x = st.bind(x.as_columns_mut());
            let y = st.bind(y.as_columns_mut());
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(256, 256), kernels::saxpy::args(&y, &x, 2.0))
        })
    })
}
