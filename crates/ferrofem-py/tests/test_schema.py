"""The scene schema (`ferrofem schema`, kept in docs/scene.schema.json)
against the scene files: every built-in, external and benchmark scene
validates, and each bad-input scene the parser refuses is refused by the
schema too."""

import json
import pathlib

import pytest

import ferrofem

ROOT = pathlib.Path(__file__).resolve().parents[3]
BAD = ROOT / "crates" / "ferrofem-cli" / "tests" / "bad-inputs"

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install jsonschema)")
tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")


def validator():
    schema = json.loads((ROOT / "docs" / "scene.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def scene_files():
    for folder in ("scenes", "scenes/external", "benchmarks/scenes"):
        yield from sorted((ROOT / folder).glob("*.toml"))


@pytest.mark.parametrize("path", list(scene_files()), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_scene_file_validates(path):
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator().iter_errors(tomllib.loads(path.read_text()))]
    assert not errors, errors


def test_the_schema_refuses_what_the_parser_refuses():
    """The scene parser's refusals (`scene <file>: key: …`) are the schema's;
    what building the bodies refuses (a mesh file's content, a stiffness
    the time step cannot carry, an element count) is beyond a schema."""
    v, refused, built = validator(), [], []
    for path in sorted(BAD.glob("*.toml")):
        text = path.read_text()
        try:
            ferrofem.Simulation.from_toml(text, BAD)
        except ValueError as e:
            if not str(e).startswith("scene "):
                built.append(path.name)
                continue
            refused.append(path.name)
            assert not v.is_valid(tomllib.loads(text)), f"{path.name}: the parser refuses it ({e}) but the schema accepts it"
    assert len(refused) >= 5, refused
    assert "huge-grid.toml" in built, built


def test_the_schema_names_units_defaults_and_choices():
    schema = json.loads((ROOT / "docs" / "scene.schema.json").read_text())
    simulation = schema["$defs"]["SimulationSpec"]["properties"]
    assert "(s)" in simulation["time_step"]["description"]
    assert simulation["gravity"]["default"] == [0.0, 0.0, -9.81]
    text = json.dumps(schema)
    for choice in ('"local_global"', '"non-smooth-newton"', '"neo-hookean"', '"real-time"'):
        assert choice in text, choice
