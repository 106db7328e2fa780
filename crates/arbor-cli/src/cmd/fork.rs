//! `arbor fork`.
use anyhow::Result;
use arbor_store::locate::Locator;
use arbor_store::{ManagerOptions, SessionManager};
use std::process::ExitCode;
use std::time::Duration;

/// What `arbor fork` was asked for.
pub struct ForkOpts<'a> {
    /// `--at`.
    pub at: Option<&'a str>,
    /// `--cwd`.
    pub cwd: Option<&'a str>,
    /// `--json`.
    pub json: bool,
    /// `--resume`.
    pub resume: bool,
    /// `--redact`.
    pub redact: bool,
    /// `--wait`.
    pub wait: Option<Duration>,
}

/// `arbor fork SESSION [--at ID] [--cwd DIR]`: prints the new session's path and id.
pub fn fork(session: &str, o: &ForkOpts<'_>, loc: &Locator) -> Result<ExitCode> {
    let path = loc.resolve_session(session)?;
    let (at, json, resume, redact, wait) = (o.at, o.json, o.resume, o.redact, o.wait);
    if let Some(id) = at {
        let doc = arbor_store::load_doc(&path)?;
        super::require_entry(&doc, &path, id)?;
    }
    // `--cwd` as a path the user typed: made absolute, as pi records the cwd.
    let cwd = match o.cwd {
        Some(c) => Some(
            std::path::absolute(arbor_store::paths::expand_tilde(c))
                .map_err(|e| anyhow::anyhow!("--cwd {c}: {e}"))?
                .to_string_lossy()
                .into_owned(),
        ),
        None => None,
    };
    let opts = ManagerOptions::default().with_wait(wait);
    // With `--redact`, the copy is redacted before it is written: no unredacted copy ever
    // exists, and a fork that fails leaves nothing behind.
    let (sm, redacted) = if redact {
        arbor_view::fork_redacted(&path, at, cwd.as_deref(), opts)?
    } else {
        (SessionManager::fork(&path, at, cwd.as_deref(), opts)?, 0)
    };
    let new_path = sm
        .session_file()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let id = sm.session_id();
    let parent = sm.doc().header_str("parentSession");
    sm.close()?;
    if redact {
        say_err!(
            "arbor: {} redacted in the copy",
            arbor_view::count(redacted as u64, "secret", "secrets")
        );
    }
    if json {
        let mut out = Vec::new();
        let mut o = arbor_core::json::JsonObject::new(&mut out);
        o.str("path", &new_path.to_string_lossy())
            .str("id", &id)
            .opt_str("parentSession", parent.as_deref());
        o.finish();
        out.push(b'\n');
        std::io::Write::write_all(&mut crate::report::stdout(), &out)?;
    } else {
        say!("{}\n{id}", new_path.display());
    }
    if resume {
        let tool = arbor_store::load_doc(&new_path)?.dialect();
        let code = crate::browse::resume(tool, &new_path)?;
        return Ok(ExitCode::from(
            u8::try_from(code.clamp(0, 255)).unwrap_or(1),
        ));
    }
    Ok(ExitCode::SUCCESS)
}
