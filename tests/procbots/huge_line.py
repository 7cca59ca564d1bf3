"""Answers a request with 1 GiB and no newline, in 1 MiB writes."""
import sys

sys.stdin.readline()
chunk = b"x" * (1 << 20)
for _ in range(1024):
    sys.stdout.buffer.write(chunk)
