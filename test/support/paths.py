"""Where things are: the repository, its test folder and this helpers' folder."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
TESTS = SUPPORT.parent
REPO = TESTS.parent
# MuJoCo Menagerie's Panda and xArm7, mesh-free (../shared/menagerie, CI has it beside the clone)
MENAGERIE = REPO.parent / "shared" / "menagerie"
PANDA_XML = MENAGERIE / "franka_emika_panda" / "panda.xml"
XARM7_XML = MENAGERIE / "ufactory_xarm7" / "xarm7.xml"
