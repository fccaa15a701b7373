//! Side-by-side runs of peer libraries through the scripts in
//! `benchmarks/peers/` (skipped, with a message, when they cannot run).

use std::fmt::Write as _;
use std::process::Command;

use ferrofem_linalg::CsrMatrix;

/// Writes the lower triangle of a symmetric matrix as Matrix Market.
pub fn write_matrix_market(m: &CsrMatrix, path: &std::path::Path) -> std::io::Result<()> {
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

/// CHOLMOD's (numeric ms, nnz(L)) for the matrix, or `None` with a message.
pub fn cholmod(m: &CsrMatrix) -> Option<(f64, usize)> {
    let script = std::path::Path::new("benchmarks/peers/cholmod_factor.py");
    if !script.exists() {
        eprintln!("peer skipped: run from the repository root ({} not found)", script.display());
        return None;
    }
    let file = std::env::temp_dir().join(format!("ferrofem-peer-{}.mtx", std::process::id()));
    write_matrix_market(m, &file).ok()?;
    let out = Command::new("python3")
        .arg(script)
        .arg(&file)
        .env("OMP_NUM_THREADS", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.ok()?;
    if !out.status.success() {
        eprintln!(
            "peer skipped: {}",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("CHOLMOD script failed")
        );
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["numeric_ms"].as_f64()?, v["nnz_l"].as_u64()? as usize))
}
