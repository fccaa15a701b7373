//! `bench scale`: how a step grows with the mesh. Each case (the drop
//! under the real-time preset and under local-global, the twisting bar
//! under local-global, the raptor on a plane) runs at each size in a
//! process of its own, so that its peak resident memory is its own; the
//! records give per-stage medians and peak memory, and each case's fitted
//! exponent `ms ∝ vertices^p` (least squares on the logarithms).

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;
use serde::Serialize;

use ferrofem::scene::{builtin, MeshSpec, Scene};
use ferrofem::stats::{Stage, Summary};

use crate::records::{write_json, ScaleRecord};
use crate::sysinfo::Context;
use crate::BenchError;

/// Arguments of `bench scale`.
#[derive(Debug, Args)]
pub struct ScaleArgs {
    /// Vertex counts each case runs at (the generated meshes come as close
    /// as their grids allow; the raptor uses the stored mesh nearest each).
    #[arg(long, value_delimiter = ',', default_values_t = [5_000usize, 20_000, 60_000])]
    pub sizes: Vec<usize>,
    /// Cases to run (`drop-rt`, `drop-lg`, `drop-lg-f32`, `bar-lg`,
    /// `bar-lg-f32`, `raptor`; default all). `-f32`: the same scene with
    /// `[local_global] precision = "single"`.
    #[arg(long, value_delimiter = ',')]
    pub cases: Vec<String>,
    /// Steps to time per run, after 2 warm-up steps.
    #[arg(long, default_value_t = 10)]
    pub steps: usize,
    /// 5k and 20k vertices, 3 timed steps: finishes in about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Folder of external meshes (the raptor); the raptor is skipped when absent.
    #[arg(long, default_value = "../shared/meshes")]
    pub meshes: PathBuf,
    /// Write the records (and the fitted exponents) as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw step time against vertices (log–log) to this PNG.
    #[arg(long)]
    pub figure: Option<PathBuf>,
    /// Run one `CASE:VERTICES` in this process and print its record as JSON
    /// (what each child process of `bench scale` does).
    #[arg(long, hide = true)]
    pub one: Option<String>,
}

/// A case's fitted growth.
#[derive(Debug, Clone, Serialize)]
pub struct ScaleFit {
    /// Case name.
    pub case: String,
    /// `p` of `step_ms ∝ vertices^p` over the sizes run.
    pub exponent: f64,
    /// Sizes the fit saw.
    pub points: usize,
}

/// What `--json` writes.
#[derive(Debug, Serialize)]
struct ScaleReport<'a> {
    records: &'a [ScaleRecord],
    fits: Vec<ScaleFit>,
    context: Context,
}

const CASES: [&str; 6] = ["drop-rt", "drop-lg", "drop-lg-f32", "bar-lg", "bar-lg-f32", "raptor"];

/// Runs `bench scale`.
pub fn bench_scale(a: ScaleArgs) -> Result<(), BenchError> {
    if let Some(one) = &a.one {
        let record = run_one(one, a.steps, &a.meshes)?;
        println!("{}", serde_json::to_string(&record).map_err(|e| BenchError::Other(e.to_string()))?);
        return Ok(());
    }
    let sizes = if a.quick { vec![5_000, 20_000] } else { a.sizes.clone() };
    let steps = if a.quick { 3 } else { a.steps };
    let cases: Vec<String> = match a.cases.is_empty() {
        true => CASES.iter().map(|c| c.to_string()).collect(),
        false => a.cases.clone(),
    };
    if let Some(bad) = cases.iter().find(|c| !CASES.contains(&c.as_str())) {
        return Err(BenchError::Other(format!("bench scale: no case `{bad}` (cases: {})", CASES.join(", "))));
    }
    println!("{}", header());
    let mut records = Vec::new();
    for case in &cases {
        for &size in &sizes {
            match child(case, size, steps, &a.meshes)? {
                Some(r) => {
                    println!("{}", row(&r));
                    records.push(r);
                }
                None => println!("{case:<11} {size:>7}  skipped"),
            }
        }
    }
    let fits: Vec<ScaleFit> = cases.iter().filter_map(|c| fit(c, &records)).collect();
    for f in &fits {
        println!("{}: step ∝ vertices^{:.2} over {} sizes", f.case, f.exponent, f.points);
    }
    if let Some(path) = &a.figure {
        crate::plot::scale_figure(path, &records)?;
    }
    if let Some(path) = &a.json {
        write_json(path, &ScaleReport { records: &records, fits, context: Context::now() })?;
    }
    Ok(())
}

