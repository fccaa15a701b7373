//! Side-by-side runs of peer libraries through the scripts in
//! `benchmarks/peers/` (skipped, with a message, when they cannot run).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ferrofem_linalg::CsrMatrix;

/// Writes the lower triangle of a symmetric matrix as Matrix Market.
pub fn write_matrix_market(m: &CsrMatrix, path: &Path) -> std::io::Result<()> {
    let p = &m.pattern;
    let mut lower = 0;
    let mut body = String::new();
    for i in 0..p.nrows {
        for k in p.row_ptr[i]..p.row_ptr[i + 1] {
            let j = p.col_idx[k] as usize;
            if j <= i {
                lower += 1;
                let _ = writeln!(body, "{} {} {:e}", i + 1, j + 1, m.values[k]);
            }
        }
    }
    let head = format!("%%MatrixMarket matrix coordinate real symmetric\n{} {} {lower}\n", p.nrows, p.ncols);
    std::fs::write(path, head + &body)
}

/// Writes a general (rectangular) matrix as Matrix Market.
fn write_general_matrix_market(m: &CsrMatrix, path: &Path) -> std::io::Result<()> {
    let p = &m.pattern;
    let mut body = String::new();
    for i in 0..p.nrows {
        for k in p.row_ptr[i]..p.row_ptr[i + 1] {
            let _ = writeln!(body, "{} {} {:e}", i + 1, p.col_idx[k] + 1, m.values[k]);
        }
    }
    let head =
        format!("%%MatrixMarket matrix coordinate real general\n{} {} {}\n", p.nrows, p.ncols, p.nnz());
    std::fs::write(path, head + &body)
}

/// A scratch file of this process in the temporary folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        Scratch(std::env::temp_dir().join(format!("ferrofem-peer-{}-{name}", std::process::id())))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs a peer script on files, then `args` (one-thread BLAS), and parses
/// its JSON, or `None` with a message.
fn run_script(script: &str, files: &[&Scratch], args: &[String]) -> Option<serde_json::Value> {
    let script = Path::new(script);
    if !script.exists() {
        eprintln!("peer skipped: run from the repository root ({} not found)", script.display());
        return None;
    }
    let out = Command::new("python3")
        .arg(script)
        .args(files.iter().map(|f| &f.0))
        .args(args)
        .env("OMP_NUM_THREADS", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "peer skipped: {}",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("peer script failed")
        );
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// CHOLMOD's (numeric ms, nnz(L)) for the matrix, or `None` with a message.
pub fn cholmod(m: &CsrMatrix) -> Option<(f64, usize)> {
    let a = Scratch::new("a.mtx");
    write_matrix_market(m, &a.0).ok()?;
    let v = run_script("benchmarks/peers/cholmod_factor.py", &[&a], &[])?;
    Some((v["numeric_ms"].as_f64()?, v["nnz_l"].as_u64()? as usize))
}

/// `A` (lower triangle), `H` and a probe of `H`'s rows written to scratch
/// files for a peer script.
fn case_files(a: &CsrMatrix, h: &CsrMatrix, probe: &[f64]) -> Option<[Scratch; 3]> {
    let (fa, fh, fp) = (Scratch::new("a.mtx"), Scratch::new("h.mtx"), Scratch::new("p.txt"));
    write_matrix_market(a, &fa.0).ok()?;
    write_general_matrix_market(h, &fh.0).ok()?;
    std::fs::write(&fp.0, probe.iter().map(|x| format!("{x:e}\n")).collect::<String>()).ok()?;
    Some([fa, fh, fp])
}

/// zeng2022 Table 1's direct-solver step by Intel MKL PARDISO
/// (`benchmarks/peers/pardiso_step.py`): the augmented system `[A Hᵀ; H 0]`
/// factorized with the Schur complement on `H`'s rows (`−W`), the free and
/// corrective motions by its partial solves; each time the median of three
/// runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PardisoStep {
    /// Reordering and symbolic factorization of the augmented system (ms).
    pub analysis_ms: f64,
    /// Its numeric factorization with the Schur complement (ms).
    pub factor_schur_ms: f64,
    /// The numeric factorization of `A` alone (ms): the Schur complement
    /// costs the difference.
    pub factor_a_ms: f64,
    /// The free motion `A⁻¹ b` by the partial solves (ms).
    pub free_ms: f64,
    /// The corrective motion `A⁻¹ Hᵀ λ` by the partial solves (ms).
    pub corr_ms: f64,
    /// PARDISO's threads.
    pub threads: usize,
    /// MKL's version string.
    pub version: String,
    /// `W p` for the probe `p`.
    pub w_times_probe: Vec<f64>,
}

/// [`PardisoStep`] on `A` (symmetric), `H` and a probe of `H`'s rows, on
/// `threads` threads, or `None` with a message (MKL unavailable: the script
/// installs the `mkl` wheel when it can).
pub fn pardiso_step(a: &CsrMatrix, h: &CsrMatrix, probe: &[f64], threads: usize) -> Option<PardisoStep> {
    let [fa, fh, fp] = case_files(a, h, probe)?;
    let v = run_script("benchmarks/peers/pardiso_step.py", &[&fa, &fh, &fp], &[threads.to_string()])?;
    let ms = |key: &str| v[key].as_f64();
    Some(PardisoStep {
        analysis_ms: ms("analysis_ms")?,
        factor_schur_ms: ms("factor_schur_ms")?,
        factor_a_ms: ms("factor_a_ms")?,
        free_ms: ms("free_ms")?,
        corr_ms: ms("corr_ms")?,
        threads,
        version: v["version"].as_str().unwrap_or("unknown").to_string(),
        w_times_probe: v["w_times_probe"].as_array()?.iter().map(|x| x.as_f64()).collect::<Option<_>>()?,
    })
}

/// `W = H A⁻¹ Hᵀ` by CHOLMOD's route (sparse-right-hand-side solves, then
/// `Sᵀ D⁻¹ S`): median build ms (factorization excluded) and `W p`.
pub fn cholmod_delassus(a: &CsrMatrix, h: &CsrMatrix, probe: &[f64]) -> Option<(f64, Vec<f64>)> {
    let [fa, fh, fp] = case_files(a, h, probe)?;
    let v = run_script("benchmarks/peers/cholmod_delassus.py", &[&fa, &fh, &fp], &[])?;
    let wp = v["w_times_probe"].as_array()?.iter().map(|x| x.as_f64()).collect::<Option<Vec<f64>>>()?;
    Some((v["build_ms"].as_f64()?, wp))
}
