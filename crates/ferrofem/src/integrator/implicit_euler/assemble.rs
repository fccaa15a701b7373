//! Stage `assemble`: element rotations (or, for stable Neo-Hookean, forces
//! and the projected tangent `Kₑ`), then `A = (1 + hα) M + (hβ + h²) K`
//! and `b = h (f + M g) − hα M v − (hβ + h²) K v` (zeng2022 eq. 4 with
//! Rayleigh damping `B = αM + βK`), gathered row by row in parallel.
//!
//! Kinematic vertices get the row `mᵢ Δvᵢ = mᵢ Δv*ᵢ`; their columns move to
//! the right-hand side of the free rows, so `A` stays symmetric positive
//! definite.

use ferrofem_linalg::simd::prefetch;
use nalgebra::{Matrix3, SMatrix, Vector3};
use rayon::prelude::*;

use super::pattern::AssemblyPattern;
use super::BodyWorkspace;
use crate::body::Body;
use crate::element::{lanes, tet_lanes, Constitutive, PolarMethod, Stiffness, TetElement, TetEval};
use crate::state::BodyState;

/// Vertices per parallel task of the row gather.
const ROWS_PER_TASK: usize = 64;

/// Incidences ahead whose tet data the row gather asks the cache for: the
/// tets of a vertex's neighbours lie far apart in memory and the gather
/// waited on their loads (the 20k real-time drop's rows: 13.4 → 7.5 ms).
const GATHER_AHEAD: usize = 4;

/// Step inputs shared by every body.
#[derive(Debug, Clone, Copy)]
pub struct StepInputs {
    /// Time step h (s).
    pub h: f64,
    /// Time at the end of the step (s), where kinematic targets are taken.
    pub t_next: f64,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Rotation extraction.
    pub polar: PolarMethod,
}

/// Runs the stage for one body.
pub fn assemble(body: &Body, state: &mut BodyState, ws: &mut BodyWorkspace, inp: &StepInputs) {
    prescribe(body, state, ws, inp);
    evaluate_elements(body, state, ws, inp.polar);
    gather_rows(body, state, ws, inp);
}

/// `Δv*ᵢ = (x*ᵢ(t+h) − xᵢ)/h − vᵢ` for kinematic vertices.
fn prescribe(body: &Body, state: &BodyState, ws: &mut BodyWorkspace, inp: &StepInputs) {
    for (i, k) in body.kinematic.iter().enumerate() {
        if let Some(k) = k {
            let target = k.target(body.rest_vertex(i), inp.t_next);
            for d in 0..3 {
                let j = 3 * i + d;
                ws.prescribed_dv[j] = (target[d] - state.positions[j]) / inp.h - state.velocities[j];
            }
        }
    }
}

/// Rotation, rotated gradients, forces, energy and `Kₑ v` of every tet, in
/// parallel: co-rotational ([`evaluate_corotated`]) or hyperelastic
/// ([`evaluate_hyperelastic`]).
fn evaluate_elements(body: &Body, state: &mut BodyState, ws: &mut BodyWorkspace, polar: PolarMethod) {
    state.rotations.resize(body.tets.len(), Matrix3::identity());
    // Scene validation admits these two under implicit Euler; a body built
    // otherwise with another model runs co-rotational, as it always has.
    match body.constitutive {
        Constitutive::StableNeoHookean => evaluate_hyperelastic(body, state, ws),
        _ => evaluate_corotated(body, state, ws, polar),
    }
    ws.elastic_energy = ws.evals.iter().map(|e| e.energy).sum();
}

/// Co-rotational tets: each tet's polar decomposition is warm-started from
/// its rotation in the state (identity on the first step), which it
/// updates. The Jacobi iteration runs [`lanes::LANES`] tets at a time, one
/// per SIMD lane, with the bits of the one-tet iteration.
fn evaluate_corotated(body: &Body, state: &mut BodyState, ws: &mut BodyWorkspace, polar: PolarMethod) {
    let (x, v) = (&state.positions, &state.velocities);
    let at = |q: &[f64], i: usize| Vector3::new(q[3 * i], q[3 * i + 1], q[3 * i + 2]);
    let kv =
        |t: &TetElement, ev: &TetEval| t.stiffness_times(&ev.rotated_grads, &t.vertices.map(|i| at(v, i)));
    let evals = ws.evals.par_chunks_mut(lanes::LANES).zip(ws.stiffness_velocity.par_chunks_mut(lanes::LANES));
    let batches =
        evals.zip(state.rotations.par_chunks_mut(lanes::LANES)).zip(body.tets.par_chunks(lanes::LANES));
    batches.for_each(|(((evs, kvs), rs), tets)| match polar {
        PolarMethod::Jacobi { max_sweeps, tolerance } => {
            let mut f = [Matrix3::zeros(); lanes::LANES];
            tet_lanes::tet_rotations(tets, x, rs, &mut f[..tets.len()], max_sweeps, tolerance);
            for (l, t) in tets.iter().enumerate() {
                evs[l] = t.evaluate_at(&f[l], rs[l]);
                kvs[l] = kv(t, &evs[l]);
            }
        }
        PolarMethod::Svd => {
            for (l, t) in tets.iter().enumerate() {
                (rs[l], evs[l]) = t.evaluate(&t.vertices.map(|i| at(x, i)), &rs[l], polar);
                kvs[l] = kv(t, &evs[l]);
            }
        }
    });
}

