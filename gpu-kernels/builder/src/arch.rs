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

    /// The `compute_XX` target features Rust-CUDA's compiler sets for this architecture,
    /// which a kernel crate ported from Rust-CUDA tests with
    /// `#[cfg(target_feature = "compute_70")]`: `compute_XX` for every CUDA architecture up to
    /// this one ("at least this capability"), and for an `a` architecture also the family
    /// features `compute_XYf` of its major version up to its minor, and itself. The builder
    /// sets them for the device build (rustc's own NVPTX features are `sm_XX` and `ptxNN`,
    /// so without them each such `cfg` would be silently false).
    ///
    /// ```
    /// let f = sluice_builder::Arch::SM_80.cuda_compute_features();
    /// assert!(f.contains(&"compute_70".to_string()) && f.contains(&"compute_80".to_string()));
    /// assert!(!f.contains(&"compute_86".to_string()));
    /// let a: sluice_builder::Arch = "sm_100a".parse()?;
    /// assert!(a.cuda_compute_features().contains(&"compute_100f".to_string()));
    /// assert!(a.cuda_compute_features().contains(&"compute_100a".to_string()));
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    pub fn cuda_compute_features(self) -> Vec<String> {
        let cc = self.capability_value();
        let mut out: Vec<String> =
            CUDA_CAPABILITIES.iter().filter(|&&c| c <= cc).map(|c| format!("compute_{c}")).collect();
        if self.specific {
            let family = CUDA_CAPABILITIES.iter().filter(|&&c| c >= 100 && c / 10 == cc / 10 && c <= cc);
            out.extend(family.map(|c| format!("compute_{c}f")));
            out.push(format!("compute_{cc}a"));
        }
        out
    }

    /// Every `compute_XX` name Rust-CUDA knows (base, `f` and `a`): the values
    /// `cfg(target_feature)` may be tested against without a warning.
    ///
    /// ```
    /// assert!(sluice_builder::Arch::all_cuda_compute_features().contains(&"compute_90a".to_string()));
    /// ```
    pub fn all_cuda_compute_features() -> Vec<String> {
        let mut out: Vec<String> = CUDA_CAPABILITIES.iter().map(|c| format!("compute_{c}")).collect();
        out.extend(CUDA_CAPABILITIES.iter().filter(|&&c| c >= 90).map(|c| format!("compute_{c}a")));
        out.extend(CUDA_CAPABILITIES.iter().filter(|&&c| c >= 100).map(|c| format!("compute_{c}f")));
        out
    }

    pub(crate) fn capability_value(self) -> u32 {
        self.major as u32 * 10 + self.minor as u32
    }
}

/// The CUDA compute capabilities with a `compute_XX` name (as Rust-CUDA's `NvvmArch` lists
/// them), times ten.
const CUDA_CAPABILITIES: &[u32] =
    &[35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121];

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
    fn compute_features_follow_rust_cudas_rules() {
        // Rust-CUDA's compile test target_feature_base_cc: compute_70 has 70 and 60, not 80.
        let f = Arch { major: 7, minor: 0, specific: false }.cuda_compute_features();
        assert!(f.contains(&"compute_70".into()) && f.contains(&"compute_60".into()));
        assert!(!f.contains(&"compute_80".into()) && !f.contains(&"compute_90".into()));
        // target_feature_arch_cc: compute_120a has 120, 100, 90 and 120a, not 100f/101f.
        let f: Vec<String> = "sm_120a".parse::<Arch>().unwrap().cuda_compute_features();
        for want in ["compute_120", "compute_100", "compute_90", "compute_120a"] {
            assert!(f.contains(&want.to_string()), "{want}: {f:?}");
        }
        assert!(!f.contains(&"compute_100f".into()) && !f.contains(&"compute_101f".into()), "{f:?}");
        let all = Arch::all_cuda_compute_features();
        assert!(f.iter().all(|x| all.contains(x)), "{f:?}");
    }

    #[test]
    fn rejects_malformed_and_too_old_names() {
        for name in ["", "90", "sm90", "sm_", "sm_9", "sm_x0", "sm_1000", "sm_60", "compute_90", "sm_90b"] {
            let err = name.parse::<Arch>().unwrap_err();
            assert!(err.to_string().contains("sm_90"), "{name}: {err}");
        }
    }
}
