class classdoc:
    """A class-level descriptor giving the class's own docstring (toolz's instanceproperty)."""

    def __get__(self, obj, owner):
        return "Catch exceptions and\ndispatch to a handler."


class excepts:
    __doc__ = classdoc()
