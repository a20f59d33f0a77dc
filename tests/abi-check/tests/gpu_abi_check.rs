//! The load-time check of element types: a kernel crate whose `cfg` gives a parameter one
//! element type on the device and another of the same size on the host (the lowered sizes
//! agree) is refused when the kernel is resolved or launched, with the kernel, the
//! parameter and both types named, and nothing runs: the output stays as it was. A kernel
//! of the same module typed alike loads and runs. On both backends: the CPU backend checks
//! the declaration against the same PTX.

#[path = "../../common/mod.rs"]
mod common;

use sluice::{scope, Error, Gpu, LaunchConfig, ParamKind, ParamLayout};
use sluice_abi_check::kernels;

const N: usize = 1000;

fn element_type_mismatch_is_refused_at_load(gpu: Gpu) {
    let err = gpu.function(&kernels::count_up).expect_err("a mistyped kernel must not resolve");
    let Error::KernelParamType { name, index, param, host, device } = &err else { panic!("{err}") };
    assert_eq!((*name, *index, param.as_deref()), ("count_up", 0, Some("out")));
    let layout = |size, align| Some(ParamLayout { kind: ParamKind::WrittenSlice, size, align });
    assert_eq!((*host, *device), (layout(4, 4), layout(8, 8)));
    let text = err.to_string();
    assert!(text.contains("`out`") && text.contains("4-byte") && text.contains("8-byte"), "{text}");

    // Launched in a scope: the same error, and the poisoned output is untouched.
    let poison = vec![0xdead_beef_u32; N];
    let mut host = gpu.pinned_buffer::<u32>(N).expect("pinned");
    let got = scope(&gpu, |s| {
        let buf = s.alloc_buffer::<u32>(N)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(buf.as_columns_mut());
            st.copy_to_device(&poison, &mut v)?;
            let launched = st.launch(&kernels::count_up, LaunchConfig::for_elements(N, 128), (&mut v,));
            st.copy_to_host(&v, host.as_pinned_mut())?.wait()?;
            launched
        })
    });
    assert!(matches!(got, Err(Error::KernelParamType { .. })), "{got:?}");
    assert!(host.iter().all(|&x| x == 0xdead_beef), "the refused kernel wrote its output");

    // A value whose layout differs (8 bytes on both sides, aligned 8 against 4).
    let err = gpu.function(&kernels::stride).expect_err("a mistyped value must not resolve");
    assert!(
        matches!(
            &err,
            Error::KernelParamType {
                index: 1,
                host: Some(ParamLayout { kind: ParamKind::Value, size: 8, align: 4 }),
                device: Some(ParamLayout { kind: ParamKind::Value, size: 8, align: 8 }),
                ..
            }
        ),
        "{err}"
    );
}

fn the_module_loads_and_a_kernel_typed_alike_runs(gpu: Gpu) {
    let poison = vec![0xdead_beef_u32; N];
    let mut out = gpu.pinned_buffer::<u32>(N).expect("pinned");
    scope(&gpu, |s| {
        let buf = s.alloc_buffer::<u32>(N)?;
        s.lane()?.enter(|st| {
            let mut v = st.bind(buf.as_columns_mut());
            st.copy_to_device(&poison, &mut v)?;
            st.launch(&kernels::count_up_u32, LaunchConfig::for_elements(N, 128), (&mut v,))?;
            st.copy_to_host(&v, out.as_pinned_mut())?.wait().map(|_| ())
        })
    })
    .unwrap();
    for (i, x) in out.iter().enumerate() {
        assert_eq!(*x, i as u32);
    }
}

#[test]
fn the_handles_check_catches_it_without_a_device() {
    let err = kernels::check_signatures().expect_err("the PTX records a different element type");
    assert!(matches!(err, Error::KernelParamType { name: "count_up", .. }), "{err}");
}

on_every_backend!(element_type_mismatch_is_refused_at_load, the_module_loads_and_a_kernel_typed_alike_runs);
