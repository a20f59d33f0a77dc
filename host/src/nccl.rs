//! The NCCL room: the only module that calls NCCL, the library of collectives between GPUs
//! (all-reduce, all-gather, broadcast, reduce-scatter).
//!
//! NCCL is loaded at run time, like the driver: sluice builds and runs everywhere, and a
//! program that never asks for a collective never looks for it. cudarc's own NCCL bindings
//! search only for `libnccl.so` and versioned names that NCCL does not ship
//! (`libnccl.so.12`, ...) and panic on a missing symbol, so this module opens the library
//! itself ([`lib`]), in this order:
//!
//! 1. `SLUICE_NCCL`, if set: that file, and nothing else;
//! 2. `libnccl.so.2`, then `libnccl.so`, through the dynamic loader (`LD_LIBRARY_PATH`,
//!    the executable's run path, `/etc/ld.so.cache`): an installed NCCL;
//! 3. `nvidia/nccl/lib/libnccl.so.2` under every Python `site-packages` folder it can find
//!    (those `python3` reports, and the usual prefixes: `/usr/lib`, `/usr/local/lib`,
//!    `~/.local/lib`, `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `/opt/conda`): where the pip package
//!    `nvidia-nccl-cu12`, which PyTorch depends on, puts it.
//!
//! Every entry point is looked up once, when the library is opened: a library that lacks
//! one is refused with its name ([`LoadError`]), never called.
//!
//! Before opening the library, `NCCL_NVLS_ENABLE=0` is set in the environment unless the
//! program set it: NVLink multicast (NVLS) stays off, as on the machines sluice is tested on
//! (a user who wants it sets `NCCL_NVLS_ENABLE=1` before the first collective).
//!
//! One thin function per call, each turning an `ncclResult_t` into an [`NcclError`]. Raw
//! communicators keep a `Raw` prefix; [`Communicator`](crate::Communicator) owns them.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::driver::{DevicePtr, RawStream};

/// One rank's communicator (`ncclComm_t`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct RawComm(*mut c_void);

// SAFETY: an `ncclComm_t` is an opaque handle; NCCL's calls on one communicator may come from
// any thread (sluice makes them from one thread at a time: the scope's). Which thread holds
// the handle does not matter.
unsafe impl Send for RawComm {}
// SAFETY: as for `Send`: a shared handle only allows NCCL calls.
unsafe impl Sync for RawComm {}

/// A failed NCCL call: the call, NCCL's `ncclResult_t` and its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NcclError {
    pub(crate) call: &'static str,
    pub(crate) code: u32,
    pub(crate) message: String,
}

/// Why NCCL could not be opened: every place tried, and why the last one was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadError {
    pub(crate) searched: Vec<String>,
    pub(crate) reason: String,
}

/// NCCL's element types (`ncclDataType_t`).
pub(crate) mod dtype {
    pub(crate) const INT8: i32 = 0;
    pub(crate) const UINT8: i32 = 1;
    pub(crate) const INT32: i32 = 2;
    pub(crate) const UINT32: i32 = 3;
    pub(crate) const INT64: i32 = 4;
    pub(crate) const UINT64: i32 = 5;
    pub(crate) const FLOAT32: i32 = 7;
    pub(crate) const FLOAT64: i32 = 8;
}

/// NCCL's reductions (`ncclRedOp_t`).
pub(crate) mod op {
    pub(crate) const SUM: i32 = 0;
    pub(crate) const PROD: i32 = 1;
    pub(crate) const MAX: i32 = 2;
    pub(crate) const MIN: i32 = 3;
}

type Res = c_int;
type Stream = *mut c_void;
type Comm = *mut c_void;

