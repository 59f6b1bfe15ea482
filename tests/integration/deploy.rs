//! What people ship: `haico --version` names the commit, and the systemd unit and its
//! settings file in `deploy/` are valid and name only real settings.

use std::{path::Path, process::Command};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn version_names_the_package_version_and_the_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_haico"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let expected_start = format!("haico {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&expected_start), "{text}");
    // Built from a git checkout (as the tests are), the commit is the checked-out one.
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(manifest_dir())
        .output()
        .unwrap();
    if head.status.success() && std::env::var_os("HAICO_BUILD_COMMIT").is_none() {
        let head = String::from_utf8(head.stdout).unwrap();
        assert_eq!(text.trim_end(), format!("{expected_start}{})", head.trim()));
    } else {
        assert!(!text.contains("(commit )"), "{text}");
    }
}

/// The unit with its `ExecStart` pointed at the binary under test, in a scratch folder.
fn unit_for_test(dir: &Path) -> std::path::PathBuf {
    let unit = std::fs::read_to_string(manifest_dir().join("deploy/haico.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/local/bin/haico serve"));
    let unit = unit.replace("/usr/local/bin/haico", env!("CARGO_BIN_EXE_haico"));
    let path = dir.join("haico.service");
    std::fs::write(&path, unit).unwrap();
    path
}

/// `systemd-analyze verify` on a unit file, run in a scratch folder.
fn verify(unit: &Path, dir: &Path) -> std::process::Output {
    Command::new("systemd-analyze")
        .arg("verify")
        .arg(unit)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn the_systemd_unit_verifies_without_a_warning() {
    needs!(systemd_analyze);
    let dir = tempfile::tempdir().unwrap();
    let unit = unit_for_test(dir.path());
    let out = verify(&unit, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // systemd-analyze only warns about an unknown key or a bad value; a warning here is a
    // setting the service would silently run without.
    assert!(stderr.trim().is_empty(), "{stderr}");
}

#[test]
fn the_systemd_check_catches_a_misspelt_setting() {
    needs!(systemd_analyze);
    let dir = tempfile::tempdir().unwrap();
    let unit = unit_for_test(dir.path());
    let text = std::fs::read_to_string(&unit)
        .unwrap()
        .replace("NoNewPrivileges=", "NoNewPrivilege=");
    std::fs::write(&unit, text).unwrap();
    let out = verify(&unit, dir.path());
    assert!(String::from_utf8_lossy(&out.stderr).contains("NoNewPrivilege"));
}

#[test]
fn the_settings_file_names_only_real_settings() {
    let env_file = std::fs::read_to_string(manifest_dir().join("deploy/haico.env")).unwrap();
    let help = Command::new(env!("CARGO_BIN_EXE_haico"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let keys: Vec<&str> = env_file
        .lines()
        .map(|line| line.trim_start_matches('#').trim())
        .filter_map(|line| line.split_once('=').map(|(key, _)| key))
        .filter(|key| key.starts_with("HAICO_"))
        .collect();
    assert!(keys.len() >= 5, "{keys:?}");
    for key in keys {
        assert!(
            help.contains(&format!("[env: {key}")),
            "{key} is not a setting of haico serve"
        );
    }
}
