//! What every benchmark records beside its figures: threads, CPU time, load.

use serde::Serialize;

/// The commit this binary was built from (`git describe`, `+dirty` for a
/// changed tree; `unknown` outside a git checkout).
pub const BUILD: &str = env!("FERROFEM_BUILD");

/// The CPU's model name (`/proc/cpuinfo`), or `unknown CPU`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// Machine context of a measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    /// Rayon worker threads.
    pub threads: usize,
    /// Logical CPUs of the machine.
    pub cpus: usize,
    /// Load average (1, 5, 15 min) when the measurement ended, if known.
    pub load_average: Option<[f64; 3]>,
    /// CPU time (user + system) of this process so far, in seconds, if known.
    pub cpu_time_s: Option<f64>,
}

impl Context {
    /// Reads the current context.
    pub fn now() -> Context {
        Context {
            threads: rayon::current_num_threads(),
            cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            load_average: load_average(),
            cpu_time_s: cpu_time_s(),
        }
    }
}

fn load_average() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let v: Vec<f64> = s.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect();
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// utime + stime of this process from /proc (Linux), in seconds.
pub fn cpu_time_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
