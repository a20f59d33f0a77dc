//! The checking mode of the CPU backend, as the host sees it: whether a launch is checked
//! ([`CpuCheck`]), what a checked launch reports ([`CheckReport`]: the kind of bug, the
//! kernel, the block, the two threads and their source lines), and how a kernel's CPU entry
//! says how its launch ended ([`CpuLaunch`], [`CpuLaunchError`]).
//!
//! The checker itself is the device std's CPU runtime (`sluice_device::cpu`, whose docs say
//! what it sees, how, and what it costs); a report reaches a scope's caller as
//! [`Error::KernelCheck`](crate::Error::KernelCheck).

use std::fmt;
use std::sync::OnceLock;

/// Whether the CPU backend checks a kernel while it runs it: data races on shared and
/// global memory, barriers and warp operations that not every thread they name reaches,
/// reads of shared memory never written (`sluice_device::cpu` has the details).
///
/// [`CpuCheck::auto`] is the default: on in builds with debug assertions (`cargo test`,
/// `cargo run`), off in release builds, and `SLUICE_CPU_CHECK=1` or `0` decides instead
/// when it is set. [`Gpu::set_cpu_check`](crate::Gpu::set_cpu_check) decides for one
/// device, whatever the build and the environment.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{CpuCheck, Gpu};
/// let gpu = Gpu::cpu();
/// gpu.set_cpu_check(CpuCheck::On); // even in a release build
/// assert_eq!(gpu.cpu_check(), CpuCheck::On);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuCheck {
    /// Run kernels as fast as the CPU backend can (nothing recorded).
    Off,
    /// Check every launch; the first bug found fails it with a [`CheckReport`].
    On,
}

impl CpuCheck {
    /// The default of this process: `SLUICE_CPU_CHECK` if set (`1`, `on`, `true` or `yes`
    /// turn checking on; `0`, `off`, `false` or `no` turn it off), else [`CpuCheck::On`] in
    /// a build with debug assertions and [`CpuCheck::Off`] without them. The build is the
    /// program's own: this crate is compiled with its profile, so a plain `cargo test` of a
    /// project checks every CPU launch and `cargo test --release` does not. Read once.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// use sluice::CpuCheck;
    /// let mode = CpuCheck::auto();
    /// match std::env::var("SLUICE_CPU_CHECK").as_deref() {
    ///     Ok("0") => assert_eq!(mode, CpuCheck::Off),
    ///     Ok("1") => assert_eq!(mode, CpuCheck::On),
    ///     // On where sluice was built with debug assertions, off where it was not.
    ///     _ => println!("this build's default: {mode:?}"),
    /// }
    /// ```
    ///
    /// (The build that decides is the library's: a doctest's own `cfg!(debug_assertions)`
    /// can differ from it under `cargo test --release`.)
    pub fn auto() -> CpuCheck {
        static AUTO: OnceLock<CpuCheck> = OnceLock::new();
        *AUTO.get_or_init(|| match std::env::var("SLUICE_CPU_CHECK") {
            Ok(v) => CpuCheck::parse(&v).unwrap_or(CpuCheck::build_default()),
            Err(_) => CpuCheck::build_default(),
        })
    }

    /// On with debug assertions, off without.
    fn build_default() -> CpuCheck {
        if cfg!(debug_assertions) {
            CpuCheck::On
        } else {
            CpuCheck::Off
        }
    }

    /// `SLUICE_CPU_CHECK`'s value as a mode (`None`: not one, the build's default applies).
    fn parse(v: &str) -> Option<CpuCheck> {
        match v.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "true" | "yes" => Some(CpuCheck::On),
            "0" | "off" | "false" | "no" => Some(CpuCheck::Off),
            _ => None,
        }
    }

    /// Whether this is [`CpuCheck::On`].
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// assert!(sluice::CpuCheck::On.is_on());
    /// ```
    pub fn is_on(self) -> bool {
        self == CpuCheck::On
    }
}

/// One launch as the CPU backend runs it: what a kernel's CPU entry
/// ([`CpuEntry`](crate::CpuEntry)) is given besides its parameters.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{CpuCheck, CpuLaunch};
/// let launch = CpuLaunch { kernel: "saxpy", grid: [4, 1, 1], block: [256, 1, 1], dynamic_shared_bytes: 0, check: CpuCheck::On };
/// assert_eq!(launch.threads(), 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuLaunch {
    /// The kernel's name (reports name it).
    pub kernel: &'static str,
    /// `gridDim`.
    pub grid: [u32; 3],
    /// `blockDim`.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_shared_bytes: u32,
    /// Whether the launch is checked.
    pub check: CpuCheck,
}

impl CpuLaunch {
    /// Threads in the whole grid.
    pub fn threads(&self) -> u64 {
        self.grid.iter().chain(&self.block).map(|&d| d as u64).product()
    }
}

