"""`ferrofem run --format usd`: the stage parses with pxr (usd-core), holds
the run's frames as time samples, and its points at each time code equal
the ParaView frame of the same step."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

from test_ferrofem import read_points

ROOT = pathlib.Path(__file__).resolve().parents[3]
BIN = pathlib.Path(os.environ.get("FERROFEM_BIN", ROOT / "target" / "release" / "ferrofem"))

Usd = pytest.importorskip("pxr.Usd", reason="usd-core is not installed (pip install usd-core)")
from pxr import UsdGeom  # noqa: E402


def run(*args):
    if not BIN.exists():
        pytest.skip(f"{BIN} not built (cargo test --workspace --release builds it)")
    return subprocess.run([str(BIN), "run", *args], capture_output=True, text=True, timeout=300)


def test_the_usd_stage_of_drop_holds_the_runs_frames(tmp_path):
    usd, vtu = tmp_path / "usd", tmp_path / "vtu"
    for fmt, out in (("usd", usd), ("vtu", vtu)):
        done = run("drop", "--steps", "20", "--out", str(out), "--format", fmt, "--field", "speed")
        assert done.returncode == 0, done.stderr
    stage = Usd.Stage.Open(str(usd / "drop.usda"))
    assert stage.GetStartTimeCode() == 0 and stage.GetEndTimeCode() == 20
    assert stage.GetTimeCodesPerSecond() == pytest.approx(100.0)
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/World/ball"))
    points = mesh.GetPointsAttr()
    codes = points.GetTimeSamples()
    frames = sorted(vtu.glob("ball_*.vtu"))
    assert len(codes) == len(frames) == 11, (codes, frames)  # output_every = 2: steps 0, 2, …, 20
    volume = np.array(mesh.GetPrim().GetAttribute("ferrofem:volumeVertex").Get())
    counts = np.array(mesh.GetFaceVertexCountsAttr().Get())
    assert np.all(counts == 3) and volume.max() < len(read_points(frames[0]))
    for code, frame in zip(codes, frames):
        at = np.array(points.Get(code), dtype=np.float64)
        assert at.shape == (len(volume), 3)
        np.testing.assert_allclose(at, read_points(frame)[volume], atol=1e-6, err_msg=f"time code {code}")
    speed = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("speed")
    assert speed.GetInterpolation() == "vertex" and max(speed.Get(codes[-1])) > 0.0
    colour = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("displayColor")
    assert colour.GetInterpolation() == "vertex" and len(colour.Get(codes[-1])) == len(volume)
    floor = stage.GetPrimAtPath("/World/obstacle_floor")
    assert floor.IsValid() and UsdGeom.Xformable(floor).GetOrderedXformOps()


def test_a_bad_field_or_an_unwritable_stage_is_refused(tmp_path):
    bad = run("drop", "--steps", "1", "--out", str(tmp_path), "--format", "usd", "--field", "colour")
    assert bad.returncode == 2 and "colour" in bad.stderr
    blocked = tmp_path / "drop.usda"
    blocked.mkdir()
    refused = run("drop", "--steps", "1", "--out", str(tmp_path), "--format", "usd")
    assert refused.returncode == 1 and "drop.usda" in refused.stderr and "panicked" not in refused.stderr
