//! GPU architectures the builder can target.

use std::fmt;
use std::str::FromStr;

use crate::error::BuildError;

/// The rustc target every kernel crate is compiled for.
///
/// ```
/// assert_eq!(sluice_builder::TARGET, "nvptx64-nvidia-cuda");
/// ```
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// A CUDA compute architecture, as `ptxas` and `llc` name it (`sm_90`).
///
/// `sm_90` (Hopper: H100, H200) is the default. PTX built for an older
/// architecture also runs on newer GPUs (the driver compiles it at load time),
/// so `sm_80` is the portable choice; `sm_90a` unlocks Hopper-only instructions
/// and runs on Hopper alone.
///
/// ```
/// use sluice_builder::Arch;
/// let arch: Arch = "sm_80".parse().unwrap();
/// assert_eq!(arch.to_string(), "sm_80");
/// assert_eq!(arch.compute_capability(), (8, 0));
/// assert!("sm_8".parse::<Arch>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arch {
    major: u8,
    minor: u8,
    /// The `a` suffix: architecture-specific features (`sm_90a`), not forward compatible.
    specific: bool,
}

impl Arch {
    /// Hopper (H100, H200): the default.
    ///
    /// ```
    /// assert_eq!(sluice_builder::Arch::SM_90, sluice_builder::Arch::default());
    /// ```
    pub const SM_90: Arch = Arch { major: 9, minor: 0, specific: false };
    /// Ampere data-centre GPUs (A100); PTX for it runs on every newer GPU.
    ///
    /// ```
    /// assert_eq!(sluice_builder::Arch::SM_80.to_string(), "sm_80");
    /// ```
    pub const SM_80: Arch = Arch { major: 8, minor: 0, specific: false };
    /// Ada (L4, L40, RTX 40xx).
    ///
    /// ```
    /// assert_eq!(sluice_builder::Arch::SM_89.compute_capability(), (8, 9));
    /// ```
    pub const SM_89: Arch = Arch { major: 8, minor: 9, specific: false };
    /// Hopper with its architecture-specific instructions (wgmma, setmaxnreg).
    ///
    /// ```
    /// assert_eq!(sluice_builder::Arch::SM_90A.to_string(), "sm_90a");
    /// ```
    pub const SM_90A: Arch = Arch { major: 9, minor: 0, specific: true };

    /// The oldest architecture the builder accepts: the NVPTX backend's
    /// intrinsics used by the device std need `sm_70` (independent thread scheduling).
    ///
    /// ```
    /// assert!("sm_60".parse::<sluice_builder::Arch>().is_err());
    /// assert_eq!(sluice_builder::Arch::MIN.to_string(), "sm_70");
    /// ```
    pub const MIN: Arch = Arch { major: 7, minor: 0, specific: false };

    /// `(major, minor)` compute capability, as the driver reports it.
    ///
    /// ```
    /// assert_eq!(sluice_builder::Arch::SM_90.compute_capability(), (9, 0));
    /// ```
    pub fn compute_capability(self) -> (u32, u32) {
        (self.major as u32, self.minor as u32)
    }

    /// Whether this is an architecture-specific target (`sm_90a`).
    ///
    /// ```
    /// assert!(sluice_builder::Arch::SM_90A.is_specific() && !sluice_builder::Arch::SM_90.is_specific());
    /// ```
    pub fn is_specific(self) -> bool {
        self.specific
    }
}

impl Default for Arch {
    fn default() -> Self {
        Arch::SM_90
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}{}", self.major, self.minor, if self.specific { "a" } else { "" })
    }
}

impl FromStr for Arch {
    type Err = BuildError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BuildError::BadArch { given: s.to_string() };
        let digits = s.strip_prefix("sm_").ok_or_else(bad)?;
        let (digits, specific) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        if !(2..=3).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        let arch =
            Arch { major: major.parse().map_err(|_| bad())?, minor: minor.parse().map_err(|_| bad())?, specific };
        if arch.compute_capability() < Arch::MIN.compute_capability() {
            return Err(bad());
        }
        Ok(arch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_the_supported_names() {
        for name in ["sm_70", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120a"] {
            let arch: Arch = name.parse().unwrap();
            assert_eq!(arch.to_string(), name);
        }
        assert_eq!("sm_100".parse::<Arch>().unwrap().compute_capability(), (10, 0));
        assert!("sm_90a".parse::<Arch>().unwrap().is_specific());
    }

    #[test]
    fn rejects_malformed_and_too_old_names() {
        for name in ["", "90", "sm90", "sm_", "sm_9", "sm_x0", "sm_1000", "sm_60", "compute_90", "sm_90b"] {
            let err = name.parse::<Arch>().unwrap_err();
            assert!(err.to_string().contains("sm_90"), "{name}: {err}");
        }
    }
}
