//! Installing the kernel toolchain: the code behind `cargo xtask setup` (sluice's own
//! workspace) and `cargo sluice setup` / `cargo sluice doctor` (everyone else).
//!
//! [`Setup::install`] finds every piece and installs what is missing, idempotently (when
//! everything is present it takes a few seconds and changes nothing):
//!
//! | piece | Debian route (as root) | rustup route |
//! | --- | --- | --- |
//! | kernel rustc + its library source | `apt-get install rustc-web=V rust-web-src=V` | `rustup toolchain install 1.96.0 --component rust-src …` |
//! | `llvm-link`, `opt`, `llc` | `apt-get install llvm-N=V` (N: that rustc's LLVM major) | `--component llvm-tools` |
//! | LLVM's C++ headers and `g++`, for the [range-check pass](crate::range_checks) (optional) | `apt-get install llvm-N-dev=V g++` | none (`llvm-tools` has no headers): kernels build without the pass |
//! | `ptxas`, `libdevice.10.bc` | PyPI's `nvidia-cuda-nvcc==V` (`--require-hashes`) in a venv in the [tools folder](crate::toolchain::default_tools_dir) | same |
//!
//! Every version is pinned in [`pins`]; the report prints each piece's version
//! beside its pin.
//!
//! [`Setup::doctor`] only looks: it reports what was found where, and for each missing
//! piece the error that names the command installing it.
//!
//! ```no_run
//! use sluice_builder::setup::Setup;
//! let report = Setup::new().install(&mut |line| println!("setup: {line}"))?;
//! println!("{report}");
//! # Ok::<(), sluice_builder::BuildError>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::error::{self, BuildError, Tool};
use crate::pins;
use crate::range_checks;
use crate::toolchain::{self, Frontend, KernelRustc, Locations};

/// Finds, and on request installs, the kernel toolchain. See the [module docs](self).
///
/// ```no_run
/// use sluice_builder::{setup::Setup, toolchain::{Frontend, Locations}};
/// let report = Setup::new()
///     .frontend(Frontend::CargoSluice)
///     .locations(Locations { tools_dir: "/opt/sluice-tools".into() })
///     .doctor();
/// println!("{report}");
/// ```
#[derive(Debug, Clone)]
pub struct Setup {
    locations: Locations,
    frontend: Frontend,
}

impl Default for Setup {
    fn default() -> Self {
        Setup::new()
    }
}

/// How a piece of the toolchain stands.
///
/// ```no_run
/// use sluice_builder::setup::{Setup, State};
/// for piece in Setup::new().doctor().pieces {
///     if let State::Missing(e) = &piece.state {
///         eprintln!("{e}");
///     }
/// }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum State {
    /// Present before setup ran.
    Found {
        /// Where.
        path: PathBuf,
        /// A detail worth showing (a version).
        detail: Option<String>,
    },
    /// Installed by this run.
    Installed {
        /// Where.
        path: PathBuf,
    },
    /// Missing or unusable; the error names the fix.
    Missing(BuildError),
}

/// One row of a [`Report`].
///
/// ```no_run
/// let report = sluice_builder::setup::Setup::new().doctor();
/// let tools: Vec<_> = report.pieces.iter().map(|p| p.tool).collect();
/// assert!(tools.contains(&sluice_builder::Tool::Ptxas));
/// ```
#[derive(Debug)]
pub struct Piece {
    /// Which piece.
    pub tool: Tool,
    /// How it stands.
    pub state: State,
}

/// What setup or doctor found, piece by piece. Its `Display` is the table both print.
///
/// ```no_run
/// let report = sluice_builder::setup::Setup::new().doctor();
/// if !report.is_complete() {
///     eprintln!("{report}");
/// }
/// ```
#[derive(Debug)]
pub struct Report {
    /// The pieces, in the order the toolchain needs them.
    pub pieces: Vec<Piece>,
    /// The tools folder setup installs into.
    pub tools_dir: PathBuf,
    /// The command that installs what is missing.
    pub setup_command: String,
    /// How long it took.
    pub seconds: f64,
}

