//! Stage `factorize`: keep an LDLᵀ factorization of a recent system matrix
//! for the free-motion PCG (zeng2022 §3.4). Synchronously every `k` steps,
//! or asynchronously: a background thread factorizes a snapshot of `A`
//! while the main loop steps on with the newest finished factor.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use ferrofem_linalg::{CsrMatrix, Ldlt, LdltSymbolic, LinalgError, Precision, Preconditioner};
use nalgebra::Matrix3;

use super::handover::Handover;
use super::vertex_warp::VertexWarp;
use super::BodyWorkspace;
use crate::body::Body;
use crate::constraint::Warp;
use crate::element::PolarMethod;
use crate::integrator::{ImplicitEulerSettings, PreconditionerKind, PreconditionerWarp, Refresh};

type Snapshot = (usize, CsrMatrix);
type Finished = Result<(usize, Arc<Ldlt>), LinalgError>;

/// Runs the stage for one body: symbolic analysis on first use, then the
/// refresh policy of [`Refactorizer::refresh`]. Contact needs `A⁻¹` for
/// `W`: without the LDLᵀ preconditioner the factor is refreshed every step
/// in which the body is `constrained`, and not at all otherwise. With
/// `settings.warp`, the factor is warped by the body's rotation since its
/// matrix was assembled (`w.warp`, none while the factor is current), in
/// PCG, the Delassus operator and the correction; `rotations` are the tets'
/// co-rotational rotations of this step's `A`.
pub fn factorize(
    w: &mut BodyWorkspace,
    body: &Body,
    rotations: &[Matrix3<f64>],
    step: usize,
    settings: &ImplicitEulerSettings,
    constrained: bool,
) -> Result<(), LinalgError> {
    let refresh = match settings.preconditioner {
        PreconditionerKind::Ldlt => settings.refresh,
        _ if constrained => Refresh { every: 1, ..Refresh::default() },
        _ => return Ok(()),
    };
    if w.refactorizer.is_none() {
        w.refactorizer = Some(Refactorizer::new(&w.system, settings)?);
    }
    let r = w.refactorizer.as_mut().expect("created above");
    let warp = settings.warp && settings.preconditioner == PreconditionerKind::Ldlt;
    let rotations = if warp { rotations } else { &[] };
    r.refresh(step, &w.system, refresh, rotations)?;
    w.warp = warp.then(|| r.warp(body, step, rotations, settings.polar)).flatten();
    if w.warp.is_some() && settings.preconditioner_warp == PreconditionerWarp::Vertex {
        w.vertex_warp.update(&w.pattern, rotations, &r.factor_rotations);
    }
    w.handover_warp = r.handover.as_ref().and_then(|h| h.warp(body, rotations, settings.polar));
    Ok(())
}

/// Which copies of each factor are kept: the rounded one the
/// preconditioner reads, and whether the double-precision values are
/// dropped once it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactorCopies {
    /// Precision the preconditioner reads the factor in.
    pub precision: Precision,
    /// Keep the factor in single precision only, computed in it
    /// ([`Ldlt::factorize_single`]) or rounded ([`Ldlt::release_double`]):
    /// a warped factor in reduced precision (the real-time preset) stands
    /// in for later matrices, its warp and age far above the rounding's
    /// 1e-7, so `W`, the correction and PCG all read the `f32` copy (or
    /// the bfloat16 or 8-bit one) and the factor takes 5–6 bytes per entry instead
    /// of 14 (issue #53: the 60k drop's two live factors, the one in use
    /// and the one being refreshed, were most of its 5.3 GB). Reading half
    /// the bytes, `W` is also built faster (docs/benchmarks.md).
    pub single_only: bool,
}

impl FactorCopies {
    /// The copies a background factorization makes: all but the
    /// preconditioner's rounded one (bfloat16 or 8-bit), which
    /// [`Refactorizer::refresh`] rounds at the swap into the storage of the
    /// replaced factor's (at 60k vertices each bfloat16 copy is 0.4 GB: two
    /// would be held at once).
    fn in_background(self) -> FactorCopies {
        let precision = match self.precision {
            p if p.preconditioner_only() => Precision::Single,
            p => p,
        };
        FactorCopies { precision, ..self }
    }

