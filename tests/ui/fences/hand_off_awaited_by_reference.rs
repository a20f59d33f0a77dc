// A mutable hand-off is awaited by value: the awaiting lane takes the columns over, so a
// reference (which would leave them usable by the lane that fenced them) is refused.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let (a, b) = (s.lane()?, s.lane()?);
        let handed = a.enter(|st| st.fence(st.bind(m.as_columns_mut())))?;
        b.enter(|st| {
            let mut v = st.await_fence(&handed)?;
            st.zero(&mut v)
        })
    })
}
