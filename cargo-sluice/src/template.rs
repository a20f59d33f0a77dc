//! The project `cargo sluice new` writes: files embedded in the binary (`template/`),
//! with `{{name}}`-style placeholders filled in.

use std::path::{Path, PathBuf};

use crate::{Failure, Result};

/// The folder this `cargo-sluice` was compiled from: a sluice checkout's `cargo-sluice/`
/// (`cargo install --path`), a registry copy (`cargo install cargo-sluice`) or a git
/// checkout (`cargo install --git`) under `CARGO_HOME`.
const BUILT_FROM: &str = env!("CARGO_MANIFEST_DIR");

/// The template: `(path in the project, text)`.
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../template/Cargo.toml.tmpl")),
    ("build.rs", include_str!("../template/build.rs.tmpl")),
    ("src/main.rs", include_str!("../template/src/main.rs.tmpl")),
    ("kernels/Cargo.toml", include_str!("../template/kernels/Cargo.toml.tmpl")),
    ("kernels/src/lib.rs", include_str!("../template/kernels/src/lib.rs.tmpl")),
    ("README.md", include_str!("../template/README.md.tmpl")),
    (".gitignore", include_str!("../template/gitignore.tmpl")),
];

/// Where the project's sluice dependencies come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A git repository (cargo finds `sluice`, `sluice-builder` and `sluice-device` in it).
    Git {
        /// The repository.
        url: String,
        /// A branch, else the default one.
        branch: Option<String>,
        /// A commit (what `cargo install --git` built), else the branch's head.
        rev: Option<String>,
    },
    /// A local checkout (absolute path).
    Path(PathBuf),
    /// crates.io, this version.
    Registry(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Git { url, branch, rev } => {
                write!(f, "git {url}")?;
                if let Some(b) = branch {
                    write!(f, " (branch {b})")?;
                }
                if let Some(r) = rev {
                    write!(f, " (commit {r})")?;
                }
                Ok(())
            }
            Source::Path(p) => write!(f, "the checkout {}", p.display()),
            Source::Registry(v) => write!(f, "crates.io, version {v}"),
        }
    }
}

impl Source {
    /// The sluice this `cargo-sluice` was installed from: the checkout of a path install,
    /// the version of a registry install, the repository and commit of a git install (read
    /// from cargo's record of installed packages, `$CARGO_HOME/.crates2.json`).
    pub fn installed_from() -> Result<Source> {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
        let record = cargo_home.and_then(|h| std::fs::read_to_string(h.join(".crates2.json")).ok());
        Source::from_build_dir(Path::new(BUILT_FROM), env!("CARGO_PKG_VERSION"), record.as_deref())
    }

    /// [`Source::installed_from`] for a `cargo-sluice` compiled in `built_from`, of
    /// `version`, with cargo's install record `record`.
    fn from_build_dir(built_from: &Path, version: &str, record: Option<&str>) -> Result<Source> {
        let under = |a: &str, b: &str| {
            built_from
                .components()
                .zip(built_from.components().skip(1))
                .any(|(x, y)| x.as_os_str() == a && y.as_os_str() == b)
        };
        let again = "pass `--path <sluice checkout>` or `--git <repository>`";
        if under("registry", "src") {
            return Ok(Source::Registry(version.to_string()));
        }
        if under("git", "checkouts") {
            // `"cargo-sluice 0.1.0 (git+https://host/sluice?branch=b#0123abcd)"`
            let source = record.and_then(|r| {
                let at = r.find(&format!("\"cargo-sluice {version} (git+"))?;
                let rest = &r[at..];
                let start = rest.find("(git+")? + "(git+".len();
                let end = rest[start..].find(')')? + start;
                Some(rest[start..end].to_string())
            });
            let Some(source) = source else {
                return Err(Failure(format!(
                    "cargo sluice new: this cargo-sluice was installed with `cargo install --git`, but cargo's record \
                     of it ($CARGO_HOME/.crates2.json) does not say from where: {again}"
                )));
            };
            let (url, rev) = source.split_once('#').map_or((source.as_str(), None), |(u, r)| (u, Some(r.to_string())));
            let (url, branch) = match url.split_once('?') {
                Some((u, query)) => (u, query.strip_prefix("branch=").map(str::to_string)),
                None => (url, None),
            };
            return Ok(Source::Git { url: url.to_string(), branch, rev });
        }
        match built_from.parent() {
            Some(checkout) if is_checkout(checkout) => Ok(Source::Path(checkout.to_path_buf())),
            Some(checkout) if !built_from.exists() => Err(Failure(format!(
                "cargo sluice new: this cargo-sluice was installed from the sluice checkout {}, which is no \
                     longer there: {again}, or install cargo-sluice again",
                checkout.display()
            ))),
            _ => Err(Failure(format!("cargo sluice new: where this cargo-sluice came from is unknown: {again}"))),
        }
    }
}

