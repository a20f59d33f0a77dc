//! The device crate spells out the workspace's lints (cargo cannot combine
//! `[lints] workspace = true` with the crate's own `unexpected_cfgs` entry):
//! this test fails when the two drift apart.

fn table<'a>(toml: &'a str, header: &str) -> Vec<&'a str> {
    let Some(start) = toml.find(&format!("{header}\n")) else { return Vec::new() };
    toml[start + header.len() + 1..]
        .lines()
        .take_while(|l| !l.starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn the_device_crate_has_every_workspace_lint() {
    let root = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml")).unwrap();
    let own = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    for (ws, mine) in [("[workspace.lints.rust]", "[lints.rust]"), ("[workspace.lints.clippy]", "[lints.clippy]")] {
        let want = table(&root, ws);
        let have = table(&own, mine);
        assert!(!want.is_empty(), "{ws} not found in the root Cargo.toml");
        for lint in want {
            assert!(
                have.contains(&lint),
                "gpu-kernels/device/Cargo.toml's {mine} lacks the workspace lint `{lint}`: copy it from the root {ws}"
            );
        }
    }
    assert!(table(&own, "[lints.rust]").iter().any(|l| l.contains("cfg(sluice_panic_messages)")));
}
