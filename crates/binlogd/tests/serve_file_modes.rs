//! A data directory is its owner's alone, as MySQL keeps it: after a
//! server has started, taken accounts, written a transaction, set the
//! replica's source (its password in clear text) and stopped, every
//! directory in it is mode 0700 and every file 0600.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use support::ServerProcess;

/// `(path, mode)` of every entry under `dir`, the directory itself first.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut found = vec![(dir.display().to_string(), std::fs::metadata(dir).unwrap().permissions().mode())];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(modes(&path));
        } else {
            found.push((path.display().to_string(), std::fs::metadata(&path).unwrap().permissions().mode()));
        }
    }
    found
}

#[test]
fn every_file_of_the_data_directory_is_0600_and_every_directory_0700() {
    let mut server = ServerProcess::start();
    server.query(
        None,
        "CREATE USER 'app'@'%' IDENTIFIED BY 'secret'; CREATE DATABASE shop; CREATE TABLE shop.items (id INT PRIMARY KEY);
         INSERT INTO shop.items VALUES (1); CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PASSWORD='secret'",
    );
    assert!(server.stop().success());
    let found = modes(&server.datadir);
    for name in ["users.json", "replica_source.json", "binlog.000001", "binlog.index"] {
        assert!(found.iter().any(|(path, _)| path.ends_with(name)), "{name} not in {found:?}");
    }
    for (path, mode) in &found {
        let expected = if Path::new(path).is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode & 0o777, expected, "{path}: {:o}", mode & 0o777);
    }
}
