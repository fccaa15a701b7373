//! What identifies a constraint group from step to step (its warm start).

/// Warm-start key of a group: (body, vertex, what it touches).
pub type GroupKey = (usize, usize, Partner);

/// What the constrained vertex is held against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Partner {
    /// An obstacle.
    Obstacle(usize),
    /// A vertex of a mesh obstacle (the key's vertex is the obstacle's).
    ObstacleVertex(usize),
    /// Sharp edge `.1` of mesh obstacle `.0`, against the body edge from
    /// the key's vertex to vertex `.2`.
    ObstacleEdge(usize, usize, usize),
    /// Its attachment target.
    Target,
    /// A triangle of another body.
    Body(usize),
    /// The tip of a needle, against the surface it has not yet punctured
    /// (the key's vertex is unused: `usize::MAX`).
    NeedleTip(usize),
    /// A needle's shaft (the key's vertex is the shaft point's id).
    NeedleShaft(usize),
    /// Cable `c` of the model (the key's vertex is unused: `usize::MAX`).
    Cable(usize),
}
