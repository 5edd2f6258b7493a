"""`qlz.x` mirrors `tz.x`: a fresh module filled from it by a meta-path loader (toolz's qlz)."""

import sys
import types
from importlib import import_module
from importlib.machinery import ModuleSpec


class Loader:
    def find_spec(self, fullname, path, target=None):
        if fullname.partition(".")[0] == "qlz":
            return ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        source = import_module("tz" + module.__name__[3:])
        module.__dict__.update(
            {k: v for k, v in source.__dict__.items() if k not in module.__dict__}
        )
        module.__file__ = source.__file__
        for k, v in source.__dict__.items():
            if isinstance(v, types.ModuleType) and v.__name__.startswith("tz."):
                module.__dict__[k] = import_module("qlz" + v.__name__[2:])


loader = Loader()
sys.meta_path.append(loader)
loader.exec_module(sys.modules["qlz"])
