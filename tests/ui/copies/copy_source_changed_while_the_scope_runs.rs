// Rule 4: the host cannot change the source of a lane's host-to-device copy while the copy
// may still read it: `copy_to_device` borrows its source until the scope ends.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut data = gpu.pinned_buffer::<f32>(256)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.copy_to_device(&data, &mut v)
        })?;
        data[0] = 2.0;
        Ok(())
    })
}
