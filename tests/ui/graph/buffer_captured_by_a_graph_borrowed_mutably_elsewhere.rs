// While a graph lives, a buffer it writes cannot be bound by another scope: the two would
// write it at once.
use sluice::{graph, scope, Gpu};

fn demo(gpu: &Gpu) -> sluice::Result<()> {
    let mut m = gpu.alloc_buffer::<f32>(256)?;
    let (g, ()) = graph(gpu, |s| {
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.zero(&mut v)
        })
    })?;
    scope(gpu, |s| {
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.zero(&mut v)
        })
    })?;
    drop(g);
    Ok(())
}

fn main() {
    let _ = demo;
}