impl Report {
    /// Whether every piece was found or installed.
    ///
    /// ```no_run
    /// assert!(sluice_builder::setup::Setup::new().doctor().is_complete());
    /// ```
    pub fn is_complete(&self) -> bool {
        self.pieces.iter().all(|p| p.tool.is_optional() || !matches!(p.state, State::Missing(_)))
    }

    /// The first missing piece's error, if any.
    ///
    /// ```no_run
    /// if let Some(e) = sluice_builder::setup::Setup::new().doctor().first_missing() {
    ///     eprintln!("{e}");
    /// }
    /// ```
    pub fn first_missing(&self) -> Option<&BuildError> {
        self.pieces.iter().filter(|p| !p.tool.is_optional()).find_map(|p| match &p.state {
            State::Missing(e) => Some(e),
            _ => None,
        })
    }
}

fn short(tool: Tool) -> &'static str {
    match tool {
        Tool::KernelRustc => "kernel rustc",
        Tool::RustSrc => "rust-src",
        Tool::LlvmTools => "llvm-link/opt/llc",
        Tool::Cargo => "cargo",
        Tool::Ptxas => "ptxas",
        Tool::Libdevice => "libdevice",
        Tool::CLinker => "C linker (cc)",
        Tool::RangeCheckPass => "range-check pass",
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "sluice toolchain ({:.1} s; tools folder {}):", self.seconds, self.tools_dir.display())?;
        for p in &self.pieces {
            match &p.state {
                State::Found { path, detail } => {
                    write!(f, "  {:<18} {:<10} {}", short(p.tool), "found", path.display())?;
                    if let Some(d) = detail {
                        write!(f, " ({d})")?;
                    }
                    writeln!(f)?;
                }
                State::Installed { path } => {
                    writeln!(f, "  {:<18} {:<10} {}", short(p.tool), "installed", path.display())?
                }
                State::Missing(_) if p.tool.is_optional() => {
                    writeln!(f, "  {:<18} {:<10} (optional)", short(p.tool), "missing")?
                }
                State::Missing(_) => writeln!(f, "  {:<18} {:<10}", short(p.tool), "MISSING")?,
            }
        }
        let missing: Vec<&BuildError> = self
            .pieces
            .iter()
            .filter(|p| !p.tool.is_optional())
            .filter_map(|p| match &p.state {
                State::Missing(e) => Some(e),
                _ => None,
            })
            .collect();
        writeln!(f, "pinned (gpu-kernels/builder/src/pins.rs; setup installs these):\n{}", pins::summary())?;
        for p in self.pieces.iter().filter(|p| p.tool.is_optional()) {
            if let State::Missing(e) = &p.state {
                writeln!(f, "{e}")?;
            }
        }
        if missing.is_empty() {
            return write!(f, "everything the kernel build and the PTX check need is here");
        }
        for e in missing {
            writeln!(f, "{e}")?;
        }
        write!(f, "install what is missing with: {}", self.setup_command)
    }
}

impl Setup {
    /// Setup for the default tools folder ([`toolchain::default_tools_dir`]) and the
    /// detected [`Frontend`].
    ///
    /// ```
    /// let setup = sluice_builder::setup::Setup::new();
    /// # let _ = setup;
    /// ```
    pub fn new() -> Setup {
        Setup { locations: Locations::default(), frontend: Frontend::detect() }
    }

    /// Another tools folder.
    ///
    /// ```
    /// use sluice_builder::{setup::Setup, toolchain::Locations};
    /// let setup = Setup::new().locations(Locations { tools_dir: "/opt/sluice-tools".into() });
    /// # let _ = setup;
    /// ```
    pub fn locations(mut self, locations: Locations) -> Self {
        self.locations = locations;
        self
    }

    /// The frontend whose command the report and the errors name.
    ///
    /// ```
    /// use sluice_builder::{setup::Setup, toolchain::Frontend};
    /// let setup = Setup::new().frontend(Frontend::Xtask);
    /// # let _ = setup;
    /// ```
    pub fn frontend(mut self, frontend: Frontend) -> Self {
        self.frontend = frontend;
        self
    }