/// Whether `dir` is a sluice checkout (its device std is where the project will look).
fn is_checkout(dir: &Path) -> bool {
    dir.join("gpu-kernels/device/Cargo.toml").is_file() && dir.join("gpu-kernels/builder/Cargo.toml").is_file()
}

/// A project to write.
pub struct Project {
    name: String,
    source: Source,
}

impl Project {
    /// Checks `name` (a cargo package name that also makes a Rust identifier).
    pub fn new(name: &str, source: Source) -> Result<Project> {
        let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(Failure(format!(
                "cargo sluice new: `{name}` is not a usable package name: start with a letter, then letters, \
                 digits, `-` or `_` (it names the host program and, with `-kernels`, the kernel crate); \
                 keep the folder and name the package with `--name <name>`"
            )));
        }
        if let Source::Path(p) = &source {
            if !is_checkout(p) {
                return Err(Failure(format!(
                    "cargo sluice new: {} is not a sluice checkout (no gpu-kernels/device/Cargo.toml there)",
                    p.display()
                )));
            }
        }
        Ok(Project { name: name.to_string(), source })
    }

    /// Where the project gets sluice from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The kernel crate's package name.
    pub fn kernels_package(&self) -> String {
        format!("{}-kernels", self.name)
    }

    fn dependency(&self, subdir: &str) -> String {
        match &self.source {
            Source::Path(root) => {
                let p = if subdir.is_empty() { root.clone() } else { root.join(subdir) };
                format!("{{ path = {:?} }}", p.to_string_lossy())
            }
            Source::Git { url, branch, rev } => {
                let mut dep = format!("{{ git = {url:?}");
                if let Some(b) = branch {
                    dep += &format!(", branch = {b:?}");
                }
                if let Some(r) = rev {
                    dep += &format!(", rev = {r:?}");
                }
                dep + " }"
            }
            Source::Registry(version) => format!("{version:?}"),
        }
    }

    /// Where the README's link to sluice points: the source the project depends on (its
    /// checkout, its git repository, its crates.io page), never a placeholder.
    fn home(&self) -> String {
        match &self.source {
            Source::Git { url, .. } => url.clone(),
            Source::Path(p) => p.display().to_string(),
            Source::Registry(v) => format!("https://crates.io/crates/sluice/{v}"),
        }
    }

    /// The text of one template file for this project.
    pub fn render(&self, text: &str) -> String {
        let kernels_lib = format!("{}_kernels", self.name.replace('-', "_"));
        text.replace("{{kernels_package}}", &self.kernels_package())
            .replace("{{kernels_lib}}", &kernels_lib)
            .replace("{{sluice}}", &self.dependency(""))
            .replace("{{sluice_builder}}", &self.dependency("gpu-kernels/builder"))
            .replace("{{sluice_device}}", &self.dependency("gpu-kernels/device"))
            .replace("{{repository}}", &self.home())
            .replace("{{name}}", &self.name)
    }

    /// Writes the project into `dir`, which must not exist yet (or be empty). With a
    /// local checkout, the project starts from the checkout's `Cargo.lock`, so that it
    /// builds with the versions sluice was tested with (cargo adds the project's own
    /// packages and drops what it does not need).
    pub fn write(&self, dir: &Path) -> Result {
        if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(Failure(format!("cargo sluice new: {} exists and is not empty", dir.display())));
        }
        let io = |what: &Path, e: std::io::Error| Failure(format!("cargo sluice new: writing {}: {e}", what.display()));
        for (path, text) in FILES {
            let dest = dir.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&dest, self.render(text)).map_err(|e| io(&dest, e))?;
        }
        if let Source::Path(root) = &self.source {
            let lock = root.join("Cargo.lock");
            if lock.is_file() {
                let dest = dir.join("Cargo.lock");
                std::fs::copy(&lock, &dest).map_err(|e| io(&dest, e))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_placeholder() {
        let git = Source::Git { url: "https://example.org/sluice".into(), branch: None, rev: None };
        let p = Project::new("my-app", git).unwrap_or_else(|e| panic!("{}", e.0));
        for (path, text) in FILES {
            let out = p.render(text);
            assert!(!out.contains("{{"), "{path} keeps a placeholder:\n{out}");
        }
        let manifest = p.render(FILES[0].1);
        assert!(manifest.contains("name = \"my-app\""), "{manifest}");
        assert!(manifest.contains("my-app-kernels = { path = \"kernels\" }"), "{manifest}");
        assert!(manifest.contains("sluice = { git = \"https://example.org/sluice\" }"), "{manifest}");
        assert!(p.render(FILES[2].1).contains("sluice::include_kernels!(my_app_kernels);"));
    }

    #[test]
    fn refuses_unusable_names() {
        for bad in ["", "1abc", "a b", "a/b", "ü"] {
            assert!(Project::new(bad, Source::Registry("0.1.0".into())).is_err(), "{bad}");
        }
    }

    #[test]
    fn depends_on_the_sluice_it_was_installed_from() {
        // `cargo install --path cargo-sluice` in a checkout: that checkout.
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let s = Source::from_build_dir(Path::new(BUILT_FROM), "0.1.0", None).unwrap_or_else(|e| panic!("{}", e.0));
        assert_eq!(s, Source::Path(checkout.to_path_buf()));
        let p = Project::new("a", s).unwrap_or_else(|e| panic!("{}", e.0));
        let manifest = p.render(FILES[0].1);
        assert!(manifest.contains(&format!("sluice-builder = {{ path = {:?} }}", checkout.join("gpu-kernels/builder"))));
        // `cargo install cargo-sluice`: that version from crates.io.
        let registry = Path::new("/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cargo-sluice-0.3.1");
        let s = Source::from_build_dir(registry, "0.3.1", None).unwrap_or_else(|e| panic!("{}", e.0));
        assert_eq!(s, Source::Registry("0.3.1".into()));
        let p = Project::new("a", s).unwrap_or_else(|e| panic!("{}", e.0));
        assert!(p.render(FILES[0].1).contains("sluice = \"0.3.1\""));
        // `cargo install --git`: the repository and commit cargo recorded.
        let git = Path::new("/home/u/.cargo/git/checkouts/sluice-0123/abcdef0/cargo-sluice");
        let record = r#"{"installs":{"cargo-sluice 0.1.0 (git+https://example.org/sluice?branch=dev#abcdef0123)":{}}}"#;
        let s = Source::from_build_dir(git, "0.1.0", Some(record)).unwrap_or_else(|e| panic!("{}", e.0));
        let want = Source::Git {
            url: "https://example.org/sluice".into(),
            branch: Some("dev".into()),
            rev: Some("abcdef0123".into()),
        };
        assert_eq!(s, want);
        let p = Project::new("a", s).unwrap_or_else(|e| panic!("{}", e.0));
        let want = r#"sluice = { git = "https://example.org/sluice", branch = "dev", rev = "abcdef0123" }"#;
        assert!(p.render(FILES[0].1).contains(want));
        // No record: a message that says what to pass, never a placeholder URL.
        let err = Source::from_build_dir(git, "0.1.0", None).unwrap_err().0;
        assert!(err.contains("--path <sluice checkout>") && err.contains("--git"), "{err}");
        let gone = Source::from_build_dir(Path::new("/nonexistent/sluice/cargo-sluice"), "0.1.0", None).unwrap_err().0;
        assert!(gone.contains("no longer there"), "{gone}");
    }
}
