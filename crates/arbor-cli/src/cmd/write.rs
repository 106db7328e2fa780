//! Commands that write: new, append, migrate.
use crate::cli::WriteOpts;
use anyhow::{bail, Context as _, Result};
use arbor_core::json::JsValue;
use arbor_store::locate::Locator;
use arbor_store::{ManagerOptions, NewEntry, OpenNote, SessionManager};
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

fn options(w: &WriteOpts) -> ManagerOptions {
    ManagerOptions::default()
        .with_durability(w.durability)
        .with_wait(w.wait.wait)
}

fn report_notes(path: &Path, sm: &SessionManager) {
    for n in sm.open_notes() {
        match n {
            OpenNote::Migrated { from_version } => say_err!(
                "arbor: {}: migrated from v{from_version} to v3",
                path.display()
            ),
            OpenNote::TornTailSaved { sidecar, bytes } => say_err!(
                "arbor: {}: torn last line ({bytes} bytes) moved to {} and cut from the session",
                path.display(),
                sidecar.display()
            ),
            OpenNote::MergeLeftover {
                sidecar,
                copied,
                kept,
            } => match kept {
                None => say_err!(
                    "arbor: {}: {copied} bytes of lines from {} (left by an earlier rewrite) \
                     appended; it was removed",
                    path.display(),
                    sidecar.display()
                ),
                Some(why) => say_err!(
                    "arbor: {}: {copied} bytes of lines from {} appended; it is kept ({why}), \
                     the next open or sync looks again",
                    path.display(),
                    sidecar.display()
                ),
            },
        }
    }
}

