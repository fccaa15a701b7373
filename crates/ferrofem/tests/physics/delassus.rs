//! The Delassus builders (zeng2022 §3.5, §4, §5): every method gives the
//! dense method's `W`, step after step and through whole simulations.

use crate::common;

use std::sync::Arc;

use ferrofem::constraint::{Compliance, ConstraintJacobian};
use ferrofem::delassus::{self, DelassusBuffers, DelassusMethod, MixedDelassus, UnbuiltBody};
use ferrofem::integrator::{ImplicitEulerSettings, PreconditionerKind, Refresh};
use ferrofem::obstacle::Shape;
use ferrofem::scene::{BodySpec, MeshSpec, ObstacleSpec, SceneBuilder};
use ferrofem::solver::DelassusOperator;
use ferrofem::World;
use ferrofem_linalg::ldlt::IsodofCache;
use ferrofem_linalg::{CsrMatrix, Ldlt, LdltSymbolic, Ordering};
use proptest::prelude::*;

fn scene(name: &str, method: DelassusMethod) -> World {
    common::builtin(name, |s| s.spec.constraint_solver.delassus = method)
}

fn factor(w: &World, b: usize) -> Arc<Ldlt> {
    common::workspace(w, b).refactorizer.as_ref().and_then(|r| r.factor()).expect("factorized")
}

/// `W` of the unbuilt operator, column by column (`λ = e_j`).
fn unbuilt_matrix(f: &Ldlt, h: &CsrMatrix) -> Vec<f64> {
    let c = h.nrows();
    let rows: Vec<usize> = (0..c).collect();
    let mut w = vec![0.0; c * c];
    for j in 0..c {
        let mut e = vec![0.0; c];
        e[j] = 1.0;
        let op = MixedDelassus::new(c, None, vec![UnbuiltBody::new(f, h, &rows)], 1.0, &e);
        for r0 in (0..c).step_by(3) {
            let col = op.rows_times(r0, &e);
            (0..3).for_each(|i| w[(r0 + i) * c + j] = col[i]);
        }
        if j % 3 == 0 {
            let d = op.diagonal_block(j);
            (0..3).for_each(|i| assert!((d[(i, 0)] - w[(j + i) * c + j]).abs() <= 1e-10 * d.amax()));
        }
    }
    w
}

