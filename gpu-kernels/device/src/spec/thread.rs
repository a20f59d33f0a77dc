//! Launch dimensions: CUDA's `dim3`, the 2-D global index, the warp size, and the
//! 32-bit global coordinate as CUDA C++ computes it (public as
//! [`thread::Dim3`](crate::thread::Dim3) and friends).

/// Threads per warp on every NVIDIA architecture sluice targets.
pub const WARP_SIZE: u32 = 32;

/// A 3-component index or size, as CUDA's `dim3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// x component.
    pub x: u32,
    /// y component.
    pub y: u32,
    /// z component.
    pub z: u32,
}

impl Dim3 {
    /// `(x, y, z)`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `(x, 1, 1)`.
    pub const fn x(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }

    /// `(x, y, 1)`.
    pub const fn xy(x: u32, y: u32) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }

    /// `x * y * z` in 64 bits.
    pub const fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

/// A 2-component index or size (x, y): the 2-D global index of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Dim2 {
    /// x component.
    pub x: u32,
    /// y component.
    pub y: u32,
}

impl Dim2 {
    /// `(x, y)`.
    pub const fn new(x: u32, y: u32) -> Dim2 {
        Dim2 { x, y }
    }

    /// `x * y` in 64 bits.
    pub const fn area(self) -> u64 {
        self.x as u64 * self.y as u64
    }
}

impl From<Dim2> for (u32, u32) {
    fn from(d: Dim2) -> (u32, u32) {
        (d.x, d.y)
    }
}

impl From<Dim3> for (u32, u32, u32) {
    fn from(d: Dim3) -> (u32, u32, u32) {
        (d.x, d.y, d.z)
    }
}

impl From<Dim3> for [u32; 3] {
    fn from(d: Dim3) -> [u32; 3] {
        [d.x, d.y, d.z]
    }
}

impl From<Dim2> for [u32; 2] {
    fn from(d: Dim2) -> [u32; 2] {
        [d.x, d.y]
    }
}

/// `blockIdx * blockDim + threadIdx` along one axis in 32-bit wrapping
/// arithmetic, as CUDA C++ computes it with `unsigned` (pure logic, shared by
/// the device functions and the host tests).
#[inline(always)]
pub const fn global_coord_u32(block_idx: u32, block_dim: u32, thread_idx: u32) -> u32 {
    block_idx.wrapping_mul(block_dim).wrapping_add(thread_idx)
}

/// The linear rank of thread `t` in a block of `dim`, `(z * dim.y + y) * dim.x + x`:
/// the order in which warps are formed (32 consecutive ranks per warp).
#[inline(always)]
pub const fn linear_rank(t: Dim3, dim: Dim3) -> u32 {
    (t.z * dim.y + t.y) * dim.x + t.x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_bit_indices_wrap_as_cuda_cs_unsigned() {
        assert_eq!(global_coord_u32(3, 256, 17), 785);
        assert_eq!(global_coord_u32(u32::MAX / 1024 + 1, 1024, 5), 5);
        let d: (u32, u32) = Dim2::new(4, 5).into();
        assert_eq!(d, (4, 5));
        assert_eq!(Dim2::new(70_000, 70_000).area(), 4_900_000_000);
        assert_eq!(<[u32; 3]>::from(Dim3::new(1, 2, 3)), [1, 2, 3]);
    }

    #[test]
    fn volumes_and_ranks() {
        assert_eq!(Dim3::x(7), Dim3::new(7, 1, 1));
        assert_eq!(Dim3::xy(7, 3).volume(), 21);
        assert_eq!(Dim3::new(65_535, 65_535, 65_535).volume(), 281_462_092_005_375);
        let dim = Dim3::new(8, 4, 2);
        assert_eq!(linear_rank(Dim3::new(0, 0, 0), dim), 0);
        assert_eq!(linear_rank(Dim3::new(7, 0, 0), dim), 7);
        assert_eq!(linear_rank(Dim3::new(0, 1, 0), dim), 8);
        assert_eq!(linear_rank(Dim3::new(3, 2, 1), dim), 51);
    }
}
