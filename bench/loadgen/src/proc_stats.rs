//! Server process figures from /proc: CPU time (all threads) and resident memory.

use std::time::Duration;

/// User + system CPU time of the process, all threads.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after ')'.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    let ticks_per_second = 100; // USER_HZ on Linux
    Some(Duration::from_millis(
        (utime + stime) * 1000 / ticks_per_second,
    ))
}

/// CPU time per operation in µs between two [`cpu_time`] readings; NaN when either reading
/// failed or nothing was done.
pub fn cpu_us_per(before: Option<Duration>, after: Option<Duration>, operations: u64) -> f64 {
    match (before, after) {
        (Some(b), Some(a)) if operations > 0 => {
            a.saturating_sub(b).as_secs_f64() * 1e6 / operations as f64
        }
        _ => f64::NAN,
    }
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Peak resident set size (VmHWM) in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// Current resident set size (VmRSS) in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

/// Resident anonymous memory (heap, stacks) in KiB.
pub fn rss_anon_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "RssAnon:")
}

/// Resident file-backed memory (the program's and libraries' code) in KiB.
pub fn rss_file_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "RssFile:")
}

/// The process and all its descendants (a server that forks workers: uvicorn's `--workers`,
/// Node's cluster), found through each process's parent in /proc.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            // The parent is the second field after the command name's ')'.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(parent) = parent {
                parents.push((child, parent));
            }
        }
    }
    let mut found = vec![pid];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        at += 1;
    }
    found
}

/// [`cpu_time`] summed over the processes of [`tree`] (those alive now).
pub fn tree_cpu_time(pids: &[u32]) -> Option<Duration> {
    pids.iter().map(|&pid| cpu_time(pid)).sum()
}

/// [`rss_kib`] summed over `pids`.
pub fn tree_rss_kib(pids: &[u32]) -> Option<u64> {
    pids.iter().map(|&pid| rss_kib(pid)).sum()
}

/// [`peak_rss_kib`] summed over `pids` (each process's own peak: an upper bound of the whole's).
pub fn tree_peak_rss_kib(pids: &[u32]) -> Option<u64> {
    pids.iter().map(|&pid| peak_rss_kib(pid)).sum()
}

/// Proportional set size in KiB (shared pages divided among the processes sharing them), from
/// /proc/PID/smaps_rollup: what processes forked from one another use together, summed.
pub fn pss_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    rollup
        .lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// [`pss_kib`] summed over `pids`.
pub fn tree_pss_kib(pids: &[u32]) -> Option<u64> {
    pids.iter().map(|&pid| pss_kib(pid)).sum()
}