    /// The copies `settings` ask for.
    pub fn of(settings: &ImplicitEulerSettings) -> FactorCopies {
        let precision = settings.preconditioner_precision;
        let warped = settings.warp && settings.preconditioner == PreconditionerKind::Ldlt;
        FactorCopies { precision, single_only: warped && precision != Precision::Double }
    }
}

/// The factorization a body's PCG uses, and how it is refreshed.
#[derive(Debug)]
pub struct Refactorizer {
    symbolic: Arc<LdltSymbolic>,
    current: Option<Arc<Ldlt>>,
    /// Step whose `A` the current factor was computed from.
    factor_step: usize,
    /// Step of the last snapshot handed out (sync or async).
    snapshot_step: usize,
    worker: Option<Worker>,
    /// The copies each factor keeps.
    copies: FactorCopies,
    /// Element rotations of the step whose `A` the current factor holds
    /// (empty without warping).
    factor_rotations: Vec<Matrix3<f64>>,
    /// Those of the snapshot being factorized in the background.
    pending_rotations: Vec<Matrix3<f64>>,
    /// The previous factor, the constraints' while a new one is handed
    /// over (`refresh.handover`).
    pub handover: Option<Handover>,
    /// The first step a snapshot may be sent after a handover: the one
    /// after it ends, when the previous factor and its isodof columns
    /// are gone.
    snapshots_from: usize,
    /// Factorizations completed so far.
    pub completed: usize,
}

#[derive(Debug)]
struct Worker {
    to_worker: Option<Sender<Snapshot>>,
    /// In a mutex only so that a world is `Sync` (shareable behind a lock,
    /// as bindings and viewers hold it); the owner reads it by `&mut`.
    from_worker: Mutex<Receiver<Finished>>,
    busy: bool,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// The finished factors, read without locking (the owner has `&mut`).
    fn inbox(&mut self) -> &Receiver<Finished> {
        self.from_worker.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.to_worker.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Refactorizer {
    /// Orders and analyses the pattern of `a` (once per topology); every
    /// factor keeps the copies `settings` ask for ([`FactorCopies::of`]).
    pub fn new(a: &CsrMatrix, settings: &ImplicitEulerSettings) -> Result<Refactorizer, LinalgError> {
        let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, settings.ordering, 3)?);
        let copies = FactorCopies::of(settings);
        Ok(Refactorizer {
            symbolic,
            current: None,
            factor_step: 0,
            snapshot_step: 0,
            worker: None,
            copies,
            factor_rotations: Vec::new(),
            pending_rotations: Vec::new(),
            handover: None,
            snapshots_from: 0,
            completed: 0,
        })
    }

    /// Symbolic analysis shared by every factorization.
    pub fn symbolic(&self) -> &Arc<LdltSymbolic> {
        &self.symbolic
    }

    /// Age in steps of the factor in use at `step`.
    pub fn age(&self, step: usize) -> usize {
        step - self.factor_step
    }

