//! Other agents' sessions (Claude Code, Codex, opencode) beside pi's and omp's: the catalog's
//! rows of them in a command's scope, `--agent`'s filter, and the report of sources skipped.
//! One place for `ls`, `stats` and the others, so that they agree on what is in scope.
use crate::cli::Tool;
use anyhow::Result;
use arbor_agents::Agent;
use arbor_index::{Catalog, ForeignListing, ForeignRoots, ForeignRow};
use arbor_store::locate::Scope;

/// The agent `--agent` names, when it is not pi or omp.
pub fn foreign_agent(t: Tool) -> Option<Agent> {
    match t {
        Tool::Claude => Some(Agent::Claude),
        Tool::Codex => Some(Agent::Codex),
        Tool::Opencode => Some(Agent::Opencode),
        Tool::Pi | Tool::Omp => None,
    }
}

/// Whether `--agent` lets pi's and omp's own sessions through.
pub fn wants_pi(t: Option<Tool>) -> bool {
    t.is_none_or(|t| foreign_agent(t).is_none())
}

/// The catalog's rows of other agents' sessions in `scope` (`--all`: all of them; the
/// current project: those whose cwd is the current directory; `--dir`: none, it names a
/// sessions directory of pi's or omp's), refreshed first (only changed sources are read).
/// Sources skipped are said on stderr when `--all` or `--agent` asks for them.
pub fn in_scope(cat: &mut Catalog, scope: Scope<'_>, tool: Option<Tool>) -> Result<ForeignListing> {
    in_scope_with(cat, &ForeignRoots::from_env(), scope, tool, true)
}

/// [`in_scope`] over the agents' sources under `roots`, saying nothing on stderr when `say`
/// is false (the terminal browser, whose screen a line on stderr would garble; it shows the
/// rows).
pub fn in_scope_with(
    cat: &mut Catalog,
    roots: &ForeignRoots,
    scope: Scope<'_>,
    tool: Option<Tool>,
    say: bool,
) -> Result<ForeignListing> {
    let Some(only) = wanted(scope, tool) else {
        return Ok(ForeignListing::default());
    };
    let mut got = cat.refresh_foreign_with(roots, only, &mut |n, bytes| {
        // A first look at a large history takes seconds: said once, before.
        if say && bytes >= 64 << 20 {
            say_err!(
                "arbor: reading {} of other agents ({} MB) into the catalog; later runs read only what changed",
                arbor_view::count(n as u64, "source", "sources"),
                bytes >> 20
            );
        }
    })?;
    if say && (matches!(scope, Scope::All) || only.is_some()) {
        for p in &got.problems {
            say_err!(
                "arbor: skipped a {} source: {}: {}",
                p.agent,
                p.source.display(),
                p.problem
            );
        }
    }
    keep_in_scope(&mut got, scope);
    Ok(got)
}

/// [`in_scope`]'s rows as the catalog holds them, not refreshed: what the terminal browser
/// shows in its first frame (its refresh runs after it).
///
/// # Errors
/// The catalog's own errors.
pub fn stored_in_scope(
    cat: &Catalog,
    scope: Scope<'_>,
    tool: Option<Tool>,
) -> Result<ForeignListing> {
    let Some(only) = wanted(scope, tool) else {
        return Ok(ForeignListing::default());
    };
    let mut got = cat.foreign_as_stored(only)?;
    keep_in_scope(&mut got, scope);
    Ok(got)
}

/// Which agents' sessions `scope` and `--agent` ask for: `None`, none (`--dir`, `--agent pi`
/// or `omp`); `Some(None)`, every agent's; `Some(Some(a))`, `a`'s.
fn wanted(scope: Scope<'_>, tool: Option<Tool>) -> Option<Option<Agent>> {
    if matches!(scope, Scope::Dir(_)) {
        return None;
    }
    match tool {
        Some(t) => foreign_agent(t).map(Some),
        None => Some(None),
    }
}

/// Keeps the rows of `scope` ([`arbor_index::keep_foreign_in_scope`]).
fn keep_in_scope(got: &mut ForeignListing, scope: Scope<'_>) {
    arbor_index::keep_foreign_in_scope(&mut got.rows, scope, None);
}

