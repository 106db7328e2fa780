//! Running `arbor` as another user in the CLI tests (root only; CI runs as root): the tests
//! of files a user cannot read or write, which root could.
#![allow(dead_code)]
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The uid and gid of `nobody`.
pub const NOBODY: u32 = 65534;

/// Whether the tests run as root (and can switch users).
pub fn am_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Makes `c` run as `nobody` (no supplementary groups).
pub fn as_nobody(c: &mut Command) {
    // SAFETY: setgroups/setgid/setuid in the child before exec; no allocation.
    unsafe {
        c.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
