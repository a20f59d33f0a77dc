//! The project `cargo sluice new` writes: files embedded in the binary (`template/`),
//! with `{{name}}`-style placeholders filled in.

use std::path::{Path, PathBuf};

use crate::{Failure, Result};

/// Where the generated project gets sluice from by default: the repository this
/// `cargo-sluice` was built from (its `Cargo.toml`'s `repository`).
pub const DEFAULT_GIT: &str = env!("CARGO_PKG_REPOSITORY");

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
#[derive(Debug, Clone)]
pub enum Source {
    /// A git repository (cargo finds `sluice`, `sluice-builder` and `sluice-device` in it).
    Git {
        /// The repository.
        url: String,
        /// A branch, else the default one.
        branch: Option<String>,
    },
    /// A local checkout (absolute path).
    Path(PathBuf),
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
                "cargo sluice new: `{name}` is not a usable project name: start with a letter, then letters, \
                 digits, `-` or `_` (it names the host program and, with `-kernels`, the kernel crate)"
            )));
        }
        if let Source::Path(p) = &source {
            if !p.join("gpu-kernels/device/Cargo.toml").is_file() {
                return Err(Failure(format!(
                    "cargo sluice new: {} is not a sluice checkout (no gpu-kernels/device/Cargo.toml there)",
                    p.display()
                )));
            }
        }
        Ok(Project { name: name.to_string(), source })
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
            Source::Git { url, branch: None } => format!("{{ git = {url:?} }}"),
            Source::Git { url, branch: Some(b) } => format!("{{ git = {url:?}, branch = {b:?} }}"),
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
            .replace("{{repository}}", DEFAULT_GIT)
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
        let p = Project::new("my-app", Source::Git { url: "https://example.org/sluice".into(), branch: None })
            .unwrap_or_else(|e| panic!("{}", e.0));
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
            assert!(Project::new(bad, Source::Path(PathBuf::from("/"))).is_err(), "{bad}");
        }
    }
}
