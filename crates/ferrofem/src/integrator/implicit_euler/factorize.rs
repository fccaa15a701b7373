//! Stage `factorize`: keep an LDLᵀ factorization of a recent system matrix
//! for the free-motion PCG (zeng2022 §3.4). Synchronously every `k` steps,
//! or asynchronously: a background thread factorizes a snapshot of `A`
//! while the main loop steps on with the newest finished factor.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use ferrofem_linalg::{CsrMatrix, Ldlt, LdltSymbolic, LinalgError, Ordering, Precision, Preconditioner};
use nalgebra::Matrix3;

use super::BodyWorkspace;
use crate::body::Body;
use crate::constraint::Warp;
use crate::element::PolarMethod;
use crate::integrator::{ImplicitEulerSettings, PreconditionerKind, Refresh};

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
        w.refactorizer =
            Some(Refactorizer::new(&w.system, settings.ordering, settings.preconditioner_precision)?);
    }
    let r = w.refactorizer.as_mut().expect("created above");
    let warp = settings.warp && settings.preconditioner == PreconditionerKind::Ldlt;
    let rotations = if warp { rotations } else { &[] };
    r.refresh(step, &w.system, refresh, rotations)?;
    w.warp = warp.then(|| r.warp(body, step, rotations, settings.polar)).flatten();
    Ok(())
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
    /// Precision the preconditioner reads the factor in.
    precision: Precision,
    /// Element rotations of the step whose `A` the current factor holds
    /// (empty without warping).
    factor_rotations: Vec<Matrix3<f64>>,
    /// Those of the snapshot being factorized in the background.
    pending_rotations: Vec<Matrix3<f64>>,
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
    /// factor keeps a copy in `precision` for the preconditioner.
    pub fn new(a: &CsrMatrix, ordering: Ordering, precision: Precision) -> Result<Refactorizer, LinalgError> {
        let symbolic = Arc::new(LdltSymbolic::analyze(&a.pattern, ordering, 3)?);
        Ok(Refactorizer {
            symbolic,
            current: None,
            factor_step: 0,
            snapshot_step: 0,
            worker: None,
            precision,
            factor_rotations: Vec::new(),
            pending_rotations: Vec::new(),
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
    /// factorization starts every `refresh.every` steps. Asynchronously, a
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
        let due = self.current.is_none() || step >= self.snapshot_step + refresh.every.max(1);
        if !refresh.asynchronous || self.current.is_none() {
            if due {
                let f = factorize_in(self.symbolic.clone(), a, self.precision)?;
                self.install(step, Arc::new(f));
                self.factor_rotations = rotations.to_vec();
                self.snapshot_step = step;
            }
            return Ok(());
        }
        let precision = self.precision;
        let worker = self.worker.get_or_insert_with(|| Worker::spawn(self.symbolic.clone(), precision));
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
            self.factor_step = s;
            self.current = Some(f);
            self.completed += 1;
            std::mem::swap(&mut self.factor_rotations, &mut self.pending_rotations);
        }
        let worker = self.worker.as_mut().expect("worker exists");
        if due && !worker.busy {
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

    /// The factor to precondition with, warped by `warp` when given.
    pub fn preconditioner(&self, warp: Option<Warp>) -> Option<LdltPreconditioner> {
        self.current.clone().map(|factor| LdltPreconditioner { factor, precision: self.precision, warp })
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
    fn spawn(symbolic: Arc<LdltSymbolic>, precision: Precision) -> Worker {
        let (to_worker, inbox) = channel::<Snapshot>();
        let (outbox, from_worker) = channel::<Finished>();
        let handle = std::thread::Builder::new()
            .name("ferrofem-refactorize".into())
            .spawn(move || {
                for (step, a) in inbox {
                    let r = factorize_in(symbolic.clone(), &a, precision).map(|f| (step, Arc::new(f)));
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
/// asynchronous). Under bfloat16 the `f32` copy is kept too: the warped
/// correction solves with the factor, which 8 significant bits do not serve.
fn factorize_in(
    symbolic: Arc<LdltSymbolic>,
    a: &CsrMatrix,
    precision: Precision,
) -> Result<Ldlt, LinalgError> {
    let mut f = Ldlt::factorize(symbolic, a)?;
    f.keep_single_precision(precision != Precision::Double);
    f.keep_bfloat16(precision == Precision::Bfloat16);
    Ok(f)
}

/// `z = A_old⁻¹ r` with a (possibly slightly outdated) LDLᵀ factor, read
/// in `precision`; warped, `z = G A_old⁻¹ Gᵀ r`.
#[derive(Debug, Clone)]
pub struct LdltPreconditioner {
    /// The factor.
    pub factor: Arc<Ldlt>,
    /// The precision its values are read in.
    pub precision: Precision,
    /// The body's rotation since the factor's step.
    pub warp: Option<Warp>,
}

impl Preconditioner for LdltPreconditioner {
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        z.copy_from_slice(r);
        if let Some(q) = &self.warp {
            q.unrotate(z);
        }
        self.factor.solve_one_in(z, self.precision);
        if let Some(q) = &self.warp {
            q.rotate(z);
        }
    }
}
