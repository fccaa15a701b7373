use std::sync::Arc;

use super::etree::{self, NONE};
use super::*;
use crate::CsrPattern;

/// A random SPD matrix with 3×3 blocks on a 3-D grid graph plus random
/// long-range edges (diagonally dominant).
fn random_spd(nx: usize, seed: u64) -> CsrMatrix {
    let nv = nx * nx * nx;
    let mut rng = seed;
    let mut next = || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) as f64 / (1u64 << 31) as f64
    };
    let id = |i: usize, j: usize, k: usize| (k * nx + j) * nx + i;
    let mut edges = std::collections::BTreeSet::new();
    for k in 0..nx {
        for j in 0..nx {
            for i in 0..nx {
                let v = id(i, j, k);
                if i + 1 < nx {
                    edges.insert((v, id(i + 1, j, k)));
                }
                if j + 1 < nx {
                    edges.insert((v, id(i, j + 1, k)));
                }
                if k + 1 < nx {
                    edges.insert((v, id(i, j, k + 1)));
                }
            }
        }
    }
    for _ in 0..nv / 4 {
        let (a, b) = ((next() * nv as f64) as usize % nv, (next() * nv as f64) as usize % nv);
        if a != b {
            edges.insert((a.min(b), a.max(b)));
        }
    }
    let mut rows = vec![Vec::new(); 3 * nv];
    let mut vals = std::collections::HashMap::new();
    let mut diag = vec![0.0; 3 * nv];
    for &(a, b) in &edges {
        for r in 0..3 {
            for c in 0..3 {
                let v = next() - 0.5;
                let (i, j) = (3 * a + r, 3 * b + c);
                vals.insert((i, j), v);
                vals.insert((j, i), v);
                diag[i] += v.abs();
                diag[j] += v.abs();
                rows[i].push(j as u32);
                rows[j].push(i as u32);
            }
        }
    }
    for v in 0..nv {
        for r in 0..3 {
            for c in 0..3 {
                let (i, j) = (3 * v + r, 3 * v + c);
                rows[i].push(j as u32);
                if r != c {
                    let x = 0.1 * (next() - 0.5);
                    vals.insert((i, j), x);
                    vals.insert((j, i), x);
                    diag[i] += x.abs();
                }
            }
        }
    }
    let mut m = CsrMatrix::zeros(CsrPattern::from_rows(3 * nv, rows));
    for i in 0..3 * nv {
        for p in m.pattern.row_ptr[i]..m.pattern.row_ptr[i + 1] {
            let j = m.pattern.col_idx[p] as usize;
            m.values[p] = if i == j { diag[i] + 1.0 + next() } else { vals[&(i, j)] };
        }
    }
    m
}

fn dense_l(f: &Ldlt) -> Vec<Vec<f64>> {
    let s = f.symbolic();
    let n = s.n();
    let mut l = vec![vec![0.0; n]; n];
    for j in 0..n {
        l[j][j] = 1.0;
        for (p, &v) in (s.l_col_ptr[j]..s.l_col_ptr[j + 1]).zip(f.l_column(j)) {
            l[s.l_row_idx()[p] as usize][j] = v;
        }
    }
    l
}

fn check_reconstruction(a: &CsrMatrix, f: &Ldlt) {
    let s = f.symbolic();
    let n = s.n();
    let l = dense_l(f);
    let ad = a.to_dense();
    let mut err: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for i in 0..n {
        for j in 0..=i {
            let ldl: f64 = (0..=j).map(|k| l[i][k] * f.d[k] * l[j][k]).sum();
            let pap = ad[s.perm[i]][s.perm[j]];
            err = err.max((ldl - pap).abs());
            scale = scale.max(pap.abs());
        }
    }
    assert!(err <= 1e-12 * scale, "‖LDLᵀ − PAPᵀ‖ = {err:e} (scale {scale:e})");
}

