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
    in_scope_with(cat, scope, tool, true)
}

/// [`in_scope`], saying nothing on stderr when `say` is false (the terminal browser, whose
/// screen a line on stderr would garble; it shows the rows).
pub fn in_scope_with(
    cat: &mut Catalog,
    scope: Scope<'_>,
    tool: Option<Tool>,
    say: bool,
) -> Result<ForeignListing> {
    let only = match tool {
        Some(t) => match foreign_agent(t) {
            Some(a) => Some(a),
            None => return Ok(ForeignListing::default()),
        },
        None => None,
    };
    if matches!(scope, Scope::Dir(_)) {
        return Ok(ForeignListing::default());
    }
    let mut got = cat.refresh_foreign_with(&ForeignRoots::from_env(), only, &mut |n, bytes| {
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
    if matches!(scope, Scope::Current) {
        let here = current_dirs();
        got.rows.retain(|r| here.contains(&r.summary.cwd));
    }
    Ok(got)
}

/// The current directory as the agents record a cwd: as the process sees it, and its real
/// path.
fn current_dirs() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(d) = std::env::current_dir() {
        out.push(d.to_string_lossy().into_owned());
        if let Ok(real) = std::fs::canonicalize(&d) {
            let real = real.to_string_lossy().into_owned();
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    if let Some(pwd) = std::env::var_os("PWD") {
        let pwd = pwd.to_string_lossy().into_owned();
        if !out.contains(&pwd)
            && std::fs::canonicalize(&pwd).ok()
                == std::env::current_dir()
                    .ok()
                    .and_then(|d| std::fs::canonicalize(d).ok())
        {
            out.push(pwd);
        }
    }
    out
}

/// When one of a failed command's arguments names another agent's session (its file, or its
/// id or an id prefix of 6 characters or more), what to say: it is that agent's, arbor only
/// reads it, and `arbor import` makes a pi session of it. Looks in the catalog's rows
/// (refreshed: sources are only read).
pub fn foreign_hint(args: &[String]) -> Option<String> {
    let mut cat = super::index::open_catalog(None).ok()?;
    let rows = cat
        .refresh_foreign(&ForeignRoots::from_env(), None)
        .ok()?
        .rows;
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let real = std::fs::canonicalize(a).ok();
        let hit = rows.iter().find(|r| {
            r.summary.id == *a
                || (a.len() >= 6 && r.summary.id.starts_with(a.as_str()))
                || (real.is_some()
                    && r.agent != Agent::Opencode
                    && std::fs::canonicalize(&r.source).ok() == real)
        });
        if let Some(r) = hit {
            return Some(format!(
                "arbor: {a} is {} session {} (\"{}\"), another agent's: arbor only reads it (ls, search, stats, mcp) and never writes into it. To continue it in pi: arbor import {} {}, then pi --session on the file it writes",
                match r.agent {
                    Agent::Claude => "Claude Code's",
                    Agent::Codex => "Codex's",
                    Agent::Opencode => "opencode's",
                },
                r.summary.id,
                arbor_view::one_line(r.display_title(), 60),
                r.agent,
                if r.summary.parent_id.is_some() && r.agent == Agent::Claude {
                    r.summary.parent_id.clone().unwrap_or_default()
                } else {
                    r.summary.id.clone()
                }
            ));
        }
    }
    None
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
