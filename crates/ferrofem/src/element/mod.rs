//! Element laws: pure fixed-size functions of an element's vertices.

pub mod corotational;
pub mod polar;

pub use corotational::{TetEval, TetRest};
pub use polar::PolarMethod;
