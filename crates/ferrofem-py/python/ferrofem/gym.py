"""Gymnasium environments on ferrofem scenes (``gymnasium>=1.0``).

``ObstacleEnv`` steers a scene's kinematic obstacles by velocity actions
and observes one soft body; ``GraspEnv`` is the grasp built on it: two jaws
(those of the built-in ``grasp-rotate`` scene, standing still until the
policy moves them) squeeze a soft cube resting on a floor and lift it.
``GraspVectorEnv`` steps ``num_envs`` grasps at once on a
``ferrofem.Batch``. Observations, actions, reward and termination are
documented in docs/python.md ("Reinforcement learning").
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

import ferrofem

CUBE = 0.05
"""Edge of the grasped cube (m)."""

JAW_SPEED = (0.05, 0.10)
"""Top speed of a jaw closing and of the jaws rising (m/s), at action ±1."""

LIFT = 0.03
"""Rise of the cube's centroid that ends an episode as a success (m)."""


def grasp_scene(cells: int = 4) -> dict[str, Any]:
    """The grasp as a scene dict: a soft 5 cm cube (E = 50 kPa, ν = 0.3) on
    a floor between two jaws 1 cm from its faces (friction 0.8)."""

    def jaw(name: str, side: float) -> dict[str, Any]:
        return {
            "name": name,
            "shape": {"box": {"size": [0.02, 0.07, 0.07]}},
            "transform": {"translation": [side * (CUBE / 2 + 0.02), 0.0, 0.036]},
            "friction": 0.8,
        }

    return {
        "simulation": {"name": "grasp", "time_step": 0.01, "steps": 150, "gravity": [0.0, 0.0, -9.81]},
        "implicit_euler": {
            "preconditioner": "ldlt",
            "refresh": {"every": 1, "asynchronous": False},
            "max_iterations": 50,
            "rel_tolerance": 1e-8,
        },
        "contact": {"alarm_distance": 0.005},
        "constraint_solver": {"max_iterations": 300, "tolerance": 1e-8},
        "body": [
            {
                "name": "cube",
                "mesh": {"box": {"size": [CUBE] * 3, "cells": [cells] * 3}},
                "transform": {"translation": [0.0, 0.0, CUBE / 2]},
                "material": {"young": 5e4, "poisson": 0.3, "density": 1000.0},
                "damping": {"mass": 1.0, "stiffness": 0.005},
            }
        ],
        "obstacle": [
            jaw("left-jaw", -1.0),
            jaw("right-jaw", 1.0),
            {"name": "floor", "shape": "half_space", "friction": 0.5},
        ],
    }


class ObstacleEnv(gymnasium.Env):
    """A scene's obstacles steered by velocity, one body observed.

    Action: per steered obstacle a velocity in [-1, 1]³ times ``max_speed``
    (m/s), held over the step. Observation (float64): the body's centroid
    (m) and mean velocity (m/s), each obstacle's position (m), and the sum
    of the contact forces on the body (N). Reward: the rise of the body's
    centroid over the step times 100 (per cm); no termination (override
    ``_outcome``). An episode is truncated after ``max_episode_steps``.
    A reset rebuilds the scene and gives the body a random horizontal
    velocity of up to ``jitter`` m/s (from the seed). A failed step raises
    ``ferrofem.SimulationError``.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        scene: Any,
        body: str,
        obstacles: list[str],
        max_speed: float = 0.05,
        max_episode_steps: int = 200,
        jitter: float = 0.01,
    ):
        self.scene, self.body, self.obstacles = scene, body, list(obstacles)
        self.max_speed, self.max_episode_steps, self.jitter = max_speed, max_episode_steps, jitter
        self.sim = _simulation(scene)
        self.action_space = spaces.Box(-1.0, 1.0, (self._action_size(),), np.float64)
        size = 9 + 3 * len(self.obstacles)
        self.observation_space = spaces.Box(-np.inf, np.inf, (size,), np.float64)
        self._steps = 0
        self._obs = self._observe()

    def _action_size(self) -> int:
        return 3 * len(self.obstacles)

    def _velocities(self, action: np.ndarray) -> list[np.ndarray]:
        """Each steered obstacle's velocity (m/s) for an action."""
        return [self.max_speed * action[3 * k : 3 * k + 3] for k in range(len(self.obstacles))]

    def _outcome(self, before: np.ndarray, after: np.ndarray) -> tuple[float, bool]:
        """Reward and termination from the observations around a step."""
        return 100.0 * (after[2] - before[2]), False

    def _observe(self) -> np.ndarray:
        return observe(self.sim, self.body, self.obstacles)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.sim.reset()
        jitter(self.sim, self.body, self.np_random, self.jitter)
        self._steps = 0
        self._obs = self._observe()
        return self._obs, {}

    def step(self, action):
        action = checked(action, self.action_space)
        before = self._obs
        steer(self.sim, self.obstacles, self._velocities(action), obstacle_positions(before))
        stats = self.sim.step()
        self._steps += 1
        after = self._obs = self._observe()
        reward, terminated = self._outcome(before, after)
        truncated = not terminated and self._steps >= self.max_episode_steps
        return after, reward, terminated, truncated, {"contacts": stats["contacts"]}


