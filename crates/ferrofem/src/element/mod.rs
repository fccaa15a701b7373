//! Element laws: pure fixed-size functions of an element's vertices.

pub mod bending;
pub mod corotational;
pub mod hyperelastic;
pub mod lame;
pub mod lanes;
pub mod polar;
pub mod rest;
pub mod stable_neo_hookean;
pub mod tangent;
pub mod tet_lanes;
pub mod tri_lanes;

pub use bending::{Bending, BendingModel, Stencil};
pub use corotational::TetEval;
pub use hyperelastic::{Constitutive, Lame};
pub use polar::PolarMethod;
pub use rest::{Element, TetElement, TriElement};
pub use tangent::Stiffness;