#[test]
fn factorization_reconstructs_and_solves() {
    for (ordering, seed) in
        [(Ordering::NestedDissection, 1), (Ordering::Amd, 2), (Ordering::NestedDissection, 3)]
    {
        let a = random_spd(4, seed);
        let sym = Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap());
        assert!(ordering::is_permutation(&sym.perm));
        let f = Ldlt::factorize(sym, &a).unwrap();
        check_reconstruction(&a, &f);
        let n = a.nrows();
        let x_true: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b = vec![0.0; 2 * n];
        a.mul_vec(&x_true[..n], &mut b[..n]);
        a.mul_vec(&x_true[n..], &mut b[n..]);
        let mut x = b.clone();
        f.solve_in_place(&mut x, 2);
        let err = x.iter().zip(&x_true).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10, "{ordering:?}: {err:e}");
        let inv = SparseInverse::new(&f);
        assert_eq!(f.symbolic().nnz_inverse(), inv.nnz(), "S counted without building it");
        let mut y = vec![0.0; n];
        inv.apply(&b[..n], &mut y);
        let err = y.iter().zip(&x_true).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10, "sparse inverse apply: {err:e}");
        // Two right-hand sides interleaved row-major, as positions are.
        let inter: Vec<f64> = (0..2 * n).map(|i| b[(i % 2) * n + i / 2]).collect();
        let mut xs = vec![0.0; 2 * n];
        let mut scratch = crate::ldlt::SparseInverseScratch::default();
        for _ in 0..2 {
            inv.apply_many::<2>(&inter, &mut xs, &mut scratch);
        }
        let err = (0..2 * n).map(|i| (xs[i] - x_true[(i % 2) * n + i / 2]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10, "sparse inverse apply_many: {err:e}");
        for j in 0..n {
            let from_runs: Vec<usize> =
                inv.runs(j).iter().flat_map(|&(r, l)| r as usize..(r + l) as usize).collect();
            let from_path: Vec<usize> = inv.column(j).map(|(r, _)| r).collect();
            assert_eq!(from_runs, from_path, "runs of column {j}");
        }
    }
}

#[test]
fn elimination_tree_matches_the_pattern_of_l() {
    let a = random_spd(5, 7);
    for supernodes in [Supernodes::Fundamental, Supernodes::Relaxed] {
        let s = LdltSymbolic::analyze_with(&a.pattern, Ordering::NestedDissection, 3, supernodes).unwrap();
        if supernodes == Supernodes::Fundamental {
            let from_a = etree::from_matrix(&a.pattern.row_ptr, &a.pattern.col_idx, &s.perm, &s.perm_inv);
            assert_eq!(from_a, s.parent, "etree of the analysis differs from the pattern of L");
        }
        // Every column's pattern lies on its path to the root.
        for j in 0..s.n() {
            let mut path = std::collections::HashSet::new();
            let mut k = s.parent[j];
            while k != NONE {
                path.insert(k);
                k = s.parent[k];
            }
            for &r in &s.l_row_idx()[s.l_col_ptr[j]..s.l_col_ptr[j + 1]] {
                assert!(path.contains(&(r as usize)), "{supernodes:?}: L[{r},{j}] is off the path");
            }
        }
        // The tree read off the supernodes is that of `L`'s pattern, made
        // on demand with as many entries as the analysis counts.
        assert_eq!(s.parent, etree::parent_from_l(s.n(), &s.l_col_ptr, s.l_row_idx()), "{supernodes:?}");
        assert_eq!(s.nnz_l(), s.l_row_idx().len(), "{supernodes:?}");
        let post = etree::postorder(&s.parent);
        let mut pos = vec![0; s.n()];
        post.iter().enumerate().for_each(|(i, &v)| pos[v] = i);
        assert!((0..s.n()).all(|j| s.parent[j] == NONE || pos[j] < pos[s.parent[j]]));
    }
}

#[test]
fn single_nonzero_solves_are_columns_of_the_inverse() {
    let a = random_spd(4, 11);
    let f = Ldlt::factorize(
        Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::NestedDissection, 3).unwrap()),
        &a,
    )
    .unwrap();
    let n = a.nrows();
    let l = dense_l(&f);
    let mut scratch = PathScratch::default();
    let js: Vec<usize> = (0..n).step_by(7).collect();
    let many = f.solve_unit_lower_many(&js);
    for (c, &j) in js.iter().enumerate() {
        // Dense forward substitution of L s = e_j.
        let mut dense = vec![0.0; n];
        dense[j] = 1.0;
        for i in j + 1..n {
            dense[i] = -(j..i).map(|k| l[i][k] * dense[k]).sum::<f64>();
        }
        let col = f.solve_unit_lower_single(j, &mut scratch).clone();
        assert_eq!(col, many[c]);
        let mut k = j;
        let mut path = Vec::new();
        while k != NONE {
            path.push(k as u32);
            k = f.symbolic().parent[k];
        }
        assert_eq!(col.rows, path, "the result's pattern is the etree path");
        let mut sparse = vec![0.0; n];
        col.rows.iter().zip(&col.values).for_each(|(&r, &v)| sparse[r as usize] = v);
        for i in 0..n {
            assert!((sparse[i] - dense[i]).abs() < 1e-12 * (1.0 + dense[i].abs()), "column {j} row {i}");
        }
    }
    // S·L = I.
    let s_inv = SparseInverse::new(&f);
    let mut worst: f64 = 0.0;
    for j in 0..n {
        for i in 0..n {
            let mut v = 0.0;
            // (S L)_ij = Σ_k S_ik L_kj over k ≥ j.
            for k in j..n {
                if l[k][j] != 0.0 {
                    if let Some((_, s_ik)) = s_inv.column(k).find(|&(r, _)| r == i) {
                        v += s_ik * l[k][j];
                    }
                }
            }
            worst = worst.max((v - if i == j { 1.0 } else { 0.0 }).abs());
        }
    }
    assert!(worst < 1e-10, "‖SL − I‖ = {worst:e}");
}

