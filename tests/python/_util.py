"""Shared by the Python tests: a scratch cache per test module, and an
import of torch that fails loudly (setup installs python3-torch, so a
missing torch is a broken machine, not a reason to skip)."""

import os
import shutil
import tempfile
import unittest

try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover - the message is the point
    raise SystemExit(f"the Python tests need torch (python3-torch; scripts/setup.sh installs it): {e}")


class ScratchCache:
    def __init__(self, tag: str):
        root = os.environ.get("SK_TEST_BINARY_DIR", tempfile.gettempdir())
        os.makedirs(os.path.join(root, "test-cache"), exist_ok=True)
        self.path = tempfile.mkdtemp(prefix=f"python-{tag}-", dir=os.path.join(root, "test-cache"))

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


class CompileTestCase(unittest.TestCase):
    """A test class whose compiles share one scratch cache (named by `cache_tag`) on 2 workers."""
    cache_tag = "torch"

    @classmethod
    def setUpClass(cls):
        cls.cache = ScratchCache(cls.cache_tag)

    @classmethod
    def tearDownClass(cls):
        cls.cache.close()

    def compile(self, model_or_fn, args, **kw):
        import superkernel.torch as skt
        return skt.compile(model_or_fn, args, cache_dir=self.cache.path, workers=2, **kw)
