//! The range-check pass: bounds checks in a loop become one test before it.
//!
//! A safe kernel indexes slices, and each index is a compare and a branch to a trap. In a
//! loop that walks a slice with a stride (`b[i * n + col]` down a column of a row-major
//! matrix) LLVM removes none of them: its own pass for this (IRCE) wants a constant stride
//! and a `<` exit test, and `for i in 0..k` ends in `==`. The checks then cost as much as
//! the loop's work — Rust-CUDA's naive gemm, ported as is, ran at 1.94-1.98× nvcc's time
//! on the H200, and at 0.98-0.99× once its checks were hoisted.
//!
//! `range_checks.cpp` is an LLVM pass plugin that versions such loops: for every check
//! `X < len` whose failure traps, where `X` is an affine function of the iteration
//! (`start + step * j`, any loop-invariant step) and `len` is loop-invariant, it computes
//! before the loop whether the last iteration's `X` is in bounds without wrapping — then
//! every iteration's is (for a loop walking down: the first's, and the last does not go
//! below zero) — and runs a copy of the loop without the checks when all of them hold, the
//! checked loop (not unrolled) otherwise. A kernel given a slice too short for its loop
//! still traps, at the same check.
//!
//! The plugin is built once per LLVM version (the builder's [`install`], with the C++
//! compiler and LLVM's C++ headers: `apt-get install llvm-22-dev g++` on the Debian route,
//! which `setup` installs) and `opt` loads it. Where it cannot be built (rustup's
//! `llvm-tools` carries no headers) kernels build and run the same without it, slower in
//! such loops, and the build says so once per kernel build.
//!
//! ```no_run
//! use sluice_builder::{range_checks, toolchain::{Locations, Toolchain}};
//! let tc = Toolchain::discover(&Locations::default())?;
//! match range_checks::install(&tc, std::path::Path::new("target/sluice-llbc")) {
//!     Ok(plugin) => println!("opt -load-pass-plugin={}", plugin.display()),
//!     Err(why) => println!("{why}"),
//! }
//! # Ok::<(), sluice_builder::BuildError>(())
//! ```

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::pins;
use crate::toolchain::{self, Toolchain};

/// The pass's C++ source, compiled on first use.
const SOURCE: &str = include_str!("range_checks.cpp");

/// The pass's name in an `opt` pipeline (a function pass).
pub const PASS: &str = "sluice-range-checks";

/// Why the pass cannot be used with a toolchain, and what makes it available.
///
/// ```
/// let why = sluice_builder::range_checks::Unavailable { problem: "no headers".into(), fix: "install them".into() };
/// assert!(why.to_string().contains("no headers"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// What is missing or failed.
    pub problem: String,
    /// The command or step that makes the pass available.
    pub fix: String,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bounds checks in loops stay inside them (sluice's range-check pass is unavailable: {}); kernels \
             run correctly, but a loop that indexes a slice by a stride runs slower. fix: {}",
            self.problem, self.fix
        )
    }
}

/// The fix on the Debian route: LLVM's C++ headers of the pinned version and a C++ compiler.
fn debian_fix() -> String {
    format!(
        "`apt-get install llvm-{m}-dev={v} g++` (Debian route; `{setup}` installs them as root)",
        m = pins::llvm_major(),
        v = pins::DEBIAN_LLVM,
        setup = toolchain::Frontend::detect().command("setup"),
    )
}

/// Builds the pass plugin for `tc`'s `opt` into `dir` (once: later calls find it there, and
/// a failed build is remembered beside it so that it is not retried on every kernel build)
/// and returns its path, checked by loading it into that `opt`.
///
/// # Errors
/// [`Unavailable`] when `tc`'s LLVM has no `llvm-config` or C++ headers, no C++ compiler
/// is found (`CXX`, `c++`, `g++`, `clang++`), the plugin does not compile, or `opt` does
/// not load it.
///
/// ```no_run
/// use sluice_builder::{range_checks, toolchain::{Locations, Toolchain}};
/// let tc = Toolchain::discover(&Locations::default())?;
/// let plugin = range_checks::install(&tc, std::path::Path::new("/tmp/sluice-plugins"));
/// println!("{plugin:?}");
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
pub fn install(tc: &Toolchain, dir: &Path) -> Result<PathBuf, Unavailable> {
    install_with(tc, dir, prerequisites(&tc.llvm_bin)?)
}