pub fn new(
    dir: Option<&Path>,
    cwd: Option<String>,
    omp: bool,
    id: Option<String>,
    loc: &Locator,
) -> Result<ExitCode> {
    let agent = loc.agent_override();
    let cwd = match cwd {
        Some(c) => c,
        None => std::env::current_dir()
            .context("current directory")?
            .to_string_lossy()
            .into_owned(),
    };
    let dialect = if omp {
        arbor_core::Dialect::Omp
    } else {
        arbor_core::Dialect::Pi
    };
    let dir = match (dir, agent) {
        (Some(d), _) => Some(d.to_path_buf()),
        (None, Some(a)) => Some(arbor_store::paths::default_session_dir(dialect, a, &cwd)),
        (None, None) => None,
    };
    let sm = SessionManager::create(
        &cwd,
        dir.as_deref(),
        ManagerOptions::default()
            .with_dialect(Some(dialect))
            .with_session_id(id),
    )?;
    let path = sm.session_file().map(Path::to_path_buf).unwrap_or_default();
    sm.close()?;
    say!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Appends one body. `explicit` is the `--parent` given for it, if any: a branch summary
/// hangs from its `fromId` (as pi's `branchWithSummary` hangs it), so the two must agree.
fn append_one(
    sm: &mut SessionManager,
    text: &str,
    explicit: Option<&str>,
    raw: bool,
    out: &mut impl Write,
) -> Result<()> {
    let body = JsValue::parse(text.as_bytes())
        .map_err(|e| anyhow::anyhow!("the entry body is not valid JSON: {e}"))?;
    if !raw {
        if let Some(why) = arbor_store::readable::unreadable_reason(&body, sm.dialect()) {
            bail!("refused: {why} (--raw writes it anyway)");
        }
    }
    let parent = sm.leaf_id().map(str::to_string);
    let entry = NewEntry::from_body(&body, sm.dialect(), parent.as_deref())?;
    let id = match &entry {
        NewEntry::BranchSummary { from_id, .. } => {
            if let (Some(from), Some(p)) = (from_id.as_deref(), explicit) {
                if from != p {
                    bail!("the branch_summary's fromId {from} and --parent {p} disagree (a branch summary hangs from its fromId)");
                }
            }
            let from = from_id.clone();
            sm.append_with_parent(&entry, from.as_deref())?
        }
        _ => sm.append(&entry)?,
    };
    writeln!(out, "{id}")?;
    out.flush()?;
    Ok(())
}

pub fn append(
    session: &str,
    parent: Option<&str>,
    root: bool,
    body: &str,
    raw: bool,
    w: &WriteOpts,
    loc: &Locator,
) -> Result<ExitCode> {
    let agent = loc.agent_override();
    let path = loc.resolve_session(session)?;
    if !path.exists() {
        bail!(
            "{}: no such session file (create one with `arbor new`)",
            path.display()
        );
    }
    let blob_dir = agent.map(|a| a.join("blobs"));
    let mut sm = SessionManager::open(&path, options(w).with_blob_dir(blob_dir))?;
    report_notes(&path, &sm);
    if root {
        sm.reset_leaf();
    } else if let Some(p) = parent {
        super::require_entry(sm.doc(), &path, p)?;
        sm.branch(p)
            .with_context(|| format!("{}", path.display()))?;
    }
    let mut out = crate::report::stdout();
    let result = if body == "-" {
        append_stdin(&mut sm, parent, raw, &mut out)
    } else {
        append_one(&mut sm, body, parent, raw, &mut out)
    };
    // What was appended before a bad line stays, flushed as the durability says, and its
    // ids were printed: close first, then report the bad line.
    let closed = sm.close();
    result?;
    closed?;
    Ok(ExitCode::SUCCESS)
}

/// `append -`: one body per stdin line, each id printed as soon as its line is written. A
/// line that is not UTF-8 is an error naming the line and the byte, not a bare "stream did
/// not contain valid UTF-8".
fn append_stdin(
    sm: &mut SessionManager,
    parent: Option<&str>,
    raw: bool,
    out: &mut impl Write,
) -> Result<()> {
    let stdin = std::io::stdin();
    for (n, line) in stdin.lock().split(b'\n').enumerate() {
        let line = line.context("reading stdin")?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let line = std::str::from_utf8(line).map_err(|e| {
            anyhow::anyhow!(
                "stdin line {}: not valid UTF-8 at byte {} (nothing from this line on was appended)",
                n + 1,
                e.valid_up_to() + 1
            )
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let explicit = if n == 0 { parent } else { None };
        append_one(sm, line, explicit, raw, out)
            .with_context(|| format!("stdin line {}", n + 1))?;
    }
    Ok(())
}

pub fn migrate(
    sessions: &[String],
    dry_run: bool,
    w: &WriteOpts,
    loc: &Locator,
) -> Result<ExitCode> {
    let mut failed = false;
    for s in sessions {
        let result = (|| -> Result<()> {
            let path = loc.resolve_session(s)?;
            let doc = arbor_store::load_doc(&path)?;
            match &doc.migration() {
                None => say!("{}: already v{}", path.display(), doc.report().version),
                Some(m) if dry_run => say!(
                    "{}: would migrate v{} → v3 ({} {}, every other byte kept)",
                    path.display(),
                    m.from_version,
                    arbor_view::count(m.changed_lines.len() as u64, "line", "lines"),
                    if m.changed_lines.len() == 1 {
                        "changes"
                    } else {
                        "change"
                    }
                ),
                Some(m) => {
                    let n = m.changed_lines.len();
                    let sm = SessionManager::open(&path, options(w))?;
                    sm.close()?;
                    say!(
                        "{}: migrated v{} → v3 ({} changed)",
                        path.display(),
                        doc.report().version,
                        arbor_view::count(n as u64, "line", "lines")
                    );
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            say_err!("arbor: {}", crate::report::error_text(&e));
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn name(session: &str, name: &str, w: &WriteOpts, loc: &Locator) -> Result<ExitCode> {
    // pi stores the name trimmed and shows no name for an empty one: an empty name would be
    // an entry that names nothing.
    if arbor_store::is_blank_name(name) {
        bail!("the name is empty (give the session a name with at least one visible character)");
    }
    let path = loc.resolve_session(session)?;
    if !path.exists() {
        bail!("{}: no such session file", path.display());
    }
    let mut sm = SessionManager::open(&path, options(w))?;
    report_notes(&path, &sm);
    let id = sm
        .set_session_name(name)
        .with_context(|| format!("{}", path.display()))?;
    sm.close()?;
    say!("{id}");
    Ok(ExitCode::SUCCESS)
}