    /// Brings the factor up to date for `step` (1-based) with matrix `a`:
    /// the first step always factorizes synchronously; afterwards a new
    /// factorization starts every `refresh.every` steps (and not before a
    /// handover ends, `refresh.handover`). Asynchronously, a
    /// finished factor is taken as soon as it lands, or, when
    /// `refresh.deterministic`, exactly `every` steps after its snapshot
    /// (waiting for it if need be). `rotations`: the element rotations of
    /// this step's `A`, kept with its factor for warping (may be empty).
    pub fn refresh(
        &mut self,
        step: usize,
        a: &CsrMatrix,
        refresh: Refresh,
        rotations: &[Matrix3<f64>],
    ) -> Result<(), LinalgError> {
        if self.handover.as_ref().is_some_and(|h| step >= h.until) {
            self.handover = None;
            self.snapshots_from = step + 1;
        }
        let due = self.current.is_none() || step >= self.snapshot_step + refresh.every.max(1);
        if !refresh.asynchronous || self.current.is_none() {
            if due {
                let f = factorize_in(self.symbolic.clone(), a, self.copies)?;
                self.install(step, Arc::new(f));
                self.factor_rotations = rotations.to_vec();
                self.snapshot_step = step;
            }
            return Ok(());
        }
        let copies = self.copies.in_background();
        let worker = self.worker.get_or_insert_with(|| Worker::spawn(self.symbolic.clone(), copies));
        let finished = if !refresh.deterministic {
            worker.inbox().try_recv().ok()
        } else if due && worker.busy {
            worker.inbox().recv().ok()
        } else {
            None
        };
        if let Some(done) = finished {
            worker.busy = false;
            let (s, f) = done?;
            // The previous factor no longer preconditions PCG (`W` and the
            // correction read its finer values): its rounded copy (bfloat16
            // or 8-bit) becomes the new one's.
            if self.copies.precision.preconditioner_only() {
                f.round_copy(self.copies.precision, self.current.as_deref());
            }
            let previous = self.current.replace(f);
            self.factor_step = s;
            self.completed += 1;
            std::mem::swap(&mut self.factor_rotations, &mut self.pending_rotations);
            if let Some(factor) = previous.filter(|_| refresh.handover > 0) {
                let rotations = std::mem::take(&mut self.pending_rotations);
                self.handover = Some(Handover { factor, rotations, until: step + refresh.handover });
            }
        }
        // A handover holds two factors and two sets of isodof columns: the
        // next snapshot waits until the step after its end, so that a third
        // factor is not computed (and held) beside them.
        let worker = self.worker.as_mut().expect("worker exists");
        if due && !worker.busy && self.handover.is_none() && step >= self.snapshots_from {
            if let Some(tx) = &worker.to_worker {
                if tx.send((step, a.clone())).is_ok() {
                    worker.busy = true;
                    self.snapshot_step = step;
                    self.pending_rotations.clear();
                    self.pending_rotations.extend_from_slice(rotations);
                }
            }
        }
        Ok(())
    }

    fn install(&mut self, step: usize, f: Arc<Ldlt>) {
        self.current = Some(f);
        self.factor_step = step;
        self.completed += 1;
    }

    /// The newest finished factor.
    pub fn factor(&self) -> Option<Arc<Ldlt>> {
        self.current.clone()
    }

    /// The factor of the constraints (`W` and the correction): the
    /// previous one during a handover, else the newest.
    pub fn constraint_factor(&self) -> Option<Arc<Ldlt>> {
        self.handover.as_ref().map(|h| h.factor.clone()).or_else(|| self.factor())
    }

    /// The factor to precondition with, turned by `turn`.
    pub fn preconditioner<'a>(&self, turn: FactorTurn<'a>) -> Option<LdltPreconditioner<'a>> {
        self.current.clone().map(|factor| LdltPreconditioner {
            factor,
            precision: self.copies.precision,
            turn,
        })
    }

    /// `G` from the factor's step to `step`, given the element rotations
    /// now; `None` while the factor is current or without its rotations.
    pub fn warp(&self, body: &Body, step: usize, now: &[Matrix3<f64>], polar: PolarMethod) -> Option<Warp> {
        let stale = self.current.is_some() && self.age(step) > 0;
        (stale && self.factor_rotations.len() == now.len() && !now.is_empty())
            .then(|| Warp::since(body, now, &self.factor_rotations, polar))
    }
}

