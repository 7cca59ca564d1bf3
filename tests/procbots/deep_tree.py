"""Builds a folder chain DEPTH deep in its TMPDIR (paths longer than PATH_MAX, a file and a read-only folder
on the way) to break the referee's cleanup; prints "built", then echoes lines."""
import os
import sys

depth = int(sys.argv[1])
fd = os.open(os.environ["TMPDIR"], os.O_RDONLY)
for level in range(depth):
    os.mkdir("d", dir_fd=fd)
    child = os.open("d", os.O_RDONLY, dir_fd=fd)
    if level % 1000 == 0:
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    os.close(fd)
    fd = child
os.fchmod(fd, 0o500)
print("built", flush=True)
for line in sys.stdin:
    print(line.strip(), flush=True)