    /// Finds every piece, installs nothing.
    ///
    /// ```no_run
    /// println!("{}", sluice_builder::setup::Setup::new().doctor());
    /// ```
    pub fn doctor(&self) -> Report {
        let started = Instant::now();
        let mut pieces = Vec::new();
        match toolchain::find_kernel_rustc() {
            Ok(rustc) => {
                pieces.push(found(Tool::KernelRustc, &rustc.rustc, Some(rustc_detail(&rustc))));
                pieces.push(found(Tool::RustSrc, &rustc.rust_src(), None));
                let llvm = toolchain::find_llvm_bin(&rustc);
                let pass = llvm.as_ref().ok().map(|bin| range_check_piece(bin));
                pieces.push(piece(Tool::LlvmTools, llvm.map(|p| (p.clone(), llvm_detail(&p)))));
                pieces.extend(pass);
            }
            Err(e) => {
                let tool = if matches!(e, BuildError::ToolMissing { tool: Tool::RustSrc, .. }) {
                    Tool::RustSrc
                } else {
                    Tool::KernelRustc
                };
                pieces.push(Piece { tool, state: State::Missing(e) });
            }
        }
        pieces.push(piece(Tool::CLinker, find_c_linker().map(|p| (p, None))));
        let ptxas = toolchain::find_ptxas(&self.locations);
        pieces.push(piece(Tool::Ptxas, ptxas.map(|p| (p.clone(), Some(self.ptxas_detail(&p))))));
        pieces.push(piece(Tool::Libdevice, toolchain::find_libdevice(&self.locations).map(|p| (p, None))));
        self.report(pieces, started)
    }

