//! The workspace's dependency graph, read with `cargo tree` (which
//! resolves features as `cargo build` does when dev-dependencies are left
//! out):
//! - the release server carries no simulator and no crash points: nothing
//!   in the workspace's normal build turns on this crate's
//!   `fault-injection` feature (only dev-dependencies do), so `SimStorage`
//!   is not compiled and `CrashPoints::hit` is an empty function; the
//!   control: the build `cargo test` makes of the server, which its
//!   process-kill tests run, does carry them;
//! - the seam sits below both logs: the redo log does not depend on the
//!   binary log.

use std::path::Path;
use std::process::Command;

const FEATURE: &str = "storage feature \"fault-injection\"";

/// `cargo tree` over the workspace with `args`, one package or feature a line.
fn cargo_tree(args: &[&str]) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let output = Command::new(cargo)
        .arg("tree")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--offline", "--prefix", "none"])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(output.status.success(), "cargo tree {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Who enables which of this crate's features.
fn features_of_storage(args: &[&str]) -> String {
    let tree = cargo_tree(&[&["--invert", "storage"], args].concat());
    assert!(tree.contains("storage feature \"default\""), "cargo tree {args:?} printed no features of storage:\n{tree}");
    tree
}

#[test]
fn the_release_build_of_the_workspace_has_no_simulator_or_crash_points() {
    let tree = features_of_storage(&["--workspace", "--edges", "features,normal,build"]);
    let enabled_by: Vec<&str> = tree.lines().skip_while(|line| !line.starts_with(FEATURE)).skip(1).collect();
    assert!(
        !tree.contains(FEATURE),
        "a normal dependency turns on {FEATURE} (the release server would carry it); enabled by:\n{}",
        enabled_by.join("\n")
    );
}

#[test]
fn the_test_build_of_the_server_has_crash_points_for_its_kill_tests() {
    let tree = features_of_storage(&["--package", "binlogd", "--edges", "features"]);
    assert!(tree.contains(FEATURE), "binlogd's tests run its binary with BINLOGD_CRASH_POINT, which needs {FEATURE}:\n{tree}");
}

#[test]
fn the_redo_log_does_not_depend_on_the_binary_log() {
    let tree = cargo_tree(&["--package", "redo", "--edges", "normal,build"]);
    assert!(tree.lines().any(|line| line.starts_with("storage v")), "redo should depend on the seam:\n{tree}");
    assert!(!tree.lines().any(|line| line.starts_with("binlog v")), "redo depends on binlog:\n{tree}");
}
