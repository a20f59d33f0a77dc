// Rule 4: the host cannot free the source of a host-to-device copy while it may be read.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let input = gpu.pinned_buffer::<f32>(256)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.copy_to_device(&input, &mut v)
        })?;
        drop(input);
        Ok(())
    })
}
