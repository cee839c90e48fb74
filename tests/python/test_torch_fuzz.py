"""The front end's differential fuzzer (fuzz_torch.py) in CI: a bounded number
of random programs with a fixed seed, each equal to eager. A longer run is
one command: /usr/bin/python3 tests/python/fuzz_torch.py --count 2000 --seed 1
(SK_TORCH_FUZZ_COUNT sets the count here). 80 programs, about 2 s each on the
2-core CI machine: the seed is fixed, so the same programs run every time and
more of them widen the net only once; the long run by hand is where new
programs come from, and CI keeps its 45 minutes."""

import os
import unittest

import fuzz_torch
from _util import ScratchCache


class FuzzTest(unittest.TestCase):
    def test_random_programs_equal_eager(self):
        count = int(os.environ.get("SK_TORCH_FUZZ_COUNT", "80"))
        cache = ScratchCache("fuzz")
        try:
            failures = [r for r in (fuzz_torch.check_one(7 * 1_000_003 + i, cache.path) for i in range(count)) if r]
        finally:
            cache.close()
        self.assertEqual(failures, [], "\n\n".join(failures[:3]))


if __name__ == "__main__":
    unittest.main()