#[test]
fn indefinite_matrix_is_an_error() {
    let mut a = random_spd(2, 5);
    a.values.iter_mut().for_each(|v| *v = -*v);
    let sym = Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::Amd, 3).unwrap());
    assert!(Ldlt::factorize(sym, &a).is_err());
}

fn max_rel_diff(a: &[f64], b: &faer::Mat<f64>) -> f64 {
    let m = b.nrows();
    let scale =
        (0..m).flat_map(|j| (0..m).map(move |i| (i, j))).map(|(i, j)| b[(i, j)].abs()).fold(0.0, f64::max);
    (0..m)
        .flat_map(|j| (0..m).map(move |i| (i, j)))
        .map(|(i, j)| (a[j * m + i] - b[(i, j)]).abs())
        .fold(0.0, f64::max)
        / scale
}

fn factor(nx: usize, seed: u64, ordering: Ordering) -> Arc<Ldlt> {
    let a = random_spd(nx, seed);
    Arc::new(Ldlt::factorize(Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap()), &a).unwrap())
}

#[test]
fn isodof_delassus_equals_dense_inverse_entries() {
    for ordering in [Ordering::NestedDissection, Ordering::Amd] {
        let f = factor(6, 3, ordering);
        let n = f.symbolic().n();
        let dofs: Vec<usize> = (0..n).filter(|d| (d * 37 + 11) % 13 < 3).collect();
        let cols = IsodofColumns::new(&f, &dofs);
        let wbar = cols.delassus();
        let reference = super::isodof::reference(&f, cols.dofs());
        assert!(max_rel_diff(&wbar, &reference) < 1e-12, "{ordering:?}");
        // The cross products of two disjoint sets are the off-diagonal block.
        let other: Vec<usize> = (0..n).filter(|d| d % 17 == 5).collect();
        let oc = IsodofColumns::new(&f, &other);
        let cross = cols.cross(&oc);
        let mut all = cols.dofs().to_vec();
        all.extend_from_slice(oc.dofs());
        let full = super::isodof::reference(&f, &all);
        let (m, mo) = (cols.len(), oc.len());
        let scale = full.norm_max();
        for j in 0..mo {
            for i in 0..m {
                assert!((cross[j * m + i] - full[(i, m + j)]).abs() < 1e-12 * scale);
            }
        }
        // The cost model counts exactly the stored entries.
        assert_eq!(IsodofCost::estimate(f.symbolic(), &dofs).entries as usize, cols.entries());
    }
}

#[test]
fn isodof_shortcuts_are_taken_and_exact() {
    // The DOFs of one face of the cube, as a contact patch: their columns
    // enter the top separators below their first rows, and some updates
    // are single runs of their targets' rows.
    let f = factor(9, 5, Ordering::NestedDissection);
    let dofs: Vec<usize> = (0..81 * 3).collect();
    let cols = IsodofColumns::new(&f, &dofs);
    let (trimmed, direct) = cols.shortcuts(&f);
    assert!(trimmed > 0 && direct > 0, "trimmed rows {trimmed}, direct blocks {direct}");
    let reference = super::isodof::reference(&f, cols.dofs());
    assert!(max_rel_diff(&cols.delassus(), &reference) < 1e-12);
    assert_eq!(IsodofCost::estimate(f.symbolic(), &dofs).entries as usize, cols.entries());
}

#[test]
fn isodof_results_do_not_depend_on_the_thread_count() {
    // Enough columns to be split into ranges, whose edges cut blocks.
    let f = factor(9, 5, Ordering::NestedDissection);
    let dofs: Vec<usize> = (0..81 * 3).chain(1200..1300).collect();
    let build = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| IsodofColumns::new(&f, &dofs).delassus())
    };
    let one = build(1);
    assert_eq!(one, build(3));
    let reference = super::isodof::reference(&f, IsodofColumns::new(&f, &dofs).dofs());
    assert!(max_rel_diff(&one, &reference) < 1e-12);
}