/// How a CPU launch failed: a thread panicked (an index out of bounds, a failed `dassert!`,
/// `trap`), the block deadlocked, the configuration was refused — a message saying where —
/// or the checking mode found a bug ([`CheckReport`]).
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::CpuLaunchError;
/// let e = CpuLaunchError::Fault("block (0, 0, 0), thread (3, 0, 0): panicked at k.rs:4:9: boom".into());
/// assert!(e.to_string().ends_with("boom"));
/// assert!(e.report().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuLaunchError {
    /// A panic, a deadlock or a refused configuration, with where it happened.
    Fault(String),
    /// A bug the checking mode found.
    Check(Box<CheckReport>),
}

impl CpuLaunchError {
    /// The checking mode's report, if that is what failed the launch.
    pub fn report(&self) -> Option<&CheckReport> {
        match self {
            CpuLaunchError::Check(r) => Some(r),
            CpuLaunchError::Fault(_) => None,
        }
    }
}

impl fmt::Display for CpuLaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuLaunchError::Fault(m) => f.write_str(m),
            CpuLaunchError::Check(r) => r.fmt(f),
        }
    }
}

impl std::error::Error for CpuLaunchError {}

impl From<String> for CpuLaunchError {
    fn from(message: String) -> CpuLaunchError {
        CpuLaunchError::Fault(message)
    }
}

/// The kinds of bug the checking mode reports.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::CheckKind;
/// assert_eq!(CheckKind::SharedRace.to_string(), "data race on shared memory");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// Two threads of a block access the same bytes of shared memory in one barrier
    /// interval (no barrier, `sync_warp` or named barrier orders them), at least one of them
    /// writes, and not both are atomic.
    SharedRace,
    /// Two threads of a launch access the same element of a kernel's written slice
    /// parameter, unordered (threads of different blocks are never ordered), and not both
    /// atomically.
    GlobalRace,
    /// A block barrier (`sync_threads` and its count/and/or forms) that not every
    /// non-exited thread of the block reaches at the same point: a thread returned before
    /// it, threads met there from different call sites, or waited at another barrier.
    DivergentBarrier,
    /// A warp operation (`*.sync`: shuffles, votes, `match`, `redux`, `sync_warp`) whose
    /// mask or participation is wrong: a lane not in its own mask, a lane named in the
    /// mask that never takes part while it has not exited, or a shuffle reading a lane that
    /// does not take part (an undefined value).
    DivergentWarp,
    /// A read (or an atomic read-modify-write) of shared memory that no thread of the block
    /// wrote before: on a GPU it holds whatever the previous block left there.
    UninitShared,
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CheckKind::SharedRace => "data race on shared memory",
            CheckKind::GlobalRace => "data race on global memory",
            CheckKind::DivergentBarrier => "divergent barrier",
            CheckKind::DivergentWarp => "divergent warp operation",
            CheckKind::UninitShared => "read of uninitialised shared memory",
        })
    }
}

/// One thread's part in a [`CheckReport`]: who, where, and what it did there.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::Access;
/// let a = Access { block: [0, 0, 0], thread: [3, 1, 0], site: "src/lib.rs:20:9".into(), what: "writes".into() };
/// assert_eq!(a.to_string(), "thread (3, 1, 0) writes at src/lib.rs:20:9");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Access {
    /// The thread's block index (a global race names two blocks).
    pub block: [u32; 3],
    /// The thread's index in its block.
    pub thread: [u32; 3],
    /// Where in the source (`file:line:column`), or empty where the runtime cannot know
    /// (the point where a thread returned from the kernel).
    pub site: String,
    /// What it did, as a verb phrase: `writes`, `reads`, `atomically updates`,
    /// `waits at sync_threads`, `returned from the kernel`, ...
    pub what: String,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.thread;
        write!(f, "thread ({x}, {y}, {z}) {}", self.what)?;
        if !self.site.is_empty() {
            write!(f, " at {}", self.site)?;
        }
        Ok(())
    }
}

/// What the checking mode of the CPU backend found in a kernel: the kind of bug, the
/// kernel, the block, the two accesses (or the thread and what it met), what memory, and
/// what to do about it.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Access, CheckKind, CheckReport};
/// let r = CheckReport {
///     kind: CheckKind::SharedRace,
///     kernel: "tile_rows".into(),
///     block: [0, 0, 0],
///     location: "bytes 128..132 of the shared array declared at src/lib.rs:12:16".into(),
///     first: Access { block: [0, 0, 0], thread: [1, 0, 0], site: "src/lib.rs:15:9".into(), what: "writes".into() },
///     second: Some(Access { block: [0, 0, 0], thread: [2, 0, 0], site: "src/lib.rs:17:21".into(), what: "reads".into() }),
/// };
/// let m = r.to_string();
/// assert!(m.starts_with("kernel `tile_rows`, block (0, 0, 0): data race on shared memory"), "{m}");
/// assert!(m.contains("thread (1, 0, 0) writes at src/lib.rs:15:9") && m.contains("thread (2, 0, 0) reads at src/lib.rs:17:21"), "{m}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CheckReport {
    /// The kind of bug.
    pub kind: CheckKind,
    /// The kernel (its `#[kernel]` name, or what a direct `sluice_device::cpu` launch calls it).
    pub kernel: String,
    /// The block it happened in (for a global race, the block of the second access).
    pub block: [u32; 3],
    /// The memory or the operation concerned: `bytes 128..132 of the shared array declared
    /// at src/lib.rs:12:16`, `element 17 of a slice parameter (4 bytes each)`, `barrier 0`.
    pub location: String,
    /// The earlier access (or the thread that is waiting).
    pub first: Access,
    /// The access it conflicts with (or the thread missing), where there is one.
    pub second: Option<Access>,
}

