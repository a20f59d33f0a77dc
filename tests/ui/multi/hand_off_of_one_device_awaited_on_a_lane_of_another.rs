// Several GPUs: a hand-off of device 0's memory is awaited on a lane of device 1: the view
// would be device 0's memory on device 1's lane.
use sluice::{scope_multi, Gpu};

fn main() -> sluice::Result<()> {
    let gpus = [Gpu::new(0)?, Gpu::new(0)?];
    scope_multi(&gpus, |s| {
        s.device(0, |d0| {
            let m = d0.alloc_buffer::<f32>(256)?;
            let handed = d0.lane()?.enter(|st| {
                let mut v = st.bind(m.as_columns_mut());
                st.zero(&mut v)?;
                st.fence(v)
            })?;
            s.device(1, |d1| {
                d1.lane()?.enter(|st| {
                    let mut v = st.await_fence(handed)?;
                    st.zero(&mut v)
                })
            })
        })
    })
}
