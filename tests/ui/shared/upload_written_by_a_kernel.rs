// Rule 3: shared read-only data (an awaited upload) cannot be passed where a kernel writes.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let data = vec![1.0f32; 256];
    scope(&gpu, |s| {
        let shared = s.upload(&data)?;
        s.lane()?.enter(|st| {
            let mut src = st.await_fence(&shared)?;
            st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut src, 2.0))
        })
    })
}