/// [`install`] with what the build needs already found.
fn install_with(tc: &Toolchain, dir: &Path, needs: Prerequisites) -> Result<PathBuf, Unavailable> {
    let plugin = plugin_path(dir, &needs);
    let failed = plugin.with_extension("failed");
    if plugin.is_file() {
        return Ok(plugin);
    }
    // One build at a time in this process: kernel builds on several threads (a test binary's
    // tests) would otherwise each run the C++ compiler at once, and on a small machine one
    // of them may be killed for memory. Builds in several processes each publish a whole
    // file (`build` renames it into place).
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if plugin.is_file() {
        return Ok(plugin);
    }
    // The headers and the compiler are there: what fails from here on is the compiler's or
    // opt's doing, not a missing package.
    let fix = format!(
        "make `{} {} -shared` build a plugin (or point CXX at a C++ compiler that does), then delete {}",
        needs.cxx.display(),
        needs.cxxflags,
        failed.display()
    );
    if let Ok(problem) = std::fs::read_to_string(&failed) {
        let problem = format!("{problem} (an earlier build's failure, remembered)");
        return Err(Unavailable { problem, fix });
    }
    let result = build(tc, dir, &plugin, &needs);
    if let Err(Failure { problem, lasting }) = &result {
        // A failure that may pass next time (a compiler killed for memory) is tried again by
        // the next few builds, then remembered as the others are.
        let tries = plugin.with_extension("tries");
        let tried = std::fs::read_to_string(&tries).ok().and_then(|t| t.trim().parse::<u32>().ok()).unwrap_or(0) + 1;
        let _ = std::fs::create_dir_all(dir);
        if *lasting || tried >= TRIES {
            let _ = std::fs::write(&failed, problem);
            let _ = std::fs::remove_file(&tries);
        } else {
            let _ = std::fs::write(&tries, tried.to_string());
        }
    }
    result.map_err(|Failure { problem, .. }| Unavailable { problem, fix })
}

/// Builds a failure that may pass next time gets before it is remembered.
const TRIES: u32 = 3;

/// Why a build of the plugin failed, and whether the next kernel build should try again.
struct Failure {
    problem: String,
    /// The compiler or `opt` said no (remembered beside the plugin); not when the compiler
    /// was killed (for memory, say) or a file could not be written, which another try may
    /// get past.
    lasting: bool,
}

impl From<String> for Failure {
    fn from(problem: String) -> Self {
        Failure { problem, lasting: false }
    }
}

/// Where [`install`] puts the plugin built with `needs` in `dir`: named by a hash of the
/// pass's source, the LLVM version, the flags and the compiler (another `CXX` is another
/// attempt: a failure is remembered per name).
fn plugin_path(dir: &Path, needs: &Prerequisites) -> PathBuf {
    let key = format!("{SOURCE}\n{}\n{}\n{}", needs.llvm_version, needs.cxxflags, needs.cxx.display());
    let hash = toolchain::fnv1a(key.as_bytes());
    dir.join(format!("sluice-range-checks-{hash:016x}.so"))
}

/// What a build script watches so that it runs again once the pass can be used where
/// [`install`] said it cannot: the folder of `tc`'s `opt`; where the headers or the compiler
/// are missing, dpkg's list of installed packages (on Debian and Ubuntu: `apt-get install`
/// changes it); the file that remembers a failed build in `dir` (the fix says to delete it),
/// if there is one; and where a build failed without being remembered yet (its compiler was
/// killed: tried again a few times), the plugin that is not there yet — a path that does not
/// exist runs the build script every time, until the plugin builds or the failure is
/// remembered.
///
/// ```no_run
/// use sluice_builder::{range_checks, toolchain::{Locations, Toolchain}};
/// let tc = Toolchain::discover(&Locations::default())?;
/// for path in range_checks::watch_when_unavailable(&tc, "target/sluice-llbc".as_ref()) {
///     println!("cargo:rerun-if-changed={}", path.display());
/// }
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
pub fn watch_when_unavailable(tc: &Toolchain, dir: &Path) -> Vec<PathBuf> {
    let mut watch = vec![tc.llvm_bin.clone()];
    match prerequisites(&tc.llvm_bin) {
        Ok(needs) => {
            let plugin = plugin_path(dir, &needs);
            let failed = plugin.with_extension("failed");
            watch.push(if failed.is_file() { failed } else { plugin });
        }
        // The headers or the compiler are missing: what installs them (`apt-get install
        // llvm-N-dev g++` changes dpkg's list, not `opt`'s folder).
        Err(_) => watch.extend([PathBuf::from(DPKG_STATUS)].into_iter().filter(|p| p.is_file())),
    }
    watch
}

