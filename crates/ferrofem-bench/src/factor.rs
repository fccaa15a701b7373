//! `ferrofem bench factor`: the sparse direct engine on FEM matrices —
//! ordering, symbolic and numeric factorization, dense and single-nonzero
//! solves, sparse inverse — for nested dissection and AMD, with CHOLMOD
//! side by side when the peer script can run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use ferrofem::scene::MeshSpec;
use ferrofem::stats::median_p90;
use ferrofem_linalg::ldlt::etree::path_len;
use ferrofem_linalg::ldlt::Supernodes;
use ferrofem_linalg::{CsrMatrix, Ldlt, LdltSymbolic, Ordering, SparseInverse};

use crate::records::write_json;
use crate::scenes::one_step_world;
use crate::sysinfo::Context;
use crate::BenchError;

/// Arguments of `bench factor`.
#[derive(Debug, Args)]
pub struct FactorArgs {
    /// The 5.3k-vertex bar only (both matrices), in under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also factorize each matrix with CHOLMOD (benchmarks/peers/cholmod_factor.py).
    #[arg(long)]
    pub peers: bool,
    /// Folder of external meshes (raptor); skipped when absent.
    #[arg(long, default_value = "../shared/meshes")]
    pub meshes: PathBuf,
    /// Fundamental supernodes (exact elimination tree, shorter etree paths)
    /// instead of faer's relaxed amalgamation.
    #[arg(long)]
    pub fundamental: bool,
    /// Largest sparse inverse to build, in MB (bigger ones are only counted).
    #[arg(long, default_value_t = 500.0)]
    pub max_inverse_mb: f64,
}

/// One `bench factor` record.
#[derive(Debug, Serialize)]
pub struct FactorRecord {
    /// Mesh of the case.
    pub mesh: String,
    /// Matrix dimension.
    pub dofs: usize,
    /// Stored entries of A.
    pub nnz_a: usize,
    /// `nested-dissection` or `amd`.
    pub ordering: Ordering,
    /// Stored entries of L below the diagonal.
    pub nnz_l: usize,
    /// Ordering time (ms).
    pub ordering_ms: f64,
    /// Symbolic analysis time after ordering (ms).
    pub symbolic_ms: f64,
    /// Numeric LDLᵀ, median of 3 (ms).
    pub numeric_ms: f64,
    /// One dense-RHS solve by our supernodal sweeps, median of 5 (ms).
    pub solve_ms: f64,
    /// The same solve by faer's supernodal solve, median of 5 (ms).
    pub faer_solve_ms: f64,
    /// 1,000 single-nonzero solves `L s = e_j`, in parallel (ms).
    pub sparse_solves_ms: f64,
    /// Mean etree path length of those solves.
    pub sparse_solve_mean_path: f64,
    /// Building `S = L⁻¹` (ms), when built.
    pub sparse_inverse_ms: Option<f64>,
    /// Bytes of `S` (f64 values and column pointers; rows are etree paths).
    pub sparse_inverse_bytes: usize,
    /// CHOLMOD numeric factorization of the same matrix (ms), when the peer ran.
    pub cholmod_numeric_ms: Option<f64>,
    /// CHOLMOD's nnz(L), when the peer ran.
    pub cholmod_nnz_l: Option<usize>,
    /// Machine context.
    pub context: Context,
}

/// A generated ball of radius 0.5 m with `r` cells across: (name, mesh spec).
pub(crate) fn ball(r: usize) -> (String, MeshSpec) {
    (format!("ball r{r}"), MeshSpec::Ball { radius: 0.5, resolution: r })
}

/// The raptor meshes of `meshes/generated/` (5k–20k vertices) that are present,
/// as (name, mesh spec); absent ones are skipped with a message.
pub(crate) fn raptor_cases(meshes: &Path) -> Vec<(String, MeshSpec)> {
    let mut out = Vec::new();
    for k in ["5k", "10k", "14k", "20k"] {
        let p = meshes.join(format!("generated/raptor_tet_{k}.msh"));
        if p.exists() {
            let abs = std::fs::canonicalize(&p).unwrap_or(p);
            out.push((format!("raptor {k}"), MeshSpec::file(abs.display().to_string())));
        } else {
            eprintln!("skipping raptor {k}: {} is absent", p.display());
        }
    }
    out
}

