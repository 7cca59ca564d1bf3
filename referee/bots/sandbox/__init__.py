"""The sandbox's mechanisms, one module each: isolation levels and bwrap's view, control groups, seccomp,
uids, the PID namespace's init and the cleanup of a bot's folders. The launcher composes them."""
