// Rule 3: each lane reads shared data only after awaiting its upload fence.
use sluice::{kernels, scope, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let data = vec![1.0f32; 256];
    scope(&gpu, |s| {
        let shared = s.upload(&data)?;
        let y = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut y = st.bind(y.as_columns_mut());
            st.launch(&kernels::saxpy, LaunchConfig::for_elements(256, 256), (&mut y, &shared, 2.0))
        })
    })
}
