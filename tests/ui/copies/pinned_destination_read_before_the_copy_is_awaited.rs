// Rule 4: the host cannot read a pending device-to-host copy's destination.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut host = gpu.pinned_matrix::<f32>(256, 1)?;
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(256, 1)?;
        let pending = s.lane()?.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            st.copy_to_host(&v, host.as_pinned_mut())
        })?;
        println!("{}", host[0]);
        pending.wait()?;
        Ok(())
    })
}
