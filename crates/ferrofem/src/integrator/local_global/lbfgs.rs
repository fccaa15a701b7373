//! Quasi-Newton acceleration of the local-global iteration (Liu, Bouaziz
//! & Kavan 2017, on which zeng2025 §5.2 builds): L-BFGS on the step's
//! energy `ε(q) = 1/(2h²) ‖q − q̃‖²_M + Σ ψ(q)` with the constant global
//! matrix as its initial Hessian, `H₀ = A/h²`, so each iteration costs one
//! gradient (the elements' stresses) and one global solve, and `A` is
//! never refactorized. Without history and with a unit step on ARAP it is
//! exactly the projective-dynamics iteration; the secant pairs add the
//! rotation terms `A` leaves out, which is what bending needs.
//!
//! `d = −H ∇ε` by the two-loop recursion (Nocedal & Wright Alg. 7.4),
//! then Armijo backtracking on `ε` from the unit step.

use std::collections::VecDeque;

use ferrofem_linalg::vector::{axpy_dot, dot, dot_serial, norm};

use super::energy::{energy_gradient_warm, StepTarget, StressCache};
use super::global::GlobalSolver;
use crate::body::Body;
use crate::device::DeviceError;

/// One body's L-BFGS history and buffers.
#[derive(Debug, Clone)]
pub struct Lbfgs {
    window: usize,
    /// Secant pairs `(s, y, 1/yᵀs)`, oldest first.
    pairs: VecDeque<(Vec<f64>, Vec<f64>, f64)>,
    grad: Vec<f64>,
    grad_new: Vec<f64>,
    /// Rotations and stresses of the tets between evaluations.
    stresses: StressCache,
    dir: Vec<f64>,
    trial: Vec<f64>,
    alpha: Vec<f64>,
    /// `‖∇ε‖` at the step's first iterate, and the energy at the current one.
    first: f64,
    energy: f64,
}

impl Lbfgs {
    /// An empty history of at most `window` pairs for `body`, ARAP's
    /// polar iteration bounded to `arap_sweeps` per evaluation of `ε`
    /// ([`StressCache::new`]).
    pub fn new(window: usize, body: &Body, arap_sweeps: usize) -> Lbfgs {
        let n = body.dofs();
        Lbfgs {
            stresses: StressCache::new(body, arap_sweeps),
            window,
            pairs: VecDeque::with_capacity(window),
            grad: vec![0.0; n],
            grad_new: vec![0.0; n],
            dir: vec![0.0; n],
            trial: vec![0.0; n],
            alpha: Vec::with_capacity(window),
            first: 0.0,
            energy: f64::INFINITY,
        }
    }

    /// Starts a time step at `x`: `ε` and `∇ε` are evaluated. The secant
    /// pairs stay: a new prediction `q̃` shifts `∇ε` by a constant,
    /// `M (q̃_old − q̃_new)/h²`, which gradient differences cancel, so
    /// the last step's curvature pairs still describe this step's `ε`.
    pub fn start(&mut self, body: &Body, x: &[f64], at: StepTarget) {
        self.energy = energy_gradient_warm(body, x, at, Some(&mut self.grad), &mut self.stresses)
            .unwrap_or(f64::INFINITY);
        self.first = norm(&self.grad);
    }

    /// Each tet's rotation at the last evaluation of `ε`.
    pub fn rotations(&self) -> &[nalgebra::Matrix3<f64>] {
        self.stresses.rotations()
    }

