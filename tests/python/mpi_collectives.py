"""superkernel.Session(communicator=...) with mpi4py, run by ctest under
`mpirun -np 2` (tests/mpi/tests.cmake, labels mpi and python; not a test_*.py
file, so the plain Python tests do not pick it up without ranks): every rank
runs the same cases in the same order, as collectives need. Buffers are
ctypes arrays (no numpy or torch): this is the package's thin layer, not the
torch front end."""

import ctypes
import unittest

from mpi4py import MPI  # initialises MPI (at MPI_THREAD_MULTIPLE), before superkernel needs it

import superkernel

N = 64
OPLIST = {
    "format": "superkernel.oplist", "version": 1, "kernels": {},
    "buffers": {"x": {"dtype": "f32", "shape": [N]}, "ag": {"dtype": "f32", "shape": [2 * N]},
                "sum": {"dtype": "f32", "shape": [N]}},
    "groups": {"tp": {"ranks": [0, 1]}},
    "ops": [{"name": "ag", "collective": "all_gather", "group": "tp", "scope": "s", "args": {"in": "x", "out": "ag"}},
            {"name": "ar", "collective": "all_reduce", "reduce": "sum", "group": "tp", "scope": "s",
             "args": {"in": "x", "out": "sum"}}],
}


def run(comm, rank):
    """Compiles and runs OPLIST on a session over `comm`, rank `rank` of it: (sum, ag)."""
    s = superkernel.Session(workers=1, communicator=comm)
    plan = s.compile(OPLIST)
    bufs = {"x": (ctypes.c_float * N)(*[float(i + 100 * rank) for i in range(N)]),
            "ag": (ctypes.c_float * (2 * N))(), "sum": (ctypes.c_float * N)()}
    plan.run({name: ctypes.addressof(b) for name, b in bufs.items()})
    return list(bufs["sum"]), list(bufs["ag"])


class MpiSessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if MPI.COMM_WORLD.Get_size() != 2:
            raise unittest.SkipTest("run under mpirun -np 2")

    def expect(self, got, rank):
        total, gathered = got
        self.assertEqual(total, [float(2 * i + 100) for i in range(N)], f"all_reduce on rank {rank}")
        self.assertEqual(gathered, [float(i) for i in range(N)] + [float(i + 100) for i in range(N)],
                         f"all_gather on rank {rank}")

    def test_world(self):
        rank = MPI.COMM_WORLD.Get_rank()
        self.expect(run(MPI.COMM_WORLD, rank), rank)

    def test_split_communicator_orders_the_ranks(self):
        # Ranks reversed: world rank 1 is rank 0 of the group, so its x leads the all_gather.
        world = MPI.COMM_WORLD
        rev = world.Split(0, world.Get_size() - 1 - world.Get_rank())
        try:
            self.assertEqual(rev.Get_rank(), 1 - world.Get_rank())
            self.expect(run(rev, rev.Get_rank()), rev.Get_rank())
        finally:
            rev.Free()

    def test_not_a_communicator(self):
        with self.assertRaisesRegex(superkernel.InvalidArgumentError,
                                    r"communicator must be an mpi4py communicator .*not builtins\.object"):
            superkernel.Session(workers=1, communicator=object())
        # An mpi4py object that is no communicator: the library's own message.
        with self.assertRaisesRegex(superkernel.BadInputError, r"is not an MPI intracommunicator .*MPI_COMM_NULL"):
            superkernel.Session(workers=1, communicator=MPI.COMM_NULL)


if __name__ == "__main__":
    unittest.main()
