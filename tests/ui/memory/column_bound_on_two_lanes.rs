// Rule 2: binding takes the column: it cannot be bound (mutably) on a second lane as well.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(256, 2)?;
        let col = m.column_mut(0).unwrap();
        let (a, b) = (s.lane()?, s.lane()?);
        a.enter(|st| st.zero(&mut st.bind(col)))?;
        b.enter(|st| st.zero(&mut st.bind(col)))
    })
}