/// The failure of the pass's build that kernel builds in `dir` remember for `tc` and the C++
/// compiler found now (`CXX`, else the first that runs), if there is one: the file that
/// holds it (deleting it makes the next build try again) and what it says. `cargo sluice
/// doctor` shows it for the project's target folder.
///
/// ```no_run
/// use sluice_builder::{range_checks, toolchain::{Locations, Toolchain}};
/// let tc = Toolchain::discover(&Locations::default())?;
/// if let Some((file, why)) = range_checks::remembered_failure(&tc, "target/sluice-kernels/sluice-llbc".as_ref()) {
///     println!("{why} (delete {} to try again)", file.display());
/// }
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
pub fn remembered_failure(tc: &Toolchain, dir: &Path) -> Option<(PathBuf, String)> {
    let needs = prerequisites(&tc.llvm_bin).ok()?;
    let failed = plugin_path(dir, &needs).with_extension("failed");
    let text = std::fs::read_to_string(&failed).ok()?;
    Some((failed, text))
}

/// The list of installed packages on Debian and Ubuntu.
const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// What building the pass needs beside `opt`, as found.
///
/// ```no_run
/// let needs = sluice_builder::range_checks::prerequisites("/usr/lib/llvm-22/bin".as_ref())?;
/// println!("LLVM {} headers in {}, {}", needs.llvm_version, needs.include_dir.display(), needs.cxx.display());
/// # Ok::<(), sluice_builder::range_checks::Unavailable>(())
/// ```
#[derive(Debug, Clone)]
pub struct Prerequisites {
    /// `llvm-config --version` of the LLVM beside `opt`.
    pub llvm_version: String,
    /// Its C++ headers (`llvm-config --includedir`).
    pub include_dir: PathBuf,
    /// The flags a plugin is compiled with (`llvm-config --cxxflags`).
    pub cxxflags: String,
    /// The C++ compiler: `CXX`, else the first of `c++`, `g++`, `clang++` that runs.
    pub cxx: PathBuf,
}

