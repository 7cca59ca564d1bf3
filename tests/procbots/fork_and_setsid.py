"""Forks a grandchild that leaves the process group with setsid if argv[1] is "setsid", then prints its
pid and sleeps; the bot itself echoes."""
import os
import sys
import time

if os.fork() == 0:
    if sys.argv[1:] == ["setsid"]:
        os.setsid()
    print(os.getpid(), flush=True)
    time.sleep(60)
    os._exit(0)
for line in sys.stdin:
    print(line, end="", flush=True)