#[test]
fn isodof_cache_matches_a_fresh_build_as_sets_change() {
    for nx in [6, 9] {
        let f = factor(nx, 9, Ordering::NestedDissection);
        let g = factor(nx, 9, Ordering::NestedDissection);
        let n = f.symbolic().n();
        let mut cache = IsodofCache::default();
        let (mut reused_total, mut evictions) = (0, 0);
        for step in 0..40usize {
            // A window of DOFs sliding across the mesh: contacts appear, persist and vanish.
            let dofs: Vec<usize> = (0..n).filter(|d| (d / 3 + 7 * step) % 50 < 9 && d % 3 != 1).collect();
            let current = if step < 25 { &f } else { &g };
            let before = cache.len();
            let (wbar, reuse) = cache.delassus(current, &dofs);
            reused_total += reuse.reused;
            // Evicted in place: fewer columns than before, some of them kept.
            evictions += usize::from(reuse.reused > 0 && cache.len() < before);
            let reference = super::isodof::reference(current, &dofs);
            assert!(max_rel_diff(&wbar, &reference) < 1e-12, "{nx}: step {step}");
            assert!(cache.len() <= dofs.len() + dofs.len() / 4 + 96, "{nx}: step {step}");
        }
        assert!(reused_total > 0, "{nx}: persisting DOFs are reused");
        assert!(nx == 6 || evictions > 5, "{nx}: {evictions} evictions that kept columns");
    }
}

/// `trim` drops every cached DOF not in use at once (a handover's old
/// cache), keeping `W̄` of the rest exact and solving nothing.
#[test]
fn a_trimmed_cache_keeps_the_dofs_in_use_exactly() {
    let f = factor(9, 3, Ordering::NestedDissection);
    let n = f.symbolic().n();
    let mut cache = IsodofCache::default();
    let wide: Vec<usize> = (0..n).step_by(5).collect();
    cache.update(&f, &wide);
    let narrow: Vec<usize> = wide.iter().copied().filter(|d| d % 3 == 0).collect();
    cache.trim(&f, &narrow);
    assert_eq!(cache.len(), narrow.len());
    let (wbar, reuse) = cache.delassus(&f, &narrow);
    assert_eq!(reuse.reused, narrow.len(), "nothing solved after the trim");
    assert!(max_rel_diff(&wbar, &super::isodof::reference(&f, &narrow)) < 1e-12);
    // Another factor's cache is left alone.
    let g = factor(9, 3, Ordering::NestedDissection);
    cache.trim(&g, &narrow[..3]);
    assert_eq!(cache.len(), narrow.len());
}

/// The cache of a factor kept in single precision only keeps its columns
/// in single: `W̄` (its new–old blocks accumulated in `f32`) and the
/// correction's forward half from them stay within single precision of
/// the same factor's double columns, through evictions.
#[test]
fn an_isodof_cache_of_a_single_factor_keeps_single_columns() {
    let a = random_spd(9, 4);
    let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::NestedDissection, 3).unwrap());
    let mut f = Ldlt::factorize(symbolic, &a).unwrap();
    f.release_double();
    let f = Arc::new(f);
    let n = f.symbolic().n();
    let mut cache = IsodofCache::default();
    let mut largest = 0.0f64;
    for step in 0..12usize {
        let dofs: Vec<usize> = (0..n).filter(|d| (d / 3 + 5 * step) % 40 < 9 && d % 3 != 2).collect();
        let (wbar, _) = cache.delassus(&f, &dofs);
        let double = IsodofColumns::new(&f, &dofs);
        let order: Vec<usize> =
            dofs.iter().map(|d| double.dofs().iter().position(|e| e == d).unwrap()).collect();
        let reference = double.delassus();
        let m = dofs.len();
        let expected: Vec<f64> = (0..m * m).map(|k| reference[order[k / m] * m + order[k % m]]).collect();
        let scale = expected.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let diff = wbar.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
        assert!(diff < 1e-6, "step {step}: {diff:e}");
        largest = largest.max(diff);
        assert!(cache.columns(&f).unwrap().iter().all(|g| g.is_single()), "step {step}");
        assert!(matches!(cache.wbar().0, SlotValues::Single(_)), "step {step}: W̄ in single");
        // The correction's forward half from the single columns.
        let b: Vec<f64> =
            (0..n).map(|d| if dofs.contains(&d) { (d % 7) as f64 - 3.0 } else { 0.0 }).collect();
        let (mut z, mut x): (Vec<[f64; 1]>, _) = (Vec::new(), vec![0.0; n]);
        assert!(cache.forward(&f, &b, &mut z), "step {step}");
        f.solve_from_forward(&mut z, &mut x);
        let mut exact = b.clone();
        f.solve_one(&mut exact);
        let scale = exact.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let err = x.iter().zip(&exact).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
        assert!(err < 1e-5, "step {step}: correction {err:e}");
    }
    assert!(largest > 0.0, "the single columns round");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    #[test]
    fn isodof_delassus_on_random_dof_sets(seed in 0u64..1000, picks in proptest::collection::vec(0usize..10_000, 1..60)) {
        let f = factor(4, seed, if seed % 2 == 0 { Ordering::NestedDissection } else { Ordering::Amd });
        let n = f.symbolic().n();
        let dofs: Vec<usize> = picks.iter().map(|p| p % n).collect();
        let cols = IsodofColumns::new(&f, &dofs);
        let reference = super::isodof::reference(&f, cols.dofs());
        proptest::prop_assert!(max_rel_diff(&cols.delassus(), &reference) < 1e-10);
    }
}

