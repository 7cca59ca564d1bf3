"""Answers two requests, then exits with code 3."""
import sys

for _ in range(2):
    sys.stdin.readline()
    print("ok", flush=True)
sys.exit(3)
