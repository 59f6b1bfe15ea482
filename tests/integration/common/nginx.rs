//! A real nginx for a test: started in the foreground on the test's own prefix (a temporary
//! folder for its pid, logs and temp files, so no root is needed and nothing is shared), and
//! stopped when the handle drops.

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::Duration,
};

use tokio::time::Instant;

/// A running nginx; stopped on drop.
pub struct Nginx {
    child: Child,
    /// Its prefix: `nginx.conf`, `error.log`, `access.log` and whatever the test put there.
    pub dir: tempfile::TempDir,
}

impl Drop for Nginx {
    /// `SIGTERM` first: nginx's master then stops its workers before it exits. `SIGKILL` to
    /// the master alone (what `Child::kill` sends) left every worker running, orphaned, after
    /// each test. The master is killed only if it has not gone within two seconds.
    fn drop(&mut self) {
        let asked = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if asked {
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            while std::time::Instant::now() < deadline {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines every test config starts its `http {` block with: the logs and temp paths under
/// the prefix `dir`.
pub fn http_paths(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "    access_log {d}/access.log;\n    client_body_temp_path {d}/body;\n    \
         proxy_temp_path {d}/proxy;\n    fastcgi_temp_path {d}/fastcgi;\n    \
         uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n"
    )
}

/// The top of every test config: foreground, pid and error log under the prefix `dir`.
pub fn main_context(dir: &Path) -> String {
    let d = dir.display();
    format!("daemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n")
}

/// Writes `conf` as `dir`'s `nginx.conf`, starts nginx on it, and returns once every port of
/// `ports` accepts connections.
pub async fn start(dir: tempfile::TempDir, conf: &str, ports: &[u16]) -> Nginx {
    let path = dir.path().join("nginx.conf");
    std::fs::write(&path, conf).expect("write nginx.conf");
    let child = Command::new("nginx")
        .arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx must be installed (.ci/run installs Debian's package)");
    let nginx = Nginx { child, dir };
    let deadline = Instant::now() + Duration::from_secs(10);
    for &port in ports {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen on {port}: {}",
                std::fs::read_to_string(nginx.dir.path().join("error.log")).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    nginx
}
