//! Compiles ./kernels to PTX and writes its typed handles (`sluice::include_kernels!`).

fn main() {
    sluice_builder::embed("kernels");
}
