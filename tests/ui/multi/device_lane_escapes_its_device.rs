// Several GPUs: a lane of device 0 leaves the closure that entered device 0, where the
// device brand would no longer tell its memory from another device's.
use sluice::{scope_multi, Gpu};

fn main() -> sluice::Result<()> {
    let gpus = [Gpu::new(0)?, Gpu::new(0)?];
    scope_multi(&gpus, |s| {
        let lane = s.device(0, |d0| d0.lane())?;
        let _ = lane;
        Ok(())
    })
}
