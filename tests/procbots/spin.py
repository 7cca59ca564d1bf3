"""Answers a request after burning argv[1] seconds of CPU."""
import sys
import time

sys.stdin.readline()
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    pass
print("done", flush=True)
