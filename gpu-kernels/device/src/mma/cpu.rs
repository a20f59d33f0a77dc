//! The warp MMA on the CPU runtime: each batch (`load_a`, `load_b*`, `mma_grid`) is one warp
//! collective on the warp's rendezvous (`warp`'s CPU side, [`Collective`]), keyed by its
//! call site, so that only lanes at the same call meet. Each lane reads the rows its
//! `ldmatrix` addresses name itself, through [`SharedPtr`] (bounds-checked, and seen by a
//! race checker as that lane's reads), then the rows (or the fragments and accumulators)
//! are exchanged once and every lane gets its registers from [`crate::spec::mma`]
//! ([`spec::ldmatrix_reg`], [`spec::warp_mma`]). A group that completes without all 32
//! lanes (the others returned) fails the kernel, as a batch without the whole warp does on
//! the GPU.

use core::panic::Location;

use super::{Accum, Col, FragA, FragB, MmaKind, MmaOp, Row, Shape};
use crate::shared::SharedPtr;
use crate::spec::mma as spec;
use crate::spec::warp::FULL_MASK;
use crate::warp::imp::rendezvous::{collective, Collective};

/// Whether all 32 lanes execute this together: the runtime's `active_mask` (which waits
/// until the block cannot go on, then groups the lanes of a warp at the same call site).
#[track_caller]
pub(super) fn whole_warp_here() -> bool {
    crate::warp::active_mask() == FULL_MASK
}

/// A batch's check: every batch may run (the collective itself needs all 32 lanes at the
/// same call site, and fails the kernel otherwise).
#[inline(always)]
pub(super) fn batch_whole() -> bool {
    true
}

/// A region outside its tile panics at the caller's line.
#[inline(always)]
#[track_caller]
pub(super) fn require_inside(inside: bool) {
    if !inside {
        super::outside_tile();
    }
}

pub(super) fn to_tf32(x: f32) -> u32 {
    spec::to_tf32(x).to_bits()
}

/// A collective's key: the call site's address (8-aligned) and a 3-bit tag.
fn key(site: &'static Location<'static>, tag: u64) -> u64 {
    site as *const Location<'static> as u64 | tag
}

/// `N` `ldmatrix` of `X` matrices (`count` of them used), from one call site.
#[derive(Clone, Copy)]
struct Ldmatrix<const X: usize, const N: usize> {
    key: u64,
}

impl<const X: usize, const N: usize> Collective for Ldmatrix<X, N> {
    /// The 16-byte row this lane's address names, for each load (zero for the lanes whose
    /// address the form does not read), and `.trans`.
    type In = ([[u32; 4]; N], bool, usize);
    /// The registers of each load, and whether all 32 lanes took part.
    type Out = ([[u32; X]; N], bool);

    fn key(self) -> u64 {
        self.key
    }

    fn from_key(key: u64) -> Self {
        Ldmatrix { key }
    }

    fn name(self) -> &'static str {
        "ldmatrix"
    }

    fn complete(
        self,
        _mask: u32,
        members: u32,
        input: &dyn Fn(u32) -> *const Self::In,
        output: &mut dyn FnMut(u32, Self::Out),
    ) {
        // SAFETY: `complete` is called with the members' inputs only, each live on its
        // lane's stack until the lane is released.
        let lane = |l: u32| unsafe { &*input(l) };
        let first = lane(members.trailing_zeros());
        let (trans, count) = (first.1, first.2);
        let whole = members == FULL_MASK;
        let mut regs = [[[0u32; X]; N]; 32];
        for n in 0..count {
            let rows: [[u32; 4]; 32] =
                core::array::from_fn(|l| if members & (1 << l) != 0 { lane(l as u32).0[n] } else { [0; 4] });
            for (l, r) in regs.iter_mut().enumerate() {
                for (j, x) in r[n].iter_mut().enumerate() {
                    *x = spec::ldmatrix_reg(&rows, j as u32, l as u32, trans);
                }
            }
        }
        for l in 0..32 {
            if members & (1 << l) != 0 {
                output(l, (regs[l as usize], whole));
            }
        }
    }
}