#[test]
fn supernodal_one_vector_solve_matches_faer_and_thread_count() {
    for (nx, ordering) in [
        (3, Ordering::Amd),
        (9, Ordering::NestedDissection),
        (9, Ordering::Amd),
        (13, Ordering::NestedDissection),
    ] {
        let a = random_spd(nx, 7);
        let f =
            Ldlt::factorize(Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap()), &a).unwrap();
        if ordering == Ordering::NestedDissection {
            assert!(f.symbolic().solve_plan.subtrees() >= 2, "a nested-dissection factor splits");
        }
        if nx == 13 {
            let (plan, sn) = (&f.symbolic().solve_plan, &f.symbolic().supernodes);
            assert!(plan.blocked() >= 1, "a top separator is shared by blocks");
            let most = |parts: &dyn Fn(&super::solve_plan::Top) -> usize| {
                plan.top.iter().filter(|t| t.blocks > 1).map(parts).max().unwrap_or(0)
            };
            assert!(most(&|t| t.row_parts(sn, 0)) > 2, "a forward update is split in more than two");
            assert!(most(&|t| t.column_parts(sn, t.blocks - 1)) > 2, "a backward update too");
        }
        let n = a.nrows();
        let x_true: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b = vec![0.0; n];
        a.mul_vec(&x_true, &mut b);
        let mut reference = b.clone();
        f.solve_in_place_faer(&mut reference, 1);
        let solve = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut x = b.clone();
            pool.install(|| f.solve_one(&mut x));
            x
        };
        let one = solve(1);
        for threads in [2, 3, 5, 16] {
            assert_eq!(one, solve(threads), "{ordering:?}: independent of the thread count ({threads})");
        }
        let diff = one.iter().zip(&reference).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(diff < 1e-12, "{ordering:?} n = {n}: differs from faer's solve by {diff:e}");
        let err = one.iter().zip(&x_true).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10, "{ordering:?}: {err:e}");
    }
}

/// `solve_interleaved` (K = 2, 3 and the padded three-axis path) equals a
/// one-vector solve per axis, whatever the thread count.
#[test]
fn interleaved_solves_match_one_vector_solves() {
    for (nx, ordering) in [(4, Ordering::Amd), (9, Ordering::NestedDissection)] {
        let a = random_spd(nx, 11);
        let f =
            Ldlt::factorize(Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap()), &a).unwrap();
        let n = a.nrows();
        let axis = |c: usize| (0..n).map(|i| ((i * (c + 2)) as f64 * 0.29).cos()).collect::<Vec<f64>>();
        fn check<const K: usize>(f: &Ldlt, axes: &[Vec<f64>]) {
            let n = axes[0].len();
            let b: Vec<f64> = (0..n * K).map(|i| axes[i % K][i / K]).collect();
            let solve = |threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut x = vec![0.0; n * K];
                pool.install(|| f.solve_interleaved::<K>(&b, &mut x));
                x
            };
            let x = solve(1);
            assert_eq!(x, solve(3), "K = {K}: independent of the thread count");
            for (c, axis) in axes.iter().enumerate().take(K) {
                let mut one = axis.clone();
                f.solve_one(&mut one);
                let diff = (0..n).map(|i| (x[i * K + c] - one[i]).abs()).fold(0.0, f64::max);
                let scale = one.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!(diff <= 1e-12 * scale, "K = {K}, axis {c}: {diff:e}");
            }
        }
        let axes: Vec<Vec<f64>> = (0..3).map(axis).collect();
        check::<2>(&f, &axes);
        check::<3>(&f, &axes);
    }
}

