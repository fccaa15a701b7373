//! `ferrofem bench delassus`: the Delassus builders side by side on a soft
//! body pressed onto a floor (zeng2022 §6: Fig. 9, Fig. 10, Tables 1–2).
//!
//! A case is a mesh, its implicit-Euler matrix `A` with an LDLᵀ factor, and
//! a contact patch: the `c/3` lowest surface vertices along the mesh's up
//! axis (+z for the generated balls, +y for the raptor, as it is stored),
//! each with a floor frame (normal up, tangents the other two axes), which
//! is what a softer body pressed onto a plane touches. Every method builds
//! the same `W = H A⁻¹ Hᵀ`; each record carries its difference to the dense
//! result.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use ferrofem::constraint::ConstraintGroup;
use ferrofem::constraint::ConstraintJacobian;
use ferrofem::delassus::{self, DelassusBuffers, MixedDelassus, UnbuiltBody};
use ferrofem::solver::{AssembledDelassus, DelassusOperator, Pgs, PgsSettings};
use ferrofem::stats::median_p90;
use ferrofem_linalg::ldlt::{IsodofCache, IsodofCost};
use ferrofem_linalg::vector::{dot_serial, rel_max_diff};

use ferrofem_linalg::{CsrMatrix, Ldlt, LdltSymbolic, Ordering};

use crate::factor::{ball, median_ms, raptor_cases};
use crate::records::write_json;
pub use crate::records::DelassusBenchRecord;
use crate::scenes::one_step_world;
use crate::sysinfo::Context;
use crate::BenchError;
use ferrofem::scene::MeshSpec;

/// Arguments of `bench delassus`.
#[derive(Debug, Args)]
pub struct DelassusArgs {
    /// One case near 30k DOFs and 1,000 constraints, under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Write the records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Folder for the PNG plots (fig9.png, fig10.png).
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Folder of external meshes (raptor); skipped when absent.
    #[arg(long, default_value = "../shared/meshes")]
    pub meshes: PathBuf,
    /// Timed repetitions per method (medians are reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Also build W by CHOLMOD's route (benchmarks/peers/cholmod_delassus.py)
    /// and by PARDISO's Schur complement (benchmarks/peers/pardiso_step.py).
    #[arg(long)]
    pub peers: bool,
    /// Run one experiment only: fig9, fig10, table1 or table2.
    #[arg(long, value_parser = ["fig9", "fig10", "table1", "table2"])]
    pub only: Option<String>,
    /// `gpu`: also build `W̄` by isodof on the GPU, anew (method
    /// `isodof-gpu`) and through the device's cache warmed as the CPU's
    /// `isodof-reuse` (`isodof-reuse-gpu`), beside the CPU methods of each case.
    #[arg(long, value_parser = ["cpu", "gpu"])]
    pub device: Option<String>,
}

/// A factorized body and its surface vertices from the bottom up.
struct Case {
    name: String,
    factor: Arc<Ldlt>,
    matrix: CsrMatrix,
    bottom: Vec<usize>,
    up: usize,
}

/// Up axis of the generated meshes.
const Z_UP: usize = 2;
/// Up axis of the raptor meshes (they stand +y up).
const Y_UP: usize = 1;

fn case(name: &str, mesh: &MeshSpec, up: usize) -> Result<Case, BenchError> {
    let w = one_step_world(mesh, 1e5)?;
    let matrix = crate::scenes::system_matrix(&w)?.clone();
    let err = |e: ferrofem_linalg::LinalgError| BenchError::Other(format!("{name}: {e}"));
    let sym = Arc::new(LdltSymbolic::analyze(&matrix.pattern, Ordering::Auto, 3).map_err(err)?);
    let factor = Arc::new(Ldlt::factorize(sym, &matrix).map_err(err)?);
    let body = &w.model.bodies[0];
    let mut bottom = body.surface.volume_vertex.clone();
    let rest = body.rest_vertices();
    bottom.sort_by(|&a, &b| rest[a][up].total_cmp(&rest[b][up]).then(a.cmp(&b)));
    Ok(Case { name: name.to_string(), factor, matrix, bottom, up })
}

