//! The warp MMA's fragment layouts and arithmetic, as PTX ISA 8.x defines them for
//! `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`,
//! `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` and
//! `ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{,.trans}.shared.b16`.
//!
//! A warp's 32 lanes each hold a few 32-bit registers of every operand. With
//! `g = lane / 4` (the "group") and `t = lane % 4` (the thread in the group):
//!
//! | operand | register `i` of lane `(g, t)` holds | elements per register |
//! | --- | --- | --- |
//! | A, m16n8k16, 16-bit, `.row` (16 × 16) | rows `g + 8 * (i % 2)`, columns `2t + 8 * (i / 2)` and `+1` | 2 |
//! | B, m16n8k16, 16-bit, `.col` (16 × 8) | rows (k) `2t + 8i` and `+1`, column `g` | 2 |
//! | A, m16n8k8, tf32, `.row` (16 × 8) | row `g + 8 * (i % 2)`, column `t + 4 * (i / 2)` | 1 |
//! | B, m16n8k8, tf32, `.col` (8 × 8) | row (k) `t + 4i`, column `g` | 1 |
//! | C/D, m16n8, f32 (16 × 8) | row `g + 8 * (i / 2)`, column `2t + i % 2` | 1 |
//!
//! `ldmatrix` reads `1`, `2` or `4` matrices of 8 × 8 16-bit elements: lanes `8j..8j+8`
//! give the addresses of matrix `j`'s eight rows (16 bytes each), and lane `(g, t)`
//! receives, in register `j`, elements `(g, 2t)` and `(g, 2t + 1)` of matrix `j` —
//! with `.trans`, elements `(2t, g)` and `(2t + 1, g)`. So `.x4` without `.trans` on a
//! row-major 16 × 16 tile, lanes giving rows `lane % 16` at column `8 * (lane / 16)`, is
//! exactly the A fragment above; [`ldmatrix_row`] is that choice for every operand.

/// The lane group `g` and thread-in-group `t` of `lane`.
#[inline(always)]
pub const fn group(lane: u32) -> (u32, u32) {
    (lane / 4, lane % 4)
}

/// Element `(row, col)` held in half `h` (0: low 16 bits, 1: high) of register `i` of
/// `lane`'s **A** fragment of `m16n8k16` (16-bit elements, row layout).
#[inline(always)]
pub const fn a16_elem(lane: u32, i: u32, h: u32) -> (u32, u32) {
    let (g, t) = group(lane);
    (g + 8 * (i % 2), 2 * t + 8 * (i / 2) + h)
}

/// Element `(k, n)` held in half `h` of register `i` of `lane`'s **B** fragment of
/// `m16n8k16` (16-bit elements, col layout).
#[inline(always)]
pub const fn b16_elem(lane: u32, i: u32, h: u32) -> (u32, u32) {
    let (g, t) = group(lane);
    (2 * t + 8 * i + h, g)
}

/// Element `(row, col)` in register `i` of `lane`'s **A** fragment of `m16n8k8` (tf32).
#[inline(always)]
pub const fn a_tf32_elem(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = group(lane);
    (g + 8 * (i % 2), t + 4 * (i / 2))
}

/// Element `(k, n)` in register `i` of `lane`'s **B** fragment of `m16n8k8` (tf32).
#[inline(always)]
pub const fn b_tf32_elem(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = group(lane);
    (t + 4 * i, g)
}

/// Element `(row, col)` in register `i` of `lane`'s **C/D** fragment (m16n8, f32).
#[inline(always)]
pub const fn c_elem(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = group(lane);
    (g + 8 * (i / 2), 2 * t + i % 2)
}

/// Which 8 × 8 matrix (`0..4`) and which of its rows `lane` gives the address of, in an
/// `ldmatrix` that covers a 16 × 16 region as four matrices in the order
/// `(rows 0-7, cols 0-7)`, `(rows 8-15, cols 0-7)`, `(rows 0-7, cols 8-15)`,
/// `(rows 8-15, cols 8-15)`: the row `lane % 16` and the column chunk `lane / 16` of the
/// region (for `.x2`, lanes `0..16` matter; `.x1`, lanes `0..8`).
#[inline(always)]
pub const fn ldmatrix_row(lane: u32) -> (u32, u32) {
    (lane % 16, 8 * ((lane / 16) % 2))
}

