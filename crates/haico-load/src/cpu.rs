//! Process CPU time from `/proc/PID/stat` (Linux): user and system time of every thread of
//! the process, in clock ticks of `USER_HZ`, which the kernel fixes at 100 per second for
//! this interface.

use anyhow::{Context, Result, bail};

/// Ticks per second in `/proc/*/stat` (`USER_HZ`).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU time used by a process up to some moment, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime {
    /// Time in user mode.
    pub user: f64,
    /// Time in the kernel on the process's behalf.
    pub system: f64,
}

impl CpuTime {
    /// User plus system time.
    pub fn total(&self) -> f64 {
        self.user + self.system
    }

    /// The CPU time used between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            user: (self.user - earlier.user).max(0.0),
            system: (self.system - earlier.system).max(0.0),
        }
    }
}

/// Reads the CPU time of process `pid`, or of this process when `None`.
pub fn sample(pid: Option<u32>) -> Result<CpuTime> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading {path} (is the process running? Linux only)"))?;
    parse_stat(&text).with_context(|| format!("parsing {path}"))
}

/// The processes whose parent is `parent` (a database server's backends and helpers, for
/// PostgreSQL: every child of the postmaster), with the CPU time each has used so far.
/// Processes that end while being read are skipped.
pub fn children(parent: u32) -> Result<Vec<(u32, CpuTime)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").context("listing /proc (Linux only)")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if parent_of(&text) == Some(parent)
            && let Ok(cpu) = parse_stat(&text)
        {
            out.push((pid, cpu));
        }
    }
    Ok(out)
}

/// [`children`] of a database server's main process, failing when it has none: a PID that is
/// not the postmaster (or no longer runs) would otherwise read as a database that used no CPU.
pub fn database_children(parent: u32) -> Result<Vec<(u32, CpuTime)>> {
    let found = children(parent)?;
    if found.is_empty() {
        bail!(
            "--database-pid {parent}: no running process has it as its parent; pass the database \
             server's main process (PostgreSQL's postmaster: `pgrep -o -x postgres`)"
        );
    }
    Ok(found)
}

/// Field 4 (`ppid`) of a `stat` line.
fn parent_of(text: &str) -> Option<u32> {
    let close = text.rfind(')')?;
    text[close + 1..]
        .split_whitespace()
        .nth(4 - 3)?
        .parse()
        .ok()
}

/// Fields 14 (`utime`) and 15 (`stime`) of a `stat` line. The command name (field 2) is in
/// parentheses and may itself contain spaces or parentheses, so fields are counted from the
/// last `)`.
fn parse_stat(text: &str) -> Result<CpuTime> {
    let Some(close) = text.rfind(')') else {
        bail!("no command name in the stat line");
    };
    // After ")": field 3 (state) is index 0, so field N is index N - 3.
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let tick = |index: usize| -> Result<f64> {
        let raw = fields.get(index).context("stat line too short")?;
        let ticks: u64 = raw.parse().context("CPU time is not a number")?;
        Ok(ticks as f64 / TICKS_PER_SECOND)
    };
    Ok(CpuTime {
        user: tick(14 - 3)?,
        system: tick(15 - 3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line() {
        let line =
            "1234 (haico (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 1 2 3";
        let cpu = parse_stat(line).unwrap_or_default();
        assert!((cpu.user - 2.5).abs() < 1e-9);
        assert!((cpu.system - 0.75).abs() < 1e-9);
        assert_eq!(parent_of(line), Some(1));
        let me = std::process::id();
        let parent = parent_of(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default());
        let siblings = parent
            .map(|p| children(p).unwrap_or_default())
            .unwrap_or_default();
        assert!(siblings.iter().any(|(pid, _)| *pid == me));
        // Empty (and failing below) if it were accepted.
        let err = database_children(u32::MAX)
            .err()
            .map(|err| err.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("--database-pid") && err.contains("postmaster"),
            "{err}"
        );
        assert!(sample(None).is_ok());
    }
}
