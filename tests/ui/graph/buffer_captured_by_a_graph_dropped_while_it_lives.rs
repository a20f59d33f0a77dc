// A graph bakes in the addresses it captured: while it lives, a buffer it uses cannot be
// dropped (freed), or a replay would write freed memory.
use sluice::{graph, Gpu};

fn demo(gpu: &Gpu) -> sluice::Result<()> {
    let mut m = gpu.alloc_buffer::<f32>(256)?;
    let (g, ()) = graph(gpu, |s| {
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.zero(&mut v)
        })
    })?;
    drop(m);
    drop(g);
    Ok(())
}

fn main() {
    let _ = demo;
}
