// Rule 4: a copy takes its destination; only `Pending::wait` gives it back.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(256, 1)?;
        let host = s.pinned_matrix::<f32>(256, 1)?;
        let dst = host.as_pinned_mut();
        let pending = s.lane()?.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            st.copy_to_host(&v, dst)
        })?;
        println!("{}", dst[0]);
        pending.wait()?;
        Ok(())
    })
}
