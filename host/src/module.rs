//! The module room: a device's loaded PTX modules and resolved kernel functions, storage
//! and logic in one place.
//!
//! A module is loaded (JIT-compiled by the driver) once per device and PTX text, looked up
//! by content; a function is resolved once per (PTX, entry name) and cached with the
//! entry's parameter sizes as the PTX declares them, so that every declaration resolved to
//! it can be checked against them ([`kernel`](crate::kernel) does the checking).

use std::ffi::CString;
use std::sync::{Arc, Mutex};

use crate::driver::{module::FuncAttribute, DriverError};
use crate::error::{Error, Result};
use crate::cpu::CpuEntry;
use crate::handle::{Context, FunctionHandle, Module};
use crate::ptx;

/// What a launch needs of a resolved function: its handle and the limits a launch is
/// checked against. Nameable only in this crate (a `pub` type in a private module, because
/// the sealed launch traits mention it).
#[derive(Clone, Copy, Debug)]
pub struct LaunchTarget {
    pub(crate) name: &'static str,
    pub(crate) func: FunctionHandle,
    pub(crate) max_threads_per_block: u32,
    pub(crate) static_shared_bytes: u32,
}

/// A loaded module and its `'static` PTX text.
struct Loaded {
    ptx: &'static str,
    module: Module,
}

/// A function of a loaded module, by the address of its PTX text and its name, with the
/// entry's parameter sizes in the PTX.
struct Resolved {
    key: (usize, usize),
    params: Box<[usize]>,
    target: LaunchTarget,
}

/// One device's loaded modules and resolved functions.
pub(crate) struct ModuleCache {
    modules: Mutex<Vec<Loaded>>,
    functions: Mutex<Vec<Resolved>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ModuleCache {
    pub(crate) fn new() -> ModuleCache {
        ModuleCache { modules: Mutex::new(Vec::new()), functions: Mutex::new(Vec::new()) }
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
        ptx: &'static str,
        name: &'static str,
        cpu: Option<CpuEntry>,
        check: impl FnOnce(&[usize]) -> Result<()>,
    ) -> Result<LaunchTarget> {
        if ctx.is_cpu() {
            return resolve_cpu(ptx, name, cpu, check);
        }
        let key = (ptx.as_ptr() as usize, ptx.len());
        {
            let functions = lock(&self.functions);
            if let Some(f) = functions.iter().find(|f| f.key == key && f.target.name == name) {
                return check(&f.params).map(|()| f.target);
            }
        }
        let mut modules = lock(&self.modules);
        let module = match modules.iter().position(|m| m.ptx == ptx) {
            // By content: the same `const` text may sit at several addresses (one per
            // codegen unit), and must still be loaded (JIT-compiled) once.
            Some(i) => &modules[i].module,
            None => {
                let module = load(ctx, driver_version, ptx)?;
                modules.push(Loaded { ptx, module });
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
        let params = ptx::param_sizes(ptx, name).map_err(|e| Error::KernelParamsUnreadable {
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
        let target = LaunchTarget {
            name,
            func,
            max_threads_per_block: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(FuncAttribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        };
        drop(modules);
        // Cached before the check: the entry is what it is, whichever declaration asked.
        let checked = check(&params);
        lock(&self.functions).push(Resolved { key, params: params.into(), target });
        checked.map(|()| target)
    }
}

/// A kernel on the CPU backend: its CPU entry, with the declaration checked against the PTX
/// as on a GPU (when the PTX holds the entry: a build without the kernel toolchain embeds no
/// PTX, and then only the host code declares the parameters).
fn resolve_cpu(
    ptx: &'static str,
    name: &'static str,
    cpu: Option<CpuEntry>,
    check: impl FnOnce(&[usize]) -> Result<()>,
) -> Result<LaunchTarget> {
    let entry = cpu.ok_or(Error::NoCpuEntry { name })?;
    if let Ok(params) = ptx::param_sizes(ptx, name) {
        check(&params)?;
    }
    Ok(LaunchTarget { name, func: FunctionHandle::Cpu(entry, name), max_threads_per_block: 1024, static_shared_bytes: 0 })
}

/// Loads `ptx` as a module, after checking that the driver understands its `.version`.
fn load(ctx: &Arc<Context>, driver_version: u32, ptx: &'static str) -> Result<Module> {
    let needed = ptx::needs_driver(ptx);
    if let Some(needed) = needed {
        if driver_version < needed {
            return Err(Error::DriverTooOld { found: driver_version, needed });
        }
    }
    // The driver wants a NUL-terminated image.
    let image = CString::new(ptx).map_err(|_| Error::LoadModule(DriverError::from_code(218)))?;
    Module::load(ctx, &image).map_err(|e| {
        if e.is_unsupported_ptx_version() {
            Error::DriverTooOld { found: driver_version, needed: needed.unwrap_or(0) }
        } else {
            Error::LoadModule(e)
        }
    })
}