/// Hyperelastic tets (stable Neo-Hookean): forces, energy and the
/// stiffness `Kₑ` of the projected tangent
/// ([`TetElement::evaluate_hyperelastic_into`]) from the signed SVD of `F`
/// ([`tet_lanes::signed_svds`], [`lanes::LANES`] tets at a time, each
/// warm-started from its last eigenbasis), and `Kₑ v`; the state's
/// rotation becomes `UVᵀ` (what the factor's warp reads).
fn evaluate_hyperelastic(body: &Body, state: &mut BodyState, ws: &mut BodyWorkspace) {
    let (x, v) = (&state.positions, &state.velocities);
    let at = |q: &[f64], i: usize| Vector3::new(q[3 * i], q[3 * i + 1], q[3 * i + 2]);
    ws.tangents.resize(body.tets.len(), Stiffness::zeros());
    ws.eigenbases.resize(body.tets.len(), Matrix3::identity());
    let per_tet =
        ws.evals.par_chunks_mut(lanes::LANES).zip(ws.stiffness_velocity.par_chunks_mut(lanes::LANES));
    let per_tet =
        per_tet.zip(ws.tangents.par_chunks_mut(lanes::LANES)).zip(ws.eigenbases.par_chunks_mut(lanes::LANES));
    per_tet
        .zip(state.rotations.par_chunks_mut(lanes::LANES))
        .zip(body.tets.par_chunks(lanes::LANES))
        .for_each(|(((((evs, kvs), ks), bases), rotations), tets)| {
            let n = tets.len();
            let f: [Matrix3<f64>; lanes::LANES] = std::array::from_fn(|l| {
                tets[l.min(n - 1)].deformation_gradient(&tets[l.min(n - 1)].vertices.map(|i| at(x, i)))
            });
            let mut basis: [Matrix3<f64>; lanes::LANES] = std::array::from_fn(|l| bases[l.min(n - 1)]);
            let usv = tet_lanes::signed_svds(&f, &mut basis);
            for (l, t) in tets.iter().enumerate() {
                t.evaluate_hyperelastic_into(&f[l], &usv[l], true, &mut evs[l], &mut ks[l]);
                let ve = SMatrix::<f64, 12, 1>::from_iterator(
                    t.vertices.iter().flat_map(|&i| v[3 * i..3 * i + 3].iter().copied()),
                );
                let k_v = ks[l] * ve;
                kvs[l] = std::array::from_fn(|a| k_v.fixed_rows::<3>(3 * a).into_owned());
                let (u, _, v) = usv[l];
                (rotations[l], bases[l]) = (u * v.transpose(), basis[l]);
            }
        });
}

