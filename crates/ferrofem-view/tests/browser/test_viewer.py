"""The viewer end to end in a real headless browser (Debian's Chromium,
driven by Playwright): the page loads and draws the body, a scripted mouse
drag grabs it and moves the grabbed point toward the target in the
simulation's own state (read from /api/state), and releasing removes the
grab's constraint. Run by ./test-python; needs /usr/bin/chromium and the
`ferrofem` binary (FERROFEM_BIN, default target/release/ferrofem, which
`cargo test --workspace --release` builds)."""

import contextlib
import io
import json
import os
import pathlib
import subprocess
import time
import urllib.request

import numpy as np
import pytest
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parents[4]
BIN = pathlib.Path(os.environ.get("FERROFEM_BIN", ROOT / "target" / "release" / "ferrofem"))
CHROMIUM = "/usr/bin/chromium"
REQUIRED = os.environ.get("FERROFEM_BROWSER_TESTS") == "required"

SCENE = """
[simulation]
name = "grab-block"
time_step = 0.01
steps = 100000
[[body]]
name = "block"
mesh = { box = { size = [0.1, 0.1, 0.2], cells = [3, 3, 6] } }
transform = { translation = [0.0, 0.0, 0.1] }
material = { young = 5e4, poisson = 0.3, density = 1000.0 }
damping = { mass = 2.0, stiffness = 0.01 }
[[body.fixed]]
box = { min = [-1.0, -1.0, -0.001], max = [1.0, 1.0, 0.001] }
[[obstacle]]
name = "floor"
shape = "half_space"
"""


def missing():
    if not BIN.exists():
        return f"{BIN} not built (cargo test --workspace builds it)"
    if not pathlib.Path(CHROMIUM).exists():
        return f"{CHROMIUM} not installed (apt-get install chromium)"
    return None


