"""Data, the workspace: one per model by default, one per caller on request (Pinocchio-style), any
size-compatible Data gives the same numbers; gravity given as tuples is remembered per Data
without ever giving a stale result."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from pinref import PinRef

from rnea_ros import Data, RneaError, gravity_torques, mass_matrix, rnea

REFS = {name: PinRef(name) for name in ("panda", "ur5")}
TIPS = {"panda": "panda_hand", "ur5": "ee_link"}


@pytest.mark.parametrize("name", sorted(REFS))
def test_default_data_is_one_per_model_and_copies_get_their_own(name: str) -> None:
    model = REFS[name].model
    assert model.default_data is model.default_data
    assert model.create_data() is not model.create_data()
    assert isinstance(Data(model), Data) and Data(model).nv == model.nv
    heavy = model.with_payload(TIPS[name], 2.0)
    assert heavy.default_data is not model.default_data
    q = np.linspace(-1.0, 1.0, model.nv)
    # the copy's default workspace computes the copy's dynamics, not the original's
    assert not np.allclose(gravity_torques(heavy, q), gravity_torques(model, q))


@pytest.mark.parametrize("name", sorted(REFS))
def test_every_workspace_gives_pinocchios_numbers(name: str) -> None:
    ref = REFS[name]
    model = ref.model
    big = REFS["panda"].model.create_data()  # a Data serves any model of at most its size
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = ref.random_state(rng)
        expected = ref.rnea(q, qd, qdd)
        for data in (None, model.create_data(), Data(model), big):
            assert np.max(np.abs(rnea(model, q, qd, qdd, data=data) - expected)) < 1e-9
            assert np.max(np.abs(mass_matrix(model, q, data=data) - ref.mass(q))) < 1e-9


def test_a_data_too_small_or_not_a_data_is_refused() -> None:
    panda, ur5 = REFS["panda"].model, REFS["ur5"].model
    x = np.zeros(panda.nv)
    with pytest.raises(RneaError, match="data was made for a model with 6 joints"):
        gravity_torques(panda, x, data=ur5.create_data())
    with pytest.raises(RneaError, match="data must be a Data"):
        rnea(panda, x, x, x, data=object())  # type: ignore[arg-type]


def test_gravity_none_is_refused_on_every_call_with_a_data() -> None:
    # a Data's record once held gravity None as "no tuple set yet", so that from the second call on
    # gravity=None took the record's unset gravity slot (zeros) instead of raising
    model = REFS["ur5"].model
    x = np.zeros(model.nv)
    for data in (model.create_data(), model.default_data):
        for _ in range(3):
            with pytest.raises(RneaError, match="gravity"):
                rnea(model, x, x, x, gravity=None, data=data)  # type: ignore[arg-type]
            with pytest.raises(RneaError, match="gravity"):
                gravity_torques(model, x, gravity=None, data=data)  # type: ignore[arg-type]


def test_gravity_tuples_never_give_a_stale_result() -> None:
    ref = REFS["ur5"]
    model = ref.model
    q = np.linspace(-0.5, 0.7, model.nv)
    rng = np.random.default_rng(5)
    vectors = [tuple(rng.normal(0.0, 5.0, 3)) for _ in range(100)]  # more than any cache size
    data = model.create_data()
    for g in vectors + vectors[::-1] + [vectors[0], vectors[1], vectors[0]]:
        ref.pin.gravity.linear = np.array(g)
        try:
            expected = ref.rnea(q, 0 * q, 0 * q)
        finally:
            ref.pin.gravity.linear = np.array([0.0, 0.0, -9.81])
        for result in (gravity_torques(model, q, gravity=g), gravity_torques(model, q, gravity=g, data=data)):
            assert np.max(np.abs(result - expected)) < 1e-9 * (1.0 + np.max(np.abs(expected)))


def test_own_workspaces_in_threads_give_the_serial_results() -> None:
    ref = REFS["panda"]
    model = ref.model
    rng = np.random.default_rng(9)
    states = [ref.random_state(rng) for _ in range(50)]
    serial = [rnea(model, *s) for s in states]
    results: dict[int, list[np.ndarray]] = {}

    def work(k: int) -> None:
        data = model.create_data()
        results[k] = [rnea(model, *s, data=data) for s in states for _ in range(20)][::20]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        for got, want in zip(results[k], serial, strict=True):
            np.testing.assert_array_equal(got, want)


def test_every_fast_call_form_gives_the_checked_paths_numbers_bitwise() -> None:
    """One Data serving two models in turn, gravity as the default, tuples (equal ones too) and
    arrays, with and without out=: bitwise the numbers of the checked path (list arguments),
    which converts every argument and passes gravity to the kernel itself."""
    panda, ur5 = REFS["panda"].model, REFS["ur5"].model
    data = panda.create_data()
    rng = np.random.default_rng(11)
    gravities = [None, (0.0, 0.0, -9.81), (0.0, 0.0, -9.81), (1.0, -2.0, -3.71), np.array([0.5, 0.0, -9.0])]
    for step in range(40):
        model = (panda, ur5)[step % 2 if step < 20 else step // 30]
        g = gravities[int(rng.integers(len(gravities)))]
        kw = {} if g is None else {"gravity": g}
        q, qd, qdd = (rng.normal(size=model.nv) for _ in range(3))
        want = rnea(model, q.tolist(), qd.tolist(), qdd.tolist(), **kw)
        want_g = gravity_torques(model, q.tolist(), **kw)
        out = np.empty(model.nv)
        for d in (None, data, model.default_data):
            np.testing.assert_array_equal(rnea(model, q, qd, qdd, data=d, **kw), want)
            np.testing.assert_array_equal(gravity_torques(model, q, data=d, **kw), want_g)
        assert rnea(model, q, qd, qdd, data=data, out=out, **kw) is out
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(mass_matrix(model, q, data=data), mass_matrix(model, q.tolist()))
        if g is None or isinstance(g, tuple):  # wrenches: on the tip, on the root (the root takes it)
            tip = TIPS["panda" if model is panda else "ur5"]
            links = [tip] if step % 3 else [tip, model.root_link]
            w = {link: rng.normal(size=6) for link in links}
            as_lists = {k: v.tolist() for k, v in w.items()}
            want_w = rnea(model, q.tolist(), qd.tolist(), qdd.tolist(), wrenches=as_lists, **kw)
            for d in (None, data):
                np.testing.assert_array_equal(rnea(model, q, qd, qdd, wrenches=w, data=d, **kw), want_w)
    with pytest.raises(RneaError, match="gravity"):
        z = np.zeros(panda.nv)
        rnea(panda, z, z, z, gravity=(0.0, np.nan, 1.0), data=data)
    with pytest.raises(RneaError, match=r"wrenches\['panda_hand'\] contains NaN"):
        z = np.zeros(panda.nv)
        rnea(panda, z, z, z, wrenches={"panda_hand": np.array([0, 0, np.nan, 0, 0, 0.0])}, data=data)
    with pytest.raises(RneaError, match="gravity"):
        gravity_torques(ur5, np.zeros(ur5.nv), gravity=(0.0, 1.0), data=data)
