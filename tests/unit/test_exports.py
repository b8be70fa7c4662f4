from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = [
    "ragaliq",
    "ragaliq.errors",
    "ragaliq.models",
    "ragaliq.config",
    "ragaliq.evaluators",
    "ragaliq.judges",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_every_public_class_and_function(name):
    module = importlib.import_module(name)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", "").startswith("ragaliq")
        and (
            name in {"ragaliq", "ragaliq.evaluators", "ragaliq.judges"} or value.__module__ == name
        )
    }
    assert public <= set(module.__all__), public - set(module.__all__)


def test_every_error_derives_from_the_root():
    from ragaliq import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.RagaliqError)


def test_every_name_the_package_exports_can_be_imported():
    import ragaliq

    for name in ragaliq.__all__:
        assert getattr(ragaliq, name) is not None
