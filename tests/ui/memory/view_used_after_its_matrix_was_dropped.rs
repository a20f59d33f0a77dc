// A column of a matrix cannot outlive the matrix.
use sluice::Gpu;

fn main() -> sluice::Result<()> {
    let gpu = Gpu::new(0)?;
    let col = {
        let mut m = gpu.alloc_matrix::<f32>(256, 2)?;
        m.column_mut(0).unwrap()
    };
    println!("{}", col.rows());
    Ok(())
}
