//! Warp-level matrix multiply-accumulate on the tensor cores: `mma.sync` and `ldmatrix`,
//! with fragments that carry their shape, element type and register layout in their type.
//!
//! | sluice | CUDA C++ | PTX |
//! | --- | --- | --- |
//! | [`Warp::mma`], [`Warp::mma_grid`] | `mma.sync` through `asm` (CUTLASS `SM80_16x8x16_F32BF16BF16F32_TN`) | `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (also `.f16`), `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` |
//! | [`Warp::load_a`], [`Warp::load_b`] | `ldmatrix` through `asm` (CUTLASS `SM75_U32x4_LDSM_N`) | `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (`.x2` for an odd last B fragment) |
//! | [`Warp::load_a_trans`], [`Warp::load_b_trans`] | `SM75_U16x8_LDSM_T` | `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` |
//! | [`Warp::load_a_scalar`], [`Warp::load_b_scalar`] | element-wise `lds` | `ld.shared` per element |
//! | [`Warp::store`] | the epilogue's `C[row][col] = acc` | `st.global.f32` |
//! | [`Warp::whole`] | `__activemask() == 0xffffffff` | `activemask.b32` |
//!
//! # Types
//!
//! * Element types: [`bf16`] and [`f16`] (shape [`M16N8K16`]) and [`Tf32`] (shape
//!   [`M16N8K8`], read from `f32` tiles and rounded as `cvt.rna.tf32.f32` does). The pairs
//!   the hardware has implement [`MmaOp`]; any other pair is a compile error that lists them.
//! * [`FragA<E, S, L>`], [`FragB<E, S, L>`]: one lane's registers of an A (`M × K`) or B
//!   (`K × N`) operand. `L` is the axis along which the elements of one register run:
//!   `mma.sync` reads A as [`Row`] and B as [`Col`]. `ldmatrix` without `.trans` gives the
//!   tile's contiguous axis ([`Layout::Major`]), with `.trans` the other one, so loading B
//!   from a row-major `K × N` tile without `.trans` gives a `FragB<_, _, Row>`, which
//!   [`Warp::mma`] refuses at compile time.
//! * [`Accum<S>`]: the f32 accumulator (`C`/`D`) of shape `S`.
//! * [`Warp`]: the whole warp, which every `.sync.aligned` operation needs. See below.
//!
//! The register layouts are [`crate::spec::mma`]'s tables.
//!
//! # The whole warp, checked once per batch
//!
//! PTX leaves `mma.sync.aligned` and `ldmatrix.sync.aligned` undefined unless every lane
//! of the warp executes the same instruction. [`Warp::whole`] checks it once (and ends the
//! kernel if not); a [`Warp`] cannot prove that a later call is not in a divergent branch,
//! so every batch of operations (one `load_a`, one `load_b`, one `mma_grid`) checks again:
//! a lane whose region is outside its tile turns away first, then the others read
//! `activemask` once, and the batch's instructions run, unpredicated, inside one branch
//! on "all 32 lanes are here". That answer is the same in every lane that reads it (and
//! all ones only if no lane turned away), so the branch is warp-uniform by construction,
//! with no vote: no lane runs a `.aligned` instruction without the others, and no address
//! outside a tile is read. Where the region's check is known at compile time (`mma_grid`
//! has none; the gemm's `load_b_trans`, at bounded offsets) it folds away, and a batch
//! costs one `activemask`, a compare and a branch.
//! A batch that cannot run ends the kernel there, with a message (a region outside its
//! tile, or a warp not whole): the branch's other side never returns, so the batch's
//! results need no placeholder values on the hot path.
//!
//! Not predicated, and not without a branch: `ptxas` (13.x, `sm_90`) turns an `@p
//! mma.sync` into a branch around that one `HMMA` (and `@p ldmatrix` likewise), which
//! split a gemm's k-step into a block per MMA and cost it 40% of its speed; a branch per
//! batch keeps each batch's `HMMA`s (or `LDSM`s) together in one block.
//!
//! # Hardware support
//!
//! `sm_80` and later (`mma.sync` with bf16 and tf32, `ldmatrix` from `sm_75`). On `sm_90`
//! `mma.sync` runs on the tensor cores at about two thirds of the warpgroup MMA's rate
//! ([`crate::wgmma`], sm_90a).
//!
//! # On the CPU
//!
//! The CPU runtime ([`crate::cpu`]) runs each batch as one warp collective on the warp's
//! rendezvous (`warp`'s CPU side): every lane reads the 16-byte rows its `ldmatrix`
//! addresses name through [`crate::shared::SharedPtr`] (bounds-checked, seen by the race
//! checker as that lane's reads), then the lanes exchange rows (`ldmatrix`) or fragments
//! (`mma`) once, and each gets its registers, computed by [`crate::spec::mma`]'s
//! [`ldmatrix_reg`](crate::spec::mma::ldmatrix_reg) and
//! [`warp_mma`](crate::spec::mma::warp_mma): every product exact, the sum in f32 in `k`
//! order. Lanes meet only at the same call site, so a call in a divergent branch never
//! completes with the other lanes: a lane alone (the others returned) fails the launch
//! with the message above, lanes waiting elsewhere are a reported deadlock. A region
//! outside its tile panics at the call. The tensor core's summation order and rounding
//! are not specified, so results agree with the GPU's to the rounding of a `K`-term f32
//! sum, not bit for bit. The checker cannot see a `FragA` copied out of its registers (it
//! is plain data).
//!
//! # Example (device code)
//!
//! ```ignore
//! use sluice_device::mma::{bf16, Accum, Warp, M16N8K16};
//! use sluice_device::tile::{Swizzled, Tile};
//! // a: Tile<bf16, Swizzled<64, 32>> (M × K), b: Tile<bf16, Swizzled<32, 64>> (K × N), both ready.
//! let warp = Warp::whole();
//! let mut acc = [[Accum::<M16N8K16>::zero(); 8]; 4];   // a 64 × 64 warp tile
//! for k in (0..32).step_by(16) {
//!     let fa = warp.load_a::<_, _, _, 4>(&a, 0, k);          // 4 × ldmatrix.x4
//!     let fb = warp.load_b_trans::<_, _, _, 8>(&b, k, 0);    // 4 × ldmatrix.x4.trans
//!     warp.mma_grid(&mut acc, &fa, &fb);                     // 32 × mma.sync
//! }
//! ```

