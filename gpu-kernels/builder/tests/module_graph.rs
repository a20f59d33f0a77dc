//! The builder's modules import each other in one direction only: `error` imports no
//! module, and no module imports one that imports it back (through any number of steps).
//! A module names another by its path (`crate::toolchain::…`), never through the crate
//! root's re-exports, which would hide an edge back to `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules of `src/` and, for each, the modules its code (not its docs) names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let path = entry.path();
        let Some(name) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else { continue };
        if path.extension().is_none_or(|e| e != "rs") || name == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut names = BTreeSet::new();
        for line in text.lines().map(str::trim_start).filter(|l| !l.starts_with("//")) {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let module: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                names.insert(module);
            }
            // `use crate::{a, b}`: each name in the braces.
            if let Some(list) = line.strip_prefix("use crate::{") {
                for item in list.trim_end_matches("};").split(',') {
                    let module: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    names.insert(module);
                }
            }
        }
        names.remove("");
        graph.insert(name, names);
    }
    graph
}

#[test]
fn modules_import_each_other_in_one_direction() {
    let graph = imports();
    assert!(graph.contains_key("error") && graph.contains_key("toolchain"), "{graph:?}");
    for (module, names) in &graph {
        for name in names {
            assert!(
                graph.contains_key(name),
                "src/{module}.rs names `crate::{name}`, which is not a module: name the module that defines it \
                 (`crate::<module>::{name}`), so that every import is an edge between two modules"
            );
        }
    }
    assert!(graph["error"].is_empty(), "src/error.rs imports {:?}: errors carry their fix as text", graph["error"]);
    // Depth-first search for a cycle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = path.iter().position(|p| *p == m) {
            panic!(
                "import cycle: {} -> {m}; move what both need into a module below them both",
                path[at..].join(" -> ")
            );
        }
        path.push(m);
        for next in &graph[m] {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}
