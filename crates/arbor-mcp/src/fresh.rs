//! The server's side of catalog freshness: `arbor_index::fresh` (the one implementation
//! `ls` and `search` use) reports to the call that asked, as MCP progress notifications.
use crate::server::Work;

/// A refresh's progress, reported to the call (sent as `notifications/progress` when the
/// call carried a `progressToken`); a refresh of thousands of files reports as it goes.
pub(crate) struct Progress<'a> {
    work: &'a Work,
    /// When the last notification was sent.
    sent: Option<std::time::Instant>,
}

/// At most one progress notification per this long (the first and the last always go).
const EVERY: std::time::Duration = std::time::Duration::from_millis(200);

impl<'a> Progress<'a> {
    /// The reporter of `work`.
    pub fn new(work: &'a Work) -> Progress<'a> {
        Progress { work, sent: None }
    }
}

impl arbor_index::fresh::Report for Progress<'_> {
    fn progress(&mut self, p: arbor_index::Progress) {
        let last = p.files_done >= p.files_total;
        if !last && self.sent.is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        self.sent = Some(std::time::Instant::now());
        self.work.progress(
            p.bytes_done as f64,
            Some(p.bytes_total as f64),
            format!("indexing: {} of {} files", p.files_done, p.files_total),
        );
    }
    fn recovered(&mut self, catalog: &std::path::Path, r: &arbor_index::Recovery) {
        eprintln!(
            "arbor mcp: warning: the catalog {} is damaged ({}); it was moved to {} and is rebuilt from the session files",
            catalog.display(),
            r.detail,
            r.aside.display()
        );
    }
}
