"""Writes 8 MiB of chatter to stderr, then its last words, then echoes the request."""
import sys

line = sys.stdin.buffer.readline()
for _ in range(128):
    sys.stderr.buffer.write(b"thinking...\n" * 5461)
sys.stderr.buffer.write(b"last words\n")
sys.stdout.buffer.write(line)
sys.stdout.buffer.flush()
