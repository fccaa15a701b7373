//! A run's summary ([`Summary`]) gathered step by step in memory that
//! does not grow with the run ([`SummaryBuilder`], [`Quantiles`]).

use std::collections::HashMap;

use serde::Serialize;

use crate::stage::{Stage, StageTimes};
use crate::stats::StepStats;

/// Relative width of a [`Quantiles`] bin.
const BIN: f64 = 1e-3;

/// Nearest-rank quantiles of a sample in bounded memory: positive values
/// binned on a logarithmic scale of relative width 1e-3 (finer than
/// the noise of a timing), each bin keeping
/// its count and smallest value, values ≤ 0 in one bin of their own. A
/// quantile is the smallest value of the bin holding its rank: exact
/// whenever no two distinct values share a bin, within 1e-3 relative
/// otherwise. Memory grows with the range of the values, not their number.
#[derive(Debug, Clone, Default)]
pub struct Quantiles {
    bins: HashMap<i64, (u64, f64)>,
    nonpositive: (u64, f64),
    count: u64,
}

impl Quantiles {
    /// Adds `v` (NaN is not counted).
    pub fn add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        self.count += 1;
        let (n, min) = match v > 0.0 {
            true => self.bins.entry((v.ln() / BIN.ln_1p()).floor() as i64).or_insert((0, v)),
            false => &mut self.nonpositive,
        };
        (*n, *min) = (*n + 1, if *n == 0 { v } else { min.min(v) });
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The nearest-rank `q`-quantile (`0 < q ≤ 1`); 0 for no values.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank <= self.nonpositive.0 {
            return self.nonpositive.1;
        }
        let mut keys: Vec<&i64> = self.bins.keys().collect();
        keys.sort_unstable();
        let mut seen = self.nonpositive.0;
        for k in keys {
            let (n, min) = self.bins[k];
            seen += n;
            if seen >= rank {
                return min;
            }
        }
        unreachable!("the ranks add up to the count")
    }

    /// Median and 90th percentile.
    pub fn median_p90(&self) -> (f64, f64) {
        (self.quantile(0.5), self.quantile(0.9))
    }
}

/// Summary over a run's steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Steps taken.
    pub steps: usize,
    /// Median step time (ms).
    pub step_ms_median: f64,
    /// 90th-percentile step time (ms).
    pub step_ms_p90: f64,
    /// Median per stage (ms).
    pub stage_ms_median: StageTimes,
    /// 90th percentile per stage (ms).
    pub stage_ms_p90: StageTimes,
    /// Mean PCG iterations per step.
    pub cg_iterations_mean: f64,
    /// Most PCG iterations in a step.
    pub cg_iterations_max: usize,
    /// Largest final relative residual seen.
    pub cg_rel_residual_max: f64,
    /// Most contacts in a step.
    pub contacts_max: usize,
    /// Median PGS sweeps per step.
    pub pgs_iterations_median: f64,
    /// Deepest penetration seen (m).
    pub max_penetration: f64,
    /// Most inverted elements in a step.
    pub inverted_elements_max: usize,
    /// Steps that were violations (see [`StepStats::violation`]).
    pub violations: usize,
    /// The first violation, with its step.
    pub first_violation: Option<String>,
    /// Steps with constraint rows whose solve stopped at its cap rather
    /// than its tolerance (the real-time presets' and zeng2025's fixed
    /// Newton schedules' early stop: a figure, a violation only when the
    /// impulses had not settled).
    pub constraint_unconverged: usize,
    /// Steps whose local-global iterations stopped at `iterations` before
    /// `local_global.tolerance`.
    pub local_global_unconverged: usize,
    /// Kinetic energy after the last step (J).
    pub final_kinetic_energy: f64,
    /// Elastic energy at the last step (J).
    pub final_elastic_energy: f64,
}

impl Summary {
    /// Summarizes a run's steps.
    pub fn of(steps: &[StepStats]) -> Summary {
        let mut b = SummaryBuilder::default();
        steps.iter().for_each(|s| b.add(s));
        b.summary()
    }
}