/// All four methods against the dense one for one body's `H`.
fn assert_all_methods_agree(f: &Arc<Ldlt>, h: &CsrMatrix, what: &str) {
    let reference =
        delassus::dense(&Compliance::Ldlt(f.clone()), h, &mut DelassusBuffers::default(), 1.0).to_vec();
    let mut buf = DelassusBuffers::default();
    let (w, _) = delassus::isodof(f, h, &mut buf, 1.0);
    assert!(common::rel_diff(w, &reference) < 1e-10, "isodof, {what}");
    let mut cache = IsodofCache::default();
    // Warm the cache with half of the rows, then ask for all of them.
    let half = h.nrows() / 6 * 3;
    if half > 0 {
        let mut first = ConstraintJacobian::new(h.pattern.ncols);
        for r in (0..half).step_by(3) {
            let pts: Vec<(usize, f64)> = (h.pattern.row_ptr[r]..h.pattern.row_ptr[r + 1])
                .map(|p| (h.pattern.col_idx[p] as usize / 3, 1.0))
                .collect();
            first.push_point(&pts, [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        }
        delassus::isodof_reuse(&mut cache, f, &first.to_csr(), &mut buf, 1.0);
    }
    let (w, reuse) = delassus::isodof_reuse(&mut cache, f, h, &mut buf, 1.0);
    assert!(common::rel_diff(w, &reference) < 1e-10, "isodof-reuse, {what}");
    assert!(half == 0 || reuse.reused > 0, "the warm cache is used, {what}");
    assert!(common::rel_diff(&unbuilt_matrix(f, h), &reference) < 1e-10, "unbuilt, {what}");
}

#[test]
fn every_method_builds_the_dense_w_for_one_to_three_bodies() {
    common::one_worker(|| {
        for (name, steps) in [("drop", 25), ("stack", 3), ("multi-body", 30)] {
            let mut w = scene(name, DelassusMethod::Dense);
            for _ in 0..steps {
                w.step().unwrap();
            }
            let mut checked = 0;
            for b in 0..w.model.bodies.len() {
                let h = &w.constraints().problem.bodies[b].jacobian;
                if h.nrows() == 0 {
                    continue;
                }
                assert_all_methods_agree(&factor(&w, b), h, &format!("{name} body {b}"));
                checked += 1;
            }
            assert!(checked > 0, "{name} has contacts after {steps} steps");
        }
    })
}

#[test]
fn rows_on_triangle_points_of_two_bodies_agree() {
    common::one_worker(|| {
        // The stack's middle box touches the bottom box through vertex–triangle
        // rows whose far side has three barycentric weights.
        let mut w = scene("stack", DelassusMethod::Dense);
        for _ in 0..3 {
            w.step().unwrap();
        }
        let h = &w.constraints().problem.bodies[0].jacobian;
        let max_row = (0..h.nrows()).map(|r| h.pattern.row_ptr[r + 1] - h.pattern.row_ptr[r]).max().unwrap();
        assert!(max_row >= 7, "barycentric rows present (max {max_row} entries per row)");
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn random_constraint_patterns_agree(
        picks in proptest::collection::vec((0usize..10_000, 0.05f64..0.9, 0.05f64..0.9, -1.0f64..1.0), 1..25),
    ) {
        let b = BodySpec::new("b", MeshSpec::Box { size: [0.4, 0.2, 0.2], cells: [6, 3, 3] }, 1e5, 0.3, 1000.0);
        let ldlt = |s: &mut ImplicitEulerSettings| s.preconditioner = PreconditionerKind::Ldlt;
        let mut w = SceneBuilder::new(0.01).implicit_euler(ldlt).body(b).world().unwrap();
        w.step().unwrap();
        let f = factor(&w, 0);
        let mesh = &w.model.bodies[0].surface;
        let mut h = ConstraintJacobian::new(f.symbolic().n());
        for (k, &(pick, a, b, tilt)) in picks.iter().enumerate() {
            let n = nalgebra::Vector3::new(tilt, 0.3, 1.0).normalize();
            let t1 = n.cross(&nalgebra::Vector3::x()).normalize();
            let t2 = n.cross(&t1);
            let frame = [n.into(), t1.into(), t2.into()];
            if k % 2 == 0 {
                // A vertex–triangle pair: the triangle's barycentric point on the far side.
                let tri = mesh.mesh.triangles[pick % mesh.mesh.triangles.len()];
                let (u, v) = (a * 0.5, b * 0.5);
                let weights = [1.0 - u - v, u, v];
                let vertex = mesh.volume_vertex[(pick / 7) % mesh.volume_vertex.len()];
                let mut pts = vec![(vertex, 1.0)];
                pts.extend((0..3).map(|i| (mesh.volume_vertex[tri[i]], -weights[i])));
                h.push_point(&pts, frame);
            } else {
                h.push_point(&[(mesh.volume_vertex[pick % mesh.volume_vertex.len()], 1.0)], frame);
            }
        }
        assert_all_methods_agree(&f, &h.to_csr(), "random pattern");
    }
}

#[test]
fn reuse_over_200_steps_matches_a_fresh_build_every_step() {
    common::one_worker(|| {
        // A ball bouncing and rolling: contacts appear, persist and vanish; the
        // factor is refreshed every 4 steps, which empties the cache.
        let ball = BodySpec::new("ball", MeshSpec::Ball { radius: 0.1, resolution: 6 }, 2e4, 0.4, 1000.0)
            .at([0.0, 0.0, 0.2])
            .damping(0.1, 0.002)
            .velocity([0.8, 0.0, 0.0]);
        let mut w = SceneBuilder::new(0.01)
            .steps(200)
            .pcg(100, 1e-10)
            .implicit_euler(|s| {
                s.preconditioner = PreconditionerKind::Ldlt;
                s.refresh = Refresh { every: 4, asynchronous: false, ..Default::default() };
            })
            .contact(|c| c.alarm_distance = 0.02)
            .constraint_solver(|c| c.delassus = DelassusMethod::IsodofReuse)
            .body(ball)
            .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.3))
            .world()
            .unwrap();
        let h2 = 0.01f64 * 0.01;
        let (mut reused, mut fresh_steps, mut contact_steps, mut counts) = (0, 0, 0, Vec::new());
        for _ in 0..200 {
            let s = w.step().unwrap();
            counts.push(s.contacts);
            let ws = &w.constraints().problem.bodies[0];
            if ws.jacobian.nrows() == 0 {
                continue;
            }
            contact_steps += 1;
            let record = ws.delassus.record.expect("a record for a constrained body");
            assert_eq!(record.method, "isodof-reuse");
            reused += record.reused_isodofs;
            fresh_steps += usize::from(record.reused_isodofs == 0);
            let reference: Vec<f64> = delassus::dense(
                &Compliance::Ldlt(factor(&w, 0)),
                &ws.jacobian,
                &mut DelassusBuffers::default(),
                1.0,
            )
            .iter()
            .map(|x| h2 * x)
            .collect();
            assert!(
                common::rel_diff(&w.constraints().delassus.assembled.to_dense(), &reference) < 1e-10,
                "step {}",
                s.step
            );
        }
        assert!(contact_steps > 100, "in contact most of the run ({contact_steps} steps)");
        assert!(counts.windows(2).any(|p| p[1] > p[0]) && counts.windows(2).any(|p| p[1] < p[0]));
        assert!(reused > 0 && fresh_steps > 0, "reuse between refactorizations, fresh builds after them");
    })
}

/// A box sliding on a floor (its contacts the same vertices throughout)
/// under an asynchronous, deterministic refresh every 6 steps: without a
/// handover each new factor rebuilds every isodof in the step it comes
/// in; with `handover = 3`, `W` is built from the previous factor while
/// the new one's columns are solved a share per step, and then taken over
/// with none left to solve. Every step's `W` is that of the factor the
/// constraints use (dense, to 1e-10).
#[test]
fn a_handover_moves_w_to_a_new_factor_without_a_rebuild() {
    common::one_worker(|| {
        let run = |handover: usize| {
            let block = BodySpec::new(
                "block",
                MeshSpec::Box { size: [0.2, 0.2, 0.1], cells: [4, 4, 2] },
                2e4,
                0.4,
                1000.0,
            )
            .at([0.0, 0.0, 0.05])
            .damping(0.1, 0.002)
            .velocity([0.3, 0.0, 0.0]);
            let mut w = SceneBuilder::new(0.01)
                .steps(40)
                .pcg(100, 1e-10)
                .implicit_euler(|s| {
                    s.preconditioner = PreconditionerKind::Ldlt;
                    s.refresh = Refresh { every: 6, asynchronous: true, deterministic: true, handover };
                })
                .contact(|c| c.alarm_distance = 0.02)
                .constraint_solver(|c| c.delassus = DelassusMethod::IsodofReuse)
                .body(block)
                .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.2))
                .world()
                .unwrap();
            let (mut rebuilds, mut held, mut ahead, mut isodofs) = (0, 0, 0, usize::MAX);
            for i in 0..40 {
                w.step().unwrap();
                let r = common::workspace(&w, 0).refactorizer.as_ref().expect("factorized");
                let ws = &w.constraints().problem.bodies[0];
                let record = ws.delassus.record.expect("the block rests on the floor");
                rebuilds += usize::from(i > 0 && record.reused_isodofs < record.isodofs);
                ahead += record.solved_ahead;
                isodofs = isodofs.min(record.isodofs);
                let f = r.constraint_factor().expect("a factor");
                let dense = |f: Arc<Ldlt>| {
                    delassus::dense(&Compliance::Ldlt(f), &ws.jacobian, &mut DelassusBuffers::default(), 1e-4)
                        .to_vec()
                };
                let newest = r.factor().expect("a factor");
                if !Arc::ptr_eq(&f, &newest) {
                    // The check below tells the two factors' W apart.
                    held += 1;
                    assert!(common::rel_diff(&dense(newest), &dense(f.clone())) > 1e-6);
                }
                let err = common::rel_diff(&w.constraints().delassus.assembled.to_dense(), &dense(f));
                assert!(err < 1e-10, "handover {handover}, step {}: W off by {err:e}", i + 1);
            }
            (rebuilds, held, ahead, isodofs)
        };
        let (rebuilds, held, ahead, _) = run(0);
        assert!(rebuilds >= 3 && held == 0 && ahead == 0, "at once: {rebuilds} rebuilds, {held} held steps");
        // Each handover (three held steps) solves at least the fewest isodofs of a step ahead.
        let (rebuilds, held, ahead, isodofs) = run(3);
        assert!(
            rebuilds == 0 && held >= 6,
            "handed over: {rebuilds} rebuilds, {held} steps on the old factor"
        );
        assert!(ahead >= held / 3 * isodofs, "{ahead} solved ahead, at least {isodofs} per handover");
    })
}

