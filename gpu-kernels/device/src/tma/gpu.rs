//! TMA copies and `mbarrier`s on the GPU, one instruction each (`raw.rs`).

#[path = "raw.rs"]
mod raw;

/// Sets up a barrier of the pipeline of stages `S` (generic so that the architecture check
/// below runs only where a pipeline is built).
///
/// # Safety
///
/// `raw::mbarrier_init`'s contract.
#[inline(always)]
pub(super) unsafe fn init<S>(bar: u32, count: u32) {
    let () = const {
        assert!(
            cfg!(target_feature = "sm_90"),
            "the TMA and its barriers' transactions (sluice_device::tma) need sm_90 or later, and this is a build for an older architecture: gate the kernel with #[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_90a\"))] and build the crate for sm_90a too (Builder::new(dir).specific(Arch::SM_90A) in build.rs)"
        )
    };
    // SAFETY: forwarded.
    unsafe { raw::mbarrier_init(bar, count) }
}

#[inline(always)]
pub(super) fn fence_init() {
    raw::fence_mbarrier_init();
}

/// # Safety
///
/// `raw::mbarrier_arrive`'s contract.
#[inline(always)]
pub(super) unsafe fn arrive(bar: u32) {
    // SAFETY: forwarded.
    unsafe { raw::mbarrier_arrive(bar) }
}

/// # Safety
///
/// `raw::mbarrier_arrive_expect_tx`'s contract.
#[inline(always)]
pub(super) unsafe fn arrive_expect_tx(bar: u32, bytes: u32) {
    // SAFETY: forwarded.
    unsafe { raw::mbarrier_arrive_expect_tx(bar, bytes) }
}

/// Waits until the phase of parity `parity` has completed.
///
/// # Safety
///
/// `raw::mbarrier_try_wait_parity`'s contract.
#[inline(always)]
pub(super) unsafe fn wait_parity(bar: u32, parity: u32) {
    // SAFETY: forwarded.
    while !unsafe { raw::mbarrier_try_wait_parity(bar, parity) } {}
}

/// A kernel's tensor-map parameter on the GPU: its generic address in parameter memory.
pub type MapRef = u64;

/// The box at column `x`, row `y` of the tensor map at generic address `map` into `dst`,
/// completing on `bar` (the box shape is the CPU runtime's).
///
/// # Safety
///
/// `raw::tma_load_2d`'s contract.
#[inline(always)]
pub(super) unsafe fn load_2d(dst: u32, map: &MapRef, x: i32, y: i32, bar: u32, _box: (usize, usize)) {
    // SAFETY: forwarded.
    unsafe { raw::tma_load_2d(dst, *map, x, y, bar) }
}

#[inline(always)]
pub(super) fn set_max_registers_dec<const N: u32>() {
    let () = const {
        assert!(cfg!(target_feature = "sm_90a"), "WsPipeline::run's register budgets (setmaxnreg) need sm_90a, and this is a build for another architecture: gate the kernel with #[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_90a\"))] and build the crate for sm_90a too (Builder::new(dir).specific(Arch::SM_90A) in build.rs), or use WsPipeline::run_keeping_registers")
    };
    // SAFETY: `WsPipeline::run` runs it in every thread of the producer's warpgroup, right
    // after `start`'s block barrier (converged); the kernel declares its block size
    // (`max_threads`), so ptxas sizes the register pool the budgets share (checked).
    unsafe { raw::setmaxnreg_dec::<N>() }
}

#[inline(always)]
pub(super) fn set_max_registers_inc<const N: u32>() {
    let () = const {
        assert!(cfg!(target_feature = "sm_90a"), "WsPipeline::run's register budgets (setmaxnreg) need sm_90a, and this is a build for another architecture: gate the kernel with #[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_90a\"))] and build the crate for sm_90a too (Builder::new(dir).specific(Arch::SM_90A) in build.rs), or use WsPipeline::run_keeping_registers")
    };
    // SAFETY: as `set_max_registers_dec`, in every consumer thread; the budgets fit the
    // pool (checked by `run`), so the wait for registers ends.
    unsafe { raw::setmaxnreg_inc::<N>() }
}
