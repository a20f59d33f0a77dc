//! The atomics' rows of the self-test: the atomic types with every kind of
//! operation and ordering, on global memory (the scratch words after the rows)
//! and shared memory (rows 0–5, and the [`FINALS`](super::FINALS) row thread 0
//! writes last; the kernel body is [`super::run`]).

/// The host's side: what the rows must hold.
#[cfg(not(target_arch = "nvptx64"))]
pub(super) mod host {
    use super::super::check::expect;
    use super::super::{FINALS, FINAL_NAMES, THREADS};
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// Rows 0–5 and the finals: the old values are a permutation of what some
    /// interleaving gives, the finals what every interleaving ends with.
    pub(in super::super) fn check(out: &[u32], bad: &mut Vec<String>) {
        let at = |row: usize, t: usize| out[row * THREADS + t];
        // Atomics: old values are a permutation of what some interleaving gives.
        let mut olds: Vec<u32> = (0..THREADS).map(|t| at(0, t)).collect();
        olds.sort_unstable();
        expect(
            bad,
            0,
            0,
            olds == (0..THREADS as u32).collect::<Vec<_>>(),
            format!("{olds:?}"),
            "0..64 once each".into(),
        );
        for t in 0..THREADS {
            expect(bad, 1, t, at(1, t) == 64, at(1, t).to_string(), "64".into());
        }
        let mut halves: Vec<f32> = (0..THREADS).map(|t| f32::from_bits(at(2, t))).collect();
        halves.sort_by(f32::total_cmp);
        let want: Vec<f32> = (0..THREADS).map(|k| k as f32 * 0.5).collect();
        expect(bad, 2, 0, halves == want, format!("{halves:?}"), "0, 0.5, ..., 31.5 once each".into());
        let mut subs: Vec<u32> = (0..THREADS).map(|t| at(3, t)).collect();
        subs.sort_unstable();
        expect(bad, 3, 0, subs == (37..=100).collect::<Vec<_>>(), format!("{subs:?}"), "37..=100 once each".into());
        let finals: Vec<u32> = (0..FINAL_NAMES.len()).map(|k| at(FINALS, k)).collect();
        let mut swapped: Vec<i64> = (0..THREADS).map(|t| at(4, t) as i32 as i64).collect();
        swapped.push(finals[8] as i32 as i64);
        swapped.sort_unstable();
        expect(
            bad,
            4,
            0,
            swapped == (-1..64).collect::<Vec<_>>(),
            format!("{swapped:?}"),
            "-1..64 once each (olds and final)".into(),
        );
        let winners: Vec<usize> = (0..THREADS).filter(|&t| at(5, t) == 1).collect();
        let one_winner = winners.len() == 1 && (0..THREADS).all(|t| at(5, t) <= 1);
        expect(bad, 5, 0, one_winner, format!("winners {winners:?}"), "exactly one".into());
        let want_finals = [
            64,
            32.0f32.to_bits(),
            36,
            -10i32 as u32,
            189,
            0,
            !0,
            0,
            finals[8],
            winners.first().map_or(u32::MAX, |&w| w as u32 + 1),
            0xC0FFEE,
        ];
        for (k, (&g, &w)) in finals.iter().zip(&want_finals).enumerate() {
            if g != w {
                bad.push(format!("{} (finals slot {k}): got {g:#x}, want {w:#x}", FINAL_NAMES[k]));
            }
        }
        if finals[8] as i32 >= 64 || (finals[8] as i32) < 0 {
            bad.push(format!("{}: got {}, want a thread id", FINAL_NAMES[8], finals[8] as i32));
        }
    }

    /// Rows 0–5 and the finals as a correct GPU writes them, the atomics in one
    /// particular order (thread 0 first).
    pub(in super::super) fn expected(out: &mut [u32]) {
        let mut put = |row: usize, t: usize, v: u32| out[row * THREADS + t] = v;
        for t in 0..THREADS {
            put(0, t, t as u32);
            put(1, t, 64);
            put(2, t, (t as f32 * 0.5).to_bits());
            put(3, t, 100 - t as u32);
            put(4, t, (t as i64 - 1) as u32);
            put(5, t, (t == 0) as u32);
        }
        let finals = [64, 32.0f32.to_bits(), 36, -10i32 as u32, 189, 0, !0, 0, 63, 1, 0xC0FFEE];
        for (k, v) in finals.iter().enumerate() {
            out[FINALS * THREADS + k] = *v;
        }
    }
}
