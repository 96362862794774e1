"""The engine's re-exports: ``from engine import NAME`` gives the function, never a module."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import numpy as np
import pytest

import engine


@pytest.mark.parametrize("name", engine.__all__)
def test_every_export_is_the_defining_modules_object(name):
    module = importlib.import_module(engine._EXPORTS[name])  # binds e.g. engine.softmax (the module)
    namespace: dict[str, object] = {}
    exec(f"from engine import {name}", namespace)
    got = namespace[name]
    assert not isinstance(got, types.ModuleType), f"engine.{name} is a module"
    assert callable(got) and got is getattr(module, name)


def test_softmax_and_attention_work_after_their_modules_were_imported():
    import engine.attention  # noqa: F401 - the import that used to shadow the functions
    import engine.softmax  # noqa: F401
    from engine import attention, softmax

    np.testing.assert_allclose(softmax([0.0, 0.0]), [0.5, 0.5])
    # one query, two keys with equal scores: the output is the mean of the values
    out, weights = attention([[1.0, 0.0]], [[0.0, 1.0], [0.0, -1.0]], [[2.0], [4.0]])
    np.testing.assert_allclose(weights, [[0.5, 0.5]])
    np.testing.assert_allclose(out, [[3.0]])


def test_the_modules_stay_importable_by_name():
    from engine.softmax import log_softmax

    assert importlib.import_module("engine.softmax").log_softmax is log_softmax
    assert sys.modules["engine.attention"].attention is engine.attention


def test_a_fresh_interpreter_gets_functions_too():
    code = ("import types, engine.softmax, engine.attention\n"
            "from engine import softmax, attention\n"
            "print([isinstance(f, types.ModuleType) for f in (softmax, attention)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[False, False]"