/// Element `(row, col)` of 8 × 8 matrix `lane`'s register receives from `ldmatrix`, half
/// `h`: `(g, 2t + h)`, or `(2t + h, g)` with `.trans`.
#[inline(always)]
pub const fn ldmatrix_elem(lane: u32, h: u32, trans: bool) -> (u32, u32) {
    let (g, t) = group(lane);
    if trans {
        (2 * t + h, g)
    } else {
        (g, 2 * t + h)
    }
}

/// Rounds an `f32` to tf32 as `cvt.rna.tf32.f32` does (to nearest, ties away from zero,
/// 10 mantissa bits kept, the low 13 bits zero). NaN and infinities pass through.
#[inline(always)]
pub fn to_tf32(x: f32) -> f32 {
    let b = x.to_bits();
    if (b & 0x7f80_0000) == 0x7f80_0000 {
        return x;
    }
    f32::from_bits((b.wrapping_add(0x1000)) & 0xffff_e000)
}

/// What the tensor core computes for one `m16n8kK` MMA, as the CPU runtime models it:
/// `d[m][n] = c[m][n] + Σ_k a[m][k] · b[k][n]`, every product exact in f32 (true for
/// f16, bf16 and tf32 operands: 11 or 8 significant bits each), summed in f32 in `k`
/// order after `c`. The hardware's order and rounding of the sum are not specified;
/// results agree to the rounding of a `K`-term f32 sum.
pub fn mma_f32<const K: usize>(a: &[[f32; K]; 16], b: &[[f32; 8]; K], c: &[[f32; 8]; 16]) -> [[f32; 8]; 16] {
    let mut d = *c;
    for (m, row) in d.iter_mut().enumerate() {
        for (n, out) in row.iter_mut().enumerate() {
            let mut s = *out;
            for k in 0..K {
                s += a[m][k] * b[k][n];
            }
            *out = s;
        }
    }
    d
}

/// The `mma.sync` forms sluice has: the element type of A and B with its shape (C and D
/// are f32). Which lane holds which element of each operand, and what a register's bits
/// mean, are the methods below; [`warp_mma`] is the whole warp's product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmaKind {
    /// `m16n8k16`, bf16 operands (two per register, the first in the low half).
    Bf16,
    /// `m16n8k16`, f16 operands (two per register).
    F16,
    /// `m16n8k8`, tf32 operands (one per register, an f32 whose low 13 bits are ignored).
    Tf32,
}

impl MmaKind {
    /// The `K` of the shape: 16, or 8 for tf32.
    pub const fn k(self) -> usize {
        match self {
            MmaKind::Tf32 => 8,
            _ => 16,
        }
    }

    /// Elements per 32-bit register of A and B.
    pub const fn per_reg(self) -> u32 {
        match self {
            MmaKind::Tf32 => 1,
            _ => 2,
        }
    }

    /// Element `h` of an A or B register, as the f32 the tensor core multiplies (exact).
    pub fn value(self, reg: u32, h: u32) -> f32 {
        match self {
            MmaKind::Bf16 => f32::from_bits(((reg >> (16 * h)) & 0xffff) << 16),
            MmaKind::F16 => f16_bits_to_f32((reg >> (16 * h)) as u16),
            // The tensor core reads the top 19 bits.
            MmaKind::Tf32 => f32::from_bits(reg & 0xffff_e000),
        }
    }

    /// `(row, col)` of element `h` of register `i` of `lane`'s A fragment.
    pub const fn a_elem(self, lane: u32, i: u32, h: u32) -> (u32, u32) {
        match self {
            MmaKind::Tf32 => a_tf32_elem(lane, i),
            _ => a16_elem(lane, i, h),
        }
    }