/// The opened library and the entry points sluice calls, looked up once.
pub(crate) struct Lib {
    /// Where it was opened from.
    path: String,
    get_version: unsafe extern "C" fn(*mut c_int) -> Res,
    get_error_string: unsafe extern "C" fn(Res) -> *const c_char,
    comm_init_all: unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> Res,
    comm_destroy: unsafe extern "C" fn(Comm) -> Res,
    group_start: unsafe extern "C" fn() -> Res,
    group_end: unsafe extern "C" fn() -> Res,
    all_reduce: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, Stream) -> Res,
    broadcast: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, Stream) -> Res,
    all_gather: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, Stream) -> Res,
    reduce_scatter: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, Stream) -> Res,
    /// Keeps the library mapped for the process's life: the function pointers above point
    /// into it.
    _lib: libloading::Library,
}

/// Looks up `name` in `lib` as a function pointer of type `F`.
///
/// # Safety
/// - `F` is the C signature NCCL declares for `name`.
unsafe fn symbol<F: Copy>(lib: &libloading::Library, name: &str) -> Result<F, String> {
    // SAFETY: the caller's duty: `F` is the symbol's real type; the pointer is copied out and
    // used only while `lib` stays loaded (it is kept in `Lib` for the process's life).
    match unsafe { lib.get::<F>(name.as_bytes()) } {
        Ok(f) => Ok(*f),
        Err(_) => Err(format!("it lacks `{name}` (NCCL 2.7 or newer is needed)")),
    }
}

impl Lib {
    /// Opens `path` (a file name for the dynamic loader, or a full path) and looks up every
    /// entry point.
    fn open(path: &str) -> Result<Lib, String> {
        // SAFETY: opening a shared library runs its initialisers; NCCL's only set up its own
        // state (the CUDA runtime it carries is initialised lazily, at the first call).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        // SAFETY: each type below is the signature `nccl.h` declares for the name (enums are
        // C `int`s, `ncclComm_t` and `cudaStream_t` opaque pointers).
        unsafe {
            Ok(Lib {
                path: path.to_string(),
                get_version: symbol(&lib, "ncclGetVersion")?,
                get_error_string: symbol(&lib, "ncclGetErrorString")?,
                comm_init_all: symbol(&lib, "ncclCommInitAll")?,
                comm_destroy: symbol(&lib, "ncclCommDestroy")?,
                group_start: symbol(&lib, "ncclGroupStart")?,
                group_end: symbol(&lib, "ncclGroupEnd")?,
                all_reduce: symbol(&lib, "ncclAllReduce")?,
                broadcast: symbol(&lib, "ncclBroadcast")?,
                all_gather: symbol(&lib, "ncclAllGather")?,
                reduce_scatter: symbol(&lib, "ncclReduceScatter")?,
                _lib: lib,
            })
        }
    }

    /// Where the library was opened from.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    fn check(&self, call: &'static str, r: Res) -> Result<(), NcclError> {
        if r == 0 {
            return Ok(());
        }
        // SAFETY: `ncclGetErrorString` takes any code and returns a static NUL-terminated
        // string (or null, checked).
        let p = unsafe { (self.get_error_string)(r) };
        let message = if p.is_null() {
            "no description".to_string()
        } else {
            // SAFETY: non-null, NUL-terminated, static storage owned by NCCL.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        Err(NcclError { call, code: r as u32, message })
    }

    /// NCCL's version: `major * 10000 + minor * 100 + patch` (22105 for 2.21.5).
    pub(crate) fn version(&self) -> Result<u32, NcclError> {
        let mut v = 0 as c_int;
        // SAFETY: valid out-pointer.
        self.check("ncclGetVersion", unsafe { (self.get_version)(&mut v) })?;
        Ok(v.max(0) as u32)
    }

    /// One communicator per device of `devices` (CUDA ordinals, each once), rank `i` on
    /// `devices[i]`, all in this process (`ncclCommInitAll`). Slow (NCCL connects every pair
    /// and allocates its buffers on each device): made once, used by many collectives.
    pub(crate) fn init_all(&self, devices: &[i32]) -> Result<Vec<RawComm>, NcclError> {
        let n = c_int::try_from(devices.len()).map_err(|_| NcclError {
            call: "ncclCommInitAll",
            code: 4,
            message: "too many devices".into(),
        })?;
        let mut comms: Vec<Comm> = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `comms` has room for `n` handles, `devices` holds `n` ordinals; both outlive
        // the call.
        self.check("ncclCommInitAll", unsafe { (self.comm_init_all)(comms.as_mut_ptr(), n, devices.as_ptr()) })?;
        Ok(comms.into_iter().map(RawComm).collect())
    }

