#!/usr/bin/env python3
"""faultfs: a pass-through FUSE file system that makes chosen writes fail with EIO, for the I/O-error tests.

    faultfs.py BACKING_DIR MOUNTPOINT        (foreground; unmount with `fusermount -u MOUNTPOINT`)

Every file operation is passed to BACKING_DIR. The control file MOUNTPOINT/.faultfs takes one command per write:
    fail N      the N-th write or fsync from now fails with EIO (1 = the next one); later ones succeed again
    full N      the same with ENOSPC (a full disk)
    off         nothing fails
and reads back `writes=W fsyncs=F failed=X armed=N`: the writes and fsyncs counted since the last command,
how many failed, and the countdown (0 when off). Needs libfuse2 and the fusepy module (Tools/test.sh installs
both); run as root, or with fusermount.
"""
import errno
import os
import signal
import sys
import threading

try:
    from fuse import FUSE, FuseOSError, Operations
except ImportError:  # Debian's python3-fusepy names the module fusepy (python3-fuse owns "fuse")
    from fusepy import FUSE, FuseOSError, Operations

CONTROL = "/.faultfs"


class FaultFS(Operations):
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.mutex = threading.Lock()
        self.writes = 0
        self.fsyncs = 0
        self.failed = 0
        self.countdown = 0
        self.errno = errno.EIO

    def _full(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def _fault(self, kind):
        with self.mutex:
            if kind == "write":
                self.writes += 1
            else:
                self.fsyncs += 1
            if self.countdown > 0:
                self.countdown -= 1
                if self.countdown == 0:
                    self.failed += 1
                    raise FuseOSError(self.errno)

    def _status(self):
        return f"writes={self.writes} fsyncs={self.fsyncs} failed={self.failed} armed={self.countdown}\n".encode()

    # Control file
    def getattr(self, path, fh=None):
        if path == CONTROL:
            return {"st_mode": 0o100666, "st_nlink": 1, "st_size": len(self._status()), "st_uid": os.getuid(), "st_gid": os.getgid()}
        st = os.lstat(self._full(path))
        return {k: getattr(st, k) for k in (
            "st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid", "st_blocks", "st_ino")}

    def open(self, path, flags):
        if path == CONTROL:
            return 0
        return os.open(self._full(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._full(path), os.O_RDWR | os.O_CREAT, mode)

    def read(self, path, size, offset, fh):
        if path == CONTROL:
            return self._status()[offset:offset + size]
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        if path == CONTROL:
            command = data.decode().split()
            with self.mutex:
                self.writes = self.fsyncs = self.failed = 0
                self.countdown = int(command[1]) if command and command[0] in ("fail", "full") else 0
                self.errno = errno.ENOSPC if command and command[0] == "full" else errno.EIO
            return len(data)
        self._fault("write")
        return os.pwrite(fh, data, offset)

    def fsync(self, path, datasync, fh):
        if path == CONTROL:
            return 0
        self._fault("fsync")
        return os.fdatasync(fh) if datasync else os.fsync(fh)

    def truncate(self, path, length, fh=None):
        if path == CONTROL:
            return 0
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            with open(self._full(path), "r+") as f:
                f.truncate(length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        if path == CONTROL:
            return 0
        return os.close(fh)

    # Everything else passes straight through.
    def access(self, path, amode):
        if path != CONTROL and not os.access(self._full(path), amode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        return os.chmod(self._full(path), mode)

    def chown(self, path, uid, gid):
        return os.chown(self._full(path), uid, gid)

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._full(path))

    def readlink(self, path):
        return os.readlink(self._full(path))

    def mkdir(self, path, mode):
        return os.mkdir(self._full(path), mode)

    def rmdir(self, path):
        return os.rmdir(self._full(path))

    def unlink(self, path):
        return os.unlink(self._full(path))

    def rename(self, old, new):
        return os.rename(self._full(old), self._full(new))

    def link(self, target, source):
        return os.link(self._full(source), self._full(target))

    def symlink(self, target, source):
        return os.symlink(source, self._full(target))

    def utimens(self, path, times=None):
        if path != CONTROL:
            os.utime(self._full(path), times)

    def statfs(self, path):
        st = os.statvfs(self._full(path))
        return {k: getattr(st, k) for k in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def fsyncdir(self, path, datasync, fh):
        return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    # A parent may start us with SIGTERM blocked (a thread's signal mask is inherited): unblock the signals
    # libfuse uses to end its loop, so that terminating us works.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    FUSE(FaultFS(sys.argv[1]), sys.argv[2], foreground=True, nothreads=True, allow_other=False)
