"""Many worlds at once: ferrofem.Batch against single runs, the Gymnasium
environments (ferrofem.gym) and the Ray sweep against its sequential loop."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ferrofem

ROOT = pathlib.Path(__file__).resolve().parents[3]


def drops(count):
    """`count` drop worlds, world k thrown down at 1.5 + k × 0.4 m/s."""
    sims = [ferrofem.load_scene("drop") for _ in range(count)]
    for k, sim in enumerate(sims):
        v = np.zeros_like(sim.positions(0))
        v[:, 2] = -1.5 - 0.4 * k
        sim.set_velocities(0, v)
    return sims


@pytest.mark.parametrize("mode,count", [("worlds", 8), ("inside", 3), ("auto", 3)])
def test_batch_equals_single_runs_bitwise(mode, count):
    batch, singles = ferrofem.Batch(drops(count), mode=mode), drops(count)
    batch.step(12)
    for sim in singles:
        sim.step(12)
    x, v, f = batch.positions("ball"), batch.velocities("ball"), batch.contact_forces("ball")
    assert x.shape == (count, len(singles[0].positions(0)), 3)
    for k, sim in enumerate(singles):
        assert np.array_equal(x[k], sim.positions(0)), f"world {k}"
        assert np.array_equal(v[k], sim.velocities(0)), f"world {k}"
        assert np.array_equal(f[k], sim.contact_forces(0)), f"world {k}"
    assert np.abs(f).sum() > 0, "the balls land"
    assert np.all(batch.time == pytest.approx(0.12))
    assert [s["step"] for s in batch.last_stats] == [12] * count


def test_batch_mixes_integrators_and_refuses_unlike_bodies():
    batch = ferrofem.Batch(["drop", "drop-lg"])
    batch.step(3)
    assert [s.integrator for s in batch.simulations] == ["implicit-euler", "local-global"]
    assert batch[1].step_count == 3 and batch[-1] is not None
    if len(batch[0].positions(0)) != len(batch[1].positions(0)):
        with pytest.raises(ValueError, match="world 1"):
            batch.positions(0)


def test_a_failed_world_is_named_and_the_others_go_on():
    sims = drops(4)
    v = np.full_like(sims[2].positions(0), 1e300)
    sims[2].set_velocities(0, v)
    batch = ferrofem.Batch(sims)
    with pytest.raises(ferrofem.SimulationError, match="world 2"):
        batch.step(2)
    assert [s.step_count for k, s in enumerate(sims) if k != 2] == [2, 2, 2]
    batch.reset(2)
    batch.step()
    assert [s.step_count for s in sims] == [3, 3, 1, 3]


def test_batch_refuses_bad_worlds_and_modes():
    sim = ferrofem.load_scene("drop")
    with pytest.raises(ValueError, match="world 1: the same Simulation as world 0"):
        ferrofem.Batch([sim, sim])
    with pytest.raises(ValueError, match="world 1"):
        ferrofem.Batch(["drop", 3.5])
    with pytest.raises(ValueError, match="world 0"):
        ferrofem.Batch([{"simulation": {"time_step": -1.0}}])
    with pytest.raises(ValueError, match="mode"):
        ferrofem.Batch(["drop"], mode="fast")
    with pytest.raises(IndexError, match="world"):
        ferrofem.Batch(["drop"])[3]


def test_grasp_env_passes_gymnasiums_checker_and_lifts_with_a_scripted_policy():
    gym = pytest.importorskip("ferrofem.gym", reason="gymnasium is not installed (pip install gymnasium)")
    from gymnasium.utils.env_checker import check_env

    env = gym.GraspEnv()
    check_env(env, skip_render_check=True)
    first, _ = env.reset(seed=5)
    again, _ = env.reset(seed=5)
    other, _ = env.reset(seed=6)
    assert np.array_equal(first, again) and env.observation_space.contains(first)
    assert not np.array_equal(first, other), "the seed sets the cube's start"
    with pytest.raises(ValueError, match="outside the action space"):
        env.step([2.0, 0.0])
    env.reset(seed=1)
    total, terminated, steps = 0.0, False, 0
    while not terminated:
        obs, reward, terminated, truncated, _ = env.step([1.0, 0.0] if steps < 25 else [0.3, 1.0])
        total, steps = total + reward, steps + 1
        assert not truncated, "lifted before the time limit"
    assert obs[2] - first[2] >= gym.LIFT - 1e-3 and total > 10.0
    # The jaws carry the cube's weight (0.125 kg × g) at the end.
    assert obs[-1] == pytest.approx(0.125 * 9.81, rel=0.05)


def test_vector_grasp_env_runs_on_a_batch_and_resets_finished_worlds():
    gym = pytest.importorskip("ferrofem.gym", reason="gymnasium is not installed (pip install gymnasium)")
    envs = gym.GraspVectorEnv(3, max_episode_steps=70)
    obs, _ = envs.reset(seed=2)
    assert obs.shape == (3, 15) and envs.observation_space.contains(obs)
    start = obs[:, 2].copy()
    done_at = None
    for step in range(70):
        obs, rewards, terminated, truncated, _ = envs.step(np.tile([1.0, 0.0] if step < 25 else [0.3, 1.0], (3, 1)))
        if terminated.all():
            done_at = step
            break
    assert done_at is not None, "every world lifts its cube"
    obs, rewards, terminated, truncated, _ = envs.step(np.zeros((3, 2)))
    assert np.all(rewards == 0.0) and not terminated.any()
    assert np.allclose(obs[:, 2], start, atol=1e-3), "the next step resets the finished worlds"
    with pytest.raises(ValueError):
        envs.step(np.zeros((2, 2)))


def test_ray_sweep_equals_the_sequential_loop(tmp_path):
    """The example on local Ray (2 workers, a 2×2 grid: 4 small tasks),
    which asserts under --check that the loop gives the same numbers."""
    pytest.importorskip("ray", reason="ray is not installed (pip install ray); the Ray sweep is not tested")
    example = ROOT / "examples" / "python" / "ray_sweep.py"
    args = [sys.executable, str(example), "--out", str(tmp_path), "--workers", "2", "--check", "--quick"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=300, env=dict(os.environ, MPLBACKEND="Agg"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "the sequential loop gives the same numbers" in run.stdout
    rows = [line.split() for line in run.stdout.splitlines() if line.strip().startswith(("1e+04", "4e+04"))]
    assert len(rows) == 4 and all(float(r[2]) > 0.0 for r in rows), run.stdout
    assert (tmp_path / "ray_sweep.png").stat().st_size > 10_000


def test_resultants_are_the_means_and_the_force_sum():
    sim = ferrofem.load_scene("drop")
    sim.step(30)
    centroid, velocity, force = sim.resultants("ball")
    assert np.allclose(centroid, sim.positions("ball").mean(axis=0), rtol=1e-12, atol=1e-15)
    assert np.allclose(velocity, sim.velocities("ball").mean(axis=0), rtol=1e-12, atol=1e-15)
    assert np.allclose(force, sim.contact_forces("ball").sum(axis=0), rtol=1e-12, atol=1e-12)
    assert force[2] > 0.0, "the floor pushes up"