impl Worker {
    fn spawn(symbolic: Arc<LdltSymbolic>, copies: FactorCopies) -> Worker {
        let (to_worker, inbox) = channel::<Snapshot>();
        let (outbox, from_worker) = channel::<Finished>();
        let handle = std::thread::Builder::new()
            .name("ferrofem-refactorize".into())
            .spawn(move || {
                for (step, a) in inbox {
                    let r = factorize_in(symbolic.clone(), &a, copies).map(|f| (step, Arc::new(f)));
                    if outbox.send(r).is_err() {
                        break;
                    }
                }
            })
            .ok();
        Worker { to_worker: Some(to_worker), from_worker: Mutex::new(from_worker), busy: false, handle }
    }
}

/// `Ldlt::factorize`, keeping the rounded copy the preconditioner reads
/// (on the thread that factorizes: in the background when the refresh is
/// asynchronous). Under bfloat16 or 8 bits the `f32` copy is kept too: the
/// warped correction solves with the factor, which 8 significant bits do
/// not serve.
/// Under [`FactorCopies::single_only`] the factor is computed in single
/// precision ([`Ldlt::factorize_single`]: never 8 bytes an entry), or, where
/// a pivot is not positive in single precision, in double and rounded to
/// the single copy in place once the preconditioner's is made from it.
fn factorize_in(
    symbolic: Arc<LdltSymbolic>,
    a: &CsrMatrix,
    copies: FactorCopies,
) -> Result<Ldlt, LinalgError> {
    let rounded = Some(copies.precision).filter(|p| p.preconditioner_only());
    if copies.single_only {
        if let Ok(f) = Ldlt::factorize_single(symbolic.clone(), a, rounded) {
            return Ok(f);
        }
    }
    let mut f = Ldlt::factorize(symbolic, a)?;
    f.keep_rounded(rounded);
    match copies.single_only {
        true => f.release_double(),
        false => f.keep_single_precision(copies.precision != Precision::Double),
    }
    Ok(f)
}

/// How [`LdltPreconditioner`] turns an outdated factor.
#[derive(Debug, Clone, Copy)]
pub enum FactorTurn<'a> {
    /// Not at all (the factor is current, or `warp` is off).
    None,
    /// By the body's rotation `G` since the factor's step.
    Body(Warp),
    /// By a rotation per vertex ([`VertexWarp`]).
    Vertex(&'a VertexWarp),
}

/// `z = A_old⁻¹ r` with a (possibly slightly outdated) LDLᵀ factor, read
/// in `precision`; turned, `z = G A_old⁻¹ Gᵀ r` (`G` the body's rotation,
/// or one per vertex).
#[derive(Debug, Clone)]
pub struct LdltPreconditioner<'a> {
    /// The factor.
    pub factor: Arc<Ldlt>,
    /// The precision its values are read in.
    pub precision: Precision,
    /// The turn since the factor's step.
    pub turn: FactorTurn<'a>,
}