use core::marker::PhantomData;

use bytemuck::Pod;

pub use crate::half::{bf16, f16};
pub use crate::spec::layout::{Axis, Col, Row};
pub use crate::spec::mma::MmaKind;
use crate::tile::{Layout, Tile, WarpTile};

// The backend, chosen once: `ldmatrix`/`mma.sync` in a branch on `activemask` on the GPU
// (instruction forms in `raw.rs`), one warp collective per batch on the CPU.
#[cfg_attr(target_arch = "nvptx64", path = "gpu.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "cpu.rs")]
mod imp;

/// The tf32 element type of the tensor cores: stored as `f32`, multiplied with 10
/// mantissa bits (operands rounded to nearest, ties away, when loaded into a fragment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tf32;

/// The `m16n8k16` MMA shape: `A` 16 × 16, `B` 16 × 8, `C` 16 × 8 (bf16, f16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct M16N8K16;

/// The `m16n8k8` MMA shape: `A` 16 × 8, `B` 8 × 8, `C` 16 × 8 (tf32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct M16N8K8;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::M16N8K16 {}
    impl Sealed for super::M16N8K8 {}
    impl Sealed for super::bf16 {}
    impl Sealed for super::f16 {}
    impl Sealed for super::Tf32 {}
    impl Sealed for f32 {}
}

/// An MMA shape. Sealed: [`M16N8K16`], [`M16N8K8`].
pub trait Shape: sealed::Sealed + Copy + 'static {
    /// Rows of A and C.
    const M: usize;
    /// Columns of B and C.
    const N: usize;
    /// Columns of A, rows of B.
    const K: usize;
}

impl Shape for M16N8K16 {
    const M: usize = 16;
    const N: usize = 8;
    const K: usize = 16;
}

impl Shape for M16N8K8 {
    const M: usize = 16;
    const N: usize = 8;
    const K: usize = 8;
}

/// An element type of MMA operands. Sealed: [`bf16`], [`f16`], [`Tf32`].
pub trait Element: sealed::Sealed + Copy + 'static {
    /// The type a tile or a matrix holds for it (`f32` for [`Tf32`]).
    type Storage: Pod;
    /// Elements per 32-bit fragment register.
    #[doc(hidden)]
    const PER_REG: usize;
    /// A register made of elements read from memory (for tf32, rounded).
    #[doc(hidden)]
    fn __pack(v: &[Self::Storage]) -> u32;
    /// A register read by `ldmatrix` as it goes into a fragment (tf32: rounded).
    #[doc(hidden)]
    fn __from_ldmatrix(reg: u32) -> u32;
}

