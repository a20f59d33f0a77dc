// Rule 2: two lanes can never hold mutable access to the same column.
use sluice::{scope, Gpu};

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    scope(&gpu, |s| {
        let m = s.alloc_matrix::<f32>(256, 2)?;
        let first = m.column_mut(0).unwrap();
        let again = m.column_mut(0).unwrap();
        let (a, b) = (s.lane()?, s.lane()?);
        a.enter(|st| st.zero(&mut st.bind(first)))?;
        b.enter(|st| st.zero(&mut st.bind(again)))
    })
}
