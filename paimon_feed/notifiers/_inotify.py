"""One inotify instance per process, shared by every local notifier and every feed.

Linux allows 128 inotify instances per user by default and a process 1,024 (often 256) file
descriptors; a watcher per table hits both long before 1,000 tables. Here one instance holds a
watch per directory (the limit on watches is ~8,000 to millions), read by one daemon thread that
blocks in ``poll()``: no timer wakes it, so an idle process spends no CPU on it. Watches are
added and removed at any time (watchfiles fixes its paths when it starts).

The thread hands events to each watch's *sink* (a :class:`LocalNotifier`, which moves them onto
its event loop), one call per sink per read, so a burst of commits costs one loop wake-up. The
instance is opened on first use and closed when the last user releases it (DESIGN invariant 14).

A watch *dies* when its directory is deleted, renamed away or unmounted; the sink then gets a
``dead`` event for it, exactly once, and decides how to re-establish it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import select
import struct
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["InotifyEvent", "Watch", "Watcher", "available", "release_watcher", "shared_watcher"]

logger = logging.getLogger(__name__)

IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x8, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_ISDIR = 0x01000000, 0x40000000
IN_CLOEXEC, IN_NONBLOCK = 0o2000000, 0o4000

#: Every watch asks for the same events: inotify keeps one mask per inode and instance, and two
#: watches of one directory (two feeds of one table) share it.
MASK = (
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
)
_DEATH = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
_HEADER = struct.Struct("iIII")
_READ_SIZE = 64 * 1024


def available() -> bool:
    """Whether this platform has inotify (Linux)."""
    return sys.platform.startswith("linux") and _libc() is not None


_LIBC: Any = None


def _libc() -> Any:
    global _LIBC
    if _LIBC is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch  # noqa: B018
        except (OSError, AttributeError):
            _LIBC = False
        else:
            _LIBC = libc
    return _LIBC or None


@dataclass(frozen=True)
class InotifyEvent:
    """One event of a watch: ``name`` is the entry in the watched directory (``""`` for the
    directory itself); ``dead`` says the watch is gone (``reason`` says why) or, with
    ``watch is None``, that the kernel's queue overflowed and events were lost."""

    watch: Watch | None
    mask: int
    name: str
    dead: bool = False
    reason: str = ""

    @property
    def is_dir(self) -> bool:
        return bool(self.mask & IN_ISDIR)

    @property
    def appeared(self) -> bool:
        """An entry was completed or moved in (a committed file, a new directory)."""
        if self.is_dir:
            return bool(self.mask & (IN_CREATE | IN_MOVED_TO))
        return bool(self.mask & (IN_CLOSE_WRITE | IN_MOVED_TO))

    @property
    def vanished(self) -> bool:
        return bool(self.mask & (IN_DELETE | IN_MOVED_FROM))


class Sink(Protocol):
    def deliver(self, events: list[InotifyEvent]) -> None:
        """Called on the watcher thread; must not block."""


@dataclass(eq=False)
class Watch:
    """A directory watched for a sink; ``alive`` until removed or dead."""

    path: str
    sink: Sink
    wd: int = -1
    alive: bool = True
    tag: Any = field(default=None)


