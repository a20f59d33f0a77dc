// A pipeline's free stage is filled once per round: the `Refill` is consumed by `fill`, so
// a second round of copies into the same stage (whose first copies are in flight) does not
// compile.
use sluice_device::async_copy::{Pipeline, Threads};
use sluice_device::half::bf16;
use sluice_device::tile::{Matrix, Swizzled, Tile};

fn mainloop(src: Matrix<'_, bf16>, k_tiles: usize) {
    let threads = Threads::<256>::check();
    let mut pipe = Pipeline::<Tile<bf16, Swizzled<64, 32>>, 3>::start(&threads, |s, mut t| t.copy_from(&threads, &src, 0, 32 * s));
    for kt in 0..k_tiles {
        let (_ready, refill) = pipe.wait();
        refill.fill(|mut t| t.copy_from(&threads, &src, 0, 32 * (kt + 2)));
        refill.fill(|mut t| t.copy_from(&threads, &src, 0, 32 * (kt + 3)));
    }
}

fn main() {}