/// A factor kept in single precision only (`release_double`) is the
/// factor rounded to `f32`: its solves (asked in double), interleaved
/// solves, widened columns and isodof `W̄` are those of the double factor
/// with its values rounded, after a refactorization too, and its bfloat16
/// copy is still rounded from the double values.
#[test]
fn released_factor_is_the_rounded_factor() {
    for (nx, ordering) in [(4, Ordering::Amd), (9, Ordering::NestedDissection)] {
        let a = random_spd(nx, 5);
        let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap());
        let mut f = Ldlt::factorize(symbolic.clone(), &a).unwrap();
        let double_bytes = f.sweep_bytes();
        f.keep_rounded(Some(Precision::Bfloat16));
        f.release_double();
        let mut a2 = a.clone();
        a2.values.iter_mut().for_each(|v| *v *= 1.5);
        f.refactorize(&a2).unwrap();
        assert!(f.double_released() && f.sweep_bytes() < double_bytes);
        let mut double = Ldlt::factorize(symbolic.clone(), &a2).unwrap();
        double.keep_rounded(Some(Precision::Bfloat16));
        let mut rounded = double.clone();
        rounded.supernodal.get_mut().iter_mut().for_each(|v| *v = f64::from(*v as f32));
        let n = a.nrows();
        let case = format!("{ordering:?}");
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.41).cos()).collect();
        let (mut x, mut y) = (b.clone(), b.clone());
        f.solve_one(&mut x);
        rounded.solve_one(&mut y);
        assert_eq!(x, y, "{case}: one-vector solve");
        let b3: Vec<f64> = (0..3 * n).map(|i| (i as f64 * 0.23).sin()).collect();
        let (mut x3, mut y3) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        f.solve_interleaved::<3>(&b3, &mut x3);
        rounded.solve_interleaved::<3>(&b3, &mut y3);
        assert_eq!(x3, y3, "{case}: interleaved solve");
        let (mut x, mut y) = (b.clone(), b.clone());
        f.solve_one_in(&mut x, Precision::Bfloat16);
        double.solve_one_in(&mut y, Precision::Bfloat16);
        assert_eq!(x, y, "{case}: the bfloat16 copy");
        let mut scratch = Vec::new();
        for c in (0..n).step_by(7) {
            assert_eq!(f.l_column_in(c, &mut scratch), rounded.l_column(c), "{case}: column {c}");
        }
        let (f, rounded) = (Arc::new(f), Arc::new(rounded));
        // Many columns (blocks widened for GEMM) and few (the panel read in place).
        let dofs: Vec<usize> = (0..n).filter(|d| (d * 37 + 11) % 13 < 3).collect();
        for few in [dofs.len(), 5] {
            let wbar = IsodofColumns::new(&f, &dofs[..few]).delassus();
            let expected = IsodofColumns::new(&rounded, &dofs[..few]).delassus();
            let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = wbar.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            assert!(
                diff <= 1e-14 * scale,
                "{case}, {few} DOFs: W̄ of the single factor, {diff:e} of {scale:e}"
            );
        }
        let columns = IsodofColumns::new(&f, &dofs);
        let wbar = columns.delassus();
        let exact = super::isodof::reference(&Arc::new(double), columns.dofs());
        let off = max_rel_diff(&wbar, &exact);
        assert!(off > 0.0 && off < 1e-5, "{case}: W̄ near the double factor's, {off:e}");
    }
}

/// A single-precision (bfloat16, 8-bit) solve is the double solve with the
/// factor rounded to `f32` (bfloat16, 8-bit integers times a power-of-two
/// scale per column) (bitwise: the same operations on the widened values),
/// independent of the thread count, refreshed by `refactorize`, and close
/// to the exact solve: within the rounding's relative error (2⁻²⁴, 2⁻⁸, 2⁻⁸
/// of a column's largest entry) times a modest growth.
#[test]
fn rounded_factor_solves_are_the_solves_with_the_rounded_factor() {
    use crate::simd::Bf16;
    let cases = [
        (Precision::Single, (|v| f64::from(v as f32)) as fn(f64) -> f64, 1e-4),
        (Precision::Bfloat16, |v| f64::from(Bf16::from_f64(v)), 5e-2),
        (Precision::Int8, |v| v, 5e-2),
    ];
    for (precision, round, bound) in cases {
        for (nx, ordering) in [(4, Ordering::Amd), (9, Ordering::NestedDissection)] {
            let a = random_spd(nx, 5);
            let mut f =
                Ldlt::factorize(Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap()), &a)
                    .unwrap();
            f.keep_single_precision(precision == Precision::Single);
            f.keep_rounded(Some(precision).filter(|p| p.preconditioner_only()));
            let mut a2 = a.clone();
            a2.values.iter_mut().for_each(|v| *v *= 1.5);
            f.refactorize(&a2).unwrap();
            let mut rounded = f.clone();
            rounded.supernodal.get_mut().iter_mut().for_each(|v| *v = round(*v));
            if precision == Precision::Int8 {
                rounded.supernodal.get_mut().copy_from_slice(&int8_values(&f));
            }
            let n = a.nrows();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.41).cos()).collect();
            let solve = |threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut x = b.clone();
                pool.install(|| f.solve_one_in(&mut x, precision));
                x
            };
            let low = solve(1);
            let case = format!("{precision:?}, {ordering:?}");
            assert_eq!(low, solve(3), "{case}: independent of the thread count");
            let mut reference = b.clone();
            rounded.solve_one(&mut reference);
            if precision == Precision::Int8 {
                // The backward sweep sums each column by blocks of rows.
                let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                let off = low.iter().zip(&reference).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
                assert!(off <= 1e-13 * scale, "{case}: the solve with the rounded factor, {off:e}");
            } else {
                assert_eq!(low, reference, "{case}: the solve with the rounded factor");
            }
            let mut exact = b.clone();
            f.solve_one(&mut exact);
            let scale = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = low.iter().zip(&exact).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            assert!(diff > 0.0 && diff < bound * scale, "{case}: rounded vs double {diff:e} of {scale:e}");
        }
    }
}

