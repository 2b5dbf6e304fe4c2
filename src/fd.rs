//! File-descriptor helpers shared by the hook spawn (`process`), the sandbox and the readers of
//! ka's files, below them all.

/// `fd` itself, or a close-on-exec copy of it at 3 or above where it is 0, 1 or 2 (in a host
/// that closed its own standard streams): a descriptor the hook's child needs must not be one
/// its `dup`s onto 0, 1 and 2 replace.
#[cfg(target_os = "linux")]
pub(crate) fn above_stdio(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// `path` opened for reading, non-blocking (a FIFO or device is refused after `open`, never
/// waited on) and close-on-exec, without following a final symlink when `nofollow`. One system
/// call: musl's `open` follows every `O_CLOEXEC` open with an `fcntl(F_SETFD)`.
pub(crate) fn open_read(path: &std::path::Path, nofollow: bool) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    Ok(rustix::fs::open(path, flags, Mode::empty())?.into())
}
