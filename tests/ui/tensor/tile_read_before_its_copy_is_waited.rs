// Inside a pipeline's fill, the stage is a `FillTile`: copies may write it, nothing may
// read it (its copies have not landed). Reading goes through the `Ready` of `wait`.
use sluice_device::async_copy::{Pipeline, Threads};
use sluice_device::half::bf16;
use sluice_device::mma::{Warp, M16N8K16};
use sluice_device::tile::{Matrix, Swizzled, Tile};

fn mainloop(src: Matrix<'_, bf16>) {
    let threads = Threads::<256>::check();
    let warp = Warp::whole();
    let _pipe = Pipeline::<Tile<bf16, Swizzled<64, 32>>, 3>::start(&threads, |s, mut t| {
        t.copy_from(&threads, &src, 0, 32 * s);
        let early = warp.load_a::<_, _, M16N8K16, 1>(&t, 0, 0);
    });
}

fn main() {}
