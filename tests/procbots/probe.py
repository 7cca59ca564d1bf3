"""Answers questions about its surroundings, one JSON request per line: {"op": ..., "arg": ...}.

ids -> [uid, gid, groups]; env NAME -> the value or null; cwd -> the path; read PATH, write PATH,
connect PORT (on 127.0.0.1) -> "ok" or the errno name; list PATH -> sorted names or the errno name;
size PATH -> the bytes of the file system holding PATH.
Covert channels, each "ok" (or what it saw) or the errno name: lock PATH (a POSIX read lock, kept),
locked PATH ("locked"/"unlocked" by F_GETLK), flock PATH, ofd_lock PATH, inotify PATH, bind_abstract NAME,
connect_abstract NAME, udp_bind PORT, udp_send PORT, udp_recv. cpus -> the cores it may run on after asking
for every core; spin -> starts a child that spins for ever, returns its pid.
"""
import contextlib
import ctypes
import errno
import fcntl
import json
import os
import socket
import struct
import sys

KEPT = []  # fds and sockets that hold a lock or a name for as long as the bot lives
FLOCK = "hhqqi"  # struct flock: l_type, l_whence, l_start, l_len, l_pid


def attempt(action):
    try:
        result = action()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    return "ok" if result is None else result


def read(path):
    with open(path, "rb") as file:
        file.read(1)


def write(path):
    with open(path, "w") as file:
        file.write("x")


def connect(port):
    socket.create_connection(("127.0.0.1", port), timeout=1).close()


def lock(path):
    fd = os.open(path, os.O_RDONLY)
    KEPT.append(fd)
    fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack(FLOCK, fcntl.F_RDLCK, 0, 0, 0, 0))


def locked(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(FLOCK, fcntl.F_WRLCK, 0, 0, 0, 0))
    finally:
        os.close(fd)
    return "unlocked" if struct.unpack(FLOCK, answer)[0] == fcntl.F_UNLCK else "locked"


def flock(path):
    fd = os.open(path, os.O_RDONLY)
    KEPT.append(fd)
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)


def ofd_lock(path):
    fd = os.open(path, os.O_RDONLY)
    KEPT.append(fd)
    fcntl.fcntl(fd, 37, struct.pack(FLOCK, fcntl.F_RDLCK, 0, 0, 0, 0))  # F_OFD_SETLK


def inotify(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    KEPT.append(fd)
    if libc.inotify_add_watch(fd, path.encode(), 0x1 | 0x20) < 0:  # IN_ACCESS | IN_OPEN
        raise OSError(ctypes.get_errno(), "inotify_add_watch")


def bind_abstract(name):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(1)
    KEPT.append(server)


def connect_abstract(name):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect("\0" + name)
    client.close()


def udp_bind(port):
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", port))
    server.setblocking(False)
    KEPT.append(server)


def udp_send(port):
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.sendto(b"hand", ("127.0.0.1", port))
    client.close()


def udp_recv():
    return KEPT[-1].recv(16).decode()


def cpus():
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    return sorted(os.sched_getaffinity(0))


def spin():
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    return pid


OPS = {
    "ids": lambda _: [os.getuid(), os.getgid(), os.getgroups()],
    "env": lambda name: os.environ.get(name),
    "cwd": lambda _: os.getcwd(),
    "size": lambda path: (lambda fs: fs.f_blocks * fs.f_frsize)(os.statvfs(path)),
    "read": lambda path: attempt(lambda: read(path)),
    "write": lambda path: attempt(lambda: write(path)),
    "list": lambda path: attempt(lambda: sorted(os.listdir(path))),
    "connect": lambda port: attempt(lambda: connect(port)),
    "lock": lambda path: attempt(lambda: lock(path)),
    "locked": lambda path: attempt(lambda: locked(path)),
    "flock": lambda path: attempt(lambda: flock(path)),
    "ofd_lock": lambda path: attempt(lambda: ofd_lock(path)),
    "inotify": lambda path: attempt(lambda: inotify(path)),
    "bind_abstract": lambda name: attempt(lambda: bind_abstract(name)),
    "connect_abstract": lambda name: attempt(lambda: connect_abstract(name)),
    "udp_bind": lambda port: attempt(lambda: udp_bind(port)),
    "udp_send": lambda port: attempt(lambda: udp_send(port)),
    "udp_recv": lambda _: attempt(udp_recv),
    "cpus": lambda _: cpus(),
    "spin": lambda _: spin(),
}

for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps(OPS[request["op"]](request.get("arg"))), flush=True)
