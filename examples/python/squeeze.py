"""A controller loop: two jaws squeeze a soft ball to a target force.

Each step the controller reads the contact force the ball exerts on each
jaw (`sim.contacts()`), moves the jaws with a proportional law toward the
force it wants (`sim.set_obstacle_pose`), and logs it; the figure shows the
force following the set point as it ramps and holds.

    python examples/python/squeeze.py [--out DIR] [--steps N]
"""

import argparse
import pathlib

import matplotlib.pyplot as plt
import numpy as np

import ferrofem

RADIUS = 0.05  # m
JAW = {"box": {"size": [0.02, 0.2, 0.2]}}


def scene():
    return {
        "simulation": {"name": "squeeze", "time_step": 0.01, "steps": 1, "gravity": [0.0, 0.0, 0.0]},
        "contact": {"alarm_distance": 0.005},
        "body": [
            {
                "name": "ball",
                "mesh": {"ball": {"radius": RADIUS, "resolution": 8}},
                "material": {"young": 2e4, "poisson": 0.4, "density": 1000.0},
                "damping": {"mass": 2.0, "stiffness": 0.01},
            }
        ],
        "obstacle": [
            {"name": "left", "shape": JAW, "transform": {"translation": [-RADIUS - 0.012, 0.0, 0.0]}, "friction": 0.5},
            {"name": "right", "shape": JAW, "transform": {"translation": [RADIUS + 0.012, 0.0, 0.0]}, "friction": 0.5},
        ],
    }


def jaw_force(sim, side):
    """The force (N) the ball presses on a jaw: the contacts whose normal
    points away from that jaw, summed along x."""
    c = sim.contacts()
    on_jaw = c["normals"][:, 0] > 0.5 if side == "left" else c["normals"][:, 0] < -0.5
    return abs(c["forces"][on_jaw & ~c["attachment"], 0].sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/python", help="folder for the figure")
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    sim = ferrofem.Simulation.from_dict(scene())
    gain, max_speed, h = 3e-4, 0.05, sim.time_step  # m/N, m/s, s
    log = {"t": [], "target": [], "left": [], "right": [], "gap": []}
    for step in range(args.steps):
        t = sim.time
        target = min(2.0, 4.0 * t)  # N: ramp to 2 N in 0.5 s, then hold
        for side, sign in (("left", 1.0), ("right", -1.0)):
            error = target - jaw_force(sim, side)
            speed = float(np.clip(gain * error / h, -max_speed, max_speed))
            position, rotation = sim.obstacle_pose(side)
            sim.set_obstacle_pose(side, position + [sign * speed * h, 0.0, 0.0], rotation)
        sim.step()
        log["t"].append(sim.time)
        log["target"].append(target)
        log["left"].append(jaw_force(sim, "left"))
        log["right"].append(jaw_force(sim, "right"))
        log["gap"].append(sim.obstacle_pose("right")[0][0] - sim.obstacle_pose("left")[0][0] - 0.02)

    fig, (ax, bx) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    ax.plot(log["t"], log["target"], "k--", label="set point")
    ax.plot(log["t"], log["left"], label="left jaw")
    ax.plot(log["t"], log["right"], label="right jaw")
    ax.set_ylabel("contact force (N)")
    ax.legend()
    bx.plot(log["t"], np.array(log["gap"]) * 1e3)
    bx.axhline(2 * RADIUS * 1e3, color="gray", lw=0.5)
    bx.set_ylabel("gap between jaws (mm)")
    bx.set_xlabel("time (s)")
    fig.suptitle("ferrofem: force-controlled squeeze of a soft ball")
    fig.tight_layout()
    fig.savefig(out / "squeeze.png", dpi=120)
    final = np.mean(log["left"][-20:])
    print(f"squeeze: last 0.2 s mean force {final:.3f} N (set point 2 N); figure {out / 'squeeze.png'}")


if __name__ == "__main__":
    main()