/// `f`'s values with each column of `L` below its diagonal replaced by its
/// 8-bit integers times their blocks' scales.
fn int8_values(f: &Ldlt) -> Vec<f64> {
    let layout = &f.symbolic.supernodes;
    let values = f.supernodal.get();
    let super::rounded::Rounded::Int8 { values: q, scales, scale_ptr } =
        super::rounded::Rounded::round(Precision::Int8, values, layout, None)
    else {
        unreachable!("rounded to int8")
    };
    let mut out = values.to_vec();
    for s in 0..layout.len() {
        let (w, ld) = (layout.width(s), layout.width(s) + layout.pattern(s).len());
        let blocks = super::rounded::scale_blocks(layout, s);
        for j in 0..w {
            for i in j + 1..ld {
                let k = layout.value_ptr[s] + j * ld + i;
                let scale = scales[scale_ptr[s] + j * blocks + i / super::panel_kernels::SCALE_ROWS];
                out[k] = f64::from(q[k]) * f64::from(scale);
            }
        }
    }
    out
}

#[test]
fn split_solve_and_gathered_columns_are_the_solve() {
    // `forward_interleaved3` then `solve_from_forward` is the three-axis
    // solve; the cached columns' gather is that solution at their DOFs,
    // and `add_forward` of a correction on those DOFs adds its solve.
    let f = factor(9, 7, Ordering::Auto);
    let n = f.symbolic().n();
    let dofs: Vec<usize> = (3..n).step_by(29).collect();
    let mut cache = IsodofCache::default();
    cache.update(&f, &dofs);
    let b: Vec<f64> = (0..3 * n).map(|i| ((i * 13 % 17) as f64 - 8.0) * 0.1).collect();
    let mut expected = vec![0.0; 3 * n];
    f.solve_interleaved::<3>(&b, &mut expected);
    let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut z = Vec::new();
    f.forward_interleaved3(&b, &mut z);
    let mut at = vec![None; n];
    for g in cache.columns(&f).expect("cached for f") {
        g.gather(&f, &z, |d, v| at[d] = Some(v));
    }
    for &d in &dofs {
        let v = at[d].expect("a gathered value per cached DOF");
        let err = (0..3).map(|k| (v[k] - expected[3 * d + k]).abs()).fold(0.0, f64::max) / scale;
        assert!(err < 1e-13 && v[3] == 0.0, "gather at {d}: {err:e}");
    }
    let u: Vec<f64> =
        (0..3 * n).map(|i| if dofs.contains(&(i / 3)) { (i % 5) as f64 - 2.0 } else { 0.0 }).collect();
    for g in cache.columns(&f).unwrap() {
        g.add_forward(&f, |d| [u[3 * d], u[3 * d + 1], u[3 * d + 2], 0.0], &mut z);
    }
    let mut x = vec![0.0; 3 * n];
    f.solve_from_forward(&mut z, &mut x);
    let sum: Vec<f64> = b.iter().zip(&u).map(|(b, u)| b + u).collect();
    f.solve_interleaved::<3>(&sum, &mut expected);
    let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = x.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
    assert!(err < 1e-13, "split solve with a correction: {err:e}");
}

