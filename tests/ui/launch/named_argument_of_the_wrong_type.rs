// With the arguments by name (`kernels::saxpy::args`), a wrong scalar is reported against
// the kernel's own parameter: `a` of `saxpy` takes an f32, not an f64.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let x = s.alloc_buffer::<f32>(256)?;
        let y = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let x = st.bind(x.as_columns_mut());
            let mut y = st.bind(y.as_columns_mut());
            let a: f64 = 2.0;
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(256, 256), kernels::saxpy::args(&mut y, &x, a))
        })
    })
}