fn mesh_cases(quick: bool, meshes: &Path) -> Vec<(String, MeshSpec)> {
    let beam = |c: [usize; 3]| {
        let size = c.map(|x| x as f64 * 0.05);
        (format!("beam {}x{}x{}", c[0], c[1], c[2]), MeshSpec::Box { size, cells: c })
    };
    // The twisting bar of zeng2025 Table 2: 27×14×14 = 5,292 vertices.
    let bar = (
        "bar 5.3k, implicit-Euler A".to_string(),
        MeshSpec::Box { size: [2.0, 1.0, 1.0], cells: [26, 13, 13] },
    );
    if quick {
        return vec![bar];
    }
    let mut cases = vec![
        bar,
        beam([35, 9, 9]),
        ball(14),
        beam([49, 13, 13]),
        ball(21),
        beam([69, 17, 17]),
        ball(26),
        beam([87, 21, 21]),
        ball(33),
    ];
    cases.extend(raptor_cases(meshes));
    cases
}

/// The constant global matrix of local-global ARAP (zeng2025 eq. 7) as the
/// paper factorizes it, `A = A_s ⊗ I₃` (the integrator's scalar `A_s`,
/// expanded per axis): the coordinates do not couple, so the pattern holds
/// only same-axis entries (unlike implicit Euler's 3×3 blocks).
fn local_global_matrix(cells: [usize; 3], size: [f64; 3]) -> Result<CsrMatrix, BenchError> {
    use ferrofem::body::{Body, BodyMaterial, Shape};
    use ferrofem::element::Constitutive;
    use ferrofem::integrator::local_global::global::global_matrix;
    use ferrofem::material::Material;
    let mesh = ferrofem_mesh::generate::box_mesh(size, cells)?;
    let mat = Material { young: 1e9, poisson: 0.45, density: 1000.0 };
    let def = BodyMaterial {
        materials: vec![mat; mesh.tets.len()],
        constitutive: Constitutive::Arap,
        damping: Default::default(),
        bending: None,
        kinematic: vec![None; mesh.vertices.len()],
    };
    let body = Body::new("bar".into(), Shape::Volume(mesh), def)?;
    Ok(global_matrix(&body, &[], 0.01).kron_identity(3))
}

/// The implicit-Euler system matrix of a mesh after one step.
fn system_matrix(mesh: &MeshSpec) -> Result<CsrMatrix, BenchError> {
    Ok(crate::scenes::system_matrix(&one_step_world(mesh, 1e6)?)?.clone())
}

/// Median wall milliseconds of `runs` calls of `f`.
pub(crate) fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median_p90(&mut t).0
}

/// Medians of `runs` alternating calls of `a` and `b` on copies of `x`
/// (alternating, so both see the same load on a shared machine).
fn interleaved_medians_ms(
    runs: usize,
    x: &[f64],
    mut a: impl FnMut(&mut [f64]),
    mut b: impl FnMut(&mut [f64]),
) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        for (f, t) in [(&mut a as &mut dyn FnMut(&mut [f64]), &mut ta), (&mut b, &mut tb)] {
            let mut y = x.to_vec();
            let s = Instant::now();
            f(&mut y);
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
    }
    (median_p90(&mut ta).0, median_p90(&mut tb).0)
}

