"""Forks sleeping children until fork fails (RLIMIT_NPROC; at most argv[1]), prints how many it made,
then echoes."""
import os
import sys
import time

made = 0
while made < int(sys.argv[1]):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made += 1
print(made, flush=True)
for line in sys.stdin:
    print(line, end="", flush=True)