fn trajectory(name: &str, method: DelassusMethod, steps: usize) -> Vec<Vec<f64>> {
    let mut w = scene(name, method);
    for _ in 0..steps {
        w.step().unwrap();
    }
    (0..w.model.bodies.len()).map(|b| w.state.bodies[b].positions.clone()).collect()
}

/// Runs with W by each method follow the dense run to 1e-8 m: the drop
/// through its impact (contact from step 19 of 24), the resting stack (8
/// steps) and the tori as their contacts grow from 15 to 269. (`auto` only
/// chooses among these per step by a cost model; its W is compared with
/// the dense one in `local_global_builders_agree`.)
#[test]
fn simulations_do_not_depend_on_the_method() {
    common::one_worker(|| {
        for (name, steps) in [("drop", 24), ("stack", 8), ("multi-body", 30)] {
            let reference = trajectory(name, DelassusMethod::Dense, steps);
            for method in [DelassusMethod::Isodof, DelassusMethod::IsodofReuse, DelassusMethod::Unbuilt] {
                let x = trajectory(name, method, steps);
                let diff = x
                    .iter()
                    .flatten()
                    .zip(reference.iter().flatten())
                    .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                assert!(diff < 1e-8, "{name} with {method:?}: positions differ by {diff:e} m");
            }
        }
    })
}

