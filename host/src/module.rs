//! The module room: a device's loaded PTX modules and resolved kernel functions, storage
//! and logic in one place.
//!
//! A module is loaded (JIT-compiled by the driver) once per device and PTX text, looked up
//! by content; a function is resolved once per (PTX, entry name) and cached with the
//! entry's parameter sizes as the PTX declares them, so that every declaration resolved to
//! it can be checked against them ([`kernel`](crate::kernel) does the checking).

use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::cpu::CpuEntry;
use crate::driver::{module::FuncAttribute, DriverError};
use crate::error::{Error, Result};
use crate::handle::{Context, FunctionHandle, Module};
use crate::ptx::{self, EntryParams};

/// What a launch needs of a resolved function: its handle and the limits a launch is
/// checked against. Nameable only in this crate (a `pub` type in a private module, because
/// the sealed launch traits mention it).
#[derive(Clone, Copy, Debug)]
pub struct LaunchTarget {
    pub(crate) name: &'static str,
    pub(crate) func: FunctionHandle,
    pub(crate) max_threads_per_block: u32,
    /// Registers per thread of the compiled function (`CU_FUNC_ATTRIBUTE_NUM_REGS`; 0 on
    /// the CPU backend).
    pub(crate) registers: u32,
    /// The most dynamic shared memory a launch may ask for (the device's opt-in limit less
    /// the static shared memory, once the function allows it).
    pub(crate) dynamic_shared_limit: u32,
    /// Where the kernel is declared (file, first and last line), for fault attribution.
    pub(crate) source: Option<SourceSpan>,
    /// The block size the kernel must be launched with (one that sets register budgets:
    /// its `max_threads`), 0 for any.
    pub(crate) exact_threads: u32,
    /// Every launch must be 1-D (`#[kernel(dims = 1)]`, which the device build assumes).
    pub(crate) one_d: bool,
    /// The block every launch must have (`#[kernel(block = ..)]`, which the device build
    /// assumes); `(0, 0, 0)` for any.
    pub(crate) block: (u32, u32, u32),
    /// The most threads per block the kernel declares (`.maxntid`, `#[kernel(max_threads =
    /// N)]`), 0 for none: tells a limit it set from one its registers set, for the error.
    pub(crate) declared_threads: u32,
}

/// A `#[kernel]`'s source lines: file (as `file!()` names it), first and last line.
pub(crate) type SourceSpan = (&'static str, u32, u32);

/// PTX text: embedded in the program (`'static`), or made at run time and shared (kept
/// alive by the cache for as long as the device's modules are).
#[derive(Clone)]
pub(crate) enum PtxText {
    Static(&'static str),
    Shared(Arc<str>),
}

impl PtxText {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            PtxText::Static(s) => s,
            PtxText::Shared(s) => s,
        }
    }
}

/// A loaded module and its PTX text.
struct Loaded {
    ptx: PtxText,
    module: Module,
}

/// A function of a loaded module, by the address of its PTX text and its name, with the
/// entry's parameter sizes in the PTX. Holds the text, so that its address is never reused
/// by another while the entry is cached.
struct Resolved {
    key: (usize, usize),
    _text: PtxText,
    /// `None`: a CPU entry whose PTX lacks it (a build without the kernel toolchain): the
    /// host declaration is all there is to check.
    params: Option<Box<EntryParams>>,
    target: LaunchTarget,
}

/// A kernel as a declaration names it: its PTX text, its entry name, and its CPU entry.
#[derive(Clone)]
pub(crate) struct EntryPoint {
    pub(crate) ptx: PtxText,
    pub(crate) name: &'static str,
    pub(crate) cpu: Option<CpuEntry>,
    pub(crate) source: Option<SourceSpan>,
}

