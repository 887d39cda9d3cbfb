"""rnea_ros.compiled.cache: where numba caches the kernels and whether that cache is cold, in fresh
interpreters (a cold cache is an empty NUMBA_CACHE_DIR; nothing is compiled here: the colcon test
in test_packaging.py checks a prepared cache)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnea_ros.compiled.jit import HAVE_NUMBA

CODE = (
    "from rnea_ros.compiled.cache import cache_is_cold, cache_location; "
    "print(cache_is_cold(), cache_location())"
)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_an_empty_cache_directory_is_cold_and_is_where_the_kernels_go(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop("RNEA_ROS_NO_NUMBA", None)
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True)
    cold, where = out.stdout.split()
    assert cold == "True"
    assert Path(where).is_relative_to(tmp_path)
    assert not any(tmp_path.rglob("*.nbi"))  # asking compiled nothing


def test_without_numba_nothing_is_cold_and_there_is_no_cache() -> None:
    env = {**os.environ, "RNEA_ROS_NO_NUMBA": "1"}
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
    proc = subprocess.run(
        [sys.executable, "-m", "rnea_ros.compiled.cache"], env=env, capture_output=True, text=True, check=True
    )
    assert "nothing to compile" in proc.stdout
