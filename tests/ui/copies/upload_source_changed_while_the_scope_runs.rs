// Rule 4: the host cannot change the source of a host-to-device copy while it may be read.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut data = vec![1.0f32; 256];
    scope(&gpu, |s| {
        let shared = s.upload(&data)?;
        data[0] = 2.0;
        drop(shared);
        Ok(())
    })
}
