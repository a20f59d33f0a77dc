// With the arguments by name, a missing argument is reported with the kernel's parameter
// list: `saxpy` takes `y`, `x` and `a`.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let x = s.alloc_buffer::<f32>(256)?;
        let y = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let x = st.bind(x.as_columns_mut());
            let mut y = st.bind(y.as_columns_mut());
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(256, 256), kernels::saxpy::args(&mut y, &x))
        })
    })
}
