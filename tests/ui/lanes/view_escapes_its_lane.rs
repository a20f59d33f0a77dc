// A branded view cannot leave its lane's closure: it would be usable after the lane moved on.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let lane = s.lane()?;
        let escaped = lane.enter(|st| st.bind(m.as_columns_mut()));
        drop(escaped);
        Ok(())
    })
}
