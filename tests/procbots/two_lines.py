"""Answers every line with the same line and, in the same write, an unasked-for second one."""
import sys

for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line + b"second\n")
    sys.stdout.buffer.flush()
