"""Lazy package exports (PEP 562): a package lists ``name -> submodule`` and the submodule is
imported the first time the name is used, so ``import bayesrank.<pkg>`` costs nothing until then.

Usage in a package ``__init__``::

    __getattr__, __dir__, __all__ = lazy_exports(__name__, {"BradleyTerry": "api", ...})
"""

from __future__ import annotations

import importlib
import sys
import types


class _LazyPackage(types.ModuleType):
    """A package whose exported names win over same-named submodules: importing
    ``bayesrank.data.aggregate`` must not replace the exported function ``bayesrank.data.aggregate``
    (with eager imports the ``from .aggregate import aggregate`` line ran last and won)."""

    def __setattr__(self, name, value):
        exports = self.__dict__.get("_lazy_exports", {})
        if isinstance(value, types.ModuleType) and name in exports and value.__name__ == f"{self.__name__}.{name}":
            return
        super().__setattr__(name, value)


def lazy_exports(package: str, exports: dict[str, str]):
    """``(__getattr__, __dir__, __all__)`` for ``package``: ``exports`` maps a public name to the
    submodule (relative to ``package``) that defines it. Other attribute names resolve to submodules
    (``bayesrank.calibration.gap``), as an eager ``from .gap import ...`` would have bound them."""
    module_obj = sys.modules[package]
    module_obj.__dict__["_lazy_exports"] = dict(exports)
    module_obj.__class__ = _LazyPackage

    def __getattr__(name: str):
        source = exports.get(name)
        if source is not None:
            value = getattr(importlib.import_module(f"{package}.{source}"), name)
        elif name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as err:
                if err.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module_obj.__dict__[name] = value  # cached: later lookups do not reach __getattr__
        return value

    def __dir__():
        return sorted(set(module_obj.__dict__) | set(exports))

    return __getattr__, __dir__, list(exports)
