// `column_mut(0)` borrows the whole pinned matrix for the copy: column 1 cannot be read
// while the copy is pending, although the copy never touches it.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut host = gpu.pinned_matrix::<f32>(256, 2)?;
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(256, 2)?;
        let pending = s.lane()?.enter(|st| {
            let v = st.bind(m.column_mut(0).unwrap());
            st.copy_to_host(&v, host.column_mut(0).unwrap())
        })?;
        println!("{:?}", host.column(1));
        pending.wait()?;
        Ok(())
    })
}