    /// Finds every piece and installs what is missing (see the [module docs](self)). `say`
    /// receives one line per step taken (installs are slow; the caller prints them).
    ///
    /// # Errors
    /// [`BuildError::Install`] when an install step fails or no route is available (the
    /// message says what to install by hand), or the discovery error of a piece still
    /// missing after its install.
    ///
    /// ```no_run
    /// let report = sluice_builder::setup::Setup::new().install(&mut |line| println!("setup: {line}"))?;
    /// assert!(report.is_complete());
    /// # Ok::<(), sluice_builder::BuildError>(())
    /// ```
    pub fn install(&self, say: &mut dyn FnMut(&str)) -> Result<Report, BuildError> {
        let started = Instant::now();
        let mut pieces = Vec::new();

        // 1. The kernel compiler, its library source and LLVM tools.
        let found_pair = toolchain::find_kernel_rustc().and_then(|r| toolchain::find_llvm_bin(&r).map(|l| (r, l)));
        let (rustc, llvm, installed) = match found_pair {
            Ok((r, l)) => (r, l, false),
            Err(missing) => {
                say(&first_line(&missing));
                self.install_kernel_toolchain(say)?;
                let r = toolchain::find_kernel_rustc()?;
                let l = toolchain::find_llvm_bin(&r)?;
                (r, l, true)
            }
        };
        if installed {
            pieces.push(Piece { tool: Tool::KernelRustc, state: State::Installed { path: rustc.rustc.clone() } });
        } else {
            if !rustc.is_pinned() {
                say(&format!(
                    "the kernel rustc found, {} (LLVM {}), is not the pinned {} (LLVM {}): kernels build with it, \
                     but their PTX may differ from CI's (SLUICE_KERNEL_RUSTC picks another one)",
                    rustc.release,
                    rustc.llvm_version,
                    pins::KERNEL_RUSTC,
                    pins::KERNEL_LLVM
                ));
            }
            pieces.push(found(Tool::KernelRustc, &rustc.rustc, Some(rustc_detail(&rustc))));
        }
        pieces.push(found(Tool::RustSrc, &rustc.rust_src(), None));
        pieces.push(found(Tool::LlvmTools, &llvm, llvm_detail(&llvm)));
        // 1b. What the range-check pass is built with (optional: the kernels build without
        // it). On the Debian route, the headers of the pinned LLVM and g++.
        let mut pass = range_check_piece(&llvm);
        if matches!(pass.state, State::Missing(_))
            && llvm.to_string_lossy().starts_with("/usr/lib/llvm-")
            && have("apt-get")
            && is_root()
        {
            let dev = format!("llvm-{}-dev={}", pins::llvm_major(), pins::DEBIAN_LLVM);
            say(&format!("installing {dev} and g++ with apt-get (for sluice's range-check pass)"));
            let done = run(Command::new("apt-get").args(["update", "-q"]), "apt-get update", &self.setup_command())
                .and_then(|()| apt_install(&[dev.as_str(), "g++"], &self.setup_command()));
            match done {
                Ok(()) => {
                    pass = range_check_piece(&llvm);
                    if let State::Found { path, .. } = pass.state {
                        pass.state = State::Installed { path };
                    }
                }
                Err(e) => say(&first_line(&e)),
            }
        }
        pieces.push(pass);

        // 2. A C linker: the builder compiles its bitcode linker (a host program) with it.
        match find_c_linker() {
            Ok(cc) => pieces.push(found(Tool::CLinker, &cc, None)),
            Err(missing) => {
                say(&first_line(&missing));
                if have("apt-get") && is_root() {
                    say("installing gcc and libc6-dev with apt-get");
                    run(Command::new("apt-get").args(["update", "-q"]), "apt-get update", &self.setup_command())?;
                    apt_install(&["gcc", "libc6-dev"], &self.setup_command())?;
                    let cc = find_c_linker()?;
                    pieces.push(Piece { tool: Tool::CLinker, state: State::Installed { path: cc } });
                } else {
                    return Err(missing);
                }
            }
        }

        // 3. ptxas and libdevice.
        let ours = self.locations.tools_dir.join("venv");
        let stale = toolchain::find_ptxas(&self.locations).ok().filter(|p| p.starts_with(&ours)).and_then(|_| {
            toolchain::nvcc_wheel_version(&self.locations.tools_dir).filter(|v| v != pins::nvcc_version())
        });
        if let Some(old) = stale {
            // The venv is setup's own: bring it to the pin (an install outside it is the user's).
            say(&format!("the tools folder holds nvidia-cuda-nvcc {old}, the pin is {}", pins::nvcc_version()));
            self.install_ptxas(say)?;
        }
        match toolchain::find_ptxas(&self.locations) {
            Ok(p) => pieces.push(found(Tool::Ptxas, &p, Some(self.ptxas_detail(&p)))),
            Err(missing) => {
                say(&first_line(&missing));
                self.install_ptxas(say)?;
                let p = toolchain::find_ptxas(&self.locations)?;
                pieces.push(Piece { tool: Tool::Ptxas, state: State::Installed { path: p } });
            }
        }
        let libdevice = toolchain::find_libdevice(&self.locations)?;
        pieces.push(found(Tool::Libdevice, &libdevice, None));
        Ok(self.report(pieces, started))
    }

