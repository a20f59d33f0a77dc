// Several GPUs: the destination of a peer copy is launched on before its hand-off is awaited
// (the copy may still be writing it).
use sluice::{kernels, scope_multi, Gpu, LaunchConfig};

fn main() -> sluice::Result<()> {
    let gpus = [Gpu::new(0)?, Gpu::new(0)?];
    scope_multi(&gpus, |s| {
        s.device(0, |d0| {
            s.device(1, |d1| {
                let (src, dst) = (d0.alloc_buffer::<f32>(256)?, d1.alloc_buffer::<f32>(256)?);
                let mut copied = d0.lane()?.enter(|st| {
                    let mut v = st.bind(src.as_columns_mut());
                    st.zero(&mut v)?;
                    st.copy_to_peer(&v, dst.as_columns_mut())
                })?;
                d1.lane()?.enter(|st| {
                    st.launch(&kernels::fill_column, LaunchConfig::for_elements(256, 256), (&mut copied, 1.0))
                })
            })
        })
    })
}
