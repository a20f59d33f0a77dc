// A view is bound to one lane of one recording: it cannot be used by a launch recorded in
// another graph (its brand names its own lane).
use sluice::{graph, Gpu};

fn demo(gpu: &Gpu) -> sluice::Result<()> {
    let mut a = gpu.alloc_buffer::<f32>(256)?;
    let (_g, ()) = graph(gpu, |s| {
        s.lane()?.enter(|sa| {
            let mut v = sa.bind(a.as_columns_mut());
            let (_h, ()) = graph(gpu, |t| t.lane()?.enter(|sb| sb.zero(&mut v)))?;
            Ok(())
        })
    })?;
    Ok(())
}

fn main() {
    let _ = demo;
}