class GraspEnv(ObstacleEnv):
    """Grasp and lift a soft cube with two jaws (``grasp_scene``).

    Action (2,) in [-1, 1]: ``[squeeze, lift]``; each jaw moves towards
    the cube at ``squeeze`` × 5 cm/s (apart when negative) and both rise at
    ``lift`` × 10 cm/s. Observation (15,): the cube's centroid and mean
    velocity, each jaw's position, the summed contact force on the cube.
    Reward: 100 × the centroid's rise over the step (per cm), plus 10 when
    the cube is lifted 3 cm above its start, which ends the episode
    (terminated); truncated after 150 steps.
    """

    def __init__(self, cells: int = 4, max_episode_steps: int = 150, jitter: float = 0.005):
        super().__init__(
            grasp_scene(cells), "cube", ["left-jaw", "right-jaw"], 1.0, max_episode_steps, jitter
        )
        self._start = self._observe()[2]

    def _action_size(self) -> int:
        return 2

    def _velocities(self, action: np.ndarray) -> list[np.ndarray]:
        return grasp_velocities(action)

    def _outcome(self, before: np.ndarray, after: np.ndarray) -> tuple[float, bool]:
        lifted = after[2] - self._start >= LIFT
        return 100.0 * (after[2] - before[2]) + (10.0 if lifted else 0.0), bool(lifted)


class GraspVectorEnv(VectorEnv):
    """``num_envs`` grasps (``GraspEnv``) stepped at once on a
    ``ferrofem.Batch``, one world per thread. A world whose episode ended
    is reset at its next step (Gymnasium's next-step autoreset: that step
    ignores its action and returns the reset observation, reward 0)."""

    metadata = {"render_modes": [], "autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, cells: int = 4, max_episode_steps: int = 150, jitter: float = 0.005):
        template = GraspEnv(cells, max_episode_steps, jitter)
        self.num_envs = num_envs
        self.single_action_space = template.action_space
        self.single_observation_space = template.observation_space
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.batch = ferrofem.Batch([copy.deepcopy(template.scene) for _ in range(num_envs)])
        self.max_episode_steps, self.jitter, self._start = max_episode_steps, jitter, template._start
        self.obstacles = template.obstacles
        self._steps = np.zeros(num_envs, dtype=np.int64)
        self._done = np.zeros(num_envs, dtype=bool)
        self._obs = self._observe()

    def _observe(self) -> np.ndarray:
        return np.stack([observe(sim, "cube", self.obstacles) for sim in self.batch.simulations])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.batch.reset()
        for sim in self.batch.simulations:
            jitter(sim, "cube", self.np_random, self.jitter)
        self._steps[:] = 0
        self._done[:] = False
        self._obs = self._observe()
        return self._obs, {}

    def step(self, actions):
        actions = checked(actions, self.action_space)
        before = self._obs
        for k, sim in enumerate(self.batch.simulations):
            if self._done[k]:
                self.batch.reset(k)
                jitter(sim, "cube", self.np_random, self.jitter)
                self._steps[k] = 0
            else:
                steer(sim, self.obstacles, grasp_velocities(actions[k]), obstacle_positions(before[k]))
        self.batch.step()
        after = self._obs = self._observe()
        rise = after[:, 2] - before[:, 2]
        terminated = (after[:, 2] - self._start >= LIFT) & ~self._done
        rewards = np.where(self._done, 0.0, 100.0 * rise + 10.0 * terminated)
        self._steps += ~self._done
        truncated = ~terminated & ~self._done & (self._steps >= self.max_episode_steps)
        self._done = terminated | truncated
        return after, rewards, terminated, truncated, {}


def checked(action, space: spaces.Box) -> np.ndarray:
    """An action as float64, refused (``ValueError``) outside ``space``'s
    shape or its bounds of ±1, NaN included (cheaper than ``space.contains``)."""
    action = np.asarray(action, dtype=np.float64)
    if action.shape != space.shape or not np.all(np.abs(action) <= 1.0):
        raise ValueError(f"action {action!r} is outside the action space {space}")
    return action


def grasp_velocities(action: np.ndarray) -> list[np.ndarray]:
    """The two jaws' velocities (m/s) for a grasp action ``[squeeze, lift]``."""
    close, rise = JAW_SPEED[0] * action[0], JAW_SPEED[1] * action[1]
    return [np.array([close, 0.0, rise]), np.array([-close, 0.0, rise])]


def observe(sim: ferrofem.Simulation, body: str, obstacles: list[str]) -> np.ndarray:
    """A body's centroid and mean velocity, the obstacles' positions and
    the summed contact force on the body, as one float64 vector."""
    centroid, velocity, force = sim.resultants(body)
    return np.concatenate([centroid, velocity, *(sim.obstacle_pose(o)[0] for o in obstacles), force])


def obstacle_positions(obs: np.ndarray) -> list[np.ndarray]:
    """The obstacles' positions in an observation of ``observe``."""
    return [obs[6 + 3 * k : 9 + 3 * k] for k in range((len(obs) - 9) // 3)]


def steer(
    sim: ferrofem.Simulation, obstacles: list[str], velocities: list[np.ndarray], positions: list[np.ndarray]
) -> None:
    """Moves each obstacle from its position by its velocity over the next step."""
    h = sim.time_step
    for name, velocity, position in zip(obstacles, velocities, positions):
        sim.set_obstacle_pose(name, position + h * velocity)


def jitter(sim: ferrofem.Simulation, body: str, rng: np.random.Generator, speed: float) -> None:
    """Gives a body a uniform random horizontal velocity of up to ``speed`` (m/s)."""
    if speed > 0.0:
        n = len(sim.positions(body))
        v = np.zeros((n, 3))
        v[:, :2] = rng.uniform(-speed, speed, 2)
        sim.set_velocities(body, v)


def _simulation(scene: Any) -> ferrofem.Simulation:
    if isinstance(scene, ferrofem.Simulation):
        return scene
    if isinstance(scene, dict):
        return ferrofem.Simulation.from_dict(scene)
    return ferrofem.load_scene(scene)
