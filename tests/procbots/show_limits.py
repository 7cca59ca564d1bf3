"""Prints its rlimits (data, nproc, fsize, nofile, cpu, core), parent-death signal, and whether it leads
its session."""
import ctypes
import os
import resource

names = ["RLIMIT_DATA", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_CORE"]
pdeathsig = ctypes.c_int()
ctypes.CDLL(None).prctl(2, ctypes.byref(pdeathsig))  # PR_GET_PDEATHSIG
limits = [resource.getrlimit(getattr(resource, name))[0] for name in names]
print(*limits, pdeathsig.value, os.getsid(0) == os.getpid(), flush=True)
