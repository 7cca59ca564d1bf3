"""Closes its stdout, then lives on until its stdin ends."""
import os
import sys

os.close(1)
sys.stdin.read()
