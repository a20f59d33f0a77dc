//! Peer paths: which way a copy between two devices' memory goes ([`PeerPath`],
//! [`Gpu::peer_path`]), and what a scope's peer copies did ([`PeerLink`]).

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::handle::PeerAccess;

/// Which way a copy between two devices' memory goes ([`Gpu::peer_path`]), as the trace and
/// [`MultiScope::peer_links`](crate::MultiScope::peer_links) report it.
///
/// ```
/// # use sluice_host as sluice;
/// use sluice::{Gpu, PeerPath};
/// assert_eq!(Gpu::cpu().peer_path(&Gpu::cpu())?, PeerPath::SameDevice);
/// assert_eq!(PeerPath::Direct.to_string(), "direct");
/// # Ok::<(), sluice::Error>(())
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerPath {
    /// One device's memory on both sides (two [`Gpu`] values of one device, or the CPU
    /// backend): a plain device copy.
    SameDevice,
    /// Peer access is enabled between the two GPUs (NVLink, or PCIe peer-to-peer): the copy
    /// engines move the data directly, at the link's bandwidth.
    Direct,
    /// The two GPUs cannot reach each other's memory (`cuDeviceCanAccessPeer` says no): the
    /// driver stages the copy through host memory (`cuMemcpyPeerAsync`), at a fraction of
    /// the speed.
    Staged,
}

impl std::fmt::Display for PeerPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PeerPath::SameDevice => "same device",
            PeerPath::Direct => "direct",
            PeerPath::Staged => "staged through the host",
        })
    }
}

impl Gpu {
    /// Which way copies between this device's memory and `other`'s go. The first time a
    /// pair of CUDA devices asks, peer access is enabled both ways if
    /// `cuDeviceCanAccessPeer` allows it (`cuCtxEnablePeerAccess`, once per pair per
    /// process): then [`PeerPath::Direct`]; otherwise [`PeerPath::Staged`].
    ///
    /// # Errors
    /// [`Error::Device`] with the failing driver call.
    ///
    /// ```no_run
    /// # use sluice_host as sluice;
    /// # fn main() -> sluice::Result<()> {
    /// let (g0, g1) = (sluice::Gpu::cuda(0)?, sluice::Gpu::cuda(1)?);
    /// println!("device 0 to 1: {}", g0.peer_path(&g1)?);   // "direct" on NVLink machines
    /// # Ok(()) }
    /// ```
    pub fn peer_path(&self, other: &Gpu) -> Result<PeerPath> {
        let access = self
            .context()
            .peer_access(other.context())
            .map_err(|error| Error::Device { call: "cuCtxEnablePeerAccess", error })?;
        Ok(match access {
            PeerAccess::Same => PeerPath::SameDevice,
            PeerAccess::Direct => PeerPath::Direct,
            PeerAccess::Staged => PeerPath::Staged,
        })
    }
}

/// What the peer copies between one pair of devices of a [`MultiScope`](crate::MultiScope) did
/// ([`MultiScope::peer_links`](crate::MultiScope::peer_links)).
///
/// ```
/// # use sluice_host as sluice;
/// let l = sluice::PeerLink { from: 0, to: 1, path: sluice::PeerPath::Direct, copies: 2, bytes: 1 << 20 };
/// assert_eq!(l.bytes / l.copies, 1 << 19);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerLink {
    /// The source device (its index in the scope).
    pub from: usize,
    /// The destination device.
    pub to: usize,
    /// The way the copies went.
    pub path: PeerPath,
    /// How many copies.
    pub copies: u64,
    /// How many bytes, all copies together.
    pub bytes: u64,
}
