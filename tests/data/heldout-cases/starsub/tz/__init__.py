from .itertz import *  # noqa: F403
