//! Preconditioned conjugate residual (Saad 2003, Alg. 6.20 with a
//! preconditioner): for a symmetric, possibly semi-definite `A`, it
//! minimizes `‖M⁻¹(b − A x)‖` in the `M`-weighted Krylov space. zeng2025 §6
//! (after Macklin et al. 2019) solves the constraint systems of the
//! non-smooth Newton method with it, stopped after a fixed few iterations.

/// Scratch vectors of a solve, kept from call to call.
#[derive(Debug, Clone, Default)]
pub struct ConjugateResidual {
    r: Vec<f64>,
    p: Vec<f64>,
    ar: Vec<f64>,
    ap: Vec<f64>,
    map: Vec<f64>,
}

/// What one solve did.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct CrSolve {
    /// Iterations performed.
    pub iterations: usize,
    /// Final `‖M⁻¹(b − A x)‖ / ‖M⁻¹ b‖` (0 when `b = 0`).
    pub rel_residual: f64,
}

fn dot(x: &[f64], y: &[f64]) -> f64 {
    crate::simd::dot(x, y)
}

impl ConjugateResidual {
    /// Solves `A x = b` from the `x` given, `apply(v, out)` writing
    /// `out = A v` and `inv_diag` the diagonal preconditioner `M⁻¹`
    /// (positive); at most `max_iterations`, or until the preconditioned
    /// residual falls under `rel_tolerance` times its initial norm with
    /// `x = 0`.
    #[inline]
    pub fn solve(
        &mut self,
        mut apply: impl FnMut(&[f64], &mut [f64]),
        inv_diag: &[f64],
        b: &[f64],
        x: &mut [f64],
        max_iterations: usize,
        rel_tolerance: f64,
    ) -> CrSolve {
        let n = b.len();
        let ConjugateResidual { r, p, ar, ap, map } = self;
        for v in [&mut *r, &mut *p, &mut *ar, &mut *ap, &mut *map] {
            v.clear();
            v.resize(n, 0.0);
        }
        let scale = b.iter().zip(inv_diag).map(|(b, d)| (b * d) * (b * d)).sum::<f64>().sqrt();
        if scale == 0.0 {
            x.iter_mut().for_each(|v| *v = 0.0);
            return CrSolve::default();
        }
        // A zero start (the usual Newton direction's) needs no product.
        match x.iter().all(|&v| v == 0.0) {
            true => ar.fill(0.0),
            false => apply(x, ar),
        }
        for i in 0..n {
            r[i] = inv_diag[i] * (b[i] - ar[i]);
        }
        p.copy_from_slice(r);
        apply(r, ar);
        ap.copy_from_slice(ar);
        let mut rar = dot(r, ar);
        let mut out = CrSolve { iterations: 0, rel_residual: dot(r, r).sqrt() / scale };
        for it in 1..=max_iterations {
            if out.rel_residual <= rel_tolerance || rar == 0.0 {
                break;
            }
            for i in 0..n {
                map[i] = inv_diag[i] * ap[i];
            }
            let denom = dot(ap, map);
            if denom <= 0.0 || !denom.is_finite() {
                break;
            }
            let alpha = rar / denom;
            for i in 0..n {
                x[i] += alpha * p[i];
                r[i] -= alpha * map[i];
            }
            out = CrSolve { iterations: it, rel_residual: dot(r, r).sqrt() / scale };
            // The next direction's product, unless this was the last iteration.
            if it == max_iterations || out.rel_residual <= rel_tolerance {
                break;
            }
            apply(r, ar);
            let next = dot(r, ar);
            let beta = next / rar;
            rar = next;
            for i in 0..n {
                p[i] = r[i] + beta * p[i];
                ap[i] = ar[i] + beta * ap[i];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matvec(a: &[f64], n: usize) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        move |v, out| (0..n).for_each(|i| out[i] = dot(&a[i * n..(i + 1) * n], v))
    }

    #[test]
    fn converges_in_n_iterations_on_a_symmetric_system() {
        let n = 6;
        // SPD: a tridiagonal with a dominant, uneven diagonal.
        let a: Vec<f64> = (0..n * n)
            .map(|k: usize| match (k / n, k % n) {
                (i, j) if i == j => 4.0 + i as f64,
                (i, j) if i.abs_diff(j) == 1 => -1.0,
                _ => 0.0,
            })
            .collect();
        let b: Vec<f64> = (0..n).map(|i| (i as f64 - 2.5) * 0.7).collect();
        let inv: Vec<f64> = (0..n).map(|i| 1.0 / a[i * n + i]).collect();
        let mut x = vec![0.0; n];
        let s = ConjugateResidual::default().solve(matvec(&a, n), &inv, &b, &mut x, n, 0.0);
        let mut ax = vec![0.0; n];
        matvec(&a, n)(&x, &mut ax);
        let err = ax.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(err < 1e-12, "{err:e} after {s:?}");
        // Monotone: a truncated solve has a larger residual than a full one.
        let mut y = vec![0.0; n];
        let t = ConjugateResidual::default().solve(matvec(&a, n), &inv, &b, &mut y, 2, 0.0);
        assert!(t.rel_residual > s.rel_residual && t.rel_residual < 1.0, "{t:?}");
    }

    #[test]
    fn takes_one_product_per_iteration_from_a_zero_start() {
        // The last iteration's product would only serve a next direction.
        let a = [4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 5.0];
        let (b, inv) = ([1.0, -2.0, 0.5], [0.25, 1.0 / 3.0, 0.2]);
        for k in 1..=3 {
            let (mut x, mut products) = ([0.0; 3], 0);
            let mut counted = |v: &[f64], out: &mut [f64]| {
                products += 1;
                matvec(&a, 3)(v, out)
            };
            let s = ConjugateResidual::default().solve(&mut counted, &inv, &b, &mut x, k, 0.0);
            assert_eq!((s.iterations, products), (k, k));
        }
    }

    #[test]
    fn handles_an_indefinite_symmetric_system() {
        // CR needs symmetry, not definiteness: diag(2, −1, 3) with a coupling.
        let a = [2.0, 0.5, 0.0, 0.5, -1.0, 0.2, 0.0, 0.2, 3.0];
        let b = [1.0, -2.0, 0.5];
        let mut x = [0.0; 3];
        ConjugateResidual::default().solve(matvec(&a, 3), &[1.0; 3], &b, &mut x, 3, 0.0);
        let mut ax = [0.0; 3];
        matvec(&a, 3)(&x, &mut ax);
        assert!(ax.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12), "{ax:?}");
    }
}
