//! File-descriptor helpers shared by the hook spawn (`process`) and the sandbox, below both.

/// `fd` itself, or a close-on-exec copy of it at 3 or above where it is 0, 1 or 2 (in a host
/// that closed its own standard streams): a descriptor the hook's child needs must not be one
/// its `dup`s onto 0, 1 and 2 replace.
pub(crate) fn above_stdio(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: `fd` is open and owned here; F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned `copy`; nothing else owns it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(copy) })
}
