// A graph's copies write its pinned destinations at every replay: the host reads them only
// through a replay's `wait` (`Outputs`), never directly while the graph lives.
use sluice::{graph, Gpu};

fn demo(gpu: &Gpu) -> sluice::Result<()> {
    let mut host = gpu.pinned_buffer::<f32>(256)?;
    let (g, ()) = graph(gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        s.lane()?.enter(|st| {
            let v = st.bind(m.as_columns_mut());
            st.copy_to_host(&v, host.as_pinned_mut()).map(drop)
        })
    })?;
    println!("{}", host[0]);
    drop(g);
    Ok(())
}

fn main() {
    let _ = demo;
}
