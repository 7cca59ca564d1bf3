"""Ignores SIGTERM and the end of its stdin; says "ready" once SIGTERM is ignored."""
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
