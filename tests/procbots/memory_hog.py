"""Allocates 10 MiB blocks until the memory limit stops it."""
blocks = []
while True:
    blocks.append(bytearray(10 << 20))
