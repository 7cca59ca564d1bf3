"""Tries to think on others' time: a chain of short-lived processes, each forked by the one before, which
then exits, so that a stop sweep always finds a new pid mid-fork. Each fork is slow (MIB MiB of touched
pages, default 64, in unmergeable mappings of 128 KiB), which widens that window. Prints "ready", then echoes lines;
writes the number of forks made so far when it reads "forks".

    fork_chain.py [MIB]
"""
import mmap
import os
import sys

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 64
# Private and shared mappings alternate, so that the kernel cannot merge them: every fork copies them all.
MAPPINGS = [mmap.mmap(-1, 128 << 10, flags=mmap.MAP_SHARED if index % 2 else mmap.MAP_PRIVATE)
            for index in range(MIB * 8)]
for mapping in MAPPINGS:
    for offset in range(0, len(mapping), mmap.PAGESIZE):
        mapping[offset] = 1
count_read, count_write = os.pipe()
if os.fork() == 0:  # the chain
    os.close(count_read)
    while True:
        if os.fork() != 0:
            os._exit(0)
        os.write(count_write, b".")
os.close(count_write)
os.set_blocking(count_read, False)
forks = 0
print("ready", flush=True)
for line in sys.stdin:
    try:
        while chunk := os.read(count_read, 65536):
            forks += len(chunk)
    except BlockingIOError:
        pass
    print(forks if line.strip() == "forks" else line.strip(), flush=True)
