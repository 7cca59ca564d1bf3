"""Answers every line with the same line, after sleeping argv[1] seconds."""
import sys
import time

for line in sys.stdin:
    time.sleep(float(sys.argv[1]))
    print(line, end="", flush=True)