    /// `(k, n)` of element `h` of register `i` of `lane`'s B fragment.
    pub const fn b_elem(self, lane: u32, i: u32, h: u32) -> (u32, u32) {
        match self {
            MmaKind::Tf32 => b_tf32_elem(lane, i),
            _ => b16_elem(lane, i, h),
        }
    }
}

/// The f32 of an IEEE binary16 bit pattern (exact; NaN payloads kept in the top bits).
pub const fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else if exp != 0 {
        sign | ((exp + 112) << 23) | (man << 13)
    } else if man == 0 {
        sign
    } else {
        // Subnormal: shift the leading one up to the implicit bit.
        let shift = man.leading_zeros() - 21;
        sign | ((113 - shift) << 23) | (((man << shift) & 0x3ff) << 13)
    };
    f32::from_bits(bits)
}

/// One `mma.sync` of the whole warp, from each lane's registers: lane `l` brings `a[l]`,
/// `b[l]` and its accumulators `c[l]` (laid out as this module's tables say), and gets
/// `d[l]`. The product of [`mma_f32`] (exact products, summed in f32 in `k` order).
pub fn warp_mma(kind: MmaKind, a: &[[u32; 4]; 32], b: &[[u32; 2]; 32], c: &[[f32; 4]; 32]) -> [[f32; 4]; 32] {
    let mut am = [[0f32; 16]; 16];
    let mut bm = [[0f32; 8]; 16];
    let mut cm = [[0f32; 8]; 16];
    for lane in 0..32u32 {
        let l = lane as usize;
        for i in 0..4u32 {
            for h in 0..kind.per_reg() {
                let (r, k) = kind.a_elem(lane, i, h);
                am[r as usize][k as usize] = kind.value(a[l][i as usize], h);
            }
            let (r, col) = c_elem(lane, i);
            cm[r as usize][col as usize] = c[l][i as usize];
        }
        for i in 0..2u32 {
            for h in 0..kind.per_reg() {
                let (k, n) = kind.b_elem(lane, i, h);
                bm[k as usize][n as usize] = kind.value(b[l][i as usize], h);
            }
        }
    }
    let dm = if kind.k() == 8 {
        let a8: [[f32; 8]; 16] = core::array::from_fn(|r| core::array::from_fn(|k| am[r][k]));
        let b8: [[f32; 8]; 8] = core::array::from_fn(|k| bm[k]);
        mma_f32::<8>(&a8, &b8, &cm)
    } else {
        mma_f32::<16>(&am, &bm, &cm)
    };
    core::array::from_fn(|l| {
        core::array::from_fn(|i| {
            let (r, col) = c_elem(l as u32, i as u32);
            dm[r as usize][col as usize]
        })
    })
}