/// Runs `case` at `size` in a child process (this binary with `--one`);
/// `None` when the case has no mesh for that size.
fn child(case: &str, size: usize, steps: usize, meshes: &Path) -> Result<Option<ScaleRecord>, BenchError> {
    let exe = std::env::current_exe().map_err(|e| BenchError::Other(format!("bench scale: {e}")))?;
    let threads = rayon::current_num_threads().to_string();
    let out = Command::new(exe)
        .args(["--threads", &threads, "bench", "scale", "--steps", &steps.to_string(), "--meshes"])
        .arg(meshes)
        .args(["--one", &format!("{case}:{size}")])
        .output()
        .map_err(|e| BenchError::Other(format!("bench scale: cannot start a child run: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("no mesh near") {
            return Ok(None);
        }
        return Err(BenchError::Other(format!("bench scale {case} at {size} vertices: {}", err.trim())));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or("");
    serde_json::from_str(line).map(Some).map_err(|e| {
        BenchError::Other(format!("bench scale {case} at {size}: unreadable record ({e}): {line}"))
    })
}

/// Builds and times `CASE:VERTICES` in this process.
fn run_one(one: &str, steps: usize, meshes: &Path) -> Result<ScaleRecord, BenchError> {
    let (case, size) = one
        .split_once(':')
        .and_then(|(c, s)| Some((c, s.parse::<usize>().ok()?)))
        .ok_or_else(|| BenchError::Other(format!("--one {one}: expected CASE:VERTICES")))?;
    let scene = scene(case, size, meshes)?;
    let mut world = scene.build_on(ferrofem_gpu::backend())?;
    for _ in 0..2 {
        world.step()?;
    }
    let records: Vec<_> = (0..steps.max(1)).map(|_| world.step()).collect::<Result<_, _>>()?;
    let s = Summary::of(&records);
    Ok(ScaleRecord {
        case: case.to_string(),
        integrator: if world.local_global().is_some() { "local-global" } else { "implicit-euler" }.into(),
        target: size,
        vertices: world.model.bodies.iter().map(|b| b.vertex_count()).sum(),
        steps: s.steps,
        step_ms_median: s.step_ms_median,
        step_ms_p90: s.step_ms_p90,
        stage_ms_median: s.stage_ms_median,
        contacts_max: s.contacts_max,
        max_penetration: s.max_penetration,
        peak_mb: peak_resident_mb().unwrap_or(f64::NAN),
        threads: rayon::current_num_threads(),
    })
}

/// The scene of `case` with a mesh of about `size` vertices.
fn scene(case: &str, size: usize, meshes: &Path) -> Result<Scene, BenchError> {
    let ball = |mut scene: Scene| {
        // (r + 1)³ vertices for resolution r.
        let r = ((size as f64).cbrt().round() as usize).max(3) - 1;
        scene.spec.bodies[0].mesh = MeshSpec::Ball { radius: 0.1, resolution: r };
        scene
    };
    if let Some(double) = case.strip_suffix("-f32") {
        let mut scene = scene(double, size, meshes)?;
        scene.spec.local_global.precision = ferrofem_linalg::Precision::Single;
        return Ok(scene);
    }
    Ok(match case {
        "drop-rt" => ball(crate::scenes::template("drop-5k-rt")?),
        "drop-lg" => ball(builtin::load("drop-lg")?),
        "bar-lg" => {
            let mut scene = builtin::load("twisting-bar-lg")?;
            if let MeshSpec::Box { cells, .. } = &mut scene.spec.bodies[0].mesh {
                let base = cells.map(|c| c + 1).iter().product::<usize>() as f64;
                let s = (size as f64 / base).cbrt();
                *cells = cells.map(|c| (((c + 1) as f64 * s).round() as usize).max(2) - 1);
            }
            scene
        }
        "raptor" => {
            let (name, mesh) = crate::factor::raptor_cases(meshes)
                .into_iter()
                .min_by_key(|(name, _)| vertices_in_name(name).abs_diff(size))
                .filter(|(name, _)| vertices_in_name(name).abs_diff(size) * 4 < size)
                .ok_or_else(|| BenchError::Other(format!("raptor: no mesh near {size} vertices")))?;
            let mut scene = crate::scenes::template("raptor-60k")?;
            scene.spec.simulation.name = Some(name);
            scene.spec.bodies[0].mesh = mesh;
            scene
        }
        _ => return Err(BenchError::Other(format!("bench scale: no case `{case}`"))),
    })
}

/// `raptor 14k` → 14,000.
fn vertices_in_name(name: &str) -> usize {
    name.trim_end_matches('k').rsplit(' ').next().and_then(|k| k.parse::<usize>().ok()).unwrap_or(0) * 1000
}

/// `VmHWM` of this process (MB).
fn peak_resident_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The least-squares slope of `ln ms` against `ln vertices` over a case's
/// records (two sizes or more).
pub fn fit(case: &str, records: &[ScaleRecord]) -> Option<ScaleFit> {
    let pts: Vec<(f64, f64)> = records
        .iter()
        .filter(|r| r.case == case && r.step_ms_median > 0.0)
        .map(|r| ((r.vertices as f64).ln(), r.step_ms_median.ln()))
        .collect();
    let n = pts.len() as f64;
    if pts.len() < 2 {
        return None;
    }
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = pts.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    (sxx > 0.0).then(|| ScaleFit { case: case.to_string(), exponent: sxy / sxx, points: pts.len() })
}

/// The stages the table shows.
const COLUMNS: [Stage; 7] = [
    Stage::FreeMotion,
    Stage::BuildDelassus,
    Stage::SolveConstraints,
    Stage::Correct,
    Stage::LocalStep,
    Stage::GlobalStep,
    Stage::DetectContacts,
];

fn header() -> String {
    let stages: String = COLUMNS.iter().map(|s| format!(" {:>9.9}", s.name())).collect();
    format!(
        "{:<11} {:>7} {:>9} {:>9}{stages} {:>8} {:>8}",
        "case", "vertices", "step ms", "p90", "peak MB", "contacts"
    )
}

fn row(r: &ScaleRecord) -> String {
    let stages: String = COLUMNS.iter().map(|s| format!(" {:>9.2}", r.stage_ms_median.get(*s))).collect();
    format!(
        "{:<11} {:>7} {:>9.2} {:>9.2}{stages} {:>8.0} {:>8}",
        r.case, r.vertices, r.step_ms_median, r.step_ms_p90, r.peak_mb, r.contacts_max
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrofem::stats::StageTimes;

    fn record(case: &str, vertices: usize, ms: f64) -> ScaleRecord {
        ScaleRecord {
            case: case.into(),
            integrator: String::new(),
            target: vertices,
            vertices,
            steps: 1,
            step_ms_median: ms,
            step_ms_p90: ms,
            stage_ms_median: StageTimes::default(),
            contacts_max: 0,
            max_penetration: 0.0,
            peak_mb: 0.0,
            threads: 1,
        }
    }

    /// The fit recovers the exponent of an exact power law and ignores
    /// other cases; one size gives no fit.
    #[test]
    fn the_fit_recovers_a_power_law() {
        let rs: Vec<_> = [5_000usize, 20_000, 60_000]
            .iter()
            .map(|&n| record("a", n, 3.0 * (n as f64).powf(1.37)))
            .chain([record("b", 5_000, 1.0)])
            .collect();
        let f = fit("a", &rs).unwrap();
        assert!((f.exponent - 1.37).abs() < 1e-12 && f.points == 3, "{f:?}");
        assert!(fit("b", &rs).is_none());
    }

    /// A case that does not exist and a malformed `--one` are refused by
    /// name, before anything runs.
    #[test]
    fn unknown_cases_are_refused_by_name() {
        let args = |cases: &[&str], one: Option<&str>| ScaleArgs {
            sizes: vec![5_000],
            cases: cases.iter().map(|c| c.to_string()).collect(),
            steps: 1,
            quick: false,
            meshes: PathBuf::from("/nonexistent"),
            json: None,
            figure: None,
            one: one.map(str::to_string),
        };
        let e = bench_scale(args(&["drop-rt", "dorp"], None)).unwrap_err().to_string();
        assert!(
            e.contains("no case `dorp`")
                && e.contains("drop-rt, drop-lg, drop-lg-f32, bar-lg, bar-lg-f32, raptor"),
            "{e}"
        );
        let e = bench_scale(args(&[], Some("drop-rt"))).unwrap_err().to_string();
        assert!(e.contains("expected CASE:VERTICES"), "{e}");
    }

    /// Every case builds a scene near the size asked for (the raptor only
    /// where its meshes are stored).
    #[test]
    fn cases_build_near_their_size() {
        for case in ["drop-rt", "drop-lg", "bar-lg"] {
            for size in [5_000, 20_000] {
                let s = scene(case, size, Path::new("/nonexistent")).unwrap();
                let n: usize = match &s.spec.bodies[0].mesh {
                    MeshSpec::Ball { resolution, .. } => (resolution + 1).pow(3),
                    MeshSpec::Box { cells, .. } => cells.iter().map(|c| c + 1).product(),
                    other => panic!("{other:?}"),
                };
                assert!(n.abs_diff(size) * 5 < size, "{case} at {size}: {n} vertices");
            }
        }
        let single = scene("bar-lg-f32", 5_000, Path::new("/nonexistent")).unwrap();
        assert_eq!(single.spec.local_global.precision, ferrofem_linalg::Precision::Single);
        assert!(scene("raptor", 5_000, Path::new("/nonexistent")).is_err());
        assert_eq!(vertices_in_name("raptor 14k"), 14_000);
    }
}
