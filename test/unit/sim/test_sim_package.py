"""rnea_ros.sim's docstring names only modules and packages that exist, and every one it has."""

from __future__ import annotations

import re
from pathlib import Path

import rnea_ros.sim

SIM = Path(rnea_ros.sim.__file__).parent


def test_the_docstring_names_exactly_the_modules_of_sim() -> None:
    named = set(re.findall(r"`(\w+)`", rnea_ros.sim.__doc__ or ""))
    present = {p.stem for p in SIM.glob("*.py") if p.stem != "__init__"}
    present |= {p.parent.name for p in SIM.glob("*/__init__.py")}
    assert named == present, (sorted(named - present), sorted(present - named))
