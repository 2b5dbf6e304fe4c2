//! File-descriptor helpers shared by the hook spawn (`process`) and the sandbox, below both.

/// `fd` itself, or a close-on-exec copy of it at 3 or above where it is 0, 1 or 2 (in a host
/// that closed its own standard streams): a descriptor the hook's child needs must not be one
/// its `dup`s onto 0, 1 and 2 replace.
pub(crate) fn above_stdio(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}
