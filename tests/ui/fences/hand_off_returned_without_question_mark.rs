// The lane that fences returns `Ok(st.fence(v))` without `?`: `enter(..)?` then gives a
// `Result` holding the hand-off, not the hand-off, and awaiting it names the missing `?`.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let (a, b) = (s.lane()?, s.lane()?);
        let handed = a.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            Ok(st.fence(v))
        })?;
        b.enter(|st| {
            let mut v = st.await_fence(handed)?;
            st.zero(&mut v)
        })
    })
}
