// `#[kernel(unchecked)]` accepts raw pointers; its host declaration is `Unchecked`, so the
// handle made from it launches only through `unsafe`.
use sluice::{scope, Gpu, Kernel, LaunchConfig, PtrMut, Unchecked};
use sluice_macros::kernel;

#[kernel(unchecked)]
pub unsafe fn fill_raw(out: *mut f32, n: u32) {
    let _ = (out, n);
}

// SAFETY: a handle only; the launch below is what must not compile.
const FILL: Kernel<(PtrMut<f32>, u32), Unchecked> = unsafe { Kernel::of::<__sluice_kernel_fill_raw>("") };

fn demo(gpu: &Gpu) -> sluice::Result<()> {
    scope(gpu, |s| {
        let m = s.alloc_buffer::<f32>(64)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(m.as_columns_mut());
            st.launch(&FILL, LaunchConfig::for_elements(64, 64), __sluice_kernel_fill_raw::args(&mut v, 64))
        })
    })
}

fn main() {
    let _ = demo;
}
