//! Memory scopes: which threads an atomic operation or a fence is guaranteed
//! against (PTX's `.cta`, `.gpu`, `.sys`).

/// Which threads an atomic operation or a fence is guaranteed against,
/// from the cheapest to the widest (PTX's `.cta`, `.gpu`, `.sys`).
///
/// Named `MemoryScope`, not `Scope`, so that it is never confused with the host's
/// `sluice::Scope` (a `scope` of lanes): this one is a memory-model term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryScope {
    /// The threads of this block (`.cta`). Enough for shared memory, and for
    /// global memory that only this block touches.
    Block,
    /// Every thread on this device (`.gpu`): what CUDA's `atomicAdd` and
    /// `__threadfence()` give. Use it for global memory shared between blocks.
    Device,
    /// Also the host and other devices (`.sys`), for mapped or managed memory.
    System,
}

impl MemoryScope {
    /// The PTX qualifier, with its dot (`".cta"`, `".gpu"`, `".sys"`).
    pub const fn ptx(self) -> &'static str {
        match self {
            MemoryScope::Block => ".cta",
            MemoryScope::Device => ".gpu",
            MemoryScope::System => ".sys",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryScope;

    #[test]
    fn each_scope_is_its_ptx_qualifier() {
        assert_eq!(MemoryScope::Block.ptx(), ".cta");
        assert_eq!(MemoryScope::Device.ptx(), ".gpu");
        assert_eq!(MemoryScope::System.ptx(), ".sys");
    }
}
