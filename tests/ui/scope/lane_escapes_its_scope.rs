// Lanes belong to their scope: one cannot be used after the scope has joined it.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let lane = scope(&gpu, |s| s.lane())?;
    println!("{}", lane.index());
    Ok(())
}
