// Several GPUs: a column of device 0's memory is bound on a lane of device 1 (no peer copy).
use sluice::{scope_multi, Gpu};

fn main() -> sluice::Result<()> {
    let gpus = [Gpu::new(0)?, Gpu::new(0)?];
    scope_multi(&gpus, |s| {
        s.device(0, |d0| {
            let m = d0.alloc_buffer::<f32>(256)?;
            s.device(1, |d1| {
                d1.lane()?.enter(|st| {
                    let mut v = st.bind(m.as_columns_mut());
                    st.zero(&mut v)
                })
            })
        })
    })
}