/// Builds each vertex's three rows of `A` and entries of `b` from its
/// incident tets in a fixed order.
fn gather_rows(body: &Body, state: &BodyState, ws: &mut BodyWorkspace, inp: &StepInputs) {
    let h = inp.h;
    let (alpha, beta) = (body.damping.mass, body.damping.stiffness);
    let c_k = h * beta + h * h;
    let g = Vector3::from(inp.gravity);
    let v = &state.velocities;
    let vel = |j: usize| Vector3::new(v[3 * j], v[3 * j + 1], v[3 * j + 2]);
    let pdv = &ws.prescribed_dv;
    let pre = |j: usize| Vector3::new(pdv[3 * j], pdv[3 * j + 1], pdv[3 * j + 2]);
    let (evals, tangents) = (&ws.evals, &ws.tangents);
    let kvs = &ws.stiffness_velocity;
    let pat = &ws.pattern;
    let tasks = split_by_vertex_groups(pat, &mut ws.system.values, &mut ws.rhs, &mut ws.elastic_forces);
    tasks.into_par_iter().for_each(|(first, values, rhs, forces)| {
        let mut offset = 0;
        for (local, i) in (first..(first + rhs.len() / 3)).enumerate() {
            let d = pat.degree[i] as usize;
            let row = &mut values[offset..offset + 9 * d];
            offset += 9 * d;
            row.iter_mut().for_each(|x| *x = 0.0);
            let m = body.mass[i];
            let mut f = Vector3::zeros();
            let mut kv = Vector3::zeros();
            let mut moved = Vector3::zeros();
            let fixed_row = body.is_kinematic[i];
            for p in pat.incidence_ptr[i]..pat.incidence_ptr[i + 1] {
                if let Some(ahead) = pat.incidence.get(p + GATHER_AHEAD) {
                    let e = ahead.tet as usize;
                    prefetch(std::slice::from_ref(&evals[e]));
                    prefetch(std::slice::from_ref(&body.tets[e]));
                    prefetch(std::slice::from_ref(&kvs[e]));
                    if let Some(k) = tangents.get(e) {
                        prefetch(std::slice::from_ref(k));
                    }
                }
                let inc = &pat.incidence[p];
                let (e, a) = (inc.tet as usize, inc.corner as usize);
                let (ev, rest) = (&evals[e], &body.tets[e]);
                f += ev.forces[a];
                kv += kvs[e][a];
                if fixed_row {
                    continue;
                }
                // c_k R Kₑ Rᵀ block (a, b) = λ' hₐ h_bᵀ + h_b μ'hₐᵀ + (μ'hₐ·h_b) I.
                let h = &ev.rotated_grads;
                let la = (c_k * rest.measure * rest.lame.lambda) * h[a];
                let ma = (c_k * rest.measure * rest.lame.mu) * h[a];
                for (b, &j) in rest.vertices.iter().enumerate() {
                    let k = match tangents.get(e) {
                        Some(k) => k.fixed_view::<3, 3>(3 * a, 3 * b) * c_k,
                        None => {
                            let hb = h[b];
                            let diag = ma.dot(&hb);
                            la * hb.transpose() + hb * ma.transpose() + Matrix3::from_diagonal_element(diag)
                        }
                    };
                    if body.is_kinematic[j] {
                        moved += k * pre(j);
                        continue;
                    }
                    let col = 3 * inc.column[b] as usize;
                    for r in 0..3 {
                        let dst = &mut row[r * 3 * d + col..r * 3 * d + col + 3];
                        (0..3).for_each(|c| dst[c] += k[(r, c)]);
                    }
                }
            }
            let diag = 3 * pat.diagonal_rank[i] as usize;
            let (bi, mass_coef) = if fixed_row {
                (m * pre(i), m)
            } else {
                (h * (f + m * g) - h * alpha * m * vel(i) - c_k * kv - moved, (1.0 + h * alpha) * m)
            };
            for r in 0..3 {
                row[r * 3 * d + diag + r] += mass_coef;
                rhs[3 * local + r] = bi[r];
                forces[3 * local + r] = f[r];
            }
        }
    });
}

type Task<'a> = (usize, &'a mut [f64], &'a mut [f64], &'a mut [f64]);

/// Splits the value, rhs and force arrays into disjoint per-task slices of
/// [`ROWS_PER_TASK`] vertices (a vertex's rows are contiguous in CSR).
fn split_by_vertex_groups<'a>(
    pattern: &AssemblyPattern,
    mut values: &'a mut [f64],
    mut rhs: &'a mut [f64],
    mut forces: &'a mut [f64],
) -> Vec<Task<'a>> {
    let n = pattern.degree.len();
    let mut tasks = Vec::with_capacity(n.div_ceil(ROWS_PER_TASK));
    let mut first = 0;
    while first < n {
        let last = (first + ROWS_PER_TASK).min(n);
        let len = pattern.row_block_start(last) - pattern.row_block_start(first);
        let (v, v_rest) = std::mem::take(&mut values).split_at_mut(len);
        let (r, r_rest) = std::mem::take(&mut rhs).split_at_mut(3 * (last - first));
        let (f, f_rest) = std::mem::take(&mut forces).split_at_mut(3 * (last - first));
        tasks.push((first, v, r, f));
        (values, rhs, forces) = (v_rest, r_rest, f_rest);
        first = last;
    }
    tasks
}
