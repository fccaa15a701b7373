//! Element laws: pure fixed-size functions of an element's vertices.

pub mod corotational;
pub mod hyperelastic;
pub mod polar;

pub use corotational::{TetEval, TetRest};
pub use hyperelastic::{Constitutive, Lame};
pub use polar::PolarMethod;
