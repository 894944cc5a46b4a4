"""The project's conventions: a LICENSE (Apache-2.0) named by the metadata in its current
SPDX form, a changelog, and (with --run-slow) a wheel that carries the license."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_license_file_and_its_metadata():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    project = pyproject()["project"]
    assert project["license"] == "Apache-2.0"  # an SPDX expression, not a table
    assert project["license-files"] == ["LICENSE"]
    requires = pyproject()["build-system"]["requires"]
    assert any(r.startswith("setuptools>=") and int(r.split(">=")[1].split(".")[0]) >= 77
               for r in requires)  # the first setuptools that reads license-files so


def test_the_changelog_has_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog") and "## [Unreleased]" in text


@pytest.mark.slow
def test_the_wheel_carries_the_license(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("symidx-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        lines = z.read(metadata).decode().splitlines()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in lines
