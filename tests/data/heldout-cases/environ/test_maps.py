import os

from maps import valmap


def test_environ_mapped():
    assert valmap(str, os.environ) == dict(os.environ)