/// Local-global (`A = A_s ⊗ I₃`): `W` on the scalar factor by isodof, by
/// isodof-reuse (cache warm from earlier steps), from the stored `S`, and
/// through the compliance's solves (dense) agree, on a ball resting on a
/// floor and a cloth on a sphere, step after step.
#[test]
fn local_global_builders_agree() {
    common::one_worker(|| {
        use ferrofem::delassus::DelassusWorkspace;
        for (name, edit) in [("drop-lg", "ball"), ("sharp-corner", "cloth")] {
            let mut w = common::builtin(name, |s| {
                // W from the stored S needs the sparse-inverse global step.
                s.spec.local_global.global_step =
                    ferrofem::integrator::local_global::GlobalStepMethod::SparseInverse;
                if edit == "ball" {
                    s.spec.bodies[0].mesh = ferrofem::scene::MeshSpec::Ball { radius: 0.1, resolution: 6 };
                } else {
                    s.spec.bodies[0].mesh =
                        ferrofem::scene::MeshSpec::Sheet { size: [1.0, 1.0], cells: [12, 12] };
                }
            });
            let compliance =
                common::local_global(&w).global_solver(0).compliance().expect("complete global step");
            let mut reuse = DelassusWorkspace::default();
            let mut checked = 0;
            for _ in 0..60 {
                w.step().unwrap();
                let h = &w.constraints().problem.bodies[0].jacobian;
                if h.nrows() == 0 {
                    continue;
                }
                let reference =
                    delassus::dense(&compliance, h, &mut DelassusBuffers::default(), 1.0).to_vec();
                for method in [
                    DelassusMethod::Isodof,
                    DelassusMethod::SparseInverse,
                    DelassusMethod::IsodofReuse,
                    DelassusMethod::Auto,
                ] {
                    let mut fresh = DelassusWorkspace::default();
                    let ws = if method == DelassusMethod::IsodofReuse { &mut reuse } else { &mut fresh };
                    let built = ws.build(&compliance, h, method, 10.0, true, 1.0).unwrap().to_vec();
                    let err = common::rel_diff(&built, &reference);
                    assert!(err < 1e-12, "{name}: {method:?} differs from dense by {err:e}");
                }
                checked += 1;
            }
            assert!(checked > 10, "{name}: contact on {checked} steps only");
        }
    })
}

