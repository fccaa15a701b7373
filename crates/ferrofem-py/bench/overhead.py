"""The binding's cost: `sim.step()` from Python against the step the
library times inside it, and reading a 20k-vertex body's state.

    python crates/ferrofem-py/bench/overhead.py [SCENE] [--steps N] [--repeats R] [--json FILE]

Per step, `wall` is the time of the Python call `sim.step()` and `inside`
the library's own `step_ms` (its stages); `wall − inside` is what the
binding adds (argument parsing, releasing and retaking the GIL, the stats
gathered and converted to a dict). Medians over all steps of all repeats;
run `ferrofem bench step SCENE --steps N` beside it for the CLI's figure.
"""

import argparse
import json
import statistics
import time

import ferrofem


def step_overhead(scene, steps, repeats):
    walls, insides = [], []
    for _ in range(repeats):
        sim = ferrofem.load_scene(scene)
        sim.step()  # the first step factorizes synchronously: not a steady step
        for _ in range(steps):
            t0 = time.perf_counter()
            stats = sim.step()
            walls.append((time.perf_counter() - t0) * 1e3)
            insides.append(stats["step_ms"])
    wall, inside = statistics.median(walls), statistics.median(insides)
    extra = statistics.median(w - i for w, i in zip(walls, insides))
    return {"scene": scene, "steps": steps * repeats, "wall_ms": wall, "inside_ms": inside,
            "binding_ms": extra, "binding_fraction": extra / inside}


def read_cost(cells=(40, 22, 22), reads=2000):
    scene = {
        "simulation": {"time_step": 0.01, "steps": 1},
        "body": [{"name": "block", "mesh": {"box": {"size": [0.4, 0.22, 0.22], "cells": list(cells)}},
                  "material": {"young": 1e5, "poisson": 0.3, "density": 1000.0},
                  "fixed": [{"box": {"min": [-1, -1, -1], "max": [-0.199, 1, 1]}}]}],
    }
    sim = ferrofem.Simulation.from_dict(scene)
    n = sim.positions(0).shape[0]
    t0 = time.perf_counter()
    for _ in range(reads):
        sim.positions(0)
    positions_us = (time.perf_counter() - t0) / reads * 1e6
    t0 = time.perf_counter()
    for _ in range(reads):
        sim.velocities(0)
    velocities_us = (time.perf_counter() - t0) / reads * 1e6
    return {"vertices": n, "bytes": n * 24, "positions_us": positions_us, "velocities_us": velocities_us,
            "gb_per_s": n * 24 / (positions_us * 1e-6) / 1e9}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scene", nargs="?", default="benchmarks/scenes/drop-5k.toml")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    step = step_overhead(args.scene, args.steps, args.repeats)
    read = read_cost()
    print(f"{step['scene']}: {step['steps']} steps, median sim.step() {step['wall_ms']:.2f} ms, "
          f"library step {step['inside_ms']:.2f} ms, binding {step['binding_ms'] * 1e3:.0f} µs "
          f"({step['binding_fraction']:.2%})")
    print(f"reading a {read['vertices']}-vertex body ({read['bytes'] / 1e6:.2f} MB): positions "
          f"{read['positions_us']:.0f} µs, velocities {read['velocities_us']:.0f} µs ({read['gb_per_s']:.1f} GB/s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"step": step, "read": read, "threads": ferrofem.threads()}, f, indent=2)


if __name__ == "__main__":
    main()
