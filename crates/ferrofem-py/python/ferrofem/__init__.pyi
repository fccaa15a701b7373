"""Real-time finite-element simulation of soft bodies in frictional contact.

Scenes come from TOML files, built-in names or dicts of the same schema
(docs/scene-format.md); state comes back as NumPy arrays; bodies and
obstacles are named by their scene names or indices.
"""

import os
import pathlib
from typing import Any, Mapping, Sequence

import numpy as np
import numpy.typing as npt

__version__: str

_Body = str | int
_Obstacle = str | int
_Path = str | os.PathLike[str]

class SimulationError(RuntimeError):
    """A step failed: the simulation blew up (non-finite values), a solver
    failed, or the constraints could not be met. The message names the
    step, the body and the stage."""

class SimulationWarning(UserWarning):
    """A step went on but is not what it should be: a penetration deeper
    than [contact] max_penetration, inverted elements, or a solve that
    ended no better than it started. Names the step, body and stage."""

class TetMesh:
    """A tetrahedral mesh, validated (indices in range, finite coordinates,
    no inverted or degenerate tet); invalid input raises ValueError."""

    def __init__(self, vertices: npt.ArrayLike, tets: npt.ArrayLike) -> None:
        """From an (n, 3) array of vertices (m) and an (m, 4) array of tets."""
    @staticmethod
    def box(size: Sequence[float], cells: Sequence[int]) -> TetMesh:
        """A box of `size` (m) centred at the origin, `cells` hexahedra per axis."""
    @staticmethod
    def ball(radius: float, resolution: int) -> TetMesh:
        """A ball of `radius` (m) centred at the origin."""
    @staticmethod
    def cylinder(radius: float, length: float, resolution: int, length_cells: int) -> TetMesh:
        """A closed cylinder along z, centred at the origin."""
    @staticmethod
    def torus(major_radius: float, minor_radius: float, resolution: int, ring_cells: int) -> TetMesh:
        """A torus around z, centred at the origin."""
    @staticmethod
    def from_surface(path: str | os.PathLike[str], *, cell: float | None = None, resolution: int | None = None) -> TetMesh:
        """The closed surface in `path` (.obj, .stl, or a volume file's boundary) filled with tets
        by isosurface stuffing: give `cell` (the lattice's edge, in the file's units) or
        `resolution` (cells along its longest side)."""
    @property
    def vertices(self) -> npt.NDArray[np.float64]:
        """(n, 3) vertices (m), a copy."""
    @property
    def tets(self) -> npt.NDArray[np.int64]:
        """(m, 4) tets, a copy."""
    @property
    def boundary_triangles(self) -> npt.NDArray[np.int64]:
        """(k, 3) outward-oriented boundary triangles."""
    @property
    def volume(self) -> float:
        """Total volume (m³)."""
    def write(self, path: _Path) -> None:
        """Writes the mesh (.msh, .vtu, .vtk, … by extension) for a scene to name."""
    def __len__(self) -> int: ...