impl Element for bf16 {
    type Storage = bf16;
    const PER_REG: usize = 2;
    #[inline(always)]
    fn __pack(v: &[bf16]) -> u32 {
        v[0].to_bits() as u32 | (v[1].to_bits() as u32) << 16
    }
    #[inline(always)]
    fn __from_ldmatrix(reg: u32) -> u32 {
        reg
    }
}

impl Element for f16 {
    type Storage = f16;
    const PER_REG: usize = 2;
    #[inline(always)]
    fn __pack(v: &[f16]) -> u32 {
        v[0].to_bits() as u32 | (v[1].to_bits() as u32) << 16
    }
    #[inline(always)]
    fn __from_ldmatrix(reg: u32) -> u32 {
        reg
    }
}

impl Element for Tf32 {
    type Storage = f32;
    const PER_REG: usize = 1;
    #[inline(always)]
    fn __pack(v: &[f32]) -> u32 {
        imp::to_tf32(v[0])
    }
    #[inline(always)]
    fn __from_ldmatrix(reg: u32) -> u32 {
        imp::to_tf32(f32::from_bits(reg))
    }
}

/// The element type a tile of `Self` feeds to the tensor cores: `bf16` → [`bf16`], `f16`
/// → [`f16`], `f32` → [`Tf32`].
#[diagnostic::on_unimplemented(
    message = "a tile of `{Self}` cannot feed the tensor cores",
    label = "not an MMA operand type",
    note = "MMA operands are read from tiles of bf16, f16 (m16n8k16) or f32 (tf32, m16n8k8)"
)]
pub trait Operand: Pod + sealed::Sealed {
    /// The MMA element type.
    type Elem: Element<Storage = Self>;
}
impl Operand for bf16 {
    type Elem = bf16;
}
impl Operand for f16 {
    type Elem = f16;
}
impl Operand for f32 {
    type Elem = Tf32;
}

/// The (element, shape) pairs `mma.sync` has, with their fragment layouts.
#[diagnostic::on_unimplemented(
    message = "the tensor cores have no `{Self}` MMA of shape `{S}`",
    label = "no such mma.sync",
    note = "mma.sync takes bf16 or f16 with M16N8K16, and Tf32 with M16N8K8"
)]
pub trait MmaOp<S: Shape>: Element {
    /// The instruction form ([`crate::spec::mma::MmaKind`]: its layouts and arithmetic).
    #[doc(hidden)]
    const KIND: MmaKind;
}

impl MmaOp<M16N8K16> for bf16 {
    const KIND: MmaKind = MmaKind::Bf16;
}
impl MmaOp<M16N8K16> for f16 {
    const KIND: MmaKind = MmaKind::F16;
}
impl MmaOp<M16N8K8> for Tf32 {
    const KIND: MmaKind = MmaKind::Tf32;
}

/// Element types `ldmatrix .trans` can move: the 16-bit ones.
#[diagnostic::on_unimplemented(
    message = "`ldmatrix .trans` transposes 16-bit elements; `{Self}` is not one",
    label = "a 32-bit element",
    note = "load a tf32 operand from a tile whose contiguous axis is its K axis (A: row-major, B: column-major), or with load_a_scalar / load_b_scalar"
)]
pub trait Trans16: Element {}
impl Trans16 for bf16 {}
impl Trans16 for f16 {}

/// The markers a fragment carries (element, shape, layout), as a `PhantomData` that keeps the
/// fragment `Send`/`Sync` whatever they are.
type Markers<E, S, L> = PhantomData<fn() -> (E, S, L)>;

/// One lane's registers of an MMA **A** operand (`S::M × S::K`) of element type `E`, its
/// register pairs running along `L` ([`Row`] is what `mma.sync` reads).
pub struct FragA<E, S, L = Row> {
    regs: [u32; 4],
    // Markers only; `fn() -> _` keeps the fragment `Send`/`Sync` whatever they are.
    _t: Markers<E, S, L>,
}

/// One lane's registers of an MMA **B** operand (`S::K × S::N`), pairs along `L` ([`Col`]
/// is what `mma.sync` reads).
pub struct FragB<E, S, L = Col> {
    regs: [u32; 2],
    // Markers only, as in `FragA`.
    _t: Markers<E, S, L>,
}