/// Local-global's non-smooth Newton reads `W` in factored form,
/// `Σ_b h² H_b (W̄_b ⊗ I₃) H_bᵀ`, never assembled: its products and its
/// groups' 3×3 diagonal blocks equal the assembled `W`'s to rounding, for
/// two soft cubes stacked on a floor (obstacle rows and body–body rows on
/// triangle points of both bodies), by each builder.
#[test]
fn factored_w_applies_the_assembled_w() {
    common::one_worker(|| {
        use ferrofem::constraint_stack::ConstraintSpace;
        let cube = |name: &str, cells: usize, z: f64| {
            BodySpec::new(name, MeshSpec::cube(0.2, cells), 1e5, 0.3, 1000.0).at([0.0, 0.0, z])
        };
        let mut w = SceneBuilder::new(0.01)
            .local_global()
            .contact(|c| (c.alarm_distance, c.body_friction) = (0.02, 0.4))
            .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.3))
            .body(cube("low", 3, 0.1))
            .body(cube("high", 4, 0.31))
            .world()
            .unwrap();
        let two_bodies = |w: &World| w.constraints().problem.groups.iter().any(|g| g.parts().len() == 2);
        for _ in 0..40 {
            w.step().unwrap();
            if two_bodies(&w) {
                break;
            }
        }
        assert!(two_bodies(&w), "the cubes touch");
        let (model, h) = (&w.model, w.model.time_step);
        let compliances: Vec<Option<Compliance>> =
            (0..2).map(|b| common::local_global(&w).global_solver(b).compliance()).collect();
        let mut space = ConstraintSpace::new(model);
        space.assemble(model, w.contacts(), &w.state);
        let c = 3 * space.problem.groups.len();
        let v: Vec<f64> = (0..c).map(|j| (0.37 * j as f64).sin()).collect();
        for method in [DelassusMethod::Isodof, DelassusMethod::IsodofReuse, DelassusMethod::Auto] {
            ferrofem::constraint_stack::build_delassus(
                &mut space,
                &compliances,
                h,
                method,
                ferrofem::constraint_stack::WForms::Assembled,
            )
            .unwrap();
            let assembled = space.delassus.assembled.to_dense();
            let expected: Vec<f64> =
                (0..c).map(|i| (0..c).map(|j| assembled[i * c + j] * v[j]).sum()).collect();
            assert!(
                ferrofem::constraint_stack::build_delassus_factored(&mut space, &compliances, h, method),
                "{method:?}"
            );
            assert!(space.delassus.assembled.is_empty(), "{method:?}: W left unassembled");
            let mut got = vec![0.0; c];
            space.delassus.factored.times(&v, &mut got);
            let err = common::rel_diff(&got, &expected);
            assert!(err < 1e-12, "{method:?}: W v differs by {err:e}");
            let scale = (0..c).map(|j| assembled[j * c + j]).fold(0.0, f64::max);
            for i in 0..c {
                for j in 3 * (i / 3)..3 * (i / 3) + 3 {
                    let diff = (space.delassus.factored.block_entry(i, j) - assembled[i * c + j]).abs();
                    assert!(diff <= 1e-12 * scale, "{method:?}: W[{i}, {j}] differs by {diff:e}");
                }
            }
        }
    })
}