    /// `dir = −H ∇ε`, `H₀ = h² A⁻¹` applied by the global solver. Each of
    /// the two loops is one fused pass per secant pair on one thread
    /// ([`axpy_dot`]: a pair's update and the next pair's product), not a
    /// parallel pass per product and per update: a 20-pair history on the
    /// 5.3k bar took 3.5 ms that way, more than the global solve.
    fn direction(&mut self, global: &mut GlobalSolver, h: f64) -> Result<(), DeviceError> {
        let (q, pairs) = (&mut self.dir, &self.pairs);
        q.iter_mut().zip(&self.grad).for_each(|(q, g)| *q = -g);
        // Newest to oldest: αᵢ = ρᵢ sᵢᵀq, q ← q − αᵢ yᵢ.
        self.alpha.clear();
        let mut sq = pairs.back().map_or(0.0, |(s, _, _)| dot_serial(s, q));
        for i in (0..pairs.len()).rev() {
            let (_, y, rho) = &pairs[i];
            let a = rho * sq;
            sq = match i.checked_sub(1) {
                Some(j) => axpy_dot(-a, y, q, &pairs[j].0),
                None => axpy_dot(-a, y, q, y),
            };
            self.alpha.push(a);
        }
        self.trial.copy_from_slice(q);
        global.solve(&self.trial, q)?;
        q.iter_mut().for_each(|v| *v *= h * h);
        // Oldest to newest: βᵢ = ρᵢ yᵢᵀq, q ← q + (αᵢ − βᵢ) sᵢ.
        let mut yq = pairs.front().map_or(0.0, |(_, y, _)| dot_serial(y, q));
        for (i, a) in self.alpha.iter().rev().enumerate() {
            let (s, _, rho) = &pairs[i];
            let b = rho * yq;
            let next = pairs.get(i + 1).map_or(s, |(_, y, _)| y);
            yq = axpy_dot(a - b, s, q, next);
        }
        Ok(())
    }

    /// Moves to the line search's point: the secant pair `(x⁺ − x, ∇ε⁺ − ∇ε)`
    /// joins the history when it has positive curvature.
    fn accept(&mut self, x: &mut [f64], e: f64) {
        let mut pair = match self.pairs.len() == self.window {
            true => self.pairs.pop_front().unwrap_or_default(),
            false => Default::default(),
        };
        pair.0.clear();
        pair.0.extend(self.trial.iter().zip(x.iter()).map(|(n, o)| n - o));
        pair.1.clear();
        pair.1.extend(self.grad_new.iter().zip(&self.grad).map(|(n, o)| n - o));
        let ys = dot(&pair.0, &pair.1);
        if ys > 1e-14 * dot(&pair.1, &pair.1).sqrt() * dot(&pair.0, &pair.0).sqrt() {
            pair.2 = 1.0 / ys;
            self.pairs.push_back(pair);
        }
        x.copy_from_slice(&self.trial);
        std::mem::swap(&mut self.grad, &mut self.grad_new);
        self.energy = e;
    }

    /// One iteration from `x` (in place): direction, line search, secant
    /// pair. Returns `‖∇ε‖` relative to the step's first iterate, or the
    /// device's failure.
    pub fn iterate(
        &mut self,
        body: &Body,
        global: &mut GlobalSolver,
        x: &mut [f64],
        at: StepTarget,
    ) -> Result<f64, DeviceError> {
        self.direction(global, at.h)?;
        let slope = dot(&self.grad, &self.dir);
        if slope >= 0.0 || slope.is_nan() {
            // Not a descent direction (rounding at convergence): restart from H₀.
            self.pairs.clear();
            self.direction(global, at.h)?;
        }
        let slope = dot(&self.grad, &self.dir).min(0.0);
        let mut t = 1.0;
        for _ in 0..30 {
            self.trial.iter_mut().zip(x.iter()).zip(&self.dir).for_each(|((o, x), d)| *o = x + t * d);
            let e = energy_gradient_warm(body, &self.trial, at, Some(&mut self.grad_new), &mut self.stresses);
            // Armijo, or (where rounding hides the decrease near the
            // minimum) no rise and a smaller gradient.
            let settling = |e: f64| {
                e <= self.energy + 1e-13 * self.energy.abs() && norm(&self.grad_new) < norm(&self.grad)
            };
            if let Some(e) = e.filter(|&e| e <= self.energy + 1e-4 * t * slope || settling(e)) {
                self.accept(x, e);
                break;
            }
            t *= 0.5;
        }
        let g = norm(&self.grad);
        Ok(if self.first > 0.0 { g / self.first } else { 0.0 })
    }
}
