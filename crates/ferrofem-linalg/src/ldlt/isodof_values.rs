//! The stored values of isodof columns and of the cache's `W̄`: in double,
//! or, for a factor kept in single precision only
//! ([`super::Ldlt::double_released`]), whose columns carry no more digits
//! than that, in single (the columns rounded once solved, `W̄`'s products
//! accumulated in `f32`). The reuse cache (zeng2022 §5) holds thousands of
//! columns and a `W̄` over them at scale, so this halves the largest
//! buffers of a real-time step.

use faer::prelude::ReborrowMut;
use faer::{Mat, MatMut, MatRef};

/// Values in one precision: the blocks of a set of columns, one after
/// another, or the cache's `W̄` (none, in double, by default).
#[derive(Debug, Clone)]
pub(super) enum Values {
    /// As solved.
    Double(Vec<f64>),
    /// Rounded once solved ([`Values::round_to_single`]).
    Single(Vec<f32>),
}

/// `$body` with `$v` bound to the values of `$values` (a [`Values`], or
/// a reference to one) in whichever precision they are.
macro_rules! each_precision {
    ($values:expr, $v:ident => $body:expr) => {
        match $values {
            Values::Double($v) => $body,
            Values::Single($v) => $body,
        }
    };
}
pub(super) use each_precision;

impl Default for Values {
    fn default() -> Self {
        Values::Double(Vec::new())
    }
}

impl Values {
    /// No values, in single precision or double.
    pub(super) fn empty(single: bool) -> Values {
        match single {
            true => Values::Single(Vec::new()),
            false => Values::Double(Vec::new()),
        }
    }

    /// Whether they are in single precision.
    pub(super) fn is_single(&self) -> bool {
        matches!(self, Values::Single(_))
    }

    /// Read access, for the expansion.
    pub(super) fn as_slot_values(&self) -> SlotValues<'_> {
        match self {
            Values::Double(v) => SlotValues::Double(v),
            Values::Single(v) => SlotValues::Single(v),
        }
    }

    /// ColumnScalar entries.
    pub(super) fn len(&self) -> usize {
        each_precision!(self, v => v.len())
    }

    /// The values, when stored in double.
    pub(super) fn double_mut(&mut self) -> Option<&mut Vec<f64>> {
        match self {
            Values::Double(v) => Some(v),
            Values::Single(_) => None,
        }
    }

    /// Moves `len` values from `src` to `dst` for each `(src, dst, len)`
    /// (in increasing order, `dst ≤ src`: nothing is read after being
    /// overwritten), then keeps the first `kept` values only, giving the
    /// rest of the memory back.
    pub(super) fn compact(&mut self, moves: &[(usize, usize, usize)], kept: usize) {
        fn compact_in<T: Copy>(v: &mut Vec<T>, moves: &[(usize, usize, usize)], kept: usize) {
            for &(src, dst, len) in moves {
                debug_assert!(dst <= src);
                v.copy_within(src..src + len, dst);
            }
            v.truncate(kept);
            v.shrink_to_fit();
        }
        each_precision!(self, v => compact_in(v, moves, kept))
    }

    /// Rounds double values to single, giving the double storage back
    /// (empty when they were single already).
    pub(super) fn round_to_single(&mut self) -> Vec<f64> {
        match self {
            Values::Double(v) => {
                let double = std::mem::take(v);
                *self = Values::Single(double.iter().map(|&x| x as f32).collect());
                double
            }
            Values::Single(_) => Vec::new(),
        }
    }
}

/// A precision the columns are stored in.
pub(super) trait ColumnScalar: faer::traits::ComplexField + Copy + Into<f64> + Send + Sync {
    /// One, the products' scale.
    const ONE: Self;

    /// A block of `rows × cols` values, column-major.
    fn block(values: &[Self], rows: usize, cols: usize) -> MatRef<'_, Self> {
        MatRef::from_column_major_slice(values, rows, cols)
    }
}

impl ColumnScalar for f64 {
    const ONE: f64 = 1.0;
}

impl ColumnScalar for f32 {
    const ONE: f32 = 1.0;
}

/// A matrix the products of columns stored in `T` are added into.
pub(super) trait AddProducts<T: ColumnScalar>: Sized {
    /// `out += P`, `P` accumulated by `product` in `T`: into `out` itself
    /// when it is of that precision, else into a zero matrix of its shape
    /// added once.
    fn accumulate(out: MatMut<'_, Self>, product: impl FnOnce(MatMut<'_, T>));
}

impl AddProducts<f64> for f64 {
    fn accumulate(out: MatMut<'_, f64>, product: impl FnOnce(MatMut<'_, f64>)) {
        product(out)
    }
}

impl AddProducts<f32> for f32 {
    fn accumulate(out: MatMut<'_, f32>, product: impl FnOnce(MatMut<'_, f32>)) {
        product(out)
    }
}

impl AddProducts<f32> for f64 {
    fn accumulate(mut out: MatMut<'_, f64>, product: impl FnOnce(MatMut<'_, f32>)) {
        let mut p = Mat::<f32>::zeros(out.nrows(), out.ncols());
        product(p.as_mut());
        for j in 0..out.ncols() {
            out.rb_mut().col_mut(j).iter_mut().zip(p.col(j).iter()).for_each(|(o, &x)| *o += x as f64);
        }
    }
}

/// `W̄` over the cache's slots as read by the expansion: in the precision
/// of the cached columns.
#[derive(Debug, Clone, Copy)]
pub enum SlotValues<'a> {
    /// A cache of a double factor.
    Double(&'a [f64]),
    /// A cache of a factor kept in single precision only.
    Single(&'a [f32]),
}

impl SlotValues<'_> {
    /// Entry `k`, widened.
    pub fn get(&self, k: usize) -> f64 {
        match self {
            SlotValues::Double(v) => v[k],
            SlotValues::Single(v) => f64::from(v[k]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_every_value_to_single_precision_and_gives_the_storage_back() {
        let v: Vec<f64> = (0..100).map(|i| (i as f64 * 0.37).sin() * 1e3).collect();
        let mut values = Values::Double(v.clone());
        let back = values.round_to_single();
        assert_eq!(back, v);
        let Values::Single(s) = &values else { panic!("not rounded") };
        for (a, b) in v.iter().zip(s) {
            assert!((a - *b as f64).abs() <= a.abs() * 6e-8, "{a} {b}");
        }
        assert!(values.round_to_single().is_empty() && values.double_mut().is_none());
    }

    #[test]
    fn a_single_product_is_added_into_the_double_matrix() {
        let a: Vec<f32> = (0..12).map(|i| i as f32 * 0.5).collect();
        let mut out = Mat::<f64>::from_fn(3, 3, |i, j| (i + 10 * j) as f64);
        let before = out.clone();
        let za = f32::block(&a, 4, 3);
        <f64 as AddProducts<f32>>::accumulate(out.as_mut(), |p| {
            faer::linalg::matmul::matmul(p, faer::Accum::Add, za.transpose(), za, f32::ONE, faer::Par::Seq)
        });
        for i in 0..3 {
            for j in 0..3 {
                let dot: f64 = (0..4).map(|k| a[i * 4 + k] as f64 * a[j * 4 + k] as f64).sum();
                assert!((out[(i, j)] - before[(i, j)] - dot).abs() < 1e-5, "({i},{j})");
            }
        }
    }
}