impl Case {
    /// `H` of `contacts` floor contacts on the lowest surface vertices from rank `skip` on.
    fn patch(&self, contacts: usize, skip: usize) -> CsrMatrix {
        let axis = |k: usize| std::array::from_fn(|i| if i == (self.up + k) % 3 { 1.0 } else { 0.0 });
        let floor = [axis(0), axis(1), axis(2)];
        let mut h = ConstraintJacobian::new(self.matrix.nrows());
        for &v in self.bottom.iter().skip(skip).take(contacts) {
            h.push_point(&[(v, 1.0)], floor);
        }
        h.to_csr()
    }

    fn dofs(&self) -> usize {
        self.matrix.nrows()
    }
}

/// Dense, isodof, reuse (warmed with the patch shifted by `turnover` of its
/// contacts: the previous step of a quasi-static contact) and unbuilt.
fn measure(
    experiment: &'static str,
    case: &Case,
    contacts: usize,
    turnover: f64,
    repeats: usize,
    peers: bool,
    gpu: bool,
) -> Vec<DelassusBenchRecord> {
    let f = &case.factor;
    let compliance = ferrofem::constraint::Compliance::Ldlt(f.clone());
    let h = case.patch(contacts, 0);
    let previous = case.patch(contacts, (turnover * contacts as f64).round() as usize);
    let c = h.nrows();
    let isodofs = delassus::isodofs(&h);
    let cost = delassus::predict(f, &h, &IsodofCache::default(), 10.0);
    let mut warmed = IsodofCache::default();
    warmed.update(f, &delassus::isodofs(&previous));
    let reuse_cost = delassus::predict(f, &h, &warmed, 10.0);
    let flops = IsodofCost::estimate(f.symbolic(), &isodofs);
    let nnz_l = (f.symbolic().nnz_l() + case.dofs()) as f64;
    let mut x = vec![1.0; case.dofs()];
    let solve_ms = median_ms(repeats, || f.solve_in_place(&mut x, 1));
    // Each method keeps its buffers across repeats, as a body does across
    // steps, and is timed after one untimed call that sizes them.
    let mut buf = DelassusBuffers::default();
    let dense_ms = warm_median_ms(if cost.dense_ms > 5e3 { 1 } else { repeats }, || {
        delassus::dense(&compliance, &h, &mut buf, 1.0);
    });
    let w_dense = buf.w().to_vec();
    let mut buf = DelassusBuffers::default();
    let record = |method, build_ms: f64, reused, diff, predicted_ms, sweep_ms| DelassusBenchRecord {
        experiment,
        case: case.name.clone(),
        method,
        dofs: case.dofs(),
        constraints: c,
        isodofs: isodofs.len(),
        reused_isodofs: reused,
        build_ms,
        speedup_vs_dense: dense_ms / build_ms,
        max_rel_diff_vs_dense: diff,
        predicted_ms,
        sweep_ms,
        solve_ms,
        dense_gflop: 4.0 * nnz_l * c as f64 / 1e9,
        isodof_gflop: (flops.solve_flops + flops.gram_flops) / 1e9,
        device_counters: None,
        context: Context::now(),
    };
    let mut out = vec![record("dense", dense_ms, 0, 0.0, cost.dense_ms, None)];
    let ms = warm_median_ms(repeats, || {
        delassus::isodof(f, &h, &mut buf, 1.0);
    });
    out.push(record("isodof", ms, 0, rel_max_diff(buf.w(), &w_dense), cost.isodof_ms, None));
    let mut reused = 0;
    let ms = {
        let mut t = Vec::new();
        for _ in 0..=repeats.max(1) {
            let mut cache = warmed.clone();
            let s = Instant::now();
            reused = delassus::isodof_reuse(&mut cache, f, &h, &mut buf, 1.0).1.reused;
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
        median_p90(&mut t[1..]).0
    };
    out.push(record("isodof-reuse", ms, reused, rel_max_diff(buf.w(), &w_dense), reuse_cost.reuse_ms, None));
    out.push(unbuilt(case, &h, &w_dense, cost.unbuilt_ms, &record));
    if gpu {
        out.extend(device_rows(case, &h, &previous, repeats, &w_dense, &record));
    }
    if peers {
        let probe = probe(c);
        let ours: Vec<f64> = (0..c).map(|i| dot_serial(&w_dense[i * c..(i + 1) * c], &probe)).collect();
        if let Some((ms, wp)) = crate::peers::cholmod_delassus(&case.matrix, &h, &probe) {
            out.push(record("cholmod", ms, 0, rel_max_diff(&wp, &ours), f64::NAN, None));
        }
        let threads = rayon::current_num_threads();
        if let Some(p) = crate::peers::pardiso_step(&case.matrix, &h, &probe, threads) {
            let ms = (p.factor_schur_ms - p.factor_a_ms).max(0.0);
            out.push(record("pardiso", ms, 0, rel_max_diff(&p.w_times_probe, &ours), f64::NAN, None));
        }
    }
    out
}

/// The device's isodof build and its cache on `case` (rows
/// `isodof-gpu`, `isodof-reuse-gpu`); a device error is reported and
/// leaves its row out. The first call uploads the factor (resident until
/// the next refactorization); the timed calls build `W̄` on the device and
/// `W = Ĥ W̄ Ĥᵀ` on the host. The cache is warmed by the previous patch as
/// the CPU's `isodof-reuse` row (a fresh upload per repeat, untimed).
fn device_rows<R>(
    case: &Case,
    h: &CsrMatrix,
    previous: &CsrMatrix,
    repeats: usize,
    w_dense: &[f64],
    record: &R,
) -> Vec<DelassusBenchRecord>
where
    R: Fn(&'static str, f64, usize, f64, f64, Option<f64>) -> DelassusBenchRecord,
{
    let (f, mut buf, mut out) = (&case.factor, DelassusBuffers::default(), Vec::new());
    let new = || delassus::DeviceDelassus::new(ferrofem_gpu::backend());
    let (mut device, mut error) = (new(), None);
    let ms = warm_median_ms(repeats, || {
        if let Err(e) = device.isodof(f, h, &mut buf, false, 1.0) {
            error.get_or_insert(e);
        }
    });
    // One more build, counted.
    let before = device.counters();
    if let Err(e) = device.isodof(f, h, &mut buf, false, 1.0) {
        error.get_or_insert(e);
    }
    let counted = device.counters().since(before);
    match error {
        Some(e) => eprintln!("isodof-gpu on {}: {e}", case.name),
        None => {
            let mut r = record("isodof-gpu", ms, 0, rel_max_diff(buf.w(), w_dense), f64::NAN, None);
            r.device_counters = Some(counted);
            out.push(r);
        }
    }
    let (mut t, mut counted) = (Vec::new(), Default::default());
    let reused = (0..=repeats.max(1)).try_fold(0, |_, _| {
        let mut device = new();
        device.isodof(f, previous, &mut buf, true, 1.0)?;
        let (s, before) = (Instant::now(), device.counters());
        let reused = device.isodof(f, h, &mut buf, true, 1.0)?.1.reused;
        t.push(s.elapsed().as_secs_f64() * 1e3);
        counted = device.counters().since(before);
        Ok::<_, ferrofem::device::DeviceError>(reused)
    });
    match reused {
        Err(e) => eprintln!("isodof-reuse-gpu on {}: {e}", case.name),
        Ok(reused) => {
            let diff = rel_max_diff(buf.w(), w_dense);
            let mut r = record("isodof-reuse-gpu", median_p90(&mut t[1..]).0, reused, diff, f64::NAN, None);
            r.device_counters = Some(counted);
            out.push(r);
        }
    }
    out
}

/// [`median_ms`] after one untimed call (the buffers' first use).
fn warm_median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    median_ms(runs, f)
}

/// The unbuilt operator: its set-up (diagonal blocks), one exact PGS sweep,
/// and its `W λ` against the dense `W`.
fn unbuilt(
    case: &Case,
    h: &CsrMatrix,
    w_dense: &[f64],
    predicted: f64,
    record: &dyn Fn(&'static str, f64, usize, f64, f64, Option<f64>) -> DelassusBenchRecord,
) -> DelassusBenchRecord {
    let c = h.nrows();
    let rows: Vec<usize> = (0..c).collect();
    let lambda: Vec<f64> = (0..c).map(|i| ((i * 7919) % 101) as f64 / 101.0 - 0.3).collect();
    let operator =
        || MixedDelassus::new(c, None, vec![UnbuiltBody::new(&case.factor, h, &rows)], 1.0, &lambda);
    let mut diag = Vec::new();
    let t = Instant::now();
    let op = operator();
    for r0 in (0..c).step_by(3) {
        diag.push(op.diagonal_block(r0));
    }
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let dense = AssembledDelassus(w_dense);
    let mut diff = 0.0f64;
    let scale = w_dense.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    for (k, r0) in (0..c).step_by(3).enumerate() {
        let (a, b) = (op.rows_times(r0, &lambda), dense.rows_times(r0, &lambda));
        let lam_scale = lambda.iter().fold(0.0f64, |m, x| m.max(x.abs())) * c as f64;
        diff = diff
            .max((a - b).amax() / (scale * lam_scale))
            .max((diag[k] - dense.diagonal_block(r0)).amax() / scale);
    }
    let groups = vec![ConstraintGroup::Contact { mu: 0.3 }; c / 3];
    let free: Vec<f64> = (0..c).map(|i| if i % 3 == 0 { -1e-3 } else { 1e-4 }).collect();
    let mut op = operator();
    let mut lam = lambda.clone();
    let pgs = Pgs { settings: PgsSettings::new(1, 0.0) };
    let t = Instant::now();
    pgs.solve_with(&mut op, &free, &groups, &mut lam);
    let sweep_ms = t.elapsed().as_secs_f64() * 1e3;
    record("unbuilt", build_ms, 0, diff, predicted, Some(sweep_ms))
}

fn print(records: &[DelassusBenchRecord]) {
    for r in records {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1}× | {:.1e} | {:.1} | {} |",
            r.experiment,
            r.case,
            r.dofs,
            r.constraints,
            r.method,
            r.reused_isodofs,
            r.build_ms,
            r.speedup_vs_dense,
            r.max_rel_diff_vs_dense,
            r.predicted_ms,
            r.sweep_ms.map_or("—".into(), |s| format!("{s:.1} (solve {:.2})", r.solve_ms)),
        );
    }
}

