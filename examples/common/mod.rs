//! Shared by the benchmark examples (not an example itself: Cargo builds only
//! `examples/*.rs` and `examples/*/main.rs`).

/// xorshift64, uniform floats in `[lo, hi)`: `benches/cuda/common.cuh`'s `Rng`, with its
/// arithmetic in the same order (`(hi - lo) * k / 2^24`, then `lo +`) so that the Rust and
/// the CUDA C++ benchmarks draw the same floats from the same seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next float in `[lo, hi)`.
    pub fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (hi - lo) * (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}
