"""Many worlds at once: `ferrofem.Batch` on 64 small worlds against 64
sequential `Simulation.step` calls, and the Gymnasium environment's cost
per step on `squeezing-ball`.

    python crates/ferrofem-py/bench/batch.py [--worlds N] [--steps K] [--repeats R] [--json FILE]

Batch: N soft cubes of 512 vertices (7×7×7 cells) each landing on a floor
(in contact from the second step), warmed by 5 steps; then K steps of the
batch and K rounds of N `sim.step()` calls, alternating, R times; the
figure is steps per second (N·K / wall time), medians. Environment: an
`ObstacleEnv` steering the rollers of `squeezing-ball`, its `env.step`
timed whole and its simulation's `step` inside it; the overhead is the
difference of their medians (reading the observation, steering the
rollers, checking the action) as a share of the simulation's step.
"""

import argparse
import json
import statistics
import time

import numpy as np

import ferrofem


def cube(k: int) -> dict:
    """A 10 cm cube of 512 vertices dropped from 1 cm, world k thrown at k mm/s sideways."""
    return {
        "simulation": {"name": f"cube-{k}", "time_step": 0.01, "steps": 100, "gravity": [0.0, 0.0, -9.81]},
        "body": [
            {
                "name": "cube",
                "mesh": {"box": {"size": [0.1, 0.1, 0.1], "cells": [7, 7, 7]}},
                "transform": {"translation": [0.0, 0.0, 0.06]},
                "material": {"young": 1e5, "poisson": 0.3, "density": 1000.0},
                "initial_velocity": [0.001 * k, 0.0, -0.5],
            }
        ],
        "obstacle": [{"name": "floor", "shape": "half_space", "friction": 0.4}],
    }


def batch_throughput(worlds: int, steps: int, repeats: int) -> dict:
    batch = ferrofem.Batch([cube(k) for k in range(worlds)])
    singles = [ferrofem.Simulation.from_dict(cube(k)) for k in range(worlds)]
    batch.step(5)
    for sim in singles:
        sim.step(5)
    rates = {"batch": [], "sequential": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        batch.step(steps)
        rates["batch"].append(worlds * steps / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        for _ in range(steps):
            for sim in singles:
                sim.step()
        rates["sequential"].append(worlds * steps / (time.perf_counter() - t0))
    contacts = sum(s["contacts"] for s in batch.last_stats)
    median = {k: statistics.median(v) for k, v in rates.items()}
    return {
        "worlds": worlds,
        "vertices": len(singles[0].positions(0)),
        "contacts_last_step": contacts,
        "batch_steps_per_s": median["batch"],
        "sequential_steps_per_s": median["sequential"],
        "speedup": median["batch"] / median["sequential"],
    }


class TimedStep:
    """A simulation whose `step` calls are timed (the rest passes through)."""

    def __init__(self, sim):
        self.sim, self.last = sim, 0.0

    def __getattr__(self, name):
        return getattr(self.sim, name)

    def step(self, n=1):
        t0 = time.perf_counter()
        stats = self.sim.step(n)
        self.last = time.perf_counter() - t0
        return stats


def env_overhead(steps: int) -> dict:
    from ferrofem.gym import ObstacleEnv

    env = ObstacleEnv("squeezing-ball", "ball", ["left-roller", "right-roller"], jitter=0.0)
    env.reset(seed=0)
    env.sim = TimedStep(env.sim)
    action = np.zeros(env.action_space.shape)
    walls = {"env": [], "sim": []}
    for _ in range(steps):
        t0 = time.perf_counter()
        env.step(action)
        walls["env"].append(time.perf_counter() - t0)
        walls["sim"].append(env.sim.last)
    env_ms, sim_ms = (1e3 * statistics.median(walls[k]) for k in ("env", "sim"))
    return {"env_step_ms": env_ms, "sim_step_ms": sim_ms, "overhead": (env_ms - sim_ms) / sim_ms}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    out = {"threads": ferrofem.threads(), "batch": batch_throughput(args.worlds, args.steps, args.repeats)}
    b = out["batch"]
    print(
        f"batch of {b['worlds']} worlds ({b['vertices']} vertices, {b['contacts_last_step']} contacts): "
        f"{b['batch_steps_per_s']:.0f} steps/s against {b['sequential_steps_per_s']:.0f} sequential "
        f"({b['speedup']:.2f}x), {out['threads']} threads"
    )
    out["env"] = env_overhead(200)
    e = out["env"]
    print(
        f"ObstacleEnv on squeezing-ball: {e['env_step_ms']:.2f} ms a step, "
        f"of which the simulation {e['sim_step_ms']:.2f} ms (overhead {e['overhead']:+.1%})"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