/// Runs `bench delassus`.
pub fn bench_delassus(a: DelassusArgs) -> Result<(), BenchError> {
    let records = records(&a)?;
    if let Some(dir) = &a.plots {
        crate::plot::delassus_figures(dir, &records)?;
    }
    if let Some(p) = &a.json {
        write_json(p, &records)?;
    }
    Ok(())
}

/// PARDISO's step on zeng2022 Table 1's case and the largest relative
/// difference of its `W p` to ours.
pub(crate) type PardisoCheck = (crate::peers::PardisoStep, f64);

/// zeng2022 Table 1's case alone (2,250 constraints on the raptor of 59k
/// DOFs when its mesh is present, else on a ball of its size), with, when
/// `pardiso`, the paper's direct-solver row on the same `A` and `H` by
/// Intel MKL PARDISO ([`crate::peers::pardiso_step`], on the pool's
/// threads) and its `W`'s largest difference to ours.
pub(crate) fn table1_paper_case(
    meshes: &std::path::Path,
    repeats: usize,
    pardiso: bool,
) -> Result<(Vec<DelassusBenchRecord>, Option<PardisoCheck>), BenchError> {
    let raptor = raptor_cases(meshes).into_iter().find(|(name, _)| name.ends_with("20k"));
    let (name, mesh, up) = match raptor {
        Some((name, mesh)) => (name, mesh, Y_UP),
        None => {
            let (name, mesh) = ball(26);
            (name, mesh, Z_UP)
        }
    };
    let case = case(&name, &mesh, up)?;
    let records = measure("table1", &case, TABLE1_CONTACTS, 0.1, repeats, false, false);
    print(&records);
    let peer = match pardiso {
        true => pardiso_row(&case),
        false => None,
    };
    Ok((records, peer))
}

