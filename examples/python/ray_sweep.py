"""A parameter sweep spread over processes or machines with Ray: the
squeezing ball (zeng2025 Fig. 5) for Young's modulus × roller friction,
collecting the peak contact force and whether the rollers drew the ball
through their gap.

Each task is one ``ferrofem.Simulation`` in a Ray worker (one thread each);
the results come back into a table and a figure, the same numbers as the
sequential loop (``--check`` runs it too and compares). Locally Ray starts
its own workers; on a cluster, start it there (``ray start --head`` on one
machine, ``ray start --address HEAD:6379`` on the others) and pass
``--address auto`` (or the head's address) to run the same script on it.

    pip install ray
    python examples/python/ray_sweep.py [--out DIR] [--address ADDR] [--workers N] [--check] [--quick]
"""

import argparse
import itertools
import pathlib
import sys

import matplotlib.pyplot as plt
import numpy as np

import ferrofem


def squeezing_ball(young: float, friction: float, resolution: int) -> dict:
    """The built-in ``squeezing-ball`` scene as a dict, with the ball's
    modulus, the rollers' friction and the mesh resolution chosen."""

    def roller(name: str, side: float) -> dict:
        return {
            "name": name,
            "shape": {"cylinder": {"radius": 0.08, "length": 0.4}},
            "transform": {"rotation_deg": [90.0, 0.0, 0.0], "translation": [side * 0.13, 0.0, 0.0]},
            "motion": {"angular_velocity": [0.0, -side * 4.0, 0.0]},
            "friction": friction,
        }

    return {
        "simulation": {
            "name": "squeezing-ball",
            "time_step": 0.01,
            "steps": 200,
            "gravity": [0.0, 0.0, -9.81],
            "integrator": "local-global",
        },
        "local_global": {"iterations": 5, "global_step": "triangular"},
        "contact": {"alarm_distance": 0.01},
        "constraint_solver": {"method": "non-smooth-newton", "cr_iterations": 10},
        "body": [
            {
                "name": "ball",
                "mesh": {"ball": {"radius": 0.1, "resolution": resolution}},
                "transform": {"translation": [0.0, 0.0, 0.2]},
                "material": {"young": young, "poisson": 0.4, "density": 1000.0},
                "constitutive": "neo-hookean",
            }
        ],
        "obstacle": [
            roller("left-roller", -1.0),
            roller("right-roller", 1.0),
            {"name": "floor", "shape": "half_space", "transform": {"translation": [0.0, 0.0, -0.35]}, "friction": 0.5},
        ],
    }


def squeeze(young: float, friction: float, resolution: int = 5, steps: int = 80) -> tuple[float, float]:
    """Peak total contact force on the ball, rollers and floor (N), and its centroid's final
    height (m; below 0 once drawn through the rollers)."""
    sim = ferrofem.Simulation.from_dict(squeezing_ball(young, friction, resolution))
    peak = 0.0
    for _ in range(steps):
        sim.step()
        peak = max(peak, float(np.linalg.norm(sim.contact_forces("ball").sum(axis=0))))
    return peak, float(sim.positions("ball")[:, 2].mean())


def sweep_on_ray(grid, resolution: int, steps: int, workers: int | None, address: str | None):
    """``squeeze`` at every (E, μ) of ``grid`` as Ray tasks, in grid order."""
    import ray
    from ray import cloudpickle

    # Ship this module's functions by value, so that workers (on any machine)
    # need ferrofem installed, not this file.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    # One task per core, one solver thread per task (rayon reads RAYON_NUM_THREADS).
    one_thread = {"env_vars": {"RAYON_NUM_THREADS": "1"}}
    cpus = workers if address is None else None
    ray.init(address=address, num_cpus=cpus, include_dashboard=False, runtime_env=one_thread)

    @ray.remote(num_cpus=1)
    def task(young, friction):
        return squeeze(young, friction, resolution, steps)

    try:
        return ray.get([task.remote(e, mu) for e, mu in grid])
    finally:
        ray.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/python", help="folder for the figure")
    parser.add_argument("--address", default=None, help="a running Ray cluster (default: start one here)")
    parser.add_argument("--workers", type=int, default=None, help="local Ray workers (default: all cores)")
    parser.add_argument("--check", action="store_true", help="also run the sequential loop and compare")
    parser.add_argument("--quick", action="store_true", help="a 2×2 grid of small, short runs (the test's)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    moduli, frictions = ([1e4, 4e4], [0.2, 0.8]) if args.quick else ([1e4, 2e4, 4e4], [0.2, 0.5, 0.8])
    resolution, steps = (4, 25) if args.quick else (5, 80)
    grid = list(itertools.product(moduli, frictions))
    results = sweep_on_ray(grid, resolution, steps, args.workers, args.address)
    print(f"{'E (Pa)':>10} {'mu':>5} {'peak force (N)':>15} {'final z (m)':>12}")
    for (e, mu), (force, z) in zip(grid, results):
        print(f"{e:10.3g} {mu:5.2f} {force:15.4f} {z:12.4f}")
    if args.check:
        loop = [squeeze(e, mu, resolution, steps) for e, mu in grid]
        assert loop == results, "Ray's results differ from the sequential loop's"
        print("the sequential loop gives the same numbers")

    force = np.array([r[0] for r in results]).reshape(len(moduli), len(frictions))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for j, mu in enumerate(frictions):
        ax.plot(moduli, force[:, j], "o-", label=f"μ = {mu}")
    ax.set_xscale("log")
    ax.set_xlabel("Young's modulus E (Pa)")
    ax.set_ylabel("peak contact force on the ball (N)")
    ax.set_title("Squeezing ball: a sweep on Ray")
    ax.grid(True, which="both", lw=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "ray_sweep.png", dpi=120)
    print(f"figure {out / 'ray_sweep.png'}")


if __name__ == "__main__":
    main()
