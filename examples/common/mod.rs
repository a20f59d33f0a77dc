//! Shared by the benchmark examples (not an example itself: Cargo builds only
//! `examples/*.rs` and `examples/*/main.rs`): the one input generator of the tests, examples
//! and benchmarks, which draws what `benches/cuda/common.cuh` draws from the same seed.

pub use gpu_kernels::reference::Rng;
