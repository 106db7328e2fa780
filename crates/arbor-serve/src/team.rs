//! Team mode (`--from postgres://…`): the shared store served read-only, every machine's
//! sessions, with per-machine and per-user filters.
use std::path::Path;

/// Where a session of the shared store came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The machine that pushed it.
    pub machine: Option<String>,
    /// The user who pushed it.
    pub user: Option<String>,
}

/// The shared store being served.
#[derive(Debug)]
pub struct Team {}

impl Team {
    /// Where the session at `file` came from.
    pub fn origin(&self, _file: &Path) -> Option<Origin> {
        None
    }
}
