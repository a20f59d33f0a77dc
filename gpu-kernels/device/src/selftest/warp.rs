//! The warp's rows of the self-test: shuffles with a width and the in-range
//! predicate, of 8-, 16-, 32-, 64- and 128-bit values (rows 6–11; the kernel
//! body is [`super::run`]), checked against the lanes PTX's definition selects
//! ([`crate::spec::warp::shfl_source`]).

/// The host's side: what the rows must hold.
#[cfg(not(target_arch = "nvptx64"))]
pub(super) mod host {
    use super::super::check::expect;
    use super::super::THREADS;
    use crate::spec::warp::{shfl_c, shfl_source, ShflMode};
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// Rows 6–11: the lane PTX's definition selects, in each warp.
    pub(in super::super) fn check(out: &[u32], bad: &mut Vec<String>) {
        let at = |row: usize, t: usize| out[row * THREADS + t];
        for t in 0..THREADS {
            let (base, lane) = ((t / 32) * 32, (t % 32) as u32);
            let pick = |mode, b, width| {
                let (src, p) = shfl_source(mode, lane, b, shfl_c(mode, width));
                (base + src as usize, p)
            };
            let (s, p) = pick(ShflMode::Idx, lane + 1, 8);
            let want = (s as u32 * 3) << 1 | p as u32;
            expect(bad, 6, t, at(6, t) == want, at(6, t).to_string(), want.to_string());
            let (s, p) = pick(ShflMode::Up, 3, 8);
            let want = ((s as u32 * 1000) as u16 as u32) << 1 | p as u32;
            expect(bad, 7, t, at(7, t) == want, at(7, t).to_string(), want.to_string());
            let (s, p) = pick(ShflMode::Down, 5, 16);
            let want = ((s as u32 * 7) as u8 as u32) << 1 | p as u32;
            expect(bad, 8, t, at(8, t) == want, at(8, t).to_string(), want.to_string());
            let (s, p) = pick(ShflMode::Xor, 4, 8);
            expect(bad, 9, t, at(9, t) == s as u32 * 3, at(9, t).to_string(), (s * 3).to_string());
            let want = (s as u32) << 1 | p as u32;
            expect(bad, 10, t, at(10, t) == want, at(10, t).to_string(), want.to_string());
            let (s, _) = pick(ShflMode::Idx, 33, 32);
            let want = 2 * s as u32 + 1;
            expect(bad, 11, t, at(11, t) == want, at(11, t).to_string(), want.to_string());
        }
    }

    /// Rows 6–11 as a correct GPU writes them.
    pub(in super::super) fn expected(out: &mut [u32]) {
        let mut put = |row: usize, t: usize, v: u32| out[row * THREADS + t] = v;
        for t in 0..THREADS {
            let (base, lane) = ((t / 32) * 32, (t % 32) as u32);
            let pick = |mode, b, width| {
                let (src, p) = shfl_source(mode, lane, b, shfl_c(mode, width));
                (base as u32 + src, p as u32)
            };
            let (s, p) = pick(ShflMode::Idx, lane + 1, 8);
            put(6, t, (s * 3) << 1 | p);
            let (s, p) = pick(ShflMode::Up, 3, 8);
            put(7, t, ((s * 1000) as u16 as u32) << 1 | p);
            let (s, p) = pick(ShflMode::Down, 5, 16);
            put(8, t, ((s * 7) as u8 as u32) << 1 | p);
            let (s, p) = pick(ShflMode::Xor, 4, 8);
            put(9, t, s * 3);
            put(10, t, s << 1 | p);
            let (s, _) = pick(ShflMode::Idx, 33, 32);
            put(11, t, 2 * s + 1);
        }
    }
}