/// A [`Summary`] gathered one step at a time, in memory that does not
/// grow with the number of steps.
#[derive(Debug, Clone, Default)]
pub struct SummaryBuilder {
    step_ms: Quantiles,
    stage_ms: Vec<Quantiles>,
    pgs_iterations: Quantiles,
    cg_iterations_sum: f64,
    running: Summary,
}

impl SummaryBuilder {
    /// Adds a step's figures.
    pub fn add(&mut self, x: &StepStats) {
        self.step_ms.add(x.step_ms);
        self.stage_ms.resize_with(Stage::ALL.len(), Quantiles::default);
        for st in Stage::ALL {
            self.stage_ms[st as usize].add(x.stage_ms.get(st));
        }
        self.pgs_iterations.add(x.pgs_iterations as f64);
        self.cg_iterations_sum += x.cg_iterations as f64;
        let s = &mut self.running;
        s.steps += 1;
        s.final_kinetic_energy = x.kinetic_energy;
        s.final_elastic_energy = x.elastic_energy;
        s.cg_iterations_max = s.cg_iterations_max.max(x.cg_iterations);
        s.cg_rel_residual_max = s.cg_rel_residual_max.max(x.cg_rel_residual);
        s.contacts_max = s.contacts_max.max(x.contacts);
        s.max_penetration = s.max_penetration.max(x.max_penetration);
        s.inverted_elements_max = s.inverted_elements_max.max(x.inverted_elements);
        s.constraint_unconverged += usize::from(x.constraint_converged == Some(false));
        s.local_global_unconverged += usize::from(x.local_global_converged == Some(false));
        if let Some(v) = &x.violation {
            s.violations += 1;
            s.first_violation.get_or_insert_with(|| format!("step {}: {v}", x.step));
        }
    }

    /// Steps added so far that were violations.
    pub fn violations(&self) -> usize {
        self.running.violations
    }

    /// The summary of the steps added so far.
    pub fn summary(&self) -> Summary {
        let mut s = self.running.clone();
        (s.step_ms_median, s.step_ms_p90) = self.step_ms.median_p90();
        for (st, q) in Stage::ALL.iter().zip(&self.stage_ms) {
            (s.stage_ms_median.0[*st as usize], s.stage_ms_p90.0[*st as usize]) = q.median_p90();
        }
        s.pgs_iterations_median = self.pgs_iterations.quantile(0.5);
        if s.steps > 0 {
            s.cg_iterations_mean = self.cg_iterations_sum / s.steps as f64;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::median_p90;

    /// The binned quantiles equal the sorted sample's nearest ranks on a
    /// sample of distinct values, ties and zeros; within 1e-3 of them
    /// where values share bins; and their memory grows with the range of
    /// the values, not their number.
    #[test]
    fn quantiles_equal_the_sorted_sample() {
        let mut q = Quantiles::default();
        let mut v: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1009) as f64 * 0.37).collect();
        v.extend([0.0, 0.0, 5.0, 5.0]);
        v.iter().for_each(|&x| q.add(x));
        assert_eq!(q.median_p90(), median_p90(&mut v.clone()));
        for p in [0.001, 0.1, 0.33, 0.99, 1.0] {
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let exact = sorted[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
            assert_eq!(q.quantile(p), exact, "q = {p}");
        }
        let mut dense = Quantiles::default();
        let mut w: Vec<f64> = (0..200_000).map(|i| 10.0 + 1e-3 * ((i * 31) % 9973) as f64).collect();
        w.iter().for_each(|&x| dense.add(x));
        let (m, p) = median_p90(&mut w);
        let (qm, qp) = dense.median_p90();
        assert!((qm / m - 1.0).abs() < 1e-3 && (qp / p - 1.0).abs() < 1e-3, "{qm} {m} {qp} {p}");
        // Values within 10–20 fill at most ln 2 / ln(1 + 1e-3) ≈ 694 bins, however many.
        let bins = dense.bins.len();
        assert!(bins <= 694, "{bins} bins for values within 10–20");
        (0..200_000).for_each(|i| dense.add(10.0 + 1e-3 * ((i * 17) % 9973) as f64));
        assert_eq!(dense.bins.len(), bins, "more values in the same range, more bins");
    }
}
