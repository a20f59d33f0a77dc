// An unchecked kernel (raw pointers, as Rust-CUDA kernels take them) cannot be launched with
// the safe `launch`: its host handle is `Kernel<_, Unchecked>`, and only the `unsafe`
// `launch_unchecked` takes it.
use sluice::{scope, Gpu, Kernel, LaunchConfig, PtrMut, Unchecked};

const RAW: Kernel<(PtrMut<f32>, u32), Unchecked> = Kernel::new_unchecked("", "fill_raw");

fn demo(gpu: &Gpu) -> sluice::Result<()> {
    scope(gpu, |s| {
        let m = s.alloc_buffer::<f32>(64)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&RAW, LaunchConfig::for_elements(64, 64), (&mut v, 64u32))
        })
    })
}

fn main() {
    let _ = demo;
}
