//! Each GPU kernel against its CPU counterpart, in f64.

use std::sync::Arc;

use super::gpu;
use ferrofem::device::{DeviceTerms, RhsMap};
use ferrofem_gpu::GlobalStep;
use ferrofem_linalg::{
    CsrMatrix, CsrPattern, Ldlt, LdltSymbolic, Ordering, SparseInverse, SparseInverseScratch,
};

/// A grid Laplacian plus mass on `nx × ny × nz` vertices (the pattern of
/// a tet mesh's global matrix), factorized, and its sparse inverse.
fn grid_inverse(nx: usize, ny: usize, nz: usize) -> (CsrMatrix, SparseInverse) {
    let id = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
    let n = nx * ny * nz;
    let mut rows: Vec<Vec<u32>> = (0..n).map(|v| vec![v as u32]).collect();
    let mut edges = Vec::new();
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let v = id(i, j, k);
                let mut link = |w: usize| {
                    rows[v].push(w as u32);
                    rows[w].push(v as u32);
                    edges.push((v, w));
                };
                if i + 1 < nx {
                    link(id(i + 1, j, k));
                }
                if j + 1 < ny {
                    link(id(i, j + 1, k));
                }
                if k + 1 < nz {
                    link(id(i, j, k + 1));
                }
                if i + 1 < nx && j + 1 < ny && k + 1 < nz {
                    link(id(i + 1, j + 1, k + 1));
                }
            }
        }
    }
    let mut a = CsrMatrix::zeros(CsrPattern::from_rows(n, rows));
    let mut add = |i: usize, j: usize, v: f64| {
        let p = a.pattern.find(i, j).unwrap();
        a.values[p] += v;
    };
    for v in 0..n {
        add(v, v, 0.1 + 0.01 * (v % 7) as f64);
    }
    for (e, &(v, w)) in edges.iter().enumerate() {
        let s = 1.0 + 0.3 * ((e * 13) % 5) as f64;
        add(v, v, s);
        add(w, w, s);
        add(v, w, -s);
        add(w, v, -s);
    }
    let s = SparseInverse::new(&factor(&a));
    (a, s)
}

/// The LDLᵀ factor of `a` (nested dissection).
fn factor(a: &CsrMatrix) -> Ldlt {
    let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::NestedDissection, 1).unwrap());
    Ldlt::factorize(symbolic, a).unwrap()
}

fn relative(a: &[f64], b: &[f64]) -> f64 {
    let d = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt();
    d / b.iter().map(|y| y * y).sum::<f64>().sqrt()
}

