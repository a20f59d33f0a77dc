// Module assembly can define any symbol (a kernel entry in the PTX, `malloc` on the host),
// and Rust asks no `unsafe` for `global_asm!`: a safe kernel's body refuses it.
use sluice_device::kernel;
use sluice_device::slice::DeviceSliceMut;

#[kernel]
pub fn evil(out: DeviceSliceMut<u8>) {
    let _ = out;
    #[cfg(not(target_arch = "nvptx64"))]
    mod exported {
        core::arch::global_asm!(".globl sneaky", "sneaky:", "ret");
    }
}

fn main() {}
