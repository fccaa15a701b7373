//! Anderson acceleration of the local-global iteration (Peng et al. 2018;
//! Walker & Ni 2011, type II), which keeps `A` constant: the iteration is
//! a fixed-point map `s ↦ G(s)` on the body's state `s` (its positions and,
//! for the ADMM models, the duals), and the next iterate combines the last
//! `m` evaluations,
//!
//! `θ = argmin ‖f_k − ΔF θ‖_D`, `s_{k+1} = G(s_k) − ΔG θ`,
//!
//! `f = G(s) − s` the residual, `ΔF`, `ΔG` the differences of successive
//! residuals and images, `D` the energy weights (`m/h²` per position, the
//! element weight `w` per dual entry). Safeguard: an accelerated iterate
//! whose residual exceeds the last accepted one is dropped for the plain
//! image of that accepted iterate, and the history restarts.

use std::collections::VecDeque;

use nalgebra::{DMatrix, DVector};

/// The acceleration's history for one body.
#[derive(Debug, Clone)]
pub struct Anderson {
    window: usize,
    /// `D`: weight of each state entry in the inner products.
    weights: Vec<f64>,
    f_prev: Vec<f64>,
    g_prev: Vec<f64>,
    df: VecDeque<Vec<f64>>,
    dg: VecDeque<Vec<f64>>,
    /// `ΔFᵀ D ΔF`, row `i` the products of `df[i]` with every `df[j]`,
    /// updated as pairs come and go (one row of products per iteration).
    gram: VecDeque<Vec<f64>>,
    /// `f = G(s) − s` of the evaluated iterate (scratch).
    f: Vec<f64>,
    /// `‖f‖_D` at the last accepted iterate (`None` before the first).
    accepted: Option<f64>,
    /// Whether the iterate now being evaluated was extrapolated.
    extrapolated: bool,
}

/// What [`Anderson::next`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AndersonStep {
    /// `‖G(s) − s‖_D` of the evaluated iterate.
    pub residual: f64,
    /// Whether the safeguard dropped the evaluated (extrapolated) iterate.
    pub rejected: bool,
}

impl Anderson {
    /// An empty history of at most `window` differences, inner products
    /// weighted by `weights`.
    pub fn new(window: usize, weights: Vec<f64>) -> Anderson {
        let n = weights.len();
        Anderson {
            window,
            weights,
            f_prev: vec![0.0; n],
            g_prev: vec![0.0; n],
            df: VecDeque::with_capacity(window + 1),
            dg: VecDeque::with_capacity(window + 1),
            gram: VecDeque::with_capacity(window + 1),
            f: vec![0.0; n],
            accepted: None,
            extrapolated: false,
        }
    }

    /// Forgets the history (at the start of a time step: carrying the
    /// secant pairs over, the duals' restart makes them mislead).
    pub fn reset(&mut self) {
        self.forget();
        self.accepted = None;
        self.extrapolated = false;
    }

    /// Drops the secant pairs.
    fn forget(&mut self) {
        self.df.clear();
        self.dg.clear();
        self.gram.clear();
    }