class Watcher:
    """The process's inotify instance and the thread reading it. Use :func:`shared_watcher`."""

    def __init__(self) -> None:
        libc = _libc()
        if libc is None:
            raise OSError(errno.ENOSYS, "inotify is not available on this platform")
        self._libc = libc
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            hint = " (fs.inotify.max_user_instances reached)" if code == errno.EMFILE else ""
            raise OSError(code, f"inotify_init1 failed: {os.strerror(code)}{hint}")
        self.fd = fd
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._lock = threading.Lock()
        self._by_wd: dict[int, list[Watch]] = {}
        self._users = 0
        self._closed = False
        self.overflows = 0
        self._close_fds_on_exit = False
        self.broken = False
        self._thread = threading.Thread(target=self._run, name="paimon-feed-inotify", daemon=True)
        self._thread.start()

    # watches ----------------------------------------------------------------------------------
    def add(self, path: str, sink: Sink, tag: Any = None) -> Watch:
        """Watch directory ``path`` for ``sink``; ``OSError`` if it does not exist (ENOENT),
        is not a directory, or the watch limit is reached (ENOSPC)."""
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), MASK)
        if wd < 0:
            code = ctypes.get_errno()
            hint = " (fs.inotify.max_user_watches reached)" if code == errno.ENOSPC else ""
            raise OSError(code, f"cannot watch {path}: {os.strerror(code)}{hint}", path)
        watch = Watch(path, sink, wd, tag=tag)
        with self._lock:
            self._by_wd.setdefault(wd, []).append(watch)
        return watch

    def remove(self, watch: Watch) -> None:
        """Stop ``watch``. Idempotent; the directory's kernel watch goes with its last user."""
        with self._lock:
            if not watch.alive:
                return
            watch.alive = False
            watches = self._by_wd.get(watch.wd, [])
            if watch in watches:
                watches.remove(watch)
            if watches:
                return
            self._by_wd.pop(watch.wd, None)
        if not self._closed:
            self._libc.inotify_rm_watch(self.fd, watch.wd)  # EINVAL if already gone: fine

    def watch_count(self) -> int:
        with self._lock:
            return len(self._by_wd)

    # lifetime ---------------------------------------------------------------------------------
    def _retain(self) -> None:
        self._users += 1

    def _release(self) -> bool:
        """One user fewer; close when none is left. Returns whether it closed."""
        self._users -= 1
        if self._users > 0:
            return False
        self._closed = True
        os.write(self._wake_w, b"x")
        if threading.current_thread() is self._thread:
            self._close_fds_on_exit = True  # pragma: no cover - sinks never release from here
        else:
            self._thread.join()
            self._close_fds()
        return True

    def _close_fds(self) -> None:
        for fd in (self.fd, self._wake_r, self._wake_w):
            os.close(fd)

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        try:
            while not self._closed:
                try:
                    poller.poll()
                except InterruptedError:  # pragma: no cover - PEP 475 retries already
                    continue
                if self._closed:
                    break
                try:
                    data = os.read(self.fd, _READ_SIZE)
                except BlockingIOError:
                    continue
                self._dispatch(data)
        except Exception:  # noqa: BLE001 - reported to every sink, which falls back to polling
            logger.exception("the inotify reader thread failed; local feeds fall back to polling")
            self.broken = True  # the next shared_watcher() opens a new instance
            self._fail_all("the inotify reader failed")
        finally:
            if self._close_fds_on_exit:
                self._close_fds()

    def _dispatch(self, data: bytes) -> None:
        by_sink: dict[int, tuple[Sink, list[InotifyEvent]]] = {}
        offset = 0
        with self._lock:
            while offset + _HEADER.size <= len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size: offset + _HEADER.size + length]
                offset += _HEADER.size + length
                name = os.fsdecode(raw.rstrip(b"\0"))
                if mask & IN_Q_OVERFLOW:
                    self.overflows += 1
                    sinks = {id(w.sink): w.sink for ws in self._by_wd.values() for w in ws}
                    for key, sink in sinks.items():
                        by_sink.setdefault(key, (sink, []))[1].append(
                            InotifyEvent(None, mask, "", dead=True, reason="inotify queue overflowed")
                        )
                    continue
                watches = self._by_wd.get(wd)
                if not watches:
                    continue
                if mask & _DEATH and not name:
                    reason = _death_reason(mask)
                    if mask & IN_IGNORED or mask & IN_DELETE_SELF or mask & IN_UNMOUNT:
                        del self._by_wd[wd]
                    else:  # renamed away: the kernel watch follows the old inode; drop it
                        del self._by_wd[wd]
                        self._libc.inotify_rm_watch(self.fd, wd)
                    for watch in watches:
                        if watch.alive:
                            watch.alive = False
                            by_sink.setdefault(id(watch.sink), (watch.sink, []))[1].append(
                                InotifyEvent(watch, mask, "", dead=True, reason=reason)
                            )
                    continue
                for watch in watches:
                    by_sink.setdefault(id(watch.sink), (watch.sink, []))[1].append(
                        InotifyEvent(watch, mask, name)
                    )
        for sink, events in by_sink.values():
            sink.deliver(events)

    def _fail_all(self, reason: str) -> None:
        with self._lock:
            watches = [w for ws in self._by_wd.values() for w in ws]
            self._by_wd.clear()
        by_sink: dict[int, tuple[Sink, list[InotifyEvent]]] = {}
        for watch in watches:
            watch.alive = False
            by_sink.setdefault(id(watch.sink), (watch.sink, []))[1].append(
                InotifyEvent(watch, 0, "", dead=True, reason=reason)
            )
        for sink, events in by_sink.values():
            sink.deliver(events)


def _death_reason(mask: int) -> str:
    if mask & IN_UNMOUNT:
        return "its file system was unmounted"
    if mask & IN_MOVE_SELF:
        return "the directory was renamed or replaced"
    if mask & IN_DELETE_SELF:
        return "the directory was deleted"
    return "the kernel dropped the watch"


_shared: Watcher | None = None
_shared_lock = threading.Lock()


def shared_watcher() -> Watcher:
    """The process's watcher, opened if needed; pair with :func:`release_watcher`."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._closed or _shared.broken:
            _shared = Watcher()
        _shared._retain()
        return _shared


def release_watcher(watcher: Watcher) -> None:
    """Give back a :func:`shared_watcher`; the last user closes it (fd and thread)."""
    global _shared
    with _shared_lock:
        if watcher._release() and _shared is watcher:
            _shared = None


class WeakSink:
    """Hands events to a notifier while it lives (see
    :class:`~paimon_feed.notifiers._local_watches.WatchLease`)."""

    def __init__(self, notifier: weakref.ref) -> None:
        self._notifier = notifier

    def deliver(self, events: list[InotifyEvent]) -> None:
        notifier = self._notifier()
        if notifier is not None:
            notifier.deliver(events)


class Lease:
    """One notifier's share of the shared watcher, given back once: by ``close()``, or by the
    notifier's finalizer when it is collected unclosed. Both can run for one notifier (an
    abandoned feed's ``__del__`` may revive its notifier to close it after the notifier's weak
    references were cleared), so giving back is idempotent."""

    def __init__(self, watcher: Watcher, watches: dict[int, Watch]) -> None:
        self._watcher = watcher
        self._watches = watches
        self._lock = threading.Lock()
        self._released = False

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        for watch in list(self._watches.values()):
            self._watcher.remove(watch)
        self._watches.clear()
        release_watcher(self._watcher)
