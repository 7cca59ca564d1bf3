"""Forks a sleeping grandchild that keeps the pipes open, then exits with code 5."""
import os
import sys
import time

if os.fork() == 0:
    time.sleep(60)
sys.exit(5)
