"""Answers every line with bytes that are not UTF-8, a NUL and a carriage return."""
import sys

for _ in sys.stdin.buffer:
    sys.stdout.buffer.write(b"\xff\xfe not json \x00\r\n")
    sys.stdout.buffer.flush()