/// One lane's f32 accumulators (`C`, `D`) of shape `S` (`S::M × S::N`, four per lane).
pub struct Accum<S> {
    regs: [f32; 4],
    // Marker only.
    _s: PhantomData<fn() -> S>,
}

macro_rules! copy_clone {
    ($($t:ident<$($p:ident),*>),*) => {$(
        impl<$($p),*> Clone for $t<$($p),*> {
            #[inline(always)]
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<$($p),*> Copy for $t<$($p),*> {}
        impl<$($p),*> core::fmt::Debug for $t<$($p),*> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_tuple(stringify!($t)).field(&self.regs).finish()
            }
        }
    )*};
}
copy_clone!(FragA<E, S, L>, FragB<E, S, L>, Accum<S>);

impl<E, S, L> FragA<E, S, L> {
    /// The fragment of these registers (laid out as [`crate::spec::mma`] says).
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 4]) -> Self {
        FragA { regs, _t: PhantomData }
    }
    /// The registers.
    #[inline(always)]
    pub const fn regs(&self) -> [u32; 4] {
        self.regs
    }
}

impl<E, S, L> FragB<E, S, L> {
    /// The fragment of these registers.
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 2]) -> Self {
        FragB { regs, _t: PhantomData }
    }
    /// The registers.
    #[inline(always)]
    pub const fn regs(&self) -> [u32; 2] {
        self.regs
    }
}

impl<S: Shape> Accum<S> {
    /// All zeros.
    ///
    /// ```
    /// use sluice_device::mma::{Accum, M16N8K16};
    /// assert_eq!(Accum::<M16N8K16>::zero().regs(), [0.0; 4]);
    /// ```
    #[inline(always)]
    pub const fn zero() -> Self {
        Accum { regs: [0.0; 4], _s: PhantomData }
    }
    /// The accumulators of these values: element `(row, col)` of register `i` is
    /// [`spec::mma::c_elem`](crate::spec::mma::c_elem)`(lane, i)`.
    #[inline(always)]
    pub const fn from_regs(regs: [f32; 4]) -> Self {
        Accum { regs, _s: PhantomData }
    }
    /// The four values.
    #[inline(always)]
    pub const fn regs(&self) -> [f32; 4] {
        self.regs
    }
}