/// The catalog's row of the other agent's session `arg` names: its file (the file's own
/// session: rows come parents first), its id, or an id prefix of 6 characters or more.
fn find_foreign(rows: &[ForeignRow], arg: &str) -> Option<ForeignRow> {
    rows.iter()
        .find(|r| arbor_agents::open::names(arg, r.agent, &r.summary.id, &r.source))
        .cloned()
}

/// The catalog's rows of every agent's sessions, and the sources skipped (refreshed once per
/// process: only changed sources are read).
fn foreign_listing() -> Option<ForeignListing> {
    // Once per command: resolving the argument, reading it and the hint ask the same.
    static LISTING: std::sync::OnceLock<Option<ForeignListing>> = std::sync::OnceLock::new();
    LISTING
        .get_or_init(|| {
            let mut cat = super::index::open_catalog(None).ok()?;
            cat.refresh_foreign(&ForeignRoots::from_env(), None).ok()
        })
        .clone()
}

/// The catalog's rows of every agent's sessions ([`foreign_listing`]).
fn foreign_rows() -> Option<Vec<ForeignRow>> {
    foreign_listing().map(|l| l.rows)
}

/// The skipped source (a malformed or future-version file of another agent) that `arg` names
/// by its path.
fn find_problem(listing: &ForeignListing, arg: &str) -> Option<arbor_index::ForeignProblem> {
    let real = std::fs::canonicalize(arg).ok()?;
    listing
        .problems
        .iter()
        .find(|p| std::fs::canonicalize(&p.source).ok().as_ref() == Some(&real))
        .cloned()
}

/// A row's title as a notice on stderr shows it: secrets redacted (the first prompt may hold
/// one; `export` and `secrets` must not print it beside their redacted output), then cut to
/// one line of 60 characters.
fn shown_title(r: &ForeignRow) -> String {
    arbor_view::one_line(&arbor_view::secrets::redact(r.display_title()), 60)
}

/// "Claude Code's", "Codex's", "opencode's".
fn agent_possessive(a: Agent) -> &'static str {
    match a {
        Agent::Claude => "Claude Code's",
        Agent::Codex => "Codex's",
        Agent::Opencode => "opencode's",
    }
}

/// Whether a failed command's error can be about another agent's session, so that
/// [`foreign_hint`] (which opens and refreshes the catalog) is worth asking: a SESSION found
/// nowhere among pi's and omp's, or an argument that is a file under another agent's sessions
/// root. Any other failure (`export -o DIR` refused, a bad flag value) is said as it is, and
/// leaves no catalog behind.
pub fn may_name_foreign(e: &anyhow::Error, args: &[String]) -> bool {
    if matches!(
        e.downcast_ref::<arbor_store::locate::LocateError>(),
        Some(arbor_store::locate::LocateError::NotFound { .. })
    ) {
        return true;
    }
    let roots: Vec<std::path::PathBuf> = [Agent::Claude, Agent::Codex, Agent::Opencode]
        .into_iter()
        .map(arbor_agents::sources::default_root)
        .map(|r| std::fs::canonicalize(&r).unwrap_or(r))
        .collect();
    args.iter().any(|a| {
        std::fs::canonicalize(arbor_store::paths::expand_tilde(a))
            .is_ok_and(|p| roots.iter().any(|r| p.starts_with(r)))
    })
}

/// When one of a failed command's arguments names another agent's session (its file, or its
/// id or an id prefix of 6 characters or more), what to say: it is that agent's, arbor only
/// reads it, and `arbor import` makes a pi session of it. Looks in the catalog's rows
/// (refreshed: sources are only read).
pub fn foreign_hint(args: &[String]) -> Option<String> {
    let rows = foreign_rows()?;
    let (a, r) = args
        .iter()
        .find_map(|a| find_foreign(&rows, a).map(|r| (a, r)))?;
    Some(format!(
        "arbor: {a} is {} session {} (\"{}\"), another agent's: arbor only reads it (ls, search, stats, show, context, tree, export, mcp) and never writes into it. To continue it in pi: {}, then pi --session on the file it writes",
        agent_possessive(r.agent),
        r.summary.id,
        shown_title(&r),
        r.import_command()
    ))
}

/// The catalog's row of the other agent's session `arg` names (its file, id or id prefix of
/// 6 characters or more), if any.
pub fn foreign_row(arg: &str) -> Option<ForeignRow> {
    foreign_rows().and_then(|rows| find_foreign(&rows, arg))
}