/// Register `j` of `lane` after an `ldmatrix` (`.trans` if `trans`), from the rows the
/// lanes gave: `rows[8 j + r]` is row `r` of matrix `j`, four 32-bit words (eight 16-bit
/// elements, the first in the low half of word 0). Without `.trans` lane `(g, t)` gets word
/// `t` of row `g` (elements `(g, 2t)` and `(g, 2t + 1)`); with it, element `g` of rows `2t`
/// (low half) and `2t + 1` (high half).
pub const fn ldmatrix_reg(rows: &[[u32; 4]], j: u32, lane: u32, trans: bool) -> u32 {
    let (g, t) = group(lane);
    let m = 8 * j as usize;
    if trans {
        let (w, s) = ((g / 2) as usize, 16 * (g % 2));
        let lo = (rows[m + 2 * t as usize][w] >> s) & 0xffff;
        let hi = (rows[m + 2 * t as usize + 1][w] >> s) & 0xffff;
        lo | hi << 16
    } else {
        rows[m + g as usize][t as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operand's lanes × registers × halves cover its matrix exactly once.
    fn covers(rows: u32, cols: u32, cells: impl Iterator<Item = (u32, u32)>) {
        let mut seen = std::vec![0u8; (rows * cols) as usize];
        for (r, c) in cells {
            assert!(r < rows && c < cols, "({r}, {c}) outside {rows}x{cols}");
            seen[(r * cols + c) as usize] += 1;
        }
        assert!(seen.iter().all(|&s| s == 1), "not a bijection: {seen:?}");
    }

    #[test]
    fn fragments_cover_their_operands_once() {
        let lanes = || 0..32u32;
        covers(16, 16, lanes().flat_map(|l| (0..4).flat_map(move |i| (0..2).map(move |h| a16_elem(l, i, h)))));
        covers(16, 8, lanes().flat_map(|l| (0..2).flat_map(move |i| (0..2).map(move |h| b16_elem(l, i, h)))));
        covers(16, 8, lanes().flat_map(|l| (0..4).map(move |i| a_tf32_elem(l, i))));
        covers(8, 8, lanes().flat_map(|l| (0..2).map(move |i| b_tf32_elem(l, i))));
        covers(16, 8, lanes().flat_map(|l| (0..4).map(move |i| c_elem(l, i))));
    }

    /// The PTX ISA's figures, row by row, for lane 5 (g = 1, t = 1) and lane 30 (g = 7, t = 2).
    #[test]
    fn rows_of_the_isa_figures() {
        assert_eq!(a16_elem(5, 0, 0), (1, 2));
        assert_eq!(a16_elem(5, 1, 1), (9, 3));
        assert_eq!(a16_elem(5, 2, 0), (1, 10));
        assert_eq!(a16_elem(30, 3, 1), (15, 13));
        assert_eq!(b16_elem(5, 0, 1), (3, 1));
        assert_eq!(b16_elem(30, 1, 0), (12, 7));
        assert_eq!(a_tf32_elem(30, 2), (7, 6));
        assert_eq!(b_tf32_elem(30, 1), (6, 7));
        assert_eq!(c_elem(5, 3), (9, 3));
        assert_eq!(c_elem(30, 0), (7, 4));
    }

    /// `ldmatrix.x4` (no `.trans`) with the addresses of [`ldmatrix_row`] on a row-major
    /// 16 × 16 region gives the A fragment; `.x2 .trans` on a k-major (row-major K × N)
    /// 16 × 8 region gives the B fragment; `.x2` without `.trans` on an N × K region gives B.
    #[test]
    fn ldmatrix_builds_the_fragments() {
        for lane in 0..32 {
            for j in 0..4 {
                for h in 0..2 {
                    // A: matrix j covers rows 8*(j%2).., cols 8*(j/2)..
                    let (r, c) = ldmatrix_elem(lane, h, false);
                    assert_eq!((r + 8 * (j % 2), c + 8 * (j / 2)), a16_elem(lane, j, h));
                }
            }
            for j in 0..2 {
                for h in 0..2 {
                    // B from a K × N row-major tile: matrix j covers k rows 8j.., .trans.
                    let (k, n) = ldmatrix_elem(lane, h, true);
                    assert_eq!((k + 8 * j, n), b16_elem(lane, j, h));
                    // B from an N × K row-major tile: matrix j covers k columns 8j.., no .trans.
                    let (n, k) = ldmatrix_elem(lane, h, false);
                    assert_eq!((k + 8 * j, n), b16_elem(lane, j, h));
                }
            }
        }
        // The address each lane gives: row lane % 16, chunk lane / 16.
        assert_eq!(ldmatrix_row(0), (0, 0));
        assert_eq!(ldmatrix_row(9), (9, 0));
        assert_eq!(ldmatrix_row(17), (1, 8));
        assert_eq!(ldmatrix_row(31), (15, 8));
    }

    #[test]
    fn tf32_rounds_to_nearest_away() {
        assert_eq!(to_tf32(1.0), 1.0);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: away from zero.
        assert_eq!(to_tf32(1.0 + 2f32.powi(-11)), 1.0 + 2f32.powi(-10));
        assert_eq!(to_tf32(1.0 + 2f32.powi(-12)), 1.0);
        assert_eq!(to_tf32(-3.0000002).to_bits() & 0x1fff, 0);
        assert!(to_tf32(f32::NAN).is_nan());
        assert_eq!(to_tf32(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn mma_reference_adds_to_c() {
        let mut a = [[0f32; 16]; 16];
        let mut b = [[0f32; 8]; 16];
        let c = [[1f32; 8]; 16];
        for (i, row) in a.iter_mut().enumerate() {
            row[i] = 2.0;
        }
        for (k, row) in b.iter_mut().enumerate() {
            for (n, v) in row.iter_mut().enumerate() {
                *v = (k * 8 + n) as f32;
            }
        }
        let d = mma_f32(&a, &b, &c);
        assert_eq!(d[3][5], 1.0 + 2.0 * 29.0);
    }

    #[test]
    fn f16_bits_decode_as_half_does() {
        for bits in (0..=u16::MAX).step_by(7).chain([0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x8001]) {
            let want = half::f16::from_bits(bits).to_f32();
            let got = f16_bits_to_f32(bits);
            assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{bits:#06x}: {got} != {want}");
        }
    }

    /// `warp_mma` from the lanes' registers is `mma_f32` of the matrices they hold.
    #[test]
    fn the_warp_mma_gathers_and_scatters_by_the_tables() {
        let va = |r: usize, k: usize| ((r * 3 + k * 5) % 13) as f32 - 6.0;
        let vb = |k: usize, n: usize| ((k * 7 + n) % 9) as f32 * 0.5;
        for kind in [MmaKind::Bf16, MmaKind::F16, MmaKind::Tf32] {
            let enc = |x: f32| -> u32 {
                match kind {
                    MmaKind::Bf16 => x.to_bits() >> 16,
                    MmaKind::F16 => half::f16::from_f32(x).to_bits() as u32,
                    MmaKind::Tf32 => x.to_bits(),
                }
            };
            let mut a = [[0u32; 4]; 32];
            let mut b = [[0u32; 2]; 32];
            let mut c = [[0f32; 4]; 32];
            for lane in 0..32u32 {
                for i in 0..4u32 {
                    for h in 0..kind.per_reg() {
                        let (r, k) = kind.a_elem(lane, i, h);
                        a[lane as usize][i as usize] |= enc(va(r as usize, k as usize)) << (16 * h);
                    }
                    c[lane as usize][i as usize] = 1.0;
                }
                for i in 0..2u32 {
                    for h in 0..kind.per_reg() {
                        let (k, n) = kind.b_elem(lane, i, h);
                        b[lane as usize][i as usize] |= enc(vb(k as usize, n as usize)) << (16 * h);
                    }
                }
            }
            let d = warp_mma(kind, &a, &b, &c);
            for lane in 0..32u32 {
                for i in 0..4u32 {
                    let (r, n) = c_elem(lane, i);
                    let want: f32 = 1.0 + (0..kind.k()).map(|k| va(r as usize, k) * vb(k, n as usize)).sum::<f32>();
                    assert_eq!(d[lane as usize][i as usize], want, "{kind:?} lane {lane} reg {i}");
                }
            }
        }
    }

    /// `ldmatrix_reg` on the rows of a row-major 16 × 16 region (rows 8j.. of matrix j)
    /// gives the elements `ldmatrix_elem` names.
    #[test]
    fn ldmatrix_reg_follows_ldmatrix_elem() {
        let val = |r: u32, c: u32| (r * 16 + c) as u16;
        for trans in [false, true] {
            // Matrix j: rows 8j..8j+8 of an 8 × 8 block each, element (r, c) = val(8j + r, c).
            let rows: [[u32; 4]; 32] = core::array::from_fn(|i| {
                let (j, r) = (i as u32 / 8, i as u32 % 8);
                core::array::from_fn(|w| {
                    val(8 * j + r, 2 * w as u32) as u32 | (val(8 * j + r, 2 * w as u32 + 1) as u32) << 16
                })
            });
            for lane in 0..32 {
                for j in 0..4 {
                    let reg = ldmatrix_reg(&rows, j, lane, trans);
                    for h in 0..2 {
                        let (r, c) = ldmatrix_elem(lane, h, trans);
                        assert_eq!(
                            (reg >> (16 * h)) as u16,
                            val(8 * j + r, c),
                            "lane {lane} matrix {j} half {h} trans {trans}"
                        );
                    }
                }
            }
        }
    }
}
