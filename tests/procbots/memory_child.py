"""Stays small itself but starts a child that allocates 10 MiB blocks for ever; prints "started", then
echoes lines (a tree-wide memory limit must still judge it)."""
import os
import sys

if os.fork() == 0:
    blocks = []
    while True:
        blocks.append(bytearray(10 << 20))
print("started", flush=True)
for line in sys.stdin:
    print(line.strip(), flush=True)