/// Another agent's session as `arbor stats` counts it
/// (`arbor_view::stats_catalog::counted_foreign`), and its label in the session table
/// (`short_id agent title`).
pub fn counted(r: &ForeignRow, short_id: &str) -> (arbor_view::Counted, String) {
    let label = format!(
        "{short_id} {} {}",
        r.agent,
        arbor_view::one_line(r.display_title(), 200)
    );
    (arbor_view::stats_catalog::counted_foreign(r), label)
}

/// Whether `arg` names another agent's session in the catalog (see [`foreign_hint`]), or a
/// source of theirs that was skipped as unreadable ([`open_foreign`] says why).
pub fn names_foreign(arg: &str) -> bool {
    foreign_listing()
        .is_some_and(|l| find_foreign(&l.rows, arg).is_some() || find_problem(&l, arg).is_some())
}

/// Another agent's session opened for reading ([`open_foreign`]).
pub struct ForeignDoc {
    /// The file it was read from (a subagent's own file; opencode: what its reader names).
    pub source: std::path::PathBuf,
    /// The session as the pi entries `arbor import` would write, in memory.
    pub doc: arbor_core::SessionDoc,
}

/// The other agent's session `arg` names, read in memory as the pi session `arbor import`
/// would make of it (`arbor_agents::open_as_doc`: nothing is written), or `None` when `arg`
/// names none. Says once on stderr that it is another agent's session read in memory (and
/// how to import it), and what the reader skipped, by file and line.
///
/// # Errors
/// The source cannot be read.
pub fn open_foreign(arg: &str) -> Result<Option<ForeignDoc>> {
    let Some(listing) = foreign_listing() else {
        return Ok(None);
    };
    let Some(r) = find_foreign(&listing.rows, arg) else {
        if let Some(p) = find_problem(&listing, arg) {
            anyhow::bail!(
                "{}: {} session file, not readable: {}",
                p.source.display(),
                agent_possessive(p.agent),
                p.problem
            );
        }
        return Ok(None);
    };
    let source = arbor_agents::open::source_of(r.agent, &r.source, &r.summary.id);
    let opened = arbor_agents::open_as_doc(&source, Some(&r.summary.id))?;
    say_err!(
        "arbor: {} session {} (\"{}\") is another agent's, read in memory as arbor import would make it (nothing written). To continue it in pi: {}",
        agent_possessive(r.agent),
        r.summary.id,
        shown_title(&r),
        r.import_command()
    );
    let shown = source.describe();
    for (line, problem) in opened.report.bad_lines.iter().take(5) {
        // opencode's rows have no line number (0): the problem names its row.
        match line {
            0 => say_err!("arbor: warning: {shown}: skipped: {problem}"),
            n => say_err!("arbor: warning: {shown}:{n}: skipped: {problem}"),
        }
    }
    if opened.report.bad_lines.len() > 5 {
        say_err!(
            "arbor: warning: {shown}: {} more bad lines skipped",
            opened.report.bad_lines.len() - 5
        );
    }
    for (kind, n) in &opened.report.unknown {
        say_err!(
            "arbor: warning: {shown}: {n} record(s) of a type arbor does not know skipped: {kind}"
        );
    }
    Ok(Some(ForeignDoc {
        // The session's own file (a Claude Code subagent's, opencode's database), as the
        // import's marker names it.
        source: opened.session.path,
        doc: opened.doc,
    }))
}

/// The shortest unique prefix (at least 8 characters) of each row's session id among
/// `rows`, in their order.
pub fn short_ids(rows: &[&ForeignRow]) -> Vec<String> {
    let mut ids: Vec<&str> = rows.iter().map(|r| r.summary.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    rows.iter()
        .map(|r| {
            let id = r.summary.id.as_str();
            let at = ids.partition_point(|k| *k < id);
            let common = |k: &str| {
                k.chars()
                    .zip(id.chars())
                    .take_while(|(a, b)| a == b)
                    .count()
            };
            let mut need = 0;
            if at > 0 {
                need = need.max(common(ids[at - 1]) + 1);
            }
            if let Some(k) = ids.get(at + 1) {
                need = need.max(common(k) + 1);
            }
            id.chars().take(need.max(8)).collect()
        })
        .collect()
}