/// The whole warp, for the `.sync.aligned` operations. Not `Send` (it stands for the
/// calling warp) and not `Sync`; every batch of operations checks that it may run and
/// ends the kernel with a message if not. See the [module docs](self).
pub struct Warp {
    // Not Send/Sync: a token of the thread (warp) that made it.
    _here: PhantomData<*const ()>,
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_converged() -> ! {
    crate::io::__fail_at(
        c"a warp operation (mma, ldmatrix) ran without all 32 lanes of the warp together: call it where every lane of the warp reaches it, outside branches that split the warp",
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn outside_tile() -> ! {
    crate::io::__fail_at(c"ldmatrix or a fragment load outside its tile (or not at a 16-byte boundary)")
}

/// The extent `(rows, cols)` in elements of an `ldmatrix` of `x` matrices on a tile whose
/// contiguous axis is its rows' (`row_major`) or its columns', for `size`-byte elements:
/// register `j` covers the block `(j % 2, j / 2)` of 8 × (16 bytes) along that axis.
#[inline(always)]
const fn ldsm_extent(row_major: bool, x: usize, size: usize) -> (usize, usize) {
    let v = 16 / size;
    let (br, bc) = if row_major { (8, v) } else { (v, 8) };
    let nr = if x >= 2 { 2 } else { 1 };
    let nc = if x == 4 { 2 } else { 1 };
    (nr * br, nc * bc)
}

/// The addresses of the first `count` (at most `N`) `ldmatrix` of `X` matrices each on
/// `tile`, load `n` at `(row + n * dr, col + n * dc)`, for this `lane`: register `j` holds
/// the 8 × (16 bytes) block `(j % 2, j / 2)` of each region. And whether every region is
/// inside the tile, at a 16-byte boundary (the addresses are computed anyway; the caller
/// runs the loads only if so).
#[inline(always)]
fn ldsm_addrs<T: Pod, L: Layout, const X: usize, const N: usize>(
    tile: &Tile<T, L>,
    lane: u32,
    count: usize,
    (row, col): (usize, usize),
    (dr, dc): (usize, usize),
) -> ([u32; N], bool) {
    let () = const {
        assert!(
            (L::STRIDE * core::mem::size_of::<T>()).is_multiple_of(16),
            "ldmatrix reads 16-byte rows: the tile's row (column) stride must be a multiple of 16 bytes"
        )
    };
    let size = core::mem::size_of::<T>();
    let v = 16 / size;
    let row_major = <L::Major as Axis>::IS_ROW;
    let (er, ec) = ldsm_extent(row_major, X, size);
    let aligned = if row_major { col.is_multiple_of(v) } else { row.is_multiple_of(v) };
    let last = count.saturating_sub(1);
    let inside = count == 0 || (row + last * dr + er <= L::ROWS && col + last * dc + ec <= L::COLS && aligned);
    let lane = lane as usize;
    let j = (lane / 8) % X;
    let r8 = lane % 8;
    let mut out = [0u32; N];
    crate::unroll!(n in 0..N; max 16 => {
        if n < count {
            let (r0, c0) = (row + n * dr, col + n * dc);
            let (r, c) = if row_major {
                (r0 + 8 * (j % 2) + r8, c0 + v * (j / 2))
            } else {
                (r0 + v * (j % 2), c0 + 8 * (j / 2) + r8)
            };
            out[n] = tile.addr_of(r, c);
        }
    });
    (out, inside)
}

impl Warp {
    /// The calling warp. Ends the kernel (on the CPU: panics) unless all 32 lanes call it
    /// together; this is the one convergence check with a branch, once per kernel.
    #[inline(always)]
    #[track_caller]
    pub fn whole() -> Warp {
        if !imp::whole_warp_here() {
            not_converged();
        }
        Warp { _here: PhantomData }
    }

    /// This lane, `0..32`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn lane(&self) -> u32 {
        crate::warp::lane_id()
    }

    /// The start of a batch of warp operations: ends the kernel with a message unless it
    /// may run (`inside`, and all 32 lanes here); returns `true`.
    ///
    /// Uniform by construction, without a vote: a lane whose region is outside its tile
    /// ends the kernel first, so the others read `activemask` only when all 32 are here or
    /// the kernel is ending anyway. Where `inside` is known at compile time (a region at
    /// constant or bounded offsets) the first test folds away and the check is one
    /// `activemask`, a compare and a branch to a block that never returns — so the batch's
    /// results need no placeholder values on the hot path.
    #[inline(always)]
    #[track_caller]
    fn enter(&self, inside: bool) -> bool {
        // On the CPU a region outside its tile panics here, at the caller's line.
        imp::require_inside(inside);
        if !inside {
            outside_tile();
        }
        // Read after the branch above: the lanes that ended the kernel are not among those
        // executing this.
        if !imp::batch_whole() {
            not_converged();
        }
        true
    }

    /// `acc += a · b` on the tensor cores (one `mma.sync`).
    #[inline(always)]
    #[track_caller]
    pub fn mma<E: MmaOp<S>, S: Shape>(&self, acc: &mut Accum<S>, a: &FragA<E, S, Row>, b: &FragB<E, S, Col>) {
        let run = self.enter(true);
        let mut grid = [[*acc]];
        imp::mma_grid(&mut grid, &[*a], &[*b], run);
        *acc = grid[0][0];
    }

    /// `acc[i][j] += a[i] · b[j]` for every `i`, `j`: a warp tile of `MI × NI` MMAs
    /// (`MI <= 8`, `NI <= 16`), with one convergence check.
    #[inline(always)]
    #[track_caller]
    pub fn mma_grid<E: MmaOp<S>, S: Shape, const MI: usize, const NI: usize>(
        &self,
        acc: &mut [[Accum<S>; NI]; MI],
        a: &[FragA<E, S, Row>; MI],
        b: &[FragB<E, S, Col>; NI],
    ) {
        let run = self.enter(true);
        imp::mma_grid(acc, a, b, run);
    }

    /// `MI` A fragments from rows `row + 16 i` and columns `col..` of `tile` (`M × K`),
    /// one `ldmatrix.x4` each, no `.trans`: the fragments' pairs run along the tile's
    /// contiguous axis (`Row` for a row-major or swizzled tile, as `mma` needs).
    #[inline(always)]
    #[track_caller]
    pub fn load_a<T: Operand, L: Layout, S: Shape, const MI: usize>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragA<T::Elem, S, L::Major>; MI]
    where
        T::Elem: MmaOp<S>,
    {
        let (addrs, inside) = ldsm_addrs::<T, L, 4, MI>(tile, self.lane(), MI, (row, col), (16, 0));
        let run = self.enter(inside);
        imp::ldmatrix::<4, false, MI>(addrs, MI, run).map(|r| FragA::from_regs(r.map(T::Elem::__from_ldmatrix)))
    }

    /// As [`load_a`](Self::load_a) with `.trans`: from a tile whose contiguous axis is M
    /// (column-major), pairs along K. 16-bit elements only.
    #[inline(always)]
    #[track_caller]
    pub fn load_a_trans<T: Operand, L: Layout, S: Shape, const MI: usize>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragA<T::Elem, S, <L::Major as Axis>::Other>; MI]
    where
        T::Elem: MmaOp<S> + Trans16,
    {
        let (addrs, inside) = ldsm_addrs::<T, L, 4, MI>(tile, self.lane(), MI, (row, col), (16, 0));
        let run = self.enter(inside);
        imp::ldmatrix::<4, true, MI>(addrs, MI, run).map(FragA::from_regs)
    }