/// Runs `bench factor`.
pub fn bench_factor(a: FactorArgs) -> Result<(), BenchError> {
    let mut records = Vec::new();
    println!("| mesh | DOFs | ordering | nnz(L) | ordering ms | symbolic ms | numeric ms | CHOLMOD numeric ms | solve ms | faer solve ms | 1000 etree solves ms | mean path | S MB | S build ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let bar_lg = ("bar 5.3k, local-global A (zeng2025 Table 2)".to_string(), None);
    let meshes = mesh_cases(a.quick, &a.meshes).into_iter().map(|(n, m)| (n, Some(m)));
    for (name, mesh) in std::iter::once(bar_lg).chain(meshes) {
        let m = match mesh {
            None => local_global_matrix([26, 13, 13], [2.0, 1.0, 1.0])?,
            Some(mesh) => system_matrix(&mesh)?,
        };
        let peer = if a.peers { crate::peers::cholmod(&m) } else { None };
        for ordering in [Ordering::NestedDissection, Ordering::Amd] {
            let r = factor_case(&name, &m, ordering, a.max_inverse_mb, peer, a.fundamental)?;
            println!(
                "| {} | {} | {:?} | {} | {:.1} | {:.1} | {:.1} | {} | {:.2} | {:.2} | {:.1} | {:.0} | {:.1} | {} |",
                r.mesh,
                r.dofs,
                r.ordering,
                r.nnz_l,
                r.ordering_ms,
                r.symbolic_ms,
                r.numeric_ms,
                r.cholmod_numeric_ms.map_or("–".into(), |v| format!("{v:.1}")),
                r.solve_ms,
                r.faer_solve_ms,
                r.sparse_solves_ms,
                r.sparse_solve_mean_path,
                r.sparse_inverse_bytes as f64 / 1e6,
                r.sparse_inverse_ms.map_or("skipped".into(), |v| format!("{v:.0}")),
            );
            records.push(r);
        }
    }
    if let Some(p) = &a.json {
        write_json(p, &records)?;
    }
    Ok(())
}

fn factor_case(
    name: &str,
    m: &CsrMatrix,
    ordering: Ordering,
    max_inverse_mb: f64,
    peer: Option<(f64, usize)>,
    fundamental: bool,
) -> Result<FactorRecord, BenchError> {
    let err = |e: ferrofem_linalg::LinalgError| BenchError::Other(format!("{name}: {e}"));
    let supernodes = if fundamental { Supernodes::Fundamental } else { Supernodes::Relaxed };
    let sym = Arc::new(LdltSymbolic::analyze_with(&m.pattern, ordering, 3, supernodes).map_err(err)?);
    let mut f = Ldlt::factorize(sym.clone(), m).map_err(err)?;
    let mut numeric_err = None;
    let numeric_ms = median_ms(3, || numeric_err = f.refactorize(m).err());
    if let Some(e) = numeric_err {
        return Err(err(e));
    }
    let n = m.nrows();
    let b: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let (solve_ms, faer_solve_ms) =
        interleaved_medians_ms(15, &b, |x| f.solve_in_place(x, 1), |x| f.solve_in_place_faer(x, 1));
    let js: Vec<usize> = (0..1000).map(|k| k * n / 1000).collect();
    let mut path = 0.0;
    let sparse_solves_ms = median_ms(3, || {
        path = f.solve_unit_lower_many(&js).iter().map(|c| c.rows.len()).sum::<usize>() as f64 / 1000.0
    });
    let inverse_nnz: usize = (0..n).map(|j| path_len(&sym.parent, j)).sum();
    let inverse_bytes = 8 * inverse_nnz + 8 * (n + 1);
    let sparse_inverse_ms = (inverse_bytes as f64 / 1e6 <= max_inverse_mb).then(|| {
        let t = Instant::now();
        let s = SparseInverse::new(&f);
        std::hint::black_box(&s);
        t.elapsed().as_secs_f64() * 1e3
    });
    Ok(FactorRecord {
        mesh: name.to_string(),
        dofs: n,
        nnz_a: m.pattern.nnz(),
        ordering,
        nnz_l: sym.nnz_l(),
        ordering_ms: sym.ordering_ms,
        symbolic_ms: sym.symbolic_ms,
        numeric_ms,
        solve_ms,
        faer_solve_ms,
        sparse_solves_ms,
        sparse_solve_mean_path: path,
        sparse_inverse_ms,
        sparse_inverse_bytes: inverse_bytes,
        cholmod_numeric_ms: peer.map(|p| p.0),
        cholmod_nnz_l: peer.map(|p| p.1),
        context: Context::now(),
    })
}
