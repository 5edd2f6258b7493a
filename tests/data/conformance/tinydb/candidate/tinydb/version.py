__version__ = '4.9.0'
