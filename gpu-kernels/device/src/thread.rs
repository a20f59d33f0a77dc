//! Thread, block and grid indices (the CUDA `threadIdx`/`blockIdx`/`blockDim`/`gridDim`).
//!
//! Available on the device only; each function reads one special register.

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::arch::nvptx;

    /// A 3-component index or size, as CUDA's `dim3`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Dim3 {
        /// x component.
        pub x: u32,
        /// y component.
        pub y: u32,
        /// z component.
        pub z: u32,
    }

    macro_rules! special {
        ($(#[$doc:meta] $name:ident => $x:ident, $y:ident, $z:ident;)*) => {$(
            #[$doc]
            #[inline(always)]
            pub fn $name() -> Dim3 {
                // SAFETY: reading a special register has no preconditions inside a kernel.
                unsafe { Dim3 { x: nvptx::$x() as u32, y: nvptx::$y() as u32, z: nvptx::$z() as u32 } }
            }
        )*};
    }

    special! {
        /// This thread's index within its block (`threadIdx`).
        thread_idx => _thread_idx_x, _thread_idx_y, _thread_idx_z;
        /// This block's index within the grid (`blockIdx`).
        block_idx => _block_idx_x, _block_idx_y, _block_idx_z;
        /// The block's size in threads (`blockDim`).
        block_dim => _block_dim_x, _block_dim_y, _block_dim_z;
        /// The grid's size in blocks (`gridDim`).
        grid_dim => _grid_dim_x, _grid_dim_y, _grid_dim_z;
    }

    /// The global 1-D index of this thread: `blockIdx.x * blockDim.x + threadIdx.x`,
    /// computed in 64 bits so that it cannot wrap.
    #[inline(always)]
    pub fn index_1d() -> u64 {
        // SAFETY: reading special registers has no preconditions inside a kernel.
        unsafe {
            nvptx::_block_idx_x() as u64 * nvptx::_block_dim_x() as u64 + nvptx::_thread_idx_x() as u64
        }
    }

    /// The total number of threads in the grid along x (the stride of a grid-stride loop).
    #[inline(always)]
    pub fn grid_size_1d() -> u64 {
        // SAFETY: reading special registers has no preconditions inside a kernel.
        unsafe { nvptx::_grid_dim_x() as u64 * nvptx::_block_dim_x() as u64 }
    }

    /// Waits until every thread of the block reaches this point (`__syncthreads()`).
    ///
    /// Every thread of the block must call it (not inside divergent control flow),
    /// or the block deadlocks: that part is the kernel author's duty.
    #[inline(always)]
    pub fn sync_threads() {
        // SAFETY: a block-wide barrier; reaching it from all threads is the caller's duty
        // as documented above (a divergent call hangs the block, it is not memory-unsafe).
        unsafe { nvptx::_syncthreads() }
    }
}

#[cfg(target_arch = "nvptx64")]
pub use imp::*;