    /// Destroys a communicator, after the work enqueued with it has completed.
    ///
    /// # Safety
    /// - `comm` came from [`init_all`](Lib::init_all), is destroyed once and used no more.
    pub(crate) unsafe fn destroy(&self, comm: RawComm) -> Result<(), NcclError> {
        // SAFETY: the caller's duty.
        self.check("ncclCommDestroy", unsafe { (self.comm_destroy)(comm.0) })
    }

    /// Starts a group: the collectives called until [`group_end`](Lib::group_end) are
    /// enqueued together, which is how one thread drives several devices' ranks.
    pub(crate) fn group_start(&self) -> Result<(), NcclError> {
        // SAFETY: no arguments; groups nest.
        self.check("ncclGroupStart", unsafe { (self.group_start)() })
    }

    /// Ends a group: every collective called since [`group_start`](Lib::group_start) is
    /// enqueued on its stream now.
    pub(crate) fn group_end(&self) -> Result<(), NcclError> {
        // SAFETY: no arguments; called after a `group_start`.
        self.check("ncclGroupEnd", unsafe { (self.group_end)() })
    }

    /// `ncclAllReduce`: `count` elements of `dtype` from `send` into `recv`, reduced with
    /// `op` over every rank (`send == recv`: in place).
    ///
    /// # Safety
    /// - `comm` is alive; `stream` is alive in the context of `comm`'s device.
    /// - `send` and `recv` are that device's memory, valid for `count` elements until the
    ///   stream has passed the operation; nothing else writes `recv` or `send` meanwhile.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn all_reduce(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: i32,
        op: i32,
        comm: RawComm,
        stream: RawStream,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's duty.
        let r = unsafe { (self.all_reduce)(send as _, recv as _, count, dtype, op, comm.0, stream.0.cast()) };
        self.check("ncclAllReduce", r)
    }

    /// `ncclBroadcast`: `count` elements from `send` on rank `root` into `recv` on every rank
    /// (`send` is read on the root only).
    ///
    /// # Safety
    /// As [`all_reduce`](Lib::all_reduce).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn broadcast(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: i32,
        root: i32,
        comm: RawComm,
        stream: RawStream,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's duty.
        let r = unsafe { (self.broadcast)(send as _, recv as _, count, dtype, root, comm.0, stream.0.cast()) };
        self.check("ncclBroadcast", r)
    }

    /// `ncclAllGather`: `count` elements of `send` from every rank, in rank order, into
    /// `recv` (`count * ranks` elements) on every rank.
    ///
    /// # Safety
    /// As [`all_reduce`](Lib::all_reduce), with `recv` valid for `count * ranks` elements.
    pub(crate) unsafe fn all_gather(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: i32,
        comm: RawComm,
        stream: RawStream,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's duty.
        let r = unsafe { (self.all_gather)(send as _, recv as _, count, dtype, comm.0, stream.0.cast()) };
        self.check("ncclAllGather", r)
    }

    /// `ncclReduceScatter`: `send` (`count * ranks` elements) reduced with `op` over every
    /// rank; rank `r` receives block `r` (`count` elements) in `recv`.
    ///
    /// # Safety
    /// As [`all_reduce`](Lib::all_reduce), with `send` valid for `count * ranks` elements.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn reduce_scatter(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: i32,
        op: i32,
        comm: RawComm,
        stream: RawStream,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's duty.
        let r = unsafe { (self.reduce_scatter)(send as _, recv as _, count, dtype, op, comm.0, stream.0.cast()) };
        self.check("ncclReduceScatter", r)
    }
}