/// `W` by blocks of coupled contacts: three soft cubes resting apart on a
/// floor keep three blocks, stored as `Σ_b (3 c_b)²` entries rather than
/// `(3 Σ_b c_b)²` (the memory proxy of a scene whose contact patches do not
/// interact); PGS and the non-smooth Newton solved block by block give the
/// λ of the same `W` held whole, to 1e-9.
#[test]
fn w_is_stored_and_solved_by_blocks_of_coupled_contacts() {
    common::one_worker(|| {
        use ferrofem::constraint_stack::{build_delassus, solve_in_space, ConstraintSpace, WForms};
        use ferrofem::solver::{row_gaps, ConstraintSolver, NewtonSettings, PgsSettings};
        let cube = |name: &str, x: f64| {
            BodySpec::new(name, MeshSpec::cube(0.2, 3), 1e5, 0.3, 1000.0).at([x, 0.0, 0.1])
        };
        let ldlt = |s: &mut ImplicitEulerSettings| s.preconditioner = PreconditionerKind::Ldlt;
        let mut w = SceneBuilder::new(0.01)
            .implicit_euler(ldlt)
            .obstacle(ObstacleSpec::new("floor", Shape::HalfSpace).friction(0.3))
            .body(cube("left", -0.5))
            .body(cube("middle", 0.0))
            .body(cube("right", 0.5))
            .world()
            .unwrap();
        let all_touch = |w: &World| (0..3).all(|b| w.constraints().problem.contacts_of(b) > 0);
        while !all_touch(&w) {
            assert!(w.step().unwrap().step < 40, "the cubes reach the floor");
        }
        w.step().unwrap();
        let stored = |space: &ConstraintSpace| {
            let per_body: usize = (0..3).map(|b| (3 * space.problem.contacts_of(b)).pow(2)).sum();
            let c = 3 * space.problem.groups.len();
            (space.delassus.assembled.stored(), per_body, c * c)
        };
        let (blocks, per_body, whole) = stored(w.constraints());
        assert_eq!(w.constraints().delassus.assembled.blocks().len(), 3);
        assert_eq!(blocks, per_body, "W stored by blocks");
        assert!(3 * blocks <= whole + 9, "a third of the whole W ({blocks} against {whole} entries)");

        let (model, h) = (&w.model, w.model.time_step);
        let compliances: Vec<Option<Compliance>> =
            (0..3).map(|b| Some(Compliance::Ldlt(factor(&w, b)))).collect();
        let mut space = ConstraintSpace::new(model);
        space.assemble(model, w.contacts(), &w.state);
        let v = |_: usize, d: usize| [0.05, -0.03, -0.2][d % 3];
        row_gaps(&space.problem.groups, h, v, &mut space.problem.free_gaps);
        let c = space.problem.free_gaps.len();
        let newton =
            NewtonSettings { iterations: 200, linear_iterations: 60, tolerance: 1e-13, ..Default::default() };
        for solver in [
            ConstraintSolver::Pgs(PgsSettings::new(20_000, 1e-13)),
            ConstraintSolver::NonSmoothNewton(newton),
        ] {
            build_delassus(&mut space, &compliances, h, DelassusMethod::Isodof, WForms::Assembled).unwrap();
            assert_eq!(space.delassus.assembled.blocks().len(), 3);
            space.problem.impulses = vec![0.0; c];
            solve_in_space(&mut space, &compliances, model, solver);
            let by_blocks = space.problem.impulses.clone();
            let dense = space.delassus.assembled.to_dense();
            *space.delassus.assembled.whole_mut(c / 3) = dense;
            space.problem.impulses = vec![0.0; c];
            solve_in_space(&mut space, &compliances, model, solver);
            let err = common::rel_diff(&by_blocks, &space.problem.impulses);
            assert!(err < 1e-9, "{solver:?}: λ by blocks differs from the whole W's by {err:e}");
            assert!(by_blocks.iter().step_by(3).any(|&l| l > 0.0), "the contacts push");
        }
        // Boxes stacked on each other: body–body rows join them into one block.
        let mut stack = scene("stack", DelassusMethod::Auto);
        for _ in 0..3 {
            stack.step().unwrap();
        }
        let assembled = &stack.constraints().delassus.assembled;
        assert!(assembled.blocks().len() == 1 && assembled.whole().is_some(), "the stack is one block");
    })
}