    /// `NI` B fragments from rows (K) `row..` and columns (N) `col + 8 j` of `tile`
    /// (`K × N`), an `ldmatrix.x4` per pair (`.x2` for an odd last one), no `.trans`:
    /// pairs along the tile's contiguous axis (`Col` for a column-major tile, as `mma`
    /// needs).
    #[inline(always)]
    #[track_caller]
    pub fn load_b<T: Operand, L: Layout, S: Shape, const NI: usize>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragB<T::Elem, S, L::Major>; NI]
    where
        T::Elem: MmaOp<S>,
    {
        self.load_b_impl::<T, L, S, NI, false, L::Major>(tile, row, col)
    }

    /// As [`load_b`](Self::load_b) with `.trans`: from a row-major or swizzled `K × N`
    /// tile, pairs along K (`Col`). 16-bit elements only.
    #[inline(always)]
    #[track_caller]
    pub fn load_b_trans<T: Operand, L: Layout, S: Shape, const NI: usize>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragB<T::Elem, S, <L::Major as Axis>::Other>; NI]
    where
        T::Elem: MmaOp<S> + Trans16,
    {
        self.load_b_impl::<T, L, S, NI, true, <L::Major as Axis>::Other>(tile, row, col)
    }

    #[inline(always)]
    #[track_caller]
    fn load_b_impl<T: Operand, L: Layout, S: Shape, const NI: usize, const TRANS: bool, F>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragB<T::Elem, S, F>; NI]
    where
        T::Elem: MmaOp<S>,
    {
        let mut out = [FragB::from_regs([0; 2]); NI];
        let lane = self.lane();
        // Pairs of fragments, one `.x4` each, 16 columns (N) apart: the x4's blocks
        // (j % 2, j / 2) are (k half, n half), as `ldsm_addrs` places them by the tile's
        // axis; an odd last fragment is one `.x2`.
        let (addrs, inside) = ldsm_addrs::<T, L, 4, NI>(tile, lane, NI / 2, (row, col), (0, 16));
        let (odd, odd_inside) = ldsm_addrs::<T, L, 2, 1>(tile, lane, NI % 2, (row, col + 8 * (NI - NI % 2)), (0, 0));
        let run = self.enter(inside && odd_inside);
        let pairs = imp::ldmatrix::<4, TRANS, NI>(addrs, NI / 2, run);
        crate::unroll!(p in 0..NI / 2; max 8 => {
            let r = pairs[p].map(T::Elem::__from_ldmatrix);
            out[2 * p] = FragB::from_regs([r[0], r[1]]);
            out[2 * p + 1] = FragB::from_regs([r[2], r[3]]);
        });
        if NI % 2 == 1 {
            let r = imp::ldmatrix::<2, TRANS, 1>(odd, 1, run)[0].map(T::Elem::__from_ldmatrix);
            out[NI - 1] = FragB::from_regs(r);
        }
        out
    }

    /// `MI` A fragments read element by element (`ld.shared`), from a tile of any layout:
    /// pairs along K whatever the layout. Slower than `ldmatrix`; the way to read a tf32
    /// operand from a tile whose contiguous axis is not K.
    #[inline(always)]
    #[track_caller]
    pub fn load_a_scalar<T: Operand, L: Layout, S: Shape, const MI: usize>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragA<T::Elem, S, Row>; MI]
    where
        T::Elem: MmaOp<S>,
    {
        let inside = row + 16 * MI <= L::ROWS && col + S::K <= L::COLS;
        let run = self.enter(inside);
        let kind = <T::Elem as MmaOp<S>>::KIND;
        let lane = self.lane();
        let mut out = [FragA::from_regs([0; 4]); MI];
        crate::unroll!(f in 0..MI; max 8 => {
            crate::unroll!(i in 0..4; max 4 => {
                let mut v = [T::zeroed(); 2];
                crate::unroll!(h in 0..T::Elem::PER_REG; max 2 => {
                    let (r, c) = kind.a_elem(lane, i as u32, h as u32);
                    // A skipped load reads the tile's first element instead.
                    let (r, c) = if run { (row + 16 * f + r as usize, col + c as usize) } else { (0, 0) };
                    // SAFETY: inside the tile: `(r, c)` is in the region checked by
                    // `inside` (`run` implies it, `a_elem` stays in its 16 × K), or `(0, 0)`.
                    v[h] = unsafe { tile.read_unchecked(r, c) };
                });
                out[f].regs[i] = T::Elem::__pack(&v);
            });
        });
        out
    }

    /// `NI` B fragments read element by element (`ld.shared`), from a `K × N` tile of any
    /// layout: pairs along K (`Col`).
    #[inline(always)]
    #[track_caller]
    pub fn load_b_scalar<T: Operand, L: Layout, S: Shape, const NI: usize>(
        &self,
        tile: &Tile<T, L>,
        row: usize,
        col: usize,
    ) -> [FragB<T::Elem, S, Col>; NI]
    where
        T::Elem: MmaOp<S>,
    {
        let inside = row + S::K <= L::ROWS && col + 8 * NI <= L::COLS;
        let run = self.enter(inside);
        let kind = <T::Elem as MmaOp<S>>::KIND;
        let lane = self.lane();
        let mut out = [FragB::from_regs([0; 2]); NI];
        crate::unroll!(f in 0..NI; max 16 => {
            crate::unroll!(i in 0..2; max 2 => {
                let mut v = [T::zeroed(); 2];
                crate::unroll!(h in 0..T::Elem::PER_REG; max 2 => {
                    let (k, n) = kind.b_elem(lane, i as u32, h as u32);
                    let (r, c) = if run { (row + k as usize, col + 8 * f + n as usize) } else { (0, 0) };
                    // SAFETY: as in `load_a_scalar` (`b_elem` stays in its K × 8).
                    v[h] = unsafe { tile.read_unchecked(r, c) };
                });
                out[f].regs[i] = T::Elem::__pack(&v);
            });
        });
        out
    }

    /// Writes the warp's accumulators to its tile of C: `acc[i][j]` is the 16 × 8 block at
    /// rows `16 i`, columns `8 j` of `out` (`MI * 16 == WM`, `NI * 8 == WN`, checked at
    /// compile time). Each lane writes the elements its registers hold; elements outside
    /// the matrix are skipped.
    #[inline(always)]
    #[track_caller]
    pub fn store<S: Shape, const MI: usize, const NI: usize, const WM: usize, const WN: usize>(
        &self,
        out: &mut WarpTile<'_, f32, WM, WN>,
        acc: &[[Accum<S>; NI]; MI],
    ) {
        let () = const { assert!(MI * 16 == WM && NI * 8 == WN, "the accumulators must cover the warp tile") };
        let lane = self.lane();
        let (r0, c0) = crate::spec::mma::c_elem(lane, 0);
        let (r2, c2) = crate::spec::mma::c_elem(lane, 2);
        crate::unroll!(i in 0..MI; max 8 => {
            crate::unroll!(j in 0..NI; max 16 => {
                let a = &acc[i][j];
                // SAFETY: `c_elem` gives each lane of the warp its own elements of the
                // 16 × 8 block (a bijection, pinned by the spec's tests), blocks (i, j) are
                // disjoint, and the warp tile is this warp's alone (`warp_tile`), so no
                // other thread writes these.
                unsafe {
                    out.write2(16 * i + r0 as usize, 8 * j + c0 as usize, a.regs[0], a.regs[1]);
                    out.write2(16 * i + r2 as usize, 8 * j + c2 as usize, a.regs[2], a.regs[3]);
                }
            });
        });
    }
}
