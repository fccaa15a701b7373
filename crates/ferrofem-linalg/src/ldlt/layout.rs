//! The layout of a supernodal factor: each supernode's columns, rows and
//! panel offsets (what the solves and their plan walk).

/// Supernodes of the factor: supernode `s` owns columns `begin[s]..begin[s+1]`;
/// its panel (rows: own columns, then `pattern(s)`, all ancestors) is stored
/// column-major with the unit-lower `L_ss` above the rectangular `L_bs`.
#[derive(Debug, Clone, Default)]
pub struct SupernodeLayout {
    /// First column of each supernode, and `n` at the end.
    pub begin: Vec<usize>,
    pub(super) pattern_ptr: Vec<usize>,
    pub(super) pattern: Vec<u32>,
    pub(super) value_ptr: Vec<usize>,
    /// Supernode of each column.
    pub of_column: Vec<u32>,
    /// Parent supernode (the supernode of the first pattern row), or [`etree::NONE`].
    pub parent: Vec<usize>,
    /// Rank of each supernode in a postorder of the supernodal tree: the
    /// supernodes of any subtree have consecutive ranks.
    pub postorder_rank: Vec<u32>,
}

impl SupernodeLayout {
    /// Number of supernodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether there are no supernodes.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Number of columns of supernode `s`.
    pub fn width(&self, s: usize) -> usize {
        self.begin[s + 1] - self.begin[s]
    }

    /// Rows below the diagonal block of supernode `s` (sorted, permuted numbering).
    pub fn pattern(&self, s: usize) -> &[u32] {
        &self.pattern[self.pattern_ptr[s]..self.pattern_ptr[s + 1]]
    }
}