#[test]
fn correction_from_cached_isodof_columns_is_the_solve() {
    // A right-hand side on DOFs the cache holds, in two generations: the
    // forward half from the columns and the backward sweep equal the solve.
    let f = factor(9, 7, Ordering::Auto);
    let n = f.symbolic().n();
    let (first, second): (Vec<usize>, Vec<usize>) =
        ((0..n).step_by(37).collect(), (5..n).step_by(53).collect());
    let mut cache = IsodofCache::default();
    cache.update(&f, &first);
    let mut both: Vec<usize> = first.iter().chain(&second).copied().collect();
    both.sort_unstable();
    both.dedup();
    assert_eq!(cache.update(&f, &both).reused, first.len());
    let mut b = vec![0.0; n];
    for (k, &d) in both.iter().enumerate().filter(|(k, _)| k % 3 != 1) {
        b[d] = ((k * 7 % 11) as f64 - 5.0) * 0.25;
    }
    let mut expected = b.clone();
    f.solve_one(&mut expected);
    let (mut z, mut x): (Vec<[f64; 1]>, _) = (Vec::new(), vec![0.0; n]);
    assert!(cache.forward(&f, &b, &mut z));
    f.solve_from_forward(&mut z, &mut x);
    let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = x.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
    assert!(err < 1e-13, "{err:e}");
    // Three right-hand sides at once (`A ⊗ I₃`, interleaved), one of them
    // zero at some DOFs: the same half solve per axis.
    let b3: Vec<f64> =
        (0..3 * n).map(|i| if i % 3 == 2 { 0.5 * b[i / 3] } else { b[i / 3] * (i % 3) as f64 }).collect();
    let mut expected3 = vec![0.0; 3 * n];
    f.solve_interleaved::<3>(&b3, &mut expected3);
    let (mut z3, mut x3) = (Vec::new(), vec![0.0; 3 * n]);
    assert!(cache.forward::<3>(&f, &b3, &mut z3));
    f.solve_from_forward::<3>(&mut z3, &mut x3);
    let scale = expected3.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = x3.iter().zip(&expected3).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
    assert!(err < 1e-13, "three sides: {err:e}");
    // The backward half in single precision is the single-precision solve.
    let mut single = f.as_ref().clone();
    single.keep_single_precision(true);
    assert_eq!(single.lightest_precision(), Precision::Single);
    assert_eq!(f.lightest_precision(), Precision::Double);
    let mut expected = b.clone();
    single.solve_one_in(&mut expected, Precision::Single);
    assert!(cache.forward(&f, &b, &mut z));
    single.solve_from_forward_in(&mut z, &mut x, Precision::Single);
    let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = x.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
    assert!(err < 1e-6, "single-precision backward half: {err:e}");
    // A bfloat16 copy serves preconditioners, never a solve: the lightest stays single.
    single.keep_rounded(Some(Precision::Bfloat16));
    assert_eq!(single.lightest_precision(), Precision::Single);
    let mut expected = b.clone();
    single.solve_one_in(&mut expected, Precision::Bfloat16);
    assert!(cache.forward(&f, &b, &mut z));
    single.solve_from_forward_in(&mut z, &mut x, Precision::Bfloat16);
    let err = x.iter().zip(&expected).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
    assert!(err < 1e-3, "bfloat16 backward half: {err:e}");
    // A DOF outside the cache, or another factor: refused.
    let mut outside = b3.clone();
    outside[3 + 2] = 1.0;
    assert!(!cache.forward::<3>(&f, &outside, &mut z3));
    b[1] = 1.0;
    assert!(!cache.forward(&f, &b, &mut z));
    let other = factor(9, 8, Ordering::Auto);
    assert!(!cache.forward(&other, &vec![0.0; n], &mut z));
}

/// A factor computed in single precision keeps what a released one keeps
/// (its `f32` values and their bfloat16 copy, the same bytes a sweep), and
/// solves within single precision's error of the double factor; a matrix
/// that is positive definite only beyond single precision is refused, not
/// factorized into a non-positive pivot.
#[test]
fn a_factor_computed_in_single_precision_solves_to_single_precision() {
    for (nx, ordering) in [(4, Ordering::Amd), (9, Ordering::NestedDissection)] {
        let a = random_spd(nx, 7);
        let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3).unwrap());
        let single = Ldlt::factorize_single(symbolic.clone(), &a, Some(Precision::Bfloat16)).unwrap();
        let mut released = Ldlt::factorize(symbolic.clone(), &a).unwrap();
        released.keep_rounded(Some(Precision::Bfloat16));
        released.release_double();
        assert!(single.double_released() && single.sweep_bytes() == released.sweep_bytes());
        let double = Ldlt::factorize(symbolic, &a).unwrap();
        let b: Vec<f64> = (0..a.nrows()).map(|i| (i as f64 * 0.37).sin()).collect();
        let (mut x, mut y, mut z) = (b.clone(), b.clone(), b.clone());
        single.solve_one(&mut x);
        double.solve_one(&mut y);
        single.solve_one_in(&mut z, Precision::Bfloat16);
        let diff = |u: &[f64]| {
            let num: f64 = u.iter().zip(&y).map(|(p, q)| (p - q).powi(2)).sum();
            (num / y.iter().map(|q| q * q).sum::<f64>()).sqrt()
        };
        assert!(diff(&x) < 1e-5, "{ordering:?}: single-precision factor off by {:e}", diff(&x));
        assert!(diff(&x) > 0.0, "{ordering:?}: computed in single precision, not double");
        assert!(diff(&z) < 2e-2, "{ordering:?}: its bfloat16 copy off by {:e}", diff(&z));
    }
    // [[1, 1 − 1e-9], [1 − 1e-9, 1]]: its second pivot 2e-9 is lost in f32.
    let e = 1.0 - 1e-9;
    let pattern = CsrPattern { nrows: 2, ncols: 2, row_ptr: vec![0, 2, 4], col_idx: vec![0, 1, 0, 1] };
    let a = CsrMatrix { pattern, values: vec![1.0, e, e, 1.0] };
    let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::Amd, 1).unwrap());
    assert!(Ldlt::factorize(symbolic.clone(), &a).is_ok());
    assert!(matches!(Ldlt::factorize_single(symbolic, &a, None), Err(LinalgError::Factorization(_))));
}