/// A fixed probe vector of `c` entries for checking a peer's `W`.
fn probe(c: usize) -> Vec<f64> {
    (0..c).map(|i| ((i * 7919) % 101) as f64 / 101.0 - 0.3).collect()
}

/// Contacts of zeng2022 Table 1 (2,250 constraints).
const TABLE1_CONTACTS: usize = 2250 / 3;

/// PARDISO's step on `case`'s Table 1 patch, and the largest difference of
/// its `W p` to ours (isodof) for a fixed probe `p`.
fn pardiso_row(case: &Case) -> Option<PardisoCheck> {
    let h = case.patch(TABLE1_CONTACTS, 0);
    let c = h.nrows();
    let probe = probe(c);
    let step = crate::peers::pardiso_step(&case.matrix, &h, &probe, rayon::current_num_threads())?;
    let mut buf = DelassusBuffers::default();
    delassus::isodof(&case.factor, &h, &mut buf, 1.0);
    let ours: Vec<f64> = (0..c).map(|i| dot_serial(&buf.w()[i * c..(i + 1) * c], &probe)).collect();
    let diff = rel_max_diff(&step.w_times_probe, &ours);
    Some((step, diff))
}

/// The experiments `a` asks for, each record printed as it is measured.
pub(crate) fn records(a: &DelassusArgs) -> Result<Vec<DelassusBenchRecord>, BenchError> {
    println!("| experiment | case | DOFs | constraints | method | reused | W ms | vs dense | max rel diff | predicted ms | unbuilt sweep ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut records = Vec::new();
    let wanted = |e: &str| a.only.as_deref().is_none_or(|o| o == e);
    let run = |experiment, case: &Case, constraints: usize, turnover, records: &mut Vec<_>| {
        let gpu = a.device.as_deref() == Some("gpu");
        let r = measure(experiment, case, constraints / 3, turnover, a.repeats, a.peers, gpu);
        print(&r);
        records.extend(r);
    };
    let balls = |r: usize| {
        let (name, mesh) = ball(r);
        (name, mesh, Z_UP)
    };
    let raptors = || raptor_cases(&a.meshes).into_iter().map(|(name, mesh)| (name, mesh, Y_UP));
    if a.quick {
        let (name, mesh, up) = balls(21);
        run("quick", &case(&name, &mesh, up)?, 1002, 0.1, &mut records);
    } else {
        if wanted("fig9") {
            // The paper's raptor near 36k DOFs (the 14k-vertex one, 41.9k
            // DOFs) when present, else a ball of 36.5k DOFs.
            let (name, mesh, up) =
                raptors().find(|(name, _, _)| name.ends_with("14k")).unwrap_or_else(|| balls(22));
            let fig9 = case(&name, &mesh, up)?;
            for constraints in [150, 300, 600, 1200, 2250] {
                run("fig9", &fig9, constraints, 0.1, &mut records);
            }
        }
        if wanted("fig10") {
            for (name, mesh, up) in [15, 19, 23, 28, 33].map(balls).into_iter().chain(raptors()) {
                run("fig10", &case(&name, &mesh, up)?, 600, 0.1, &mut records);
            }
        }
        if wanted("table1") {
            // The paper's case (a raptor of 59,529 DOFs on a plane) when
            // its mesh is present, and a ball of the same size, whose top
            // separators are about five times as wide.
            let paper = raptors().filter(|(name, _, _)| name.ends_with("20k"));
            for (name, mesh, up) in paper.chain([balls(26)]) {
                run("table1", &case(&name, &mesh, up)?, 2250, 0.1, &mut records);
            }
        }
        if wanted("table2") {
            let (name, mesh, up) = balls(21);
            run("table2", &case(&format!("{name} (limited contact)"), &mesh, up)?, 228, 0.1, &mut records);
            let (name, mesh, up) = balls(12);
            run("table2", &case(&format!("{name} (rich contact)"), &mesh, up)?, 1329, 0.1, &mut records);
        }
    }
    Ok(records)
}
