//! What PTX specifies, as plain data and pure functions: the floor both backends
//! stand on.
//!
//! | file | what PTX (or CUDA) specifies | used by |
//! | --- | --- | --- |
//! | [`thread`] | launch dimensions ([`Dim3`](thread::Dim3), [`Dim2`](thread::Dim2)), the warp size, 32-bit global coordinates | `thread`, the CPU engine (`cpu`) |
//! | [`scope`] | memory scopes (`.cta`, `.gpu`, `.sys`) | `sync`, `atomic` |
//! | [`warp`] | the lane a `shfl.sync` reads and its predicate, the `c` operand of a segment width, lane masks, `redux.sync`'s reductions | `warp`'s GPU code and CPU runtime, the self-test's checker |
//! | [`ordering`] | C++/Rust memory orderings as PTX `.sem` qualifiers and `fence.sc` | `atomic`'s GPU code and CPU runtime |
//! | [`shared`] | the alignment of shared arrays and their elements, the hash that names a `.shared` symbol | `shared`'s GPU code and CPU runtime, `shared_array!` |
//! | [`sync`] | which block barrier each barrier operation uses (`barrier.sync 0`, the `.red` reductions on barriers of their own) | `sync`'s GPU code and CPU runtime |
//! | [`abi`] | the parameter record `#[kernel]` leaves beside each entry (kinds, sizes, alignments) and the `Pod` checks of parameter types | `#[kernel]`'s expansion; the host reads the record back |
//! | [`math`] | Euclidean division and `__saturatef`, from `trunc` and `fmod` | `math`'s GPU code and CPU runtime, the self-test's checker |
//! | [`layout`] | shared-tile layouts: row/column major, padded, CuTe's 16-byte XOR swizzle | `tile`, `async_copy` and `mma` (the offsets both backends use) |
//! | [`mma`] | `mma.sync` and `ldmatrix` fragment layouts (which lane holds which element of an operand), tf32 rounding, the MMA's arithmetic | `mma`'s GPU code (the addresses lanes give) and CPU runtime (the exchange), the tests |
//!
//! The rules of this floor: no `cfg` (but `#[cfg(test)]`), no `asm!`, no runtime (nothing that needs a
//! launch, a thread or the CPU engine), imports from nothing above it. The GPU
//! code emits what these functions say, the CPU runtime computes with them, and a
//! unit test pins each row of their tables; a backend never imports an op
//! family's API file to learn a rule. The public paths of these items are the op
//! families' (`thread::Dim3`, `warp::shfl_source`, `atomic::ordering`, ...), which
//! re-export them.
//!
//! The fragment layouts of `mma` and `ldmatrix` (which lane holds which element of
//! a tile) are derived once, in [`mma`], so that the GPU code, the CPU runtime and
//! the race checker agree.

pub mod abi;
pub mod layout;
pub mod math;
pub mod mma;
pub mod ordering;
pub mod scope;
pub mod shared;
pub mod sync;
pub mod thread;
pub mod warp;