/// The first `count` of `N` `ldmatrix` of `X` matrices, this lane giving `addrs`.
#[track_caller]
pub(super) fn ldmatrix<const X: usize, const TRANS: bool, const N: usize>(
    addrs: [u32; N],
    count: usize,
    run: bool,
) -> [[u32; X]; N] {
    let site = Location::caller();
    let lane = crate::warp::lane_id() as usize;
    let mut rows = [[0u32; 4]; N];
    if run && lane < 8 * X {
        for (n, row) in rows.iter_mut().enumerate().take(count) {
            // SAFETY: a 16-byte row of a tile (`Warp::load_*` checked the region); the
            // runtime bounds-checks the access against the block's shared memory anyway,
            // and any bits are `u32`s.
            *row = unsafe { SharedPtr::<[u32; 4]>::from_addr(addrs[n]).read() };
        }
    }
    let op = Ldmatrix::<X, N> { key: key(site, TRANS as u64) };
    let (regs, whole) = collective("mma::ldmatrix", op, FULL_MASK, (rows, TRANS, count));
    if !whole {
        super::not_converged();
    }
    regs
}

/// An `MI × NI` grid of MMAs of one kind, from one call site.
#[derive(Clone, Copy)]
struct MmaGrid<const MI: usize, const NI: usize> {
    key: u64,
}

const KINDS: [MmaKind; 3] = [MmaKind::Bf16, MmaKind::F16, MmaKind::Tf32];

impl<const MI: usize, const NI: usize> Collective for MmaGrid<MI, NI> {
    /// This lane's A and B fragments and accumulators.
    type In = ([[u32; 4]; MI], [[u32; 2]; NI], [[[f32; 4]; NI]; MI]);
    /// Its new accumulators, and whether all 32 lanes took part.
    type Out = ([[[f32; 4]; NI]; MI], bool);

    fn key(self) -> u64 {
        self.key
    }

    fn from_key(key: u64) -> Self {
        MmaGrid { key }
    }

    fn name(self) -> &'static str {
        "mma.sync"
    }

    fn complete(
        self,
        _mask: u32,
        members: u32,
        input: &dyn Fn(u32) -> *const Self::In,
        output: &mut dyn FnMut(u32, Self::Out),
    ) {
        // SAFETY: as in `Ldmatrix::complete`.
        let lane = |l: u32| unsafe { &*input(l) };
        let kind = KINDS[(self.key & 7) as usize];
        let whole = members == FULL_MASK;
        let present = |l: usize| members & (1 << l) != 0;
        let mut out = [[[[0f32; 4]; NI]; MI]; 32];
        for i in 0..MI {
            let a: [[u32; 4]; 32] = core::array::from_fn(|l| if present(l) { lane(l as u32).0[i] } else { [0; 4] });
            for j in 0..NI {
                let b: [[u32; 2]; 32] = core::array::from_fn(|l| if present(l) { lane(l as u32).1[j] } else { [0; 2] });
                let c: [[f32; 4]; 32] =
                    core::array::from_fn(|l| if present(l) { lane(l as u32).2[i][j] } else { [0.0; 4] });
                let d = spec::warp_mma(kind, &a, &b, &c);
                for (o, v) in out.iter_mut().zip(d) {
                    o[i][j] = v;
                }
            }
        }
        for l in 0..32 {
            if present(l as usize) {
                output(l, (out[l as usize], whole));
            }
        }
    }
}

/// `acc[i][j] += a[i] · b[j]` for the whole warp, one exchange.
#[track_caller]
pub(super) fn mma_grid<E: MmaOp<S>, S: Shape, const MI: usize, const NI: usize>(
    acc: &mut [[Accum<S>; NI]; MI],
    a: &[FragA<E, S, Row>; MI],
    b: &[FragB<E, S, Col>; NI],
    run: bool,
) {
    let site = Location::caller();
    let tag = KINDS.iter().position(|k| *k == E::KIND).unwrap_or(0) as u64;
    let input = (a.map(|f| f.regs), b.map(|f| f.regs), acc.map(|row| row.map(|x| x.regs)));
    let (d, whole) = collective("mma::mma_grid", MmaGrid::<MI, NI> { key: key(site, tag) }, FULL_MASK, input);
    if !whole {
        super::not_converged();
    }
    if run {
        for (row, d) in acc.iter_mut().zip(d) {
            for (x, d) in row.iter_mut().zip(d) {
                x.regs = d;
            }
        }
    }
}
