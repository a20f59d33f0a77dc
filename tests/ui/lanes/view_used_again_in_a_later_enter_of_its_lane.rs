// A view is branded with one `enter` of its lane: a later `enter` of the same lane has a
// new brand, so the view does not carry over (hand it over with a fence, which is free there).
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let lane = s.lane()?;
        let mut v = lane.enter(|st| st.bind(m.as_columns_mut()));
        lane.enter(|st| st.zero(&mut v))
    })
}