impl CheckReport {
    /// What to do about a bug of this report's kind, in one sentence.
    ///
    /// ```
    /// # use sluice_host as sluice;
    /// # use sluice::{Access, CheckKind, CheckReport};
    /// # let a = Access { block: [0; 3], thread: [0; 3], site: String::new(), what: "reads".into() };
    /// let r = CheckReport { kind: CheckKind::UninitShared, kernel: "k".into(), block: [0; 3], location: String::new(), first: a, second: None };
    /// assert!(r.advice().contains("write"));
    /// ```
    pub fn advice(&self) -> &'static str {
        let other_block = self.second.as_ref().is_some_and(|s| s.block != self.first.block);
        match self.kind {
            CheckKind::SharedRace => {
                "order the two with a barrier between them (`sync::sync_threads()`; `warp::sync_warp` within a warp), \
                 or make both atomic"
            }
            CheckKind::GlobalRace if other_block => {
                "threads of different blocks are never ordered within a launch: give each element one writer \
                 (`for_thread`, `grid_stride`), or use atomics"
            }
            CheckKind::GlobalRace => {
                "give each element one writer, order the two with a barrier (`sync::sync_threads()`), or use atomics"
            }
            CheckKind::DivergentBarrier => {
                "every non-exited thread of the block must reach the same barrier: keep threads without work in the \
                 kernel until the last barrier and only skip their loads and stores"
            }
            CheckKind::DivergentWarp => {
                "the mask must name exactly the lanes that reach the operation together: compute it with \
                 `warp::ballot` before the branch (or keep every lane of the mask on the same path)"
            }
            CheckKind::UninitShared => {
                "write it before reading it (a barrier between, if another thread writes it): a GPU's shared memory \
                 starts with whatever the previous block left there"
            }
        }
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.block;
        write!(f, "kernel `{}`, block ({x}, {y}, {z}): {}", self.kernel, self.kind)?;
        if !self.location.is_empty() {
            write!(f, " ({})", self.location)?;
        }
        // Threads of two blocks: each named with its block (the thread indices alone could be
        // the same and read as one thread).
        let two_blocks = self.second.as_ref().is_some_and(|s| s.block != self.first.block);
        let access = |f: &mut fmt::Formatter<'_>, a: &Access| {
            write!(f, "{a}")?;
            if two_blocks || a.block != self.block {
                let [x, y, z] = a.block;
                write!(f, " in block ({x}, {y}, {z})")?;
            }
            Ok(())
        };
        f.write_str(": ")?;
        access(f, &self.first)?;
        if let Some(second) = &self.second {
            f.write_str("; ")?;
            access(f, second)?;
        }
        write!(f, ". Fix: {}", self.advice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_variable_reads_as_a_mode() {
        assert_eq!(CpuCheck::parse("1"), Some(CpuCheck::On));
        assert_eq!(CpuCheck::parse(" ON "), Some(CpuCheck::On));
        assert_eq!(CpuCheck::parse("0"), Some(CpuCheck::Off));
        assert_eq!(CpuCheck::parse("no"), Some(CpuCheck::Off));
        assert_eq!(CpuCheck::parse("maybe"), None);
    }

    #[test]
    fn a_global_race_between_blocks_names_both_blocks() {
        let at = |b: u32, t: u32, what: &str| Access {
            block: [b, 0, 0],
            thread: [t, 0, 0],
            site: format!("k.rs:{}:1", 10 + t),
            what: what.into(),
        };
        let r = CheckReport {
            kind: CheckKind::GlobalRace,
            kernel: "k".into(),
            block: [1, 0, 0],
            location: "element 3 of a slice parameter".into(),
            first: at(0, 3, "writes"),
            second: Some(at(1, 2, "writes")),
        };
        let m = r.to_string();
        assert!(m.starts_with("kernel `k`, block (1, 0, 0): data race on global memory"), "{m}");
        assert!(
            m.contains(
                "thread (3, 0, 0) writes at k.rs:13:1 in block (0, 0, 0); \
                 thread (2, 0, 0) writes at k.rs:12:1 in block (1, 0, 0)."
            ),
            "{m}"
        );
        assert!(m.contains("never ordered"), "{m}");
    }
}
