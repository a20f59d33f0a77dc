// Several GPUs: a peer copy from device 0 to device 1 hands its destination off to device 1;
// awaiting it on a lane of device 0 would bind device 1's memory there.
use sluice::{scope_multi, Gpu};

fn main() -> sluice::Result<()> {
    let gpus = [Gpu::new(0)?, Gpu::new(0)?];
    scope_multi(&gpus, |s| {
        s.device(0, |d0| {
            s.device(1, |d1| {
                let (src, dst) = (d0.alloc_buffer::<f32>(256)?, d1.alloc_buffer::<f32>(256)?);
                let lane = d0.lane()?;
                let copied = lane.enter(|st| {
                    let mut v = st.bind(src.as_columns_mut());
                    st.zero(&mut v)?;
                    st.copy_to_peer(&v, dst.as_columns_mut())
                })?;
                lane.enter(|st| {
                    let mut v = st.await_fence(copied)?;
                    st.zero(&mut v)
                })
            })
        })
    })
}