def require_tools():
    """Fails (where the tools are required) or skips the test without the viewer or Chromium."""
    why = missing()
    if why:
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture
def viewer(tmp_path):
    require_tools()
    scene = tmp_path / "grab-block.toml"
    scene.write_text(SCENE)
    # No --play: a live scene plays from the start, so the first drag grabs.
    proc = subprocess.Popen([str(BIN), "--threads", "1", "view", str(scene), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "http://" in line, line + proc.stderr.read()
    url = line.split("open ")[1].split()[0]
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def state(url):
    with urllib.request.urlopen(url + "api/state", timeout=10) as r:
        return json.load(r)["figures"]


def state_when(url, holds, timeout=20.0):
    """The simulation's figures once `holds(figures)` is true, polled: under
    a loaded machine (CI runs the Rust tests beside these) a step can lag
    the page by seconds, so no fixed wait decides a test. After `timeout`
    seconds, the last figures read, for the assertion to report."""
    deadline = time.monotonic() + timeout
    figures = state(url)
    while not holds(figures) and time.monotonic() < deadline:
        time.sleep(0.05)
        figures = state(url)
    return figures


def pixels(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


@contextlib.contextmanager
def browser_page():
    """A 900×700 page in headless Chromium and the list its script errors go to."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page(viewport={"width": 900, "height": 700})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            yield page, errors
        finally:
            browser.close()


def test_page_draws_the_body_and_a_mouse_drag_grabs_it(viewer):
    with browser_page() as (page, errors):
        page.goto(viewer)
        page.wait_for_function("window.ferrofem && window.ferrofem.framesReceived > 3", timeout=30000)
        page.wait_for_timeout(500)
        assert page.inner_text("#help").startswith("drag a body to grab it"), page.inner_text("#help")
        before = pixels(page.screenshot())
        # Not blank: the shaded body and the floor make many distinct colours.
        assert before.std() > 10 and len(np.unique(before.reshape(-1, 3), axis=0)) > 200

        # A point of the block's side facing the camera, high up: under it, the body.
        top = page.evaluate("() => window.ferrofem.project([0.0, -0.05, 0.17])")
        assert page.evaluate(f"() => window.ferrofem.pick({top['x']}, {top['y']})") is not None
        page.mouse.move(top["x"], top["y"])
        page.mouse.down()
        grabbed = state_when(viewer, lambda f: f["grab"] is not None)["grab"]
        assert grabbed is not None, "the press did not grab the body"
        start = np.array(grabbed["position"])
        page.mouse.move(top["x"] + 150, top["y"], steps=15)
        page.wait_for_timeout(500)

        def followed(f):
            """The target moved, and the grabbed point followed it: most of
            the way, and closer than it started."""
            if f["grab"] is None:
                return False
            target, now = np.array(f["grab"]["target"]), np.array(f["grab"]["position"])
            pulled = np.linalg.norm(target - start)
            return (pulled > 0.02 and np.linalg.norm(now - start) > 0.6 * pulled
                    and np.linalg.norm(target - now) < 0.4 * pulled)

        held = state_when(viewer, followed)
        assert held["grab"] is not None, "the grab ended during the drag"
        target, now = np.array(held["grab"]["target"]), np.array(held["grab"]["position"])
        pulled = np.linalg.norm(target - start)
        assert pulled > 0.02, f"the drag moved the target only {pulled} m"
        assert followed(held), (start, target, now)
        assert held["attachments"] == 1 and np.linalg.norm(held["grab"]["force"]) > 0
        after = pixels(page.screenshot())
        assert np.abs(after - before).mean() > 0.5, "the picture did not change"
        held_range = page.evaluate("() => window.ferrofem.range")

        page.mouse.up()
        released = state_when(viewer, lambda f: f["grab"] is None)
        assert released["grab"] is None and released["attachments"] == 0
        # The legend is marked auto and keeps the widest range seen: the
        # relaxing block's smaller field does not stretch back over the ramp.
        page.wait_for_timeout(1000)
        legend = page.evaluate("() => window.ferrofem.range")
        assert page.inner_text("#range-kind") == "auto"
        assert legend["name"] == held_range["name"] and legend["hi"] >= held_range["hi"] > legend["lo"], (held_range, legend)
        frame_hi = page.evaluate("() => window.ferrofem.figures.field[3]")
        assert frame_hi <= legend["hi"], (frame_hi, legend)
        assert not errors, errors


@pytest.fixture
def replay(tmp_path):
    require_tools()
    out = tmp_path / "drop"
    run = subprocess.run([str(BIN), "--threads", "1", "run", "drop", "--steps", "10", "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    proc = subprocess.Popen([str(BIN), "--threads", "1", "view", str(out), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "http://" in line, line + proc.stderr.read()
    yield line.split("open ")[1].split()[0]
    proc.terminate()
    proc.wait(timeout=10)


def test_a_replay_draws_the_floor_and_says_it_is_a_replay(replay):
    with browser_page() as (page, errors):
        page.goto(replay)
        page.wait_for_function("window.ferrofem && window.ferrofem.framesReceived > 0", timeout=30000)
        page.wait_for_timeout(500)
        scene = page.evaluate("() => window.ferrofem.scene")
        assert scene["mode"] == "replay" and [o["shape"]["kind"] for o in scene["obstacles"]] == ["half_space"]
        assert page.evaluate("() => window.ferrofem.obstacles.length") == 1
        assert page.inner_text("#help").startswith("replay:"), page.inner_text("#help")
        assert "frame" in page.inner_text("#figures")
        # The floor is painted: a point of it beside the ball differs from the empty background.
        shot = pixels(page.screenshot())
        floor = page.evaluate("() => window.ferrofem.project([0.25, 0.25, 0.0])")
        x, y = int(floor["x"]), int(floor["y"])
        assert 0 <= x < 900 and 0 <= y < 700, floor
        background = shot[5, 450]
        assert np.abs(shot[y, x] - background).sum() > 20, (shot[y, x], background)
        assert not errors, errors