class Simulation:
    """The world a scene builds: bodies, obstacles, state and integrator."""

    @staticmethod
    def from_dict(scene: Mapping[str, Any], base_dir: _Path | None = None) -> Simulation:
        """A simulation from a dict with the schema of the TOML scene files;
        a bad key or value raises ValueError naming it. A body's or
        obstacle's "mesh" may be a TetMesh object."""
    @staticmethod
    def from_toml(text: str, base_dir: _Path | None = None) -> Simulation:
        """A simulation from scene text in TOML."""
    def step(self, n: int = 1) -> dict[str, Any]:
        """Advances n steps with the GIL released; returns the last step's
        stats (docs/stats.md). Raises SimulationError if a step fails."""
    def reset(self) -> None:
        """Back to the scene's initial state (time 0)."""
    @property
    def time(self) -> float:
        """Simulated time (s)."""
    @property
    def step_count(self) -> int:
        """Steps taken."""
    @property
    def time_step(self) -> float:
        """Time step h (s)."""
    @property
    def integrator(self) -> str:
        """`implicit-euler` or `local-global`."""
    @property
    def name(self) -> str:
        """The scene's name."""
    @property
    def bodies(self) -> list[str]:
        """Body names in scene order."""
    @property
    def obstacles(self) -> list[str]:
        """Obstacle names in scene order."""
    @property
    def last_stats(self) -> dict[str, Any] | None:
        """The last step's stats, None before the first step."""
    @property
    def stage_times(self) -> dict[str, float]:
        """Milliseconds per stage of the last step."""
    def positions(self, body: _Body) -> npt.NDArray[np.float64]:
        """(n, 3) vertex positions (m), a copy."""
    def velocities(self, body: _Body) -> npt.NDArray[np.float64]:
        """(n, 3) vertex velocities (m/s), a copy."""
    def rest_positions(self, body: _Body) -> npt.NDArray[np.float64]:
        """(n, 3) rest positions (m)."""
    def surface(self, body: _Body) -> npt.NDArray[np.int64]:
        """(k, 3) surface triangles, indices into positions."""
    def masses(self, body: _Body) -> npt.NDArray[np.float64]:
        """(n,) vertex masses (kg)."""
    def set_velocities(self, body: _Body, velocities: npt.ArrayLike) -> None:
        """Sets the (n, 3) velocities (m/s) of the body's free vertices."""
    def contact_forces(self, body: _Body) -> npt.NDArray[np.float64]:
        """(n, 3) contact force (N) on each vertex in the last step."""
    def resultants(self, body: _Body) -> npt.NDArray[np.float64]:
        """(3, 3) by rows: the body's mean vertex position (m) and velocity
        (m/s), and the sum of its contact forces in the last step (N)."""
    def contacts(self) -> dict[str, npt.NDArray[Any]]:
        """The last step's contacts and attachments, one row each: `points`,
        `normals`, `forces` (N, on `body`), `body`, `attachment`."""
    def set_obstacle_pose(
        self, obstacle: _Obstacle, translation: Sequence[float], rotation: npt.ArrayLike | None = None
    ) -> None:
        """Moves an obstacle to this pose over the next step, at constant
        velocity, and holds it there."""
    def obstacle_pose(self, obstacle: _Obstacle) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(translation, 3×3 rotation) of an obstacle now."""
    def set_prescribed(self, body: _Body, vertex_ids: npt.ArrayLike, targets: npt.ArrayLike) -> None:
        """Places kinematic vertices (fixed or prescribed in the scene) on
        (k, 3) targets (m) at the end of the next step."""
    def attach(self, body: _Body, vertex: int, target: Sequence[float]) -> None:
        """Holds a vertex on a target point (m) by a bilateral constraint;
        calling it again moves the target (a grab)."""
    def detach(self, body: _Body, vertex: int) -> bool:
        """Removes a vertex's attachments; whether it had any."""
    def attachment_forces(self, body: _Body) -> dict[int, tuple[float, float, float]]:
        """Force (N) each attachment applied on its vertex in the last step."""
    def write_frame(self, directory: _Path) -> list[pathlib.Path]:
        """Writes the next ParaView frame (.vtu per body, .pvd series) into
        `directory`; returns the .pvd paths."""

class Batch:
    """Simulations stepped together with the GIL released: small worlds one
    per thread, large ones one after another on every thread; results are
    bitwise those of stepping each world alone."""

    def __init__(
        self, scenes: Sequence[_Path | Mapping[str, Any] | Simulation], mode: str = "auto"
    ) -> None:
        """Worlds from scene names or paths, scene dicts or Simulation
        objects (each at most once); mode: "auto", "worlds" or "inside"."""
    def step(self, n: int = 1) -> None:
        """Advances every world n steps; a failed world raises
        SimulationError naming it after the others have stepped."""
    def reset(self, world: int | None = None) -> None:
        """Rebuilds one world (or all) from its scene."""
    def __len__(self) -> int: ...
    def __getitem__(self, world: int) -> Simulation: ...
    @property
    def simulations(self) -> list[Simulation]:
        """The worlds, in order."""
    @property
    def mode(self) -> str:
        """"auto", "worlds" or "inside"."""
    @property
    def time(self) -> npt.NDArray[np.float64]:
        """Simulated time of each world (s), (N,)."""
    @property
    def last_stats(self) -> list[dict[str, Any] | None]:
        """Each world's last step stats."""
    def positions(self, body: _Body) -> npt.NDArray[np.float64]:
        """Positions of a body in every world, (N, n, 3) (m)."""
    def velocities(self, body: _Body) -> npt.NDArray[np.float64]:
        """Velocities of a body in every world, (N, n, 3) (m/s)."""
    def contact_forces(self, body: _Body) -> npt.NDArray[np.float64]:
        """Contact force on each vertex of a body in every world's last step, (N, n, 3) (N)."""

def load_scene(scene: _Path) -> Simulation:
    """A simulation from a TOML scene file or a built-in scene's name."""

def builtin_scenes() -> dict[str, str]:
    """Built-in scene names and their descriptions."""

def read_mesh(path: _Path, reorient_inverted: bool = False) -> TetMesh:
    """Reads and validates a tetrahedral mesh file."""

def set_threads(n: int) -> None:
    """Sets the solver's worker threads, once, before the first step."""

def threads() -> int:
    """The solver's worker threads."""
