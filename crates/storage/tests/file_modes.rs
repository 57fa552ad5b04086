//! What `OsStorage` creates is its owner's alone: files 0600 and
//! directories 0700, MySQL's defaults (the data directory holds password
//! hashes and every committed row).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use storage::{OsStorage, Storage};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn files_the_seam_creates_are_mode_0600() {
    let dir = tempfile::tempdir().unwrap();
    let created = dir.path().join("binlog.000001");
    OsStorage.create(&created).unwrap().write_at(0, b"bytes").unwrap();
    assert_eq!(mode(&created), 0o600);

    let written = dir.path().join("users.json");
    OsStorage.write_atomically(&written, &dir.path().join("users.json.tmp"), b"{}").unwrap();
    assert_eq!(mode(&written), 0o600);
}

#[test]
fn directories_the_seam_creates_are_mode_0700_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("data").join("binlog").join(".binlogd-tmp");
    OsStorage.create_dir_all(&nested).unwrap();
    for created in [dir.path().join("data"), dir.path().join("data").join("binlog"), nested.clone()] {
        assert_eq!(mode(&created), 0o700, "{}", created.display());
    }
    // An existing directory is left as it is.
    std::fs::set_permissions(&nested, std::fs::Permissions::from_mode(0o750)).unwrap();
    OsStorage.create_dir_all(&nested).unwrap();
    assert_eq!(mode(&nested), 0o750);
}
