"""Writes 1 MiB files into FOLDER, each one below the file-size limit, until a write fails (or MAX files,
default 16,384, are written); then prints how many MiB it wrote and the errno name ("none"), and echoes lines."""
import errno
import os
import sys

folder = sys.argv[1]
most = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 14
written, failure = 0, "none"
try:
    for index in range(most):
        with open(os.path.join(folder, f"fill{index}"), "wb") as file:
            file.write(b"x" * (1 << 20))
            file.flush()
        written += 1
except OSError as exc:
    failure = errno.errorcode.get(exc.errno or 0, "?")
print(written, failure, flush=True)
for line in sys.stdin:
    print(line.strip(), flush=True)
