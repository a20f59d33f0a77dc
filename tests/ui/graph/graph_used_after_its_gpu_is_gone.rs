// A graph borrows its `Gpu` (and so the context its addresses belong to): the `Gpu` cannot
// go while the graph may still be replayed.
use sluice::{graph, Gpu};

fn demo() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let (g, ()) = graph(&gpu, |s| s.alloc_buffer::<f32>(16).map(drop))?;
    drop(gpu);
    println!("{}", g.launches());
    Ok(())
}

fn main() {
    let _ = demo;
}
