//! The sealed traits' token: only sluice can call the hidden methods of
//! [`Adoptable`](super::Adoptable), [`DeviceAwaitable`](super::DeviceAwaitable) and
//! [`PeerDestination`](super::PeerDestination), which await, wrap or unwrap values
//! without the brand checks the public methods make.

/// Only sluice can call the hidden trait methods below: they await, wrap or unwrap
/// values without the brand checks the public methods make.
pub struct Token(pub(super) ());
pub trait Sealed {}
/// A span, handed through the sealed traits' methods (opaque outside sluice).
pub struct RawSpan(pub(super) crate::span::Span);
