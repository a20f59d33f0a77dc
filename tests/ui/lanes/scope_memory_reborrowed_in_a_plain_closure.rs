// A helper closure that takes columns from a scope allocation it captures by reference
// reborrows them for one call only, shorter than the scope that `bind` needs.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_buffer::<f32>(256)?;
        let lanes = s.lanes(2)?;
        let mut zero_on = |i: usize| lanes[i].enter(|st| st.zero(&mut st.bind(m.as_columns_mut())));
        zero_on(0)
    })
}
