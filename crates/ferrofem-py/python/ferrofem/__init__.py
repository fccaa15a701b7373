"""Real-time finite-element simulation of soft bodies in frictional contact.

The simulator is the compiled extension ``ferrofem._ferrofem``; its API is
re-exported here (``ferrofem.Simulation``, ``ferrofem.Batch``, …) and
documented in docs/python.md. ``ferrofem.gym`` (Gymnasium environments)
is imported on demand.
"""

from ._ferrofem import (
    Batch,
    Simulation,
    SimulationError,
    SimulationWarning,
    TetMesh,
    __version__,
    builtin_scenes,
    load_scene,
    read_mesh,
    set_threads,
    threads,
)

__all__ = [
    "Batch",
    "Simulation",
    "SimulationError",
    "SimulationWarning",
    "TetMesh",
    "builtin_scenes",
    "load_scene",
    "read_mesh",
    "set_threads",
    "threads",
]
