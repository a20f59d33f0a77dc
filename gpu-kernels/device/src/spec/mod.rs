//! What PTX specifies, as plain code: no `cfg`, no `asm!`, no runtime. The GPU code emits
//! what these functions say, the CPU runtime computes with them, and the tests pin each row.
//!
//! | module | what it pins down |
//! | --- | --- |
//! | [`layout`] | shared-tile layouts: row/column major, padded, XOR-swizzled 16-byte chunks |
//! | [`mma`] | `mma.sync` and `ldmatrix` fragment layouts (which lane holds which element) and the arithmetic of the warp MMA |

pub mod layout;
pub mod mma;