/// One device's loaded modules and resolved functions.
pub(crate) struct ModuleCache {
    /// This cache's identity, unique in the process (never reused, unlike its address):
    /// what a memory of its functions kept elsewhere is keyed by.
    id: u64,
    modules: Mutex<Vec<Loaded>>,
    functions: Mutex<Vec<Resolved>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ModuleCache {
    pub(crate) fn new() -> ModuleCache {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        ModuleCache { id, modules: Mutex::new(Vec::new()), functions: Mutex::new(Vec::new()) }
    }

    /// This cache's identity: unique in the process, for as long as it runs. A function
    /// this cache resolved stays resolved, its module loaded, while the cache lives; the
    /// cache never forgets one.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The function `name` of `ptx` on this device and the entry's parameter sizes in the
    /// PTX, loading the module on first use.
    ///
    /// # Errors
    /// [`Error::LoadModule`], [`Error::DriverTooOld`] (the PTX needs a newer driver),
    /// [`Error::KernelNotFound`], [`Error::KernelParamsUnreadable`] (the parameters could
    /// not be read, so the declaration cannot be checked and is not launched).
    pub(crate) fn resolve(
        &self,
        ctx: &Arc<Context>,
        driver_version: u32,
        (default_shared, optin_shared): (usize, usize),
        EntryPoint { ptx: text, name, cpu, source }: EntryPoint,
        check: impl FnOnce(&EntryParams) -> Result<()>,
    ) -> Result<LaunchTarget> {
        let ptx = text.as_str();
        let key = (ptx.as_ptr() as usize, ptx.len());
        {
            let functions = lock(&self.functions);
            if let Some(f) = functions.iter().find(|f| f.key == key && f.target.name == name) {
                let checked = f.params.as_deref().map_or(Ok(()), check);
                return checked.map(|()| LaunchTarget { source: source.or(f.target.source), ..f.target });
            }
        }
        if ctx.is_cpu() {
            return self.resolve_cpu(key, EntryPoint { ptx: text.clone(), name, cpu, source }, check);
        }
        let mut modules = lock(&self.modules);
        let module = match modules.iter().position(|m| m.ptx.as_str() == ptx) {
            // By content: the same `const` text may sit at several addresses (one per
            // codegen unit), and must still be loaded (JIT-compiled) once.
            Some(i) => &modules[i].module,
            None => {
                let module = load(ctx, driver_version, ptx, optin_shared)?;
                modules.push(Loaded { ptx: text.clone(), module });
                &modules.last().expect("just pushed").module
            }
        };
        let func = module.function(name).map_err(|e| {
            if e.is_not_found() {
                Error::KernelNotFound { name }
            } else {
                Error::LoadModule(e)
            }
        })?;
        // The driver found the entry; if the text cannot show its parameters, they cannot be
        // checked, and an unchecked declaration is not launched.
        let (params, limits) = ptx::entry_info(ptx, name);
        let params = params.map_err(|e| Error::KernelParamsUnreadable {
            name,
            reason: match e {
                ptx::ParamsError::NoEntry => "no `.entry` of this name in the text, though the driver found one",
                ptx::ParamsError::Unreadable(reason) => reason,
            },
        })?;
        let attr = |a| {
            module
                .attribute(func, a)
                .map(|v| v.max(0) as u32)
                .map_err(|error| Error::Device { call: "cuFuncGetAttribute", error })
        };
        // Loaded with the module (`load`); again here for an entry that failed there (a no-op
        // for a loaded one): never at the first launch, where a lazy load would wait for
        // every running lane (a device-wide synchronization, rule 6).
        module.load_function(func).map_err(|error| Error::Device { call: "cuFuncLoad", error })?;
        // The dynamic shared memory the function allows, raised to the opt-in limit with the
        // module (`load`); the default limit where that failed.
        let static_shared_bytes = attr(FuncAttribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let allowed = attr(FuncAttribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
        let dynamic_shared_limit = allowed.max((default_shared as u32).saturating_sub(static_shared_bytes));
        let target = LaunchTarget {
            name,
            func,
            max_threads_per_block: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            registers: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            dynamic_shared_limit,
            source,
            exact_threads: limits.exact_threads.unwrap_or(0),
            one_d: params.launch.one_d,
            block: params.launch.block.unwrap_or((0, 0, 0)),
            declared_threads: limits.max_threads.unwrap_or(0),
        };
        drop(modules);
        // Cached before the check: the entry is what it is, whichever declaration asked.
        let checked = check(&params);
        lock(&self.functions).push(Resolved { key, _text: text.clone(), params: Some(Box::new(params)), target });
        checked.map(|()| target)
    }

    /// A kernel on the CPU backend: its CPU entry, with the declaration checked against the
    /// PTX as on a GPU (when the PTX holds the entry: a build without the kernel toolchain
    /// embeds no PTX, and then only the host code declares the parameters). Cached as a
    /// GPU's functions are: the PTX is read once per entry.
    fn resolve_cpu(
        &self,
        key: (usize, usize),
        EntryPoint { ptx: text, name, cpu, source }: EntryPoint,
        check: impl FnOnce(&EntryParams) -> Result<()>,
    ) -> Result<LaunchTarget> {
        let ptx = text.as_str();
        let (params, limits) = ptx::entry_info(ptx, name);
        // PTX that lacks the entry: the name is wrong, as a GPU would say.
        if cpu.is_none() && !ptx.is_empty() && matches!(params, Err(ptx::ParamsError::NoEntry)) {
            return Err(Error::KernelNotFound { name });
        }
        let entry = match (cpu, &params) {
            (Some(entry), _) => entry,
            (None, Ok(params)) => return check(params).and(Err(Error::NoCpuEntry { name })),
            (None, Err(_)) => return Err(Error::NoCpuEntry { name }),
        };
        let target = LaunchTarget {
            name,
            func: FunctionHandle::Cpu(entry, name),
            // The kernel's launch bounds, as the driver reports them on a GPU.
            max_threads_per_block: limits.max_threads.map_or(1024, |n| n.min(1024)),
            registers: 0,
            dynamic_shared_limit: 227 << 10,
            source,
            exact_threads: limits.exact_threads.unwrap_or(0),
            // The CPU entry checks it too (a build without PTX has no record to read).
            one_d: matches!(&params, Ok(p) if p.launch.one_d),
            block: params.as_ref().ok().and_then(|p| p.launch.block).unwrap_or((0, 0, 0)),
            declared_threads: limits.max_threads.unwrap_or(0),
        };
        // Without the entry in the PTX, the host declaration is all there is to check. Cached
        // either way: the text is read once per entry, not at every launch.
        let (params, checked) = match params {
            Ok(params) => {
                let checked = check(&params);
                (Some(Box::new(params)), checked)
            }
            Err(_) => (None, Ok(())),
        };
        lock(&self.functions).push(Resolved { key, _text: text.clone(), params, target });
        checked.map(|()| target)
    }
}

/// Loads `ptx` as a module, after checking that the driver understands its `.version`.
fn load(ctx: &Arc<Context>, driver_version: u32, ptx: &str, optin_shared: usize) -> Result<Module> {
    let needed = ptx::needs_driver(ptx);
    if let Some(needed) = needed {
        if driver_version < needed {
            return Err(Error::DriverTooOld { found: driver_version, needed });
        }
    }
    // The driver wants a NUL-terminated image.
    let image = CString::new(ptx).map_err(|_| Error::LoadModule(DriverError::from_code(218)))?;
    let module = Module::load(ctx, &image).map_err(|e| match (e.is_unsupported_ptx_version(), needed) {
        (true, Some(needed)) => Error::DriverTooOld { found: driver_version, needed },
        (true, None) => Error::UnsupportedPtx { version: ptx::version(ptx), driver: driver_version },
        _ => Error::LoadModule(e),
    })?;
    // A failing kernel of this module records itself in the context's fault page.
    module.set_fault_record().map_err(|error| Error::Device { call: "cuMemcpyHtoD (fault record)", error })?;
    // Every entry's code now, with the module (as CUDA_MODULE_LOADING=EAGER would): under
    // CUDA's default lazy loading, a function's code is loaded when it is first used, and
    // that load waits for the work running on every lane — a hidden device-wide
    // synchronization in the middle of a scope (rule 6). Modules load at a kernel's first
    // resolution, typically before the lanes start; what cannot be loaded here is loaded
    // again (and reported) when the function is resolved.
    // Each entry also allows dynamic shared memory up to the device's opt-in limit (above
    // 48 KiB a function must allow it explicitly), set here with the module rather than in
    // the middle of a scope; where it cannot be set, launches stay at the default limit.
    for name in ptx::entries(ptx) {
        let Ok(f) = module.function(&name) else { continue };
        let _ = module.load_function(f);
        if let Ok(fixed) = module.attribute(f, FuncAttribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) {
            let max_dynamic = (optin_shared as i32).saturating_sub(fixed.max(0));
            let _ =
                module.set_attribute(f, FuncAttribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, max_dynamic);
        }
    }
    Ok(module)
}

/// A kernel that can print and trap, never doing either: launched once when a CUDA `Gpu` is
/// made, so that the context's printf and trap machinery is set up then — not at the first
/// launch of a user kernel that can print or panic, where it would wait for every running
/// lane (a hidden device-wide synchronization, [rule 6](crate#safety-model)).
const WARM_UP_PTX: &str = "\
.version 7.0
.target sm_70
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 sluice_warm_up_text[2] = {10, 0};
.visible .entry sluice_warm_up(.param .u32 sluice_warm_up_param_0)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u32 %r1, [sluice_warm_up_param_0];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra $L_done;
    mov.u64 %rd1, sluice_warm_up_text;
    cvta.global.u64 %rd2, %rd1;
    {
    .param .b64 param0;
    st.param.b64 [param0], %rd2;
    .param .b64 param1;
    st.param.b64 [param1], 0;
    .param .b32 retval0;
    call.uni (retval0), vprintf, (param0, param1);
    ld.param.b32 %r2, [retval0];
    }
    trap;
$L_done:
    ret;
}
";

/// Loads and launches the warm-up kernel once on `stream` and waits for it (see
/// [`WARM_UP_PTX`]). Nothing else runs on the context yet.
pub(crate) fn warm_up(ctx: &Arc<Context>, stream: &crate::handle::StreamHandle) -> Result<()> {
    let image = CString::new(WARM_UP_PTX).expect("no NUL in the warm-up PTX");
    let module = Module::load(ctx, &image).map_err(Error::LoadModule)?;
    let f = module.function("sluice_warm_up").map_err(Error::LoadModule)?;
    module.load_function(f).map_err(|error| Error::Device { call: "cuFuncLoad", error })?;
    let mut never = 0u32;
    let mut params = [(&mut never as *mut u32).cast::<std::ffi::c_void>()];
    // SAFETY: `f` belongs to `module`, loaded until after the synchronize below; its one
    // parameter is a u32, `params[0]` points to one; it touches no memory when it is 0.
    unsafe { stream.launch(f, (1, 1, 1), (1, 1, 1), 0, &mut params, &[4]) }
        .map_err(|error| Error::Launch { kernel: "sluice_warm_up", error })?;
    stream.synchronize().map_err(|error| Error::Stream { call: "cuStreamSynchronize", error })
}
