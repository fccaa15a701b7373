//! The constraint stack allocates nothing in a steady state: once its
//! buffers have grown, `assemble_constraints` and `solve_constraints`
//! reuse them. What still allocates is inside the sparse solves `A⁻¹` of
//! `build_delassus` and the correction (faer's multi-right-hand-side solve
//! and the one-vector supernodal sweeps take scratch per call and per
//! subtree or top supernode): those counts are printed, for
//! `docs/architecture.md`.
//! Its own test binary: the counting allocator sees the whole process, so
//! no other test may run beside it.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ferrofem::constraint::Compliance;
use ferrofem::constraint_stack::{build_delassus, solve_constraints, ConstraintSpace, WForms};
use ferrofem::delassus::DelassusMethod;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f`.
fn count(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn the_constraint_path_allocates_nothing_in_a_steady_state() {
    // Three boxes resting on each other and the floor: obstacle and body–body groups.
    let mut w = common::builtin("stack", |_| {});
    for _ in 0..3 {
        w.step().unwrap();
    }
    let (model, state) = (&w.model, &w.state);
    let ie = w.implicit_euler().unwrap();
    let compliances: Vec<Option<Compliance>> = (0..model.bodies.len())
        .map(|b| ie.workspace(b).refactorizer.as_ref().and_then(|r| r.factor()).map(Compliance::Ldlt))
        .collect();
    let v_free = |b: usize, j: usize| state.bodies[b].velocities[j] + ie.workspace(b).dv[j];
    let (h, t) = (model.time_step, state.time);
    for method in [DelassusMethod::Dense, DelassusMethod::IsodofReuse] {
        let mut space = ConstraintSpace::new(model);
        let mut warm = state.warm_start.clone();
        let mut correction = Vec::new();
        let mut counts = [0; 5];
        for round in 0..4 {
            let c = [
                count(|| space.assemble(model, w.contacts(), state)),
                count(|| build_delassus(&mut space, &compliances, h, method, WForms::MayKeepApart).unwrap()),
                count(|| {
                    solve_constraints(
                        &mut space,
                        &mut warm,
                        v_free,
                        &compliances,
                        model,
                        model.constraint_solver.solver(false),
                    )
                }),
                count(|| {
                    let ferrofem::constraint::ConstraintProblem { bodies, impulses, .. } = &mut space.problem;
                    for (rows, c) in bodies.iter_mut().zip(&compliances) {
                        if let Some(c) = c.as_ref().filter(|_| !rows.is_empty()) {
                            rows.correction(c, impulses, &mut correction);
                        }
                    }
                }),
                count(|| space.measure_end_violation(model, &state.bodies, t)),
            ];
            if round == 3 {
                counts = c;
            }
        }
        assert!(space.problem.contact_count() > 20, "the stack is in contact");
        println!(
            "{method:?}: allocations in assemble_constraints, build_delassus, solve_constraints, correct, \
             end violation: {counts:?}"
        );
        assert_eq!(
            [counts[0], counts[2], counts[4]],
            [0, 0, 0],
            "{method:?}: assemble_constraints, solve_constraints or the end-violation measure allocate"
        );
    }
}