    fn report(&self, pieces: Vec<Piece>, started: Instant) -> Report {
        Report {
            pieces,
            tools_dir: self.locations.tools_dir.clone(),
            setup_command: self.setup_command(),
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    fn setup_command(&self) -> String {
        self.frontend.command("setup")
    }

    fn install_kernel_toolchain(&self, say: &mut dyn FnMut(&str)) -> Result<(), BuildError> {
        let again = self.setup_command();
        let llvm = format!("llvm-{}", pins::llvm_major());
        let debian = [
            ("rustc-web", pins::DEBIAN_RUSTC),
            ("rust-web-src", pins::DEBIAN_RUSTC),
            (llvm.as_str(), pins::DEBIAN_LLVM),
        ];
        let mut apt_problem = None;
        if have("apt-get") && is_root() {
            say("installing rustc-web, rust-web-src and their LLVM tools with apt-get (Debian route)");
            run(Command::new("apt-get").args(["update", "-q"]), "apt-get update", &again)?;
            if apt_candidate("rustc-web") {
                // Exactly the pinned versions: a newer package would change every kernel build.
                if let Some((pkg, offered)) = debian.iter().find_map(|(p, v)| apt_lacks(p, v).map(|o| (*p, o))) {
                    return Err(BuildError::Install {
                        what: format!("{pkg} {}", debian.iter().find(|(p, _)| *p == pkg).map_or("", |(_, v)| v)),
                        problem: format!("apt offers {offered} instead (Debian replaced the pinned version)"),
                        fix: "move the pins in gpu-kernels/builder/src/pins.rs to the versions apt offers (one edit), \
                              then run the tests and setup again; or install a toolchain yourself and point \
                              SLUICE_KERNEL_RUSTC and SLUICE_LLVM_BIN at it"
                            .into(),
                    });
                }
                let specs: Vec<String> = debian.iter().map(|(p, v)| format!("{p}={v}")).collect();
                let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
                return apt_install(&specs, &again);
            }
            apt_problem = Some("apt knows no rustc-web");
            say("apt knows no rustc-web; trying rustup");
        }
        if have("rustup") {
            say(&format!("installing rust {} with rustup (rustup route)", pins::KERNEL_RUSTC));
            let rustup = run(
                Command::new("rustup").args([
                    "toolchain",
                    "install",
                    pins::KERNEL_RUSTC,
                    "--profile",
                    "minimal",
                    "--component",
                    "rust-src",
                    "--component",
                    "llvm-tools",
                ]),
                &format!("rustup toolchain install {}", pins::KERNEL_RUSTC),
                &again,
            );
            if rustup.is_ok() {
                return Ok(());
            }
        }
        Err(BuildError::Install {
            what: "the kernel toolchain".into(),
            problem: apt_problem
                .unwrap_or("neither apt-get (as root, with rustc-web in its lists) nor rustup could install it")
                .into(),
            fix: format!(
                "install one of: `sudo apt-get update && sudo apt-get install {}` (Debian 12 with security updates), \
                 or `rustup toolchain install {} --component rust-src llvm-tools`; then run `{again}` again",
                debian.iter().map(|(p, v)| format!("{p}={v}")).collect::<Vec<_>>().join(" "),
                pins::KERNEL_RUSTC,
            ),
        })
    }

    /// The version detail of a ptxas: its own version, and for the tools folder's venv the
    /// wheel's, each against the pin.
    fn ptxas_detail(&self, ptxas: &Path) -> String {
        let version = toolchain::ptxas_version(ptxas).unwrap_or_else(|| "version unknown".into());
        let pin = pins::nvcc_version();
        let mark = if version == pin { "pinned" } else { "NOT the pinned" };
        match toolchain::nvcc_wheel_version(&self.locations.tools_dir)
            .filter(|_| ptxas.starts_with(self.locations.tools_dir.join("venv")))
        {
            Some(wheel) => format!("{version}, nvidia-cuda-nvcc {wheel}; {mark} {pin}"),
            None => format!("{version}; {mark} {pin}"),
        }
    }

    /// Installs `nvidia-cuda-nvcc` into `<tools>/venv`. The venv is made in a scratch folder
    /// and renamed into place, so that two setups at once (two projects, two shells) never
    /// leave a half-installed venv: each publishes a whole one, and the later rename loses.
    fn install_ptxas(&self, say: &mut dyn FnMut(&str)) -> Result<(), BuildError> {
        let again = self.setup_command();
        let tools = &self.locations.tools_dir;
        let venv = tools.join("venv");
        let python = ["python3", "python"].into_iter().find(|p| have(p)).ok_or_else(|| BuildError::Install {
            what: "ptxas and libdevice".into(),
            problem: "they come from PyPI's nvidia-cuda-nvcc, which needs python3".into(),
            fix: format!(
                "install python3 (`apt-get install python3 python3-venv`) and run `{again}` again, or install \
                 a CUDA toolkit (CUDA_HOME), or set SLUICE_PTXAS and SLUICE_LIBDEVICE"
            ),
        })?;
        std::fs::create_dir_all(tools).map_err(error::io(format!("creating {}", tools.display())))?;
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let scratch = tools.join(format!(".venv-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        say(&format!(
            "installing nvidia-cuda-nvcc=={} (ptxas, libdevice; pinned, by hash) into {}",
            pins::nvcc_version(),
            venv.display()
        ));
        let requirements = scratch.join("requirements.txt");
        let result = self
            .make_venv(python, &scratch, say)
            .and_then(|()| {
                std::fs::write(&requirements, pins::NVCC_REQUIREMENTS)
                    .map_err(error::io(format!("writing {}", requirements.display())))
            })
            .and_then(|()| {
                run(
                    Command::new(scratch.join("bin/python"))
                        .args([
                            "-m",
                            "pip",
                            "install",
                            "--quiet",
                            "--disable-pip-version-check",
                            "--require-hashes",
                            "--only-binary=:all:",
                            "-r",
                        ])
                        .arg(&requirements),
                    "pip install --require-hashes nvidia-cuda-nvcc",
                    &again,
                )
            });
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(e);
        }
        // A venv that is not the pinned one goes: one without ptxas (an interrupted install)
        // or one of another version. Moved aside first, so that the rename below is atomic.
        let current = toolchain::nvcc_wheel_version(tools);
        if venv.exists()
            && (toolchain::find_ptxas(&self.locations).is_err() || current.as_deref() != Some(pins::nvcc_version()))
        {
            let old = tools.join(format!(".venv-old-{}-{n}", std::process::id()));
            if std::fs::rename(&venv, &old).is_ok() {
                let _ = std::fs::remove_dir_all(&old);
            }
        }
        if std::fs::rename(&scratch, &venv).is_err() {
            // Another setup published its venv first: keep that one.
            let _ = std::fs::remove_dir_all(&scratch);
        }
        Ok(())
    }

    fn make_venv(&self, python: &str, dir: &Path, say: &mut dyn FnMut(&str)) -> Result<(), BuildError> {
        let again = self.setup_command();
        let make = || run(Command::new(python).args(["-m", "venv", "--clear"]).arg(dir), "python3 -m venv", &again);
        match make() {
            Ok(()) => Ok(()),
            // Debian's python3 keeps `venv`'s pip bootstrap in a separate package.
            Err(e) if have("apt-get") && is_root() => {
                say(&format!("{e}; installing python3-venv"));
                run(Command::new("apt-get").args(["update", "-q"]), "apt-get update", &again)?;
                apt_install(&["python3-venv"], &again)?;
                make()
            }
            Err(BuildError::Install { what, problem, .. }) => Err(BuildError::Install {
                what,
                problem,
                fix: format!("on Debian: `apt-get install python3-venv`, then run `{again}` again"),
            }),
            Err(e) => Err(e),
        }
    }
}

/// `rustc 1.96.0, LLVM 22.1.8; pinned` (or `NOT the pinned 1.96.0, LLVM 22`).
fn rustc_detail(rustc: &KernelRustc) -> String {
    let mark = if rustc.is_pinned() {
        "pinned".to_string()
    } else {
        format!("NOT the pinned {}, LLVM {}", pins::KERNEL_RUSTC, pins::llvm_major())
    };
    let package = if rustc.rustc == Path::new("/usr/bin/rustc") {
        toolchain::debian_version("rustc-web").map(|v| format!(", rustc-web {v}")).unwrap_or_default()
    } else {
        String::new()
    };
    format!("{}, LLVM {}{package}; {mark}", rustc.release, rustc.llvm_version)
}

/// The Debian package of an `llvm-N` folder and its version, if it is one.
fn llvm_detail(bin: &Path) -> Option<String> {
    let dir = bin.parent()?.file_name()?.to_string_lossy().into_owned();
    if !dir.starts_with("llvm-") || !bin.starts_with("/usr/lib") {
        return None;
    }
    let version = toolchain::debian_version(&dir)?;
    let mark = if dir == format!("llvm-{}", pins::llvm_major()) && version == pins::DEBIAN_LLVM {
        "pinned".to_string()
    } else {
        format!("NOT the pinned llvm-{}={}", pins::llvm_major(), pins::DEBIAN_LLVM)
    };
    Some(format!("{dir} {version}; {mark}"))
}

/// The first line of an error (the fix line would name this very command).
fn first_line(e: &BuildError) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// The range-check pass's prerequisites for the `opt` in `llvm_bin`, as a report row.
fn range_check_piece(llvm_bin: &Path) -> Piece {
    let needs = range_checks::prerequisites(llvm_bin).map_err(|why| BuildError::ToolMissing {
        tool: Tool::RangeCheckPass,
        looked: Vec::new(),
        fix: format!(
            "{} ({}; optional: without it kernels build and run correctly, slower in loops that index a slice \
             by a stride)",
            why.fix, why.problem
        ),
    });
    piece(
        Tool::RangeCheckPass,
        needs.map(|n| (n.include_dir, Some(format!("LLVM {} headers, {}", n.llvm_version, n.cxx.display())))),
    )
}

fn found(tool: Tool, path: &Path, detail: Option<String>) -> Piece {
    Piece { tool, state: State::Found { path: path.to_path_buf(), detail } }
}

fn piece(tool: Tool, r: Result<(PathBuf, Option<String>), BuildError>) -> Piece {
    match r {
        Ok((path, detail)) => Piece { tool, state: State::Found { path, detail } },
        Err(e) => Piece { tool, state: State::Missing(e) },
    }
}

/// The C compiler driver (`cc`) rustc links host programs with: `sluice-llbc`, the
/// builder's bitcode linker, is one.
///
/// # Errors
/// [`BuildError::ToolMissing`] with [`Tool::CLinker`] when no `cc` is on `PATH`.
///
/// ```no_run
/// let cc = sluice_builder::setup::find_c_linker()?;
/// # Ok::<(), sluice_builder::BuildError>(())
/// ```
pub fn find_c_linker() -> Result<PathBuf, BuildError> {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.iter().map(|d| d.join("cc")).find(|p| p.is_file()).ok_or_else(|| BuildError::ToolMissing {
        tool: Tool::CLinker,
        looked: dirs.iter().take(4).map(|d| d.join("cc")).collect(),
        fix: format!(
            "run `{}` (as root it installs gcc and libc6-dev), or install a C compiler yourself",
            Frontend::detect().command("setup")
        ),
    })
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// `None` when apt offers `version` of `pkg`, else what it offers instead (`none` when nothing).
fn apt_lacks(pkg: &str, version: &str) -> Option<String> {
    let out = Command::new("apt-cache").args(["madison", pkg]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let offered: Vec<&str> = text.lines().filter_map(|l| l.split('|').nth(1)).map(str::trim).collect();
    if offered.contains(&version) {
        None
    } else if offered.is_empty() {
        Some("none".into())
    } else {
        Some(offered.join(", "))
    }
}

/// Whether apt knows a package (after an update).
fn apt_candidate(pkg: &str) -> bool {
    Command::new("apt-cache")
        .args(["policy", pkg])
        .output()
        .map(|o| {
            let s = String::from_utf8_lossy(&o.stdout);
            s.contains("Candidate:") && !s.contains("Candidate: (none)")
        })
        .unwrap_or(false)
}

fn apt_install(packages: &[&str], again: &str) -> Result<(), BuildError> {
    run(
        Command::new("apt-get")
            .args(["install", "-y", "-q", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive"),
        &format!("apt-get install {}", packages.join(" ")),
        again,
    )
}

/// Runs an install step with its output shown (installs are long; silence looks like a hang).
fn run(cmd: &mut Command, what: &str, again: &str) -> Result<(), BuildError> {
    let status = cmd.status().map_err(error::io(format!("starting {what}")))?;
    if status.success() {
        return Ok(());
    }
    Err(BuildError::Install {
        what: what.to_string(),
        problem: format!("it failed ({status}); its output is above"),
        fix: format!("fix what it says, then run `{again}` again"),
    })
}