    /// `⟨a, b⟩_D`.
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).zip(&self.weights).map(|((x, y), w)| x * y * w).sum()
    }

    /// Given the evaluated iterate `s` and its image `g = G(s)`, writes the
    /// next iterate to `next`.
    pub fn next(&mut self, s: &[f64], g: &[f64], next: &mut [f64]) -> AndersonStep {
        let mut f = std::mem::take(&mut self.f);
        f.iter_mut().zip(g.iter().zip(s)).for_each(|(f, (g, s))| *f = g - s);
        let residual = self.dot(&f, &f).sqrt();
        let step = if self.extrapolated && self.accepted.is_some_and(|r| residual > r || residual.is_nan()) {
            next.copy_from_slice(&self.g_prev);
            self.forget();
            self.extrapolated = false;
            AndersonStep { residual, rejected: true }
        } else {
            if self.accepted.is_some() {
                self.push_pair(&f, g);
            }
            self.f_prev.copy_from_slice(&f);
            self.g_prev.copy_from_slice(g);
            self.accepted = Some(residual);
            next.copy_from_slice(g);
            self.extrapolated = false;
            if let Some(theta) = self.coefficients(&f) {
                for (j, t) in theta.iter().enumerate() {
                    next.iter_mut().zip(&self.dg[j]).for_each(|(x, d)| *x -= t * d);
                }
                self.extrapolated = true;
            }
            AndersonStep { residual, rejected: false }
        };
        self.f = f;
        step
    }

    /// Adds `(f − f_prev, g − g_prev)`, dropping the oldest pair when the
    /// window is full, and the new row of `ΔFᵀ D ΔF`.
    fn push_pair(&mut self, f: &[f64], g: &[f64]) {
        if self.window == 0 {
            return;
        }
        let (mut df, mut dg) = (Vec::new(), Vec::new());
        if self.df.len() == self.window {
            (df, dg) = (self.df.pop_front().unwrap_or_default(), self.dg.pop_front().unwrap_or_default());
            self.gram.pop_front();
            self.gram.iter_mut().for_each(|row| {
                row.remove(0);
            });
        }
        df.clear();
        df.extend(f.iter().zip(&self.f_prev).map(|(a, b)| a - b));
        dg.clear();
        dg.extend(g.iter().zip(&self.g_prev).map(|(a, b)| a - b));
        let mut row: Vec<f64> = self.df.iter().map(|d| self.dot(d, &df)).collect();
        row.push(self.dot(&df, &df));
        self.gram.iter_mut().zip(&row).for_each(|(r, v)| r.push(*v));
        self.gram.push_back(row);
        self.df.push_back(df);
        self.dg.push_back(dg);
    }

    /// `θ` of the weighted least-squares problem by its normal equations,
    /// Tikhonov-regularized relative to their diagonal; `None` without
    /// history or when they are singular.
    fn coefficients(&self, f: &[f64]) -> Option<DVector<f64>> {
        let m = self.df.len();
        if m == 0 {
            return None;
        }
        let mut a = DMatrix::from_fn(m, m, |i, j| self.gram[i][j]);
        let b = DVector::from_fn(m, |i, _| self.dot(&self.df[i], f));
        let scale = (0..m).map(|i| a[(i, i)]).fold(0.0, f64::max);
        if !(scale > 0.0 && scale.is_finite()) {
            return None;
        }
        (0..m).for_each(|i| a[(i, i)] += 1e-10 * scale);
        a.cholesky().map(|c| c.solve(&b)).filter(|t| t.iter().all(|v| v.is_finite()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A linear contraction `G(s) = M s + c`, slow in one direction: the
    /// plain iteration crawls, Anderson with a window of the dimension
    /// reaches the fixed point in a few steps.
    #[test]
    fn anderson_solves_a_slow_linear_contraction() {
        let m = [[0.99, 0.0, 0.0], [0.0, 0.5, 0.1], [0.0, 0.1, 0.3]];
        let c = [1.0, -2.0, 0.5];
        let g = |s: &[f64]| -> Vec<f64> {
            (0..3).map(|i| (0..3).map(|j| m[i][j] * s[j]).sum::<f64>() + c[i]).collect()
        };
        let run = |window: usize| {
            let mut aa = Anderson::new(window, vec![1.0; 3]);
            let mut s = vec![0.0; 3];
            let mut next = vec![0.0; 3];
            let mut residual = f64::INFINITY;
            for _ in 0..8 {
                let gs = g(&s);
                residual = aa.next(&s, &gs, &mut next).residual;
                s.clone_from(&next);
            }
            residual
        };
        assert!(run(0) > 1e-2, "the plain iteration is slow: {}", run(0));
        assert!(run(3) < 1e-9, "Anderson(3): {}", run(3));
    }

    #[test]
    fn a_growing_residual_falls_back_to_the_plain_image() {
        let mut aa = Anderson::new(2, vec![1.0; 1]);
        let mut next = [0.0];
        aa.next(&[0.0], &[1.0], &mut next);
        aa.next(&[1.0], &[1.5], &mut next);
        assert!(aa.extrapolated);
        // The extrapolated iterate is worse: back to G(1) = 1.5.
        let step = aa.next(&next.clone(), &[next[0] + 10.0], &mut next);
        assert!(step.rejected);
        assert_eq!(next, [1.5]);
    }
}