impl Preconditioner for LdltPreconditioner<'_> {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        z.copy_from_slice(r);
        match self.turn {
            FactorTurn::None => {}
            FactorTurn::Body(g) => g.unrotate(z),
            FactorTurn::Vertex(g) => g.unrotate(z),
        }
        self.factor.solve_one_in(z, self.precision);
        match self.turn {
            FactorTurn::None => {}
            FactorTurn::Body(g) => g.rotate(z),
            FactorTurn::Vertex(g) => g.rotate(z),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a warped factor read in reduced precision (the real-time
    /// preset's) drops its double values.
    #[test]
    fn only_warped_reduced_precision_factors_are_kept_single() {
        let real_time = ImplicitEulerSettings {
            preconditioner: PreconditionerKind::Ldlt,
            preconditioner_precision: Precision::Bfloat16,
            warp: true,
            ..Default::default()
        };
        assert!(FactorCopies::of(&real_time).single_only);
        let single = ImplicitEulerSettings { preconditioner_precision: Precision::Single, ..real_time };
        assert!(FactorCopies::of(&single).single_only);
        let unwarped = ImplicitEulerSettings { warp: false, ..real_time };
        assert!(!FactorCopies::of(&unwarped).single_only);
        let double = ImplicitEulerSettings { preconditioner_precision: Precision::Double, ..real_time };
        assert!(!FactorCopies::of(&double).single_only);
        assert_eq!(FactorCopies::of(&real_time).precision, Precision::Bfloat16);
    }

    /// A single-precision factor is computed in single precision where it
    /// can be, and in double and rounded where a pivot is lost in `f32`.
    #[test]
    fn a_single_only_factor_falls_back_to_double_where_single_fails() {
        let copies = FactorCopies { precision: Precision::Bfloat16, single_only: true };
        let e = 1.0 - 1e-9;
        let pattern = ferrofem_linalg::CsrPattern {
            nrows: 2,
            ncols: 2,
            row_ptr: vec![0, 2, 4],
            col_idx: vec![0, 1, 0, 1],
        };
        let a = CsrMatrix { pattern, values: vec![1.0, e, e, 1.0] };
        let symbolic =
            Arc::new(LdltSymbolic::analyze(&a.pattern, ferrofem_linalg::Ordering::Amd, 1).unwrap());
        assert!(Ldlt::factorize_single(symbolic.clone(), &a, Some(Precision::Bfloat16)).is_err());
        let f = factorize_in(symbolic, &a, copies).expect("the double factorization");
        assert!(f.double_released() && f.sweep_bytes() > 0);
    }

    /// A factor from the background gets its rounded copy (bfloat16, 8-bit) when it is taken,
    /// after the one it replaces has given its own back (never two copies
    /// at once), and preconditions with the copy a synchronous
    /// factorization would have made; the previous factor keeps serving
    /// the constraints through the handover, in `f32`.
    #[test]
    fn a_background_factor_gets_its_rounded_copy_once_the_previous_one_is_released() {
        // A block-tridiagonal SPD matrix of 3 × 3 blocks (diagonally dominant).
        let n = 42;
        let reach = |i: u32| (3 * (i / 3)).saturating_sub(3)..(3 * (i / 3) + 6).min(n as u32);
        let rows: Vec<Vec<u32>> = (0..n as u32).map(|i| reach(i).collect()).collect();
        let pattern = ferrofem_linalg::CsrPattern::from_rows(n, rows.clone());
        let values = rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                r.iter().map(move |&j| if j as usize == i { 8.0 + 0.01 * i as f64 } else { -0.5 })
            })
            .collect();
        let a = CsrMatrix { pattern, values };
        for precision in [Precision::Bfloat16, Precision::Int8] {
            let settings = ImplicitEulerSettings {
                preconditioner: PreconditionerKind::Ldlt,
                preconditioner_precision: precision,
                warp: true,
                ..Default::default()
            };
            let mut r = Refactorizer::new(&a, &settings).unwrap();
            let refresh = Refresh { every: 2, asynchronous: true, deterministic: true, handover: 1 };
            r.refresh(1, &a, refresh, &[]).unwrap();
            let first = r.factor().expect("factorized");
            assert!(first.rounded_precision() == Some(precision) && first.double_released());
            for step in 2..=5 {
                r.refresh(step, &a, refresh, &[]).unwrap();
            }
            let second = r.factor().expect("factorized");
            assert!(!Arc::ptr_eq(&first, &second), "the background factor is taken at step 5");
            assert!(Arc::ptr_eq(&r.constraint_factor().unwrap(), &first), "handed over");
            assert!(second.rounded_precision() == Some(precision) && first.rounded_precision().is_none());
            let direct = Ldlt::factorize_single(r.symbolic().clone(), &a, Some(precision)).unwrap();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
            let (mut x, mut y) = (b.clone(), b.clone());
            second.solve_one_in(&mut x, precision);
            direct.solve_one_in(&mut y, precision);
            assert_eq!(x, y, "{precision:?}: the copy rounded at the swap is the synchronous one");
            let (mut x, mut y) = (b.clone(), b);
            first.solve_one_in(&mut x, Precision::Single);
            direct.solve_one_in(&mut y, Precision::Single);
            assert_eq!(x, y, "{precision:?}: the previous factor still solves in f32");
        }
    }
}
