"""Serving as an unprivileged user: bind the socket as root, share the database with the web user's group, then
drop root for good (setgroups, setgid, setuid, and a check that root cannot be had back) before any connection.

Why the folder is group-writable and sticky: SQLite in WAL mode makes ``DB-wal`` and ``DB-shm`` beside the database
when a connection needs them, so the web user must be able to create files there (g+rwx); the sticky bit (+t)
keeps it from renaming or deleting files it does not own (the daemon's database and journals)."""

from __future__ import annotations

import grp
import ipaddress
import os
import pwd
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from referee.results.schema import database_files


class PrivilegeError(RuntimeError):
    """The user to serve as is unknown, or root could not be dropped for good (one line)."""


@dataclass(frozen=True)
class WebUser:
    name: str
    uid: int
    gid: int
    group: str

    @classmethod
    def named(cls, name: str) -> WebUser:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise PrivilegeError(f"no user {name!r} to serve as (--user)") from None
        if entry.pw_uid == 0:
            raise PrivilegeError(f"--user {name} is root: the web server never serves as root")
        try:
            group = grp.getgrgid(entry.pw_gid).gr_name
        except KeyError:
            group = str(entry.pw_gid)
        return cls(name, entry.pw_uid, entry.pw_gid, group)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (bound while still root: a low port is allowed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle's algorithm off only on sockets whose protocol says TCP, and without
    # that every answer after a connection's first waited 44-48 ms for the client's delayed ACK (bench_web.py).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PrivilegeError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def share_database(db: Path, user: WebUser) -> None:
    """Give the database, its journals and its folder to ``user``'s group: files g+rw, the folder g+rwx and
    sticky. The owner (the daemon's root) keeps them; make_private keeps a file shared with another group so.

    :raises OSError: one of the files is a link (ELOOP, one line naming it).
    """
    # Root changes them: a link planted in the (group-writable) folder is refused, never followed; the sticky
    # folder keeps root's files from being swapped for one between the look and the change.
    for path, info in database_files(db):
        os.chown(path, -1, user.gid, follow_symlinks=False)
        os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IRGRP | stat.S_IWGRP)
    folder = db.resolve().parent
    os.chown(folder, -1, user.gid)
    os.chmod(folder, stat.S_IMODE(folder.stat().st_mode) | stat.S_IRWXG | stat.S_ISVTX)


def drop_root(user: WebUser) -> None:
    """Become ``user`` (with its primary group and no other) for good. :raises PrivilegeError: root came back."""
    os.setgroups([])
    os.setgid(user.gid)
    os.setuid(user.uid)
    try:
        os.setuid(0)
    except PermissionError:
        pass
    else:
        raise PrivilegeError("dropped root, yet could set uid 0 again: refusing to serve")
    if os.getuid() == 0 or os.geteuid() == 0 or os.getgid() == 0 or os.getegid() == 0 or os.getgroups():
        raise PrivilegeError("could not drop root for good: refusing to serve")
