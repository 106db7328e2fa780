//! `arbor import claude|codex|opencode SESSION… | --all [--project DIR] [--omp]`: parses the
//! arguments and prints; the reading and the writing are arbor-agents'.
use crate::cli::ImportAgent;
use anyhow::{Context, Result};
use arbor_agents::import::{Imported, Options, Outcome};
use arbor_agents::sources::{self, Source};
use arbor_agents::Agent;
use arbor_core::json::{JsonArray, JsonObject};
use arbor_core::Dialect;
use arbor_store::locate::Locator;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

#[allow(clippy::too_many_arguments)]
pub fn import(
    agent: ImportAgent,
    args: &[String],
    all: bool,
    project: Option<&Path>,
    omp: bool,
    from: Option<&Path>,
    json: bool,
    loc: &Locator,
) -> Result<ExitCode> {
    let agent = match agent {
        ImportAgent::Claude => Agent::Claude,
        ImportAgent::Codex => Agent::Codex,
        ImportAgent::Opencode => Agent::Opencode,
    };
    let root = from.map_or_else(|| sources::default_root(agent), Path::to_path_buf);
    let dialect = if omp { Dialect::Omp } else { Dialect::Pi };
    let opts = options(dialect, loc)?;
    let mut failed = false;
    let mut todo: Vec<Source> = Vec::new();
    if all {
        todo = sources::all(agent, &root)?;
        if todo.is_empty() {
            say_err!("arbor: no {agent} sessions under {}", root.display());
        }
    } else {
        for a in args {
            match sources::resolve(agent, &root, a) {
                Ok(s) => todo.push(s),
                Err(e) => {
                    say_err!("arbor: {e}");
                    failed = true;
                }
            }
        }
    }
    let project = project.map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()));
    let mut done: Vec<Imported> = Vec::new();
    for src in &todo {
        let session = match src.read() {
            Ok(s) => s,
            Err(e) => {
                say_err!("arbor: {}: not imported: {e}", src.describe());
                failed = true;
                continue;
            }
        };
        if let Some(p) = &project {
            if session.cwd.as_deref().map(Path::new) != Some(p.as_path()) {
                continue;
            }
        }
        if session.nodes.is_empty() && session.children.is_empty() {
            if !all {
                say_err!("arbor: {}: no messages: not imported", src.describe());
            }
            continue;
        }
        match arbor_agents::import::import(&session, &opts) {
            Ok(i) => {
                if !json {
                    print_one(&i, 0);
                }
                done.push(i);
            }
            Err(e) => {
                say_err!("arbor: {}: not imported: {e}", src.describe());
                failed = true;
            }
        }
    }
    if json {
        let mut out = Vec::new();
        let mut arr = JsonArray::new(&mut out);
        for i in &done {
            arr.object(|o| json_one(o, i));
        }
        arr.finish();
        out.push(b'\n');
        let mut stdout = crate::report::stdout();
        stdout.write_all(&out)?;
        stdout.flush()?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Where and how `arbor import` writes (the browser's resume of another agent's session
/// imports with these too): `dialect`'s layout under the agent directory (`--agent-dir`
/// when given), the current directory for a session that recorded no cwd.
pub(crate) fn options(dialect: Dialect, loc: &Locator) -> Result<Options> {
    let cwd = std::env::current_dir()
        .context("current directory")?
        .to_string_lossy()
        .into_owned();
    Ok(Options {
        dialect,
        agent_dir: loc
            .agent_override()
            .map_or_else(|| arbor_store::paths::agent_dir(dialect), Path::to_path_buf),
        fallback_cwd: cwd,
    })
}

fn outcome(o: &Outcome) -> (&'static str, usize) {
    match o {
        Outcome::Created => ("created", 0),
        Outcome::Appended(n) => ("appended", *n),
        Outcome::UpToDate => ("up to date", 0),
    }
}

fn print_one(i: &Imported, depth: usize) {
    let pad = "  ".repeat(depth);
    let what = match &i.outcome {
        Outcome::Created => format!("imported ({} entries)", i.entries),
        Outcome::Appended(n) => format!("appended {n} new entries"),
        Outcome::UpToDate => "already imported, nothing new".to_string(),
    };
    let sub = if depth > 0 { "subagent " } else { "" };
    say!(
        "{pad}{} {sub}{}: {what} -> {}",
        i.agent,
        i.source_id,
        i.file.display()
    );
    if i.changed > 0 {
        say_err!(
            "{pad}arbor: {}: {} entries imported before have changed in the source since; they are left as they were",
            i.file.display(),
            i.changed
        );
    }
    for (line, problem) in &i.report.bad_lines {
        if *line > 0 {
            say_err!("arbor: {}:{line}: {problem}", i.source.display());
        } else {
            say_err!("arbor: {}: {problem}", i.source.display());
        }
    }
    if !i.report.unknown.is_empty() {
        let kinds: Vec<String> = i
            .report
            .unknown
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        say_err!(
            "arbor: {}: record types arbor does not know, skipped: {}",
            i.source.display(),
            kinds.join(", ")
        );
    }
    for c in &i.children {
        print_one(c, depth + 1);
    }
}

fn json_one(o: &mut JsonObject<'_>, i: &Imported) {
    let (what, n) = outcome(&i.outcome);
    o.str("agent", i.agent.name())
        .str("sourceId", &i.source_id)
        .str("source", &i.source.to_string_lossy())
        .str("file", &i.file.to_string_lossy())
        .str("outcome", what)
        .uint("appended", n as u64)
        .uint("entries", i.entries as u64)
        .uint("changed", i.changed as u64)
        .array("badLines", |a| {
            for (line, p) in &i.report.bad_lines {
                a.object(|b| {
                    b.uint("line", *line).str("problem", p);
                });
            }
        })
        .object("unknown", |u| {
            for (k, n) in &i.report.unknown {
                u.uint(k, *n);
            }
        })
        .array("children", |a| {
            for c in &i.children {
                a.object(|b| json_one(b, c));
            }
        });
}