fn values(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

#[test]
fn global_step_equals_the_cpu_sparse_inverse() {
    let Some(gpu) = gpu() else { return };
    let (a, s) = grid_inverse(14, 11, 9);
    let n = a.nrows();
    let map = RhsMap { vertex_ptr: vec![0; n + 1], ..Default::default() };
    let mut step = GlobalStep::new(gpu, &s, &map).unwrap();
    let b = values(3 * n, 7);
    let (mut cpu, mut dev) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
    s.apply_many::<3>(&b, &mut cpu, &mut SparseInverseScratch::default());
    step.solve(&b, &mut dev).unwrap();
    let err = relative(&dev, &cpu);
    assert!(err < 1e-12, "GPU global step differs from the CPU one by {err:e}");
    // And it solves A q = b: the residual of each axis.
    let mut r = 0.0f64;
    for d in 0..3 {
        let q: Vec<f64> = (0..n).map(|i| dev[3 * i + d]).collect();
        let mut aq = vec![0.0; n];
        a.mul_vec(&q, &mut aq);
        r = r.max((0..n).map(|i| (aq[i] - b[3 * i + d]).abs()).fold(0.0, f64::max));
    }
    assert!(r < 1e-10, "residual {r:e}");
}

#[test]
fn assembled_right_hand_side_equals_the_host_sum() {
    let Some(gpu) = gpu() else { return };
    let (a, s) = grid_inverse(9, 8, 7);
    let n = a.nrows();
    // Each vertex reads 0–4 projection columns of three values.
    let p = values(3 * 50, 3);
    let coefs = values(4 * n, 5);
    let mut map = RhsMap { vertex_ptr: vec![0], projections: p.len(), ..Default::default() };
    for v in 0..n {
        for e in 0..v % 5 {
            map.base.push(3 * ((v * 7 + e * 11) % 50) as u32);
            map.coef.push(coefs[4 * v + e.min(3)]);
        }
        map.vertex_ptr.push(map.base.len() as u32);
    }
    let c = values(3 * n, 11);
    let mut b = c.clone();
    for v in 0..n {
        for k in map.vertex_ptr[v] as usize..map.vertex_ptr[v + 1] as usize {
            (0..3).for_each(|d| b[3 * v + d] += map.coef[k] * p[map.base[k] as usize + d]);
        }
    }
    let mut step = GlobalStep::new(gpu, &s, &map).unwrap();
    let (mut cpu, mut dev) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
    s.apply_many::<3>(&b, &mut cpu, &mut SparseInverseScratch::default());
    let (p1, p2) = p.split_at(60);
    step.solve_projected(Some(&c), &[p1, &[], p2], &mut dev).unwrap();
    assert!(relative(&dev, &cpu) < 1e-12, "{:e}", relative(&dev, &cpu));
    // The constant part stays resident when not given again.
    let mut again = vec![0.0; 3 * n];
    step.solve_projected(None, &[&p], &mut again).unwrap();
    assert_eq!(again, dev);
}

#[test]
fn wrong_sizes_are_errors() {
    let Some(gpu) = gpu() else { return };
    let (a, s) = grid_inverse(4, 4, 4);
    let n = a.nrows();
    let map = RhsMap { vertex_ptr: vec![0; n + 1], ..Default::default() };
    let mut step = GlobalStep::new(gpu.clone(), &s, &map).unwrap();
    let err = step.solve(&[0.0; 5], &mut vec![0.0; 3 * n]).unwrap_err();
    assert!(err.to_string().contains("expected"), "{err}");
    let short = RhsMap { vertex_ptr: vec![0; 3], ..Default::default() };
    assert!(GlobalStep::new(gpu.clone(), &s, &short).unwrap_err().to_string().contains("vertices"));
    // A resident frame needs the terms; the terms must match themselves
    // and the right-hand-side map.
    let (mut x, mut r) = (vec![0.0; 3 * n], Vec::new());
    let err = step.frame(&vec![0.0; 3 * n], &mut x, &mut r, false, 1).unwrap_err().to_string();
    assert!(err.contains("needs the body's terms"), "{err}");
    let tet = DeviceTerms {
        tet_vertices: vec![0, 1, 2, 4],
        tet_coefficients: vec![0.0; 14],
        stencil_ptr: vec![0],
        ..Default::default()
    };
    let map = RhsMap { vertex_ptr: vec![0; n + 1], projections: 9, ..Default::default() };
    let err = GlobalStep::with_terms(gpu.clone(), &s, &map, Some(&tet)).unwrap_err().to_string();
    assert!(err.contains("tet coefficients: 14 values, expected 15"), "{err}");
    let far =
        DeviceTerms { tet_vertices: vec![0, 1, 2, n as u32], tet_coefficients: vec![0.0; 15], ..tet.clone() };
    let err = GlobalStep::with_terms(gpu.clone(), &s, &map, Some(&far)).unwrap_err().to_string();
    assert!(err.contains(&format!("vertex {n} of a body of {n}")), "{err}");
    let tet = DeviceTerms { tet_coefficients: vec![0.0; 15], ..tet };
    let err = GlobalStep::with_terms(gpu, &s, &RhsMap { projections: 12, ..map }, Some(&tet)).unwrap_err();
    assert!(err.to_string().contains("terms of 9 projections, the map has 12"), "{err}");
    // Constraint rows that name a DOF the body lacks, or whose entry
    // ranges do not cover their entries, are refused before any build.
    let rows = |dofs: Vec<u32>, end: u32| ferrofem::device::DeviceRows {
        row_ptr: vec![0, 1, 2, end],
        coef: vec![1.0; dofs.len()],
        dofs,
        gaps: vec![0.0; 3],
    };
    let err = step.delassus(&rows(vec![0, 1, 3 * n as u32], 3), 0.01).unwrap_err().to_string();
    assert!(err.contains(&format!("DOF {} of a body of {}", 3 * n, 3 * n)), "{err}");
    let err = step.delassus(&rows(vec![0, 1, 2], 2), 0.01).unwrap_err().to_string();
    assert!(err.contains("entry ranges are not increasing from 0 to 3"), "{err}");
}

#[test]
fn isodof_delassus_equals_the_cpu_builder() {
    use ferrofem_gpu::DeviceFactor;
    use ferrofem_linalg::ldlt::IsodofColumns;
    let Some(gpu) = gpu() else { return };
    let (a, _) = grid_inverse(12, 10, 8);
    let n = a.nrows();
    let f = factor(&a);
    let device = DeviceFactor::new(gpu, &f).unwrap();
    for (count, seed) in [(1, 1u64), (40, 2), (150, 3)] {
        // Distinct DOFs scattered over the mesh.
        let mut dofs: Vec<usize> =
            values(4 * count, seed).iter().map(|v| ((v + 0.5) * n as f64) as usize % n).collect();
        dofs.sort_unstable();
        dofs.dedup();
        dofs.truncate(count);
        let cpu = IsodofColumns::new(&f, &dofs);
        let reference = cpu.delassus();
        let order: Vec<usize> = cpu.dofs().to_vec();
        let w = device.delassus(&order).unwrap();
        let m = order.len();
        assert_eq!(w.len(), m * m);
        let err = relative(&w, &reference);
        assert!(err < 1e-12, "{m} isolated DOFs: GPU W̄ differs by {err:e}");
        assert!((0..m).all(|i| (0..m).all(|j| w[i * m + j] == w[j * m + i])), "exactly symmetric");
    }
    assert!(device.delassus(&[n]).unwrap_err().to_string().contains("isolated DOF"));
}

/// Single columns whose etree paths are hundreds of rows long (the top
/// separators of a 3D grid): the supernodal solve takes one dispatch per
/// supernode of the path (each a level of the reach), the product one
/// more, and the host waits once.
#[test]
fn isodof_long_paths_equal_the_cpu_builder() {
    use ferrofem_gpu::{DeviceFactor, Link};
    use ferrofem_linalg::ldlt::IsodofColumns;
    let Some(gpu) = gpu() else { return };
    for (nx, ny, nz) in [(8, 8, 8), (14, 14, 14), (20, 20, 20), (26, 26, 26)] {
        let (a, _) = grid_inverse(nx, ny, nz);
        let f = factor(&a);
        let link = Link::from(gpu.clone());
        let device = DeviceFactor::new(link.clone(), &f).unwrap();
        let p = f.symbolic().perm[0];
        let cpu = IsodofColumns::new(&f, &[p]);
        let before = link.counters();
        let w = device.delassus(cpu.dofs()).unwrap();
        let err = relative(&w, &cpu.delassus());
        assert!(err < 1e-12, "{nx}×{ny}×{nz}: GPU W̄ differs by {err:e}");
        let sn = &f.symbolic().supernodes;
        let up = |&s: &usize| Some(sn.parent[s]).filter(|&p| p < sn.len());
        let path = std::iter::successors(Some(sn.of_column[0] as usize), up).count() as u64;
        let c = link.counters().since(before);
        assert_eq!(
            (c.dispatches, c.host_waits),
            (path + 1, 1),
            "{nx}×{ny}×{nz}: {path} supernodes on the path"
        );
    }
}

/// A factor whose root supernode is wider than 1,024 columns (a chain of
/// 1,000 unknowns coupled to a clique of 2,000): the triangular solve of
/// such a block and the updates into it run past Mesa's lavapipe's cap of
/// 65,535 loop iterations per invocation unless spread over enough lanes
/// (8 lanes per column gave a 32k-DOF ball's `W̄` 47 % wrong). `W̄` for 120
/// DOFs on the chain and the clique equals the CPU builder's.
#[test]
fn isodof_wide_root_supernode_equals_the_cpu_builder() {
    use ferrofem_gpu::DeviceFactor;
    use ferrofem_linalg::ldlt::IsodofColumns;
    let Some(gpu) = gpu() else { return };
    let (chain, clique) = (1000, 2000);
    let n = chain + clique;
    let mut entries: Vec<(usize, usize, f64)> = Vec::new();
    for i in 0..chain {
        if i + 1 < chain {
            entries.push((i, i + 1, -1.0));
        }
        if i % 4 == 0 {
            entries.push((i, chain + (7 * i) % clique, -0.5));
        }
    }
    for i in 0..clique {
        for j in i + 1..clique {
            entries.push((chain + i, chain + j, -1.0 / clique as f64));
        }
    }
    let mut rows: Vec<Vec<u32>> = (0..n).map(|v| vec![v as u32]).collect();
    for &(i, j, _) in &entries {
        rows[i].push(j as u32);
        rows[j].push(i as u32);
    }
    let mut a = CsrMatrix::zeros(CsrPattern::from_rows(n, rows));
    let mut add = |i: usize, j: usize, v: f64| {
        let p = a.pattern.find(i, j).unwrap();
        a.values[p] += v;
    };
    for &(i, j, v) in &entries {
        // Diagonally dominant: positive definite.
        add(i, j, v);
        add(j, i, v);
        add(i, i, 1.0 - v);
        add(j, j, 1.0 - v);
    }
    let f = factor(&a);
    let sn = &f.symbolic().supernodes;
    let widest = (0..sn.len()).map(|s| sn.width(s)).max().unwrap();
    assert!(widest > 1024, "the widest supernode has {widest} columns");
    let device = DeviceFactor::new(gpu, &f).unwrap();
    let dofs: Vec<usize> = (0..120).map(|k| (k * 97 + k / 3) % n).collect();
    let cpu = IsodofColumns::new(&f, &dofs);
    let w = device.delassus(cpu.dofs()).unwrap();
    let err = relative(&w, &cpu.delassus());
    assert!(err < 1e-12, "widest supernode {widest}: GPU W̄ differs by {err:e}");
}

/// The device's isodof cache on a window of DOFs sliding over the mesh
/// (contacts appear, persist and vanish): every `W̄` equals a fresh CPU
/// build to 1e-12, persisting DOFs are reused, and the cache stays within
/// its bound (emptied and rebuilt when it would outgrow it).
#[test]
fn isodof_reuse_cache_equals_fresh_builds() {
    use ferrofem_gpu::DeviceFactor;
    use ferrofem_linalg::ldlt::IsodofColumns;
    let Some(gpu) = gpu() else { return };
    let (a, _) = grid_inverse(12, 10, 8);
    let n = a.nrows();
    let f = factor(&a);
    let mut device = DeviceFactor::new(gpu, &f).unwrap();
    let mut reused = 0;
    for step in 0..12usize {
        let dofs: Vec<usize> = (0..n).filter(|d| (d / 3 + 17 * step) % 160 < 30 && d % 3 != 1).collect();
        let (w, r) = device.delassus_reuse(&dofs).unwrap();
        reused += r;
        let cpu = IsodofColumns::new(&f, &dofs);
        // The CPU builder orders its columns; put them in the order asked.
        let pos: Vec<usize> = dofs.iter().map(|d| cpu.dofs().iter().position(|e| e == d).unwrap()).collect();
        let reference = cpu.delassus();
        let m = dofs.len();
        let expected: Vec<f64> = (0..m * m).map(|k| reference[pos[k / m] * m + pos[k % m]]).collect();
        let err = relative(&w, &expected);
        assert!(err < 1e-12, "step {step}, {m} DOFs ({r} reused): W̄ differs by {err:e}");
        assert!((0..m).all(|i| (0..m).all(|j| w[i * m + j] == w[j * m + i])), "exactly symmetric");
    }
    assert!(reused > 0, "persisting DOFs are reused");
}

/// The device's local step (`local.wgsl`, `membrane.wgsl`, `bending.wgsl`)
/// against the CPU's, per model, on strongly deformed bodies: the bar
/// twisted by up to 80° along its length and stretched by 30 %, the cloth
/// folded and stretched. From the same warm rotations (the CPU's at a
/// state 10 % less deformed), one iteration of a resident frame leaves
/// the tets' rotations equal to the CPU local step's to 1e-12 (the
/// Neo-Hookean models' eigenbases of `FᵀF` to their eigen tolerances), and
/// `q = A⁻¹ (h² Σ w Gᵀ p)` equal to the CPU's from its projections to
/// 1e-12 relative. With the bar's end pressed through itself (inverted
/// Neo-Hookean and stable Neo-Hookean tets, which both take by the signed
/// SVD's values and, where the fast prox hands on, the damped Newton
/// iteration) the device counts them as fallbacks and `q` agrees to 1e-9.
#[test]
fn device_local_step_equals_the_cpus() {
    use ferrofem::element::Constitutive;
    use ferrofem::integrator::local_global::local::{
        assemble_rhs, device_terms, local_step, rhs_map, Projections,
    };
    use ferrofem::integrator::local_global::GlobalStepMethod;
    let Some(gpu) = gpu() else { return };
    for (scene, model, inverted) in [
        ("twisting-bar-lg", Constitutive::Arap, false),
        ("twisting-bar-lg", Constitutive::Corotational, false),
        ("twisting-bar-lg", Constitutive::NeoHookean, false),
        ("twisting-bar-lg", Constitutive::NeoHookean, true),
        ("twisting-bar-lg", Constitutive::StableNeoHookean, false),
        ("twisting-bar-lg", Constitutive::StableNeoHookean, true),
        ("hanging-cloth", Constitutive::Arap, false),
        ("hanging-cloth", Constitutive::Corotational, false),
        ("hanging-cloth", Constitutive::NeoHookean, false),
        ("hanging-cloth", Constitutive::StableNeoHookean, false),
    ] {
        let w = super::common::builtin(scene, |s| {
            super::lavapipe_sized(s);
            s.spec.bodies[0].constitutive = Some(model);
            s.spec.local_global.global_step = GlobalStepMethod::SparseInverse;
        });
        let (body, h) = (&w.model.bodies[0], w.model.time_step);
        let lg = w.local_global().unwrap();
        let s = lg.global_solver(0).sparse_inverse().expect("sparse inverse");
        let sweeps = lg.settings.polar_sweeps;
        let rest = &w.state.bodies[0].positions;
        let deformed = |amount: f64| -> Vec<f64> {
            let mut x = rest.clone();
            for p in x.chunks_exact_mut(3) {
                let angle = amount * 1.4 * p[0];
                let (c, sn) = (angle.cos(), angle.sin());
                let (y, z) = (p[1], p[2]);
                (p[0], p[1], p[2]) = ((1.0 + 0.3 * amount) * p[0], c * y - sn * z, sn * y + c * z);
                p[2] += 0.05 * amount * (7.0 * p[0] + 3.0 * y).sin();
                // The bar's last tenth pressed through itself: inverted tets.
                if inverted && p[0] > 0.8 {
                    p[2] *= -0.5;
                }
            }
            x
        };
        let mut cpu = Projections::new(body);
        local_step(body, &deformed(0.9), &mut cpu, sweeps);
        let warm: Vec<f64> = cpu.tet_rotations().iter().flat_map(|r| r.iter().copied()).collect();
        let x = deformed(1.0);
        // A frame starts its duals at zero, as a step does.
        cpu.reset_duals();
        local_step(body, &x, &mut cpu, sweeps);
        let n = body.dofs();
        let (zeros, mut b, mut q_cpu) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        assemble_rhs(body, &[], &cpu, &zeros, h, 0.0, &mut b);
        s.apply_many::<3>(&b, &mut q_cpu, &mut SparseInverseScratch::default());
        let terms = device_terms(body, sweeps);
        let mut device =
            GlobalStep::with_terms(gpu.clone(), s, &rhs_map(body, &cpu, h), Some(&terms)).unwrap();
        let (mut q, mut rotations) = (x.clone(), warm.clone());
        let fallbacks = device.frame(&zeros, &mut q, &mut rotations, true, 1).unwrap();
        assert_eq!(fallbacks > 0, inverted, "{scene} {model:?}: {fallbacks} fallbacks");
        let expected: Vec<f64> = cpu.tet_rotations().iter().flat_map(|r| r.iter().copied()).collect();
        let r_diff = max_abs_diff(&rotations, &expected);
        let scale = q_cpu.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let q_diff = max_abs_diff(&q, &q_cpu) / scale;
        eprintln!(
            "{scene} {model:?} ({fallbacks} fallbacks): rotations {r_diff:.1e}, q {q_diff:.1e} relative"
        );
        // The Neo-Hookean models' bases meet their eigen tolerance (1e-8,
        // stable: 1e-12): the CPU sweeps a batch of tets until every one
        // meets it, the device each tet until it does; Neo-Hookean's
        // projections differ by its square (a first-order response), stable
        // Neo-Hookean's by the tolerance.
        let bound = match model {
            Constitutive::NeoHookean => 1e-7,
            Constitutive::StableNeoHookean => 1e-10,
            _ => 1e-12,
        };
        assert!(r_diff < bound, "{scene} {model:?}: rotations differ by {r_diff:e}");
        // Inverted tets take the damped Newton prox on both devices, which
        // stops by a tolerance on the step (1e-9) along paths that differ
        // by rounding.
        let q_bound = if inverted { 1e-9 } else { 1e-12 };
        assert!(q_diff < q_bound, "{scene} {model:?}: q differs by {q_diff:e} relative");
    }
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
}

/// `W = h² H A⁻¹ Hᵀ` built on the device from the resident `S`
/// (`columns.wgsl`: `S`'s columns at the touched vertices over their
/// reach; `gram.wgsl`: `W̄ = Zᵀ D⁻¹ Z`; `delassus.wgsl`: `W` by the rows'
/// 3-vectors) equals the slow reference, one CPU solve `A⁻¹ Hᵀ e_j` per
/// row, to 1e-12 relative, on the rows of a 343-vertex ball resting on its
/// floor; one host wait.
#[test]
fn device_delassus_equals_the_cpus() {
    use ferrofem::constraint_stack::device::device_rows;
    use ferrofem::integrator::local_global::local::{rhs_map, Projections};
    use ferrofem::integrator::local_global::GlobalStepMethod;
    let Some(gpu) = gpu() else { return };
    let mut w = super::common::builtin("drop-lg", |s| {
        s.spec.bodies[0].mesh = ferrofem::scene::MeshSpec::Ball { radius: 0.1, resolution: 6 };
        s.spec.bodies[0].transform.translation[2] = 0.1005;
        s.spec.local_global.global_step = GlobalStepMethod::SparseInverse;
    });
    w.step().unwrap();
    let positions = w.state.bodies[0].positions.clone();
    let rows = device_rows(w.constraints(), 0, &positions).expect("the ball's rows");
    let c = rows.rows();
    assert!(c >= 30, "{c} rows: the ball should rest on its floor");
    let (body, h) = (&w.model.bodies[0], w.model.time_step);
    let s = w.local_global().unwrap().global_solver(0).sparse_inverse().expect("sparse inverse");
    let n = body.dofs();
    let mut reference = vec![0.0; c * c];
    let mut scratch = SparseInverseScratch::default();
    for j in 0..c {
        let (mut b, mut q) = (vec![0.0; n], vec![0.0; n]);
        let entries = |r: usize| rows.row_ptr[r] as usize..rows.row_ptr[r + 1] as usize;
        entries(j).for_each(|k| b[rows.dofs[k] as usize] += rows.coef[k]);
        s.apply_many::<3>(&b, &mut q, &mut scratch);
        for l in 0..c {
            let dot: f64 = entries(l).map(|k| rows.coef[k] * q[rows.dofs[k] as usize]).sum();
            reference[j * c + l] = h * h * dot;
        }
    }
    let map = rhs_map(body, &Projections::new(body), h);
    let mut device = GlobalStep::new(gpu.clone(), s, &map).unwrap();
    let waits = device.counters().host_waits;
    let built = device.delassus(&rows, h).unwrap();
    assert_eq!(device.counters().host_waits - waits, 1, "one host wait");
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = max_abs_diff(&built, &reference) / scale;
    eprintln!("W of {c} rows on the device: {diff:.1e} relative to the per-row solves");
    assert!(diff < 1e-12, "W from S differs by {diff:e} relative");
}
