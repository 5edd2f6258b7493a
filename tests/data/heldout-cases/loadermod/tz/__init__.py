from . import funcs
from .funcs import identity

__all__ = ["funcs", "identity"]
