// Awaiting a pending copy's fence does not give its destination back: the `Pending` still
// holds it, and the pinned matrix stays borrowed until the scope ends.
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
        pending.fence().wait()?;
        println!("{}", host[0]);
        drop(pending);
        Ok(())
    })
}
