// A branded view cannot be stored in a variable outside its lane's closure either.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let lane = s.lane()?;
        let mut outside = None;
        lane.enter(|st| outside = Some(st.bind(m.as_columns_mut())));
        drop(outside);
        Ok(())
    })
}
