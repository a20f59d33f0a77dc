// One argument per kernel parameter: `saxpy` takes (y, x, a), here `a` is missing.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let data = vec![1.0f32; 256];
    scope(&gpu, |s| {
        let xs = s.upload(&data)?;
        let y = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let x = st.await_fence(&xs)?;
            let mut y = st.bind(y.as_columns_mut());
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(256, 256), (&mut y, &x))
        })
    })
}