/// Finds what building the pass for the `opt` in `llvm_bin` needs: `llvm-config` beside it,
/// LLVM's C++ headers, a C++ compiler.
///
/// # Errors
/// [`Unavailable`], naming the missing piece and the command that installs it.
///
/// ```no_run
/// match sluice_builder::range_checks::prerequisites("/usr/lib/llvm-22/bin".as_ref()) {
///     Ok(needs) => println!("{}", needs.include_dir.display()),
///     Err(why) => eprintln!("{why}"),
/// }
/// ```
pub fn prerequisites(llvm_bin: &Path) -> Result<Prerequisites, Unavailable> {
    let unavailable = |problem: String| Unavailable { problem, fix: debian_fix() };
    let config = llvm_bin.join("llvm-config");
    if !config.is_file() {
        return Err(unavailable(format!(
            "{} has no llvm-config, and so no LLVM C++ headers to build the pass with (rustup's llvm-tools \
             carries neither)",
            llvm_bin.display()
        )));
    }
    let ask = |what: &str| -> Result<String, Unavailable> {
        let out = Command::new(&config)
            .arg(what)
            .output()
            .map_err(|e| unavailable(format!("could not run {}: {e}", config.display())))?;
        if !out.status.success() {
            return Err(unavailable(format!("`{} {what}` failed", config.display())));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let llvm_version = ask("--version")?;
    let include_dir = PathBuf::from(ask("--includedir")?);
    let cxxflags = ask("--cxxflags")?;
    let header = ["llvm/Plugins/PassPlugin.h", "llvm/Passes/PassPlugin.h"].map(|h| include_dir.join(h));
    if !header.iter().any(|h| h.is_file()) {
        return Err(unavailable(format!(
            "LLVM {llvm_version}'s C++ headers are not installed (no {})",
            header[0].display()
        )));
    }
    let cxx = std::env::var_os("CXX")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .or_else(|| ["c++", "g++", "clang++"].iter().find(|c| runs(c)).map(PathBuf::from))
        .ok_or_else(|| unavailable("no C++ compiler found (CXX, c++, g++, clang++)".into()))?;
    Ok(Prerequisites { llvm_version, include_dir, cxxflags, cxx })
}

/// Compiles the plugin in a scratch file beside `plugin`, loads it into `opt` once, and
/// renames it into place (two builds at once each publish a whole file).
fn build(tc: &Toolchain, dir: &Path, plugin: &Path, needs: &Prerequisites) -> Result<PathBuf, Failure> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let cxx = &needs.cxx;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch = plugin.with_extension(format!("{}-{n}", std::process::id()));
    let source = scratch.with_extension("cpp");
    let object = scratch.with_extension("so");
    std::fs::write(&source, SOURCE).map_err(|e| format!("writing {}: {e}", source.display()))?;
    let out = Command::new(cxx)
        .args(needs.cxxflags.split_whitespace())
        .args(["-fno-rtti", "-fPIC", "-shared", "-O2", "-o"])
        .arg(&object)
        .arg(&source)
        .output();
    let _ = std::fs::remove_file(&source);
    // A compiler that does not start (`CXX="ccache g++"`, a path that is not there) will not
    // start next time either: remembered (another `CXX` is another attempt).
    let out = out.map_err(|e| Failure { problem: format!("could not start {}: {e}", cxx.display()), lasting: true })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&object);
        let log = String::from_utf8_lossy(&out.stderr);
        let first = log.lines().find(|l| l.contains("error")).or_else(|| log.lines().find(|l| !l.trim().is_empty()));
        let problem = format!(
            "{} could not compile the pass ({}{})",
            cxx.display(),
            out.status,
            first.map(|l| format!(": {}", l.trim())).unwrap_or_default()
        );
        // A signal ended it, or the compiler it drives (g++ exits 1 then, saying "Killed
        // signal terminated program cc1plus"): the kernel's OOM killer, a ^C.
        let killed = out.status.code().is_none() || log.contains("signal terminated program");
        return Err(Failure { problem, lasting: !killed });
    }
    if let Err(problem) = loads(tc, &object) {
        let _ = std::fs::remove_file(&object);
        return Err(Failure { problem, lasting: true });
    }
    std::fs::rename(&object, plugin).map_err(|e| format!("renaming {} into place: {e}", object.display()))?;
    Ok(plugin.to_path_buf())
}

/// Whether `tc`'s `opt` loads `plugin` and runs its pass (on an empty function).
fn loads(tc: &Toolchain, plugin: &Path) -> Result<(), String> {
    let out = opt_with(tc, plugin, &format!("function({PASS})"), "define void @f() {\n  ret void\n}\n")?;
    if out.status.success() {
        return Ok(());
    }
    let log = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "{} did not load the pass: {}",
        tc.llvm_bin.join("opt").display(),
        log.lines().next().unwrap_or("no message")
    ))
}

/// Runs `tc`'s `opt` with `plugin` loaded and `passes` over the textual module `ir`; its
/// stdout is the result as text.
fn opt_with(tc: &Toolchain, plugin: &Path, passes: &str, ir: &str) -> Result<std::process::Output, String> {
    let opt = tc.llvm_bin.join("opt");
    let mut child = Command::new(&opt)
        .arg(format!("-load-pass-plugin={}", plugin.display()))
        .arg(format!("--passes={passes}"))
        .arg("-S")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", opt.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A failed write shows as opt's own error.
        let _ = stdin.write_all(ir.as_bytes());
    }
    child.wait_with_output().map_err(|e| format!("waiting for {}: {e}", opt.display()))
}

fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel toolchain (`cargo xtask setup`; CI runs it).
    fn toolchain() -> Toolchain {
        Toolchain::discover(&toolchain::Locations::default())
            .unwrap_or_else(|e| panic!("this test needs the kernel toolchain: {e}"))
    }

    /// A fresh scratch folder of this test process.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sluice-range-checks-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// An executable shell script `name` in `dir` running `body`: a stand-in C++ compiler.
    ///
    /// Run once here until it starts: a test thread that forks while this one holds the file
    /// open for writing leaves the file open in its child until the child's `exec`, and
    /// running it meanwhile fails with "Text file busy" (`ETXTBSY`). Every `body` of these
    /// tests may run more than once.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        for _ in 0..500 {
            let run = std::process::Command::new(&path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
            match run {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => break,
            }
        }
        path
    }

    #[test]
    fn the_message_says_what_is_lost_and_how_to_get_it() {
        let why = Unavailable { problem: "no headers".into(), fix: debian_fix() };
        let text = why.to_string();
        assert!(text.contains("no headers") && text.contains("run correctly"), "{text}");
        assert!(text.contains(&format!("llvm-{}-dev={}", pins::llvm_major(), pins::DEBIAN_LLVM)), "{text}");
    }

    /// A compiler that says no is remembered (the next kernel build does not try again); one
    /// killed by a signal, or whose own compiler was (the OOM killer, on a small machine
    /// building kernels on several threads), is not.
    #[test]
    fn only_a_compilers_refusal_is_remembered() {
        let (tc, dir) = (toolchain(), scratch("signal"));
        for (body, lasting) in [
            ("echo 'error: no' >&2; exit 1", true),
            ("kill -9 $$", false),
            // What g++ prints when its cc1plus is killed for memory.
            ("echo 'g++: fatal error: Killed signal terminated program cc1plus' >&2; exit 1", false),
        ] {
            let cxx = script(&dir, &format!("cxx-{lasting}"), body);
            let needs =
                Prerequisites { llvm_version: "0".into(), include_dir: dir.clone(), cxxflags: String::new(), cxx };
            let Err(failure) = build(&tc, &dir, &dir.join(format!("plugin-{lasting}.so")), &needs) else {
                panic!("{body}: built a plugin")
            };
            assert_eq!(failure.lasting, lasting, "{body}: {}", failure.problem);
            assert!(failure.problem.contains("could not compile the pass"), "{}", failure.problem);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A build script without the pass watches `opt`'s folder and the plugin it lacks (a
    /// path not there runs it again every time: a killed compiler is retried), or the
    /// remembered failure (deleting it, as the fix says, runs it again).
    #[test]
    fn a_build_without_the_pass_watches_what_would_bring_it() {
        let (tc, dir) = (toolchain(), scratch("watch"));
        let needs = prerequisites(&tc.llvm_bin).unwrap_or_else(|e| panic!("{e}"));
        let plugin = plugin_path(&dir, &needs);
        assert_eq!(watch_when_unavailable(&tc, &dir), [tc.llvm_bin.clone(), plugin.clone()]);
        let failed = plugin.with_extension("failed");
        std::fs::write(&failed, "no").unwrap();
        assert_eq!(watch_when_unavailable(&tc, &dir), [tc.llvm_bin.clone(), failed]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A compiler that cannot be started is remembered at once; one killed is tried again
    /// by the next builds, then remembered ([`TRIES`]).
    #[test]
    fn a_killed_compiler_is_tried_again_a_few_times_then_remembered() {
        let (tc, dir) = (toolchain(), scratch("tries"));
        let killed =
            script(&dir, "killed-cxx", "echo 'g++: fatal error: Killed signal terminated program cc1plus' >&2; exit 1");
        for (cxx, builds_before_remembered) in [(killed, TRIES), (dir.join("no-such-compiler"), 1)] {
            let needs = Prerequisites { cxx, ..prerequisites(&tc.llvm_bin).unwrap_or_else(|e| panic!("{e}")) };
            let failed = plugin_path(&dir, &needs).with_extension("failed");
            for build in 1..=builds_before_remembered {
                assert!(!failed.is_file(), "remembered before build {build} of {}", needs.cxx.display());
                assert!(install_with(&tc, &dir, needs.clone()).is_err());
            }
            assert!(failed.is_file(), "{} not remembered", needs.cxx.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Needs the kernel toolchain with LLVM's C++ headers (`cargo xtask setup`; CI runs it).
    #[test]
    fn the_pass_builds_loads_and_versions_a_strided_loop() {
        let (tc, dir) = (toolchain(), scratch("test"));
        let plugin = install(&tc, &dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(install(&tc, &dir).as_ref(), Ok(&plugin), "a second call finds the first one's plugin");
        // `for i in 0..k { sum += b[i * n + c] }` as rustc emits it: an equality exit test,
        // a check of a stride-`n` index against the slice's length.
        let ir = "define float @f(ptr %b, i64 %len, i64 %n, i64 %c, i64 %k) {
entry:
  %none = icmp eq i64 %k, 0
  br i1 %none, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %body ]
  %sum = phi float [ 0.0, %entry ], [ %sum2, %body ]
  %next = add nuw i64 %i, 1
  %row = mul i64 %i, %n
  %x = add i64 %row, %c
  %in = icmp ult i64 %x, %len
  br i1 %in, label %body, label %trap
body:
  %p = getelementptr inbounds float, ptr %b, i64 %x
  %v = load float, ptr %p
  %sum2 = fadd float %sum, %v
  %done = icmp eq i64 %next, %k
  br i1 %done, label %exit, label %loop
exit:
  %r = phi float [ 0.0, %entry ], [ %sum2, %body ]
  ret float %r
trap:
  call void @llvm.trap()
  unreachable
}
declare void @llvm.trap()
";
        let out = opt_with(&tc, &plugin, &format!("function(loop-simplify,lcssa,{PASS}),verify"), ir).unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        // One test before the loop, the overflow-checked last index against the length...
        assert!(text.contains("freeze i64 %n") && text.contains("@llvm.umul.with.overflow.i64"), "{text}");
        assert!(text.contains("sluice.rc.fast"), "{text}");
        // ...and two loops: the original without its check, the copy with it.
        assert!(text.contains("br i1 %in.rc.checked, label %body.rc.checked, label %trap"), "{text}");
        assert!(text.contains("br i1 true, label %body, label %trap"), "the fast loop goes on unconditionally: {text}");
        assert!(text.contains("llvm.loop.unroll.disable"), "the checked copy is not unrolled: {text}");

        // The same walking down (`(0..k).rev()`): index `(k - 1 - j) * n + c`, a step of
        // `-n`, whose sign is unknown: both tests, going up and going down, either enough.
        let down = ir
            .replace("%i = phi i64 [ 0, %entry ], [ %next, %body ]", "%i = phi i64 [ %top, %entry ], [ %next, %body ]")
            .replace("%next = add nuw i64 %i, 1", "%next = add i64 %i, -1")
            .replace("%done = icmp eq i64 %next, %k", "%done = icmp eq i64 %i, 0")
            .replace("  %none = icmp eq i64 %k, 0\n", "  %none = icmp eq i64 %k, 0\n  %top = add i64 %k, -1\n");
        let out = opt_with(&tc, &plugin, &format!("function(loop-simplify,lcssa,{PASS}),verify"), &down).unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.matches("call { i64, i1 } @llvm.umul.with.overflow.i64").count(), 2, "{text}");
        assert!(text.contains("br i1 true, label %body, label %trap"), "{text}");

        // A loop with an operation every lane of a warp must reach together keeps its checks:
        // the test before the loop may differ between lanes, which would then run different
        // copies. The device std writes them as inline assembly (a shuffle, `activemask`), or
        // they are convergent calls; a call the pass cannot see into counts too.
        for (what, op, decl) in [
            (
                "a shuffle written as asm",
                "%w = call i32 asm sideeffect \"shfl.sync.bfly.b32 $0, $1, 1, 31, -1;\", \"=r,r\"(i32 7)",
                "",
            ),
            ("activemask as asm", "%w = call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"()", ""),
            (
                "a convergent call",
                "%w = call i32 @warp_op() #0",
                "declare i32 @warp_op()\nattributes #0 = { convergent }",
            ),
            ("an opaque call", "%w = call i32 @opaque()", "declare i32 @opaque()"),
        ] {
            let with = ir.replace("  %v = load float, ptr %p\n", &format!("  %v = load float, ptr %p\n  {op}\n"))
                + decl
                + "\n";
            let out = opt_with(&tc, &plugin, &format!("function(loop-simplify,lcssa,{PASS}),verify"), &with).unwrap();
            assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(!text.contains("sluice.rc.fast") && !text.contains(".rc.checked"), "{what}: versioned: {text}");
        }
        // An asm load from shared memory is not such an operation: versioned as before.
        let shared = ir.replace(
            "  %v = load float, ptr %p\n",
            "  %v = load float, ptr %p\n  %w = call i32 asm sideeffect \"ld.shared.b32 $0, [$1];\", \"=r,r\"(i32 0)\n",
        );
        let out = opt_with(&tc, &plugin, &format!("function(loop-simplify,lcssa,{PASS}),verify"), &shared).unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("sluice.rc.fast"), "an asm shared load stops nothing");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