/// A pile of bodies in contact is one block of coupled groups whose rows
/// each couple only their two bodies: PGS in double reads the bodies' `W_b`
/// kept apart instead of the assembled block (fewer entries, no assembly).
/// On the ten tori once they pile up, λ by the parts equals λ on the
/// assembled `W` to 1e-9, and nothing is assembled.
#[test]
fn a_pile_kept_apart_solves_as_the_assembled_w() {
    common::one_worker(|| {
        use ferrofem::constraint_stack::{build_delassus, solve_in_space, ConstraintSpace, WForms};
        use ferrofem::solver::{row_gaps, ConstraintSolver, PgsSettings};
        let mut w = scene("ten-tori", DelassusMethod::IsodofReuse);
        while w.constraints().delassus.apart.is_empty() {
            assert!(w.step().unwrap().step < 60, "the tori pile up");
        }
        let (model, h) = (&w.model, w.model.time_step);
        let bodies = model.bodies.len();
        let compliances: Vec<Option<Compliance>> =
            (0..bodies).map(|b| Some(Compliance::Ldlt(factor(&w, b)))).collect();
        let mut space = ConstraintSpace::new(model);
        space.assemble(model, w.contacts(), &w.state);
        let v = |_: usize, d: usize| [0.05, -0.03, -0.2][d % 3];
        row_gaps(&space.problem.groups, h, v, &mut space.problem.free_gaps);
        let c = space.problem.free_gaps.len();
        let pgs = ConstraintSolver::Pgs(PgsSettings::new(20_000, 1e-13));
        let mut solve = |forms: WForms| {
            build_delassus(&mut space, &compliances, h, DelassusMethod::Isodof, forms).unwrap();
            space.problem.impulses = vec![0.0; c];
            solve_in_space(&mut space, &compliances, model, pgs);
            (space.problem.impulses.clone(), space.delassus.apart.len(), space.delassus.assembled.stored())
        };
        let (assembled, none_apart, stored) = solve(WForms::MayLeaveUnbuilt);
        let (apart, kept_apart, nothing) = solve(WForms::MayKeepApart);
        assert_eq!((none_apart, nothing), (0, 0), "assembled, then nothing assembled");
        assert!(kept_apart >= 3 && stored > 0, "{kept_apart} bodies apart, {stored} entries assembled");
        let err = common::rel_diff(&apart, &assembled);
        assert!(err < 1e-9, "λ by parts differs from the assembled W's by {err:e}");
        assert!(apart.iter().step_by(3).any(|&l| l > 0.0), "the contacts push");
    })
}

/// The dense builder column by column against `H A⁻¹ Hᵀ` by a dense inverse.
#[test]
fn dense_delassus_equals_h_ainv_ht() {
    common::one_worker(|| {
        let b = BodySpec::new("b", MeshSpec::Box { size: [0.4, 0.2, 0.2], cells: [4, 2, 2] }, 1e5, 0.3, 1e3);
        let mut w = SceneBuilder::new(0.01).body(b).world().unwrap();
        w.step().unwrap();
        let a = w.implicit_euler().unwrap().workspace(0).system.clone();
        let n = a.nrows();
        let f = Ldlt::factorize(Arc::new(LdltSymbolic::analyze(&a.pattern, Ordering::Auto, 3).unwrap()), &a)
            .unwrap();
        let mut h = ConstraintJacobian::new(n);
        let frame = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        h.push_point(&[(0, 1.0)], frame);
        h.push_point(&[(3, 0.2), (4, 0.3), (7, 0.5)], [[0.6, 0.0, 0.8], [0.8, 0.0, -0.6], [0.0, 1.0, 0.0]]);
        let h = h.to_csr();
        let wd = delassus::dense(&Compliance::Ldlt(Arc::new(f)), &h, &mut DelassusBuffers::default(), 1.0)
            .to_vec();
        let ad = nalgebra::DMatrix::from_fn(n, n, |i, j| a.get(i, j));
        let hd = nalgebra::DMatrix::from_fn(h.nrows(), n, |i, j| h.get(i, j));
        let reference = &hd * ad.try_inverse().unwrap() * hd.transpose();
        let scale = reference.abs().max();
        for i in 0..6 {
            for j in 0..6 {
                assert!((wd[i * 6 + j] - reference[(i, j)]).abs() <= 1e-10 * scale, "W[{i},{j}]");
            }
        }
    })
}
