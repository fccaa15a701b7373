//! Storage of the factor's supernodal values: `f64` while the factor is
//! computed and read in double precision, rounded to `f32` in the same
//! allocation when the double values are released
//! ([`super::Ldlt::release_double`]), so that the factor never holds both
//! (the real-time preset's 60k factor: 1.4 GB in double, 0.7 GB single).

use std::sync::{Arc, Mutex};

/// `len` doubles held in a buffer of `f32`s (which is what they become), at
/// an offset of 0 or 1 `f32` that aligns them to 8 bytes.
#[derive(Debug, Clone, Default)]
pub(super) struct DoubleValues {
    buf: Vec<f32>,
    offset: usize,
    len: usize,
}

impl DoubleValues {
    /// `len` zeros.
    pub(super) fn zeros(len: usize) -> DoubleValues {
        let buf = vec![0.0f32; 2 * len + 1];
        let offset = buf.as_ptr().align_offset(std::mem::align_of::<f64>());
        assert!(offset <= 1, "an f32 buffer is 4-byte aligned");
        DoubleValues { buf, offset, len }
    }

    /// The values.
    pub(super) fn get(&self) -> &[f64] {
        if self.len == 0 {
            return &[];
        }
        bytemuck::cast_slice(&self.buf[self.offset..self.offset + 2 * self.len])
    }

    /// The values, to write.
    pub(super) fn get_mut(&mut self) -> &mut [f64] {
        if self.len == 0 {
            return &mut [];
        }
        bytemuck::cast_slice_mut(&mut self.buf[self.offset..self.offset + 2 * self.len])
    }

    /// Each value rounded to `f32` (`v as f32`), in place: value `i` is
    /// read from bytes `4·offset + 8i` before `f32` `i` is written at `4i`,
    /// which is at or below it, so a chunk of values is read before the
    /// chunk that overwrites it. The buffer is then shrunk to `len` (its
    /// tail handed back to the allocator).
    pub(super) fn into_single(mut self) -> Vec<f32> {
        const CHUNK: usize = 512;
        let mut chunk = [0.0f64; CHUNK];
        for start in (0..self.len).step_by(CHUNK) {
            let n = CHUNK.min(self.len - start);
            chunk[..n].copy_from_slice(&self.get()[start..start + n]);
            self.buf[start..start + n].iter_mut().zip(&chunk[..n]).for_each(|(s, &v)| *s = v as f32);
        }
        self.buf.truncate(self.len);
        self.buf.shrink_to_fit();
        self.buf
    }
}

/// A preconditioner's copy of the values that a factor shared between
/// threads can give back ([`super::Ldlt::round_copy`]): each solve holds
/// the copy it reads for its own duration, so the memory goes when the
/// last solve that read it ends.
#[derive(Debug)]
pub(super) struct ReleasableCopy<C>(Mutex<Option<Arc<C>>>);

impl<C> Default for ReleasableCopy<C> {
    fn default() -> Self {
        ReleasableCopy(Mutex::new(None))
    }
}

impl<C> Clone for ReleasableCopy<C> {
    fn clone(&self) -> Self {
        ReleasableCopy(Mutex::new(self.get()))
    }
}

impl<C> ReleasableCopy<C> {
    /// A copy holding `values`, if any (moved, not copied: an `Arc<[T]>`
    /// would copy them, a transient second copy of hundreds of MB).
    pub(super) fn new(values: Option<C>) -> Self {
        ReleasableCopy(Mutex::new(values.map(Arc::new)))
    }

    /// Holds `values` from now on, through a shared reference.
    pub(super) fn set(&self, values: C) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(values));
    }

    /// The copy, if kept.
    pub(super) fn get(&self) -> Option<Arc<C>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Gives the copy back, with its storage where no solve holds it.
    pub(super) fn take(&self) -> Option<C> {
        let copy = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        copy.and_then(|c| Arc::try_unwrap(c).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_releasable_copy_gives_its_storage_back_only_when_no_reader_holds_it() {
        let copy = ReleasableCopy::new(Some(vec![1u16, 2, 3]));
        let reader = copy.get().expect("kept");
        assert_eq!(copy.take(), None, "a solve still reads it");
        assert!(copy.get().is_none() && reader.as_slice() == [1, 2, 3]);
        copy.set(vec![4, 5, 6]);
        let clone = copy.clone();
        assert_eq!(copy.take(), None, "a clone of the factor shares it");
        assert_eq!(clone.get().unwrap().as_slice(), [4, 5, 6]);
        copy.set(vec![7, 8]);
        drop(clone);
        assert_eq!(copy.take(), Some(vec![7, 8]), "unshared: the storage itself");
        assert!(copy.get().is_none());
    }

    #[test]
    fn rounding_in_place_equals_rounding_a_copy() {
        for len in [0, 1, 2, 511, 512, 513, 2000] {
            let mut v = DoubleValues::zeros(len);
            v.get_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = (i as f64 * 0.731).sin() * 1e3 + 1.0 / 3.0);
            let copy: Vec<f32> = v.get().iter().map(|&x| x as f32).collect();
            assert_eq!(v.into_single(), copy, "len {len}");
        }
    }
}