/// The library, opened at the first call (see the module docs for where it looks); the
/// same answer afterwards.
pub(crate) fn lib() -> Result<&'static Lib, LoadError> {
    static LIB: OnceLock<Result<Lib, LoadError>> = OnceLock::new();
    LIB.get_or_init(|| {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // NVLink multicast stays off unless the program asks for it. NCCL reads its
            // environment when the first communicator is made, after this. (Setting the
            // environment races with other threads reading it through libc; this runs once,
            // before NCCL exists, from the thread that asks for the first collective.)
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let mut searched = Vec::new();
        let mut reason = "not found".to_string();
        for candidate in candidates() {
            match Lib::open(&candidate) {
                Ok(lib) => return Ok(lib),
                Err(why) => {
                    // "cannot open shared object file" is the expected miss; keep the reason
                    // of a library that was there but refused.
                    if !why.contains("No such file") && !why.contains("cannot open shared object") {
                        reason = format!("{candidate}: {why}");
                    }
                    searched.push(candidate);
                }
            }
        }
        Err(LoadError { searched, reason })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Where to look for NCCL, in order (see the module docs).
pub(crate) fn candidates() -> Vec<String> {
    candidates_with(std::env::var_os("SLUICE_NCCL"))
}

/// [`candidates`], with `SLUICE_NCCL` given.
fn candidates_with(explicit: Option<std::ffi::OsString>) -> Vec<String> {
    if let Some(explicit) = explicit.filter(|v| !v.is_empty()) {
        return vec![explicit.to_string_lossy().into_owned()];
    }
    let mut out = vec!["libnccl.so.2".to_string(), "libnccl.so".to_string()];
    for dir in site_packages() {
        let p = dir.join("nvidia/nccl/lib/libnccl.so.2");
        let s = p.to_string_lossy().into_owned();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Python `site-packages` (and `dist-packages`) folders that exist on this machine: those
/// `python3` reports (asked once, for at most 10 s), then the usual prefixes.
fn site_packages() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = python_paths().into_iter().map(PathBuf::from).collect();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut prefixes: Vec<PathBuf> = vec!["/usr/lib".into(), "/usr/local/lib".into(), "/opt/conda/lib".into()];
    if let Some(h) = &home {
        prefixes.push(h.join(".local/lib"));
    }
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            prefixes.push(Path::new(&v).join("lib"));
        }
    }
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(&prefix) else { continue };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python3")))
            .collect();
        pythons.sort();
        for py in pythons {
            dirs.push(py.join("site-packages"));
            dirs.push(py.join("dist-packages"));
        }
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        d.is_dir() && !seen.contains(d) && {
            seen.push(d.clone());
            true
        }
    });
    dirs
}

/// The folders `python3` imports from (`site.getsitepackages()`, the user site, `sys.path`);
/// none if there is no `python3` or it does not answer within 10 s.
fn python_paths() -> Vec<String> {
    let script = "import site, sys\n\
                  p = []\n\
                  try: p += site.getsitepackages()\n\
                  except Exception: pass\n\
                  try: p.append(site.getusersitepackages())\n\
                  except Exception: pass\n\
                  print('\\n'.join(p + sys.path))";
    let child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return Vec::new() };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Vec::new();
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        use std::io::Read;
        let _ = stdout.read_to_string(&mut out);
    }
    out.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_path_is_the_only_candidate() {
        assert_eq!(candidates_with(Some("/nowhere/libnccl.so.2".into())), ["/nowhere/libnccl.so.2"]);
    }

    #[test]
    fn the_dynamic_loader_comes_first_then_site_packages() {
        let c = candidates_with(None);
        assert_eq!(&c[..2], ["libnccl.so.2", "libnccl.so"]);
        assert!(c[2..].iter().all(|p| p.ends_with("nvidia/nccl/lib/libnccl.so.2")), "{c:?}");
    }

    #[test]
    fn a_missing_library_is_an_error_naming_where_it_looked() {
        if let Err(e) = lib() {
            assert!(e.searched.iter().any(|s| s == "libnccl.so.2"), "{e:?}");
        }
    }
}
