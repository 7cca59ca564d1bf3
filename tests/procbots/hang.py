"""Reads every line and never answers."""
import sys

for _ in sys.stdin:
    pass
