//! Dynamic shell completion: session ids where a command takes a SESSION, entry ids after
//! `--at`, `--leaf` and `--parent`. The scripts `arbor completions bash|zsh|fish` prints call
//! `arbor __complete INDEX WORD...` (the command line's words and the index of the one under
//! the cursor): candidates one per line and exit status 0 where arbor knows the values, exit
//! status 1 and nothing printed where the shell's own completion (flags, subcommands, files)
//! is to answer. It never prints to stderr: nothing it meets lands in the shell's line.
use crate::cli::Cli;
use arbor_store::locate::{id_of_file_name, Locator};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// The hidden subcommand the completion scripts call.
pub const SUBCOMMAND: &str = "__complete";

/// Commands whose every positional argument is a SESSION.
const SESSION_ARGS: &[&str] = &[
    "show", "tree", "context", "fork", "export", "rm", "migrate", "check", "stats", "secrets",
];
/// Commands whose first positional argument is a SESSION.
const FIRST_SESSION_ARG: &[&str] = &["append", "name"];
/// Flags whose value is an entry id of the command's SESSION.
const ENTRY_FLAGS: &[&str] = &["at", "leaf", "parent"];
/// At most this many candidates (a shell shows no more usefully).
const MAX: usize = 500;

/// What the cursor is on.
#[derive(Debug, PartialEq, Eq)]
enum Slot {
    /// A SESSION argument.
    Session,
    /// An entry id of this SESSION argument.
    Entry(Option<String>),
    /// Anything else: the static script's.
    Other,
}

/// `arbor __complete INDEX WORD...`: see the module's comment.
pub fn run(args: &[OsString]) -> ExitCode {
    let words: Vec<String> = args
        .iter()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let Some(index) = args
        .first()
        .and_then(|i| i.to_str())
        .and_then(|i| i.parse::<usize>().ok())
    else {
        return ExitCode::FAILURE;
    };
    let cur = words.get(index).map(String::as_str).unwrap_or("");
    let before = &words[1.min(words.len())..index.min(words.len())];
    let (slot, agent_dir) = slot(before, cur);
    let loc = Locator::new(agent_dir);
    let candidates = match slot {
        Slot::Session => session_ids(&loc, cur),
        Slot::Entry(Some(session)) => entry_ids(&loc, &session, cur),
        Slot::Entry(None) => Vec::new(),
        Slot::Other => return ExitCode::FAILURE,
    };
    let mut out = String::new();
    for c in candidates.iter().filter(|c| plain(c)).take(MAX) {
        out.push_str(c);
        out.push('\n');
    }
    use std::io::Write;
    let mut stdout = crate::report::stdout();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    ExitCode::SUCCESS
}

/// Whether a candidate may reach the shell: letters, digits, `.`, `_`, `-` (every id pi, omp
/// and arbor make). A file name is anyone's to choose: one holding `$(...)`, a quote, a space
/// or a newline is never offered (bash's `compgen -W` would expand it, a newline would split
/// it into two candidates).
fn plain(c: &str) -> bool {
    !c.is_empty()
        && c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Which slot the word after `before` is, and the `--agent-dir` the line names.
fn slot(before: &[String], cur: &str) -> (Slot, Option<PathBuf>) {
    let top = <Cli as clap::CommandFactory>::command();
    let mut sub: Option<&clap::Command> = None;
    let mut positionals: Vec<&str> = Vec::new();
    let mut agent_dir = None;
    let mut i = 0;
    let mut only_positionals = false;
    while i < before.len() {
        let w = before[i].as_str();
        let flag = if only_positionals {
            None
        } else if w == "--" {
            only_positionals = true;
            i += 1;
            continue;
        } else if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            Some((
                find(sub, &top, |a| a.get_long() == Some(name)),
                name,
                inline,
            ))
        } else if w.len() == 2 && w.starts_with('-') {
            let c = w.chars().nth(1);
            Some((find(sub, &top, |a| a.get_short() == c), "", None))
        } else {
            None
        };
        match flag {
            Some((arg, name, inline)) => {
                let takes = arg.is_some_and(|a| {
                    a.get_action().takes_values()
                        && a.get_num_args().is_none_or(|n| n.min_values() > 0)
                });
                if takes && inline.is_none() {
                    match before.get(i + 1) {
                        Some(v) => {
                            if name == "agent-dir" {
                                agent_dir = Some(PathBuf::from(v));
                            }
                            i += 2;
                            continue;
                        }
                        // The cursor is on this flag's value.
                        None => {
                            let of = sub.map(clap::Command::get_name).unwrap_or("");
                            let entry = ENTRY_FLAGS.contains(&name)
                                && (SESSION_ARGS.contains(&of) || FIRST_SESSION_ARG.contains(&of));
                            return if entry {
                                (
                                    Slot::Entry(positionals.first().map(|s| s.to_string())),
                                    agent_dir,
                                )
                            } else {
                                (Slot::Other, agent_dir)
                            };
                        }
                    }
                }
                if let (Some(v), "agent-dir") = (inline, name) {
                    agent_dir = Some(PathBuf::from(v));
                }
            }
            None if sub.is_none() => match top.find_subcommand(w) {
                Some(s) => sub = Some(s),
                None => return (Slot::Other, agent_dir),
            },
            None => positionals.push(w),
        }
        i += 1;
    }
    let Some(name) = sub.map(clap::Command::get_name) else {
        return (Slot::Other, agent_dir);
    };
    if cur.starts_with('-') && !only_positionals {
        return (Slot::Other, agent_dir);
    }
    let session = SESSION_ARGS.contains(&name)
        || (FIRST_SESSION_ARG.contains(&name) && positionals.is_empty());
    (if session { Slot::Session } else { Slot::Other }, agent_dir)
}

/// The argument of the subcommand (else of arbor itself: the global options) that `is` picks.
fn find<'a>(
    sub: Option<&'a clap::Command>,
    top: &'a clap::Command,
    is: impl Fn(&clap::Arg) -> bool,
) -> Option<&'a clap::Arg> {
    sub.and_then(|s| s.get_arguments().find(|a| is(a)))
        .or_else(|| top.get_arguments().find(|a| is(a)))
}

/// The ids of every session under the agent directories that start with `prefix` (in any
/// case, as the resolver matches them), newest file first. Only directory listings: no file
/// is opened.
fn session_ids(loc: &Locator, prefix: &str) -> Vec<String> {
    let prefix = prefix.to_lowercase();
    let mut files = loc.all_session_files();
    // pi and omp name files `<time>_<id>.jsonl`: by name, newest last.
    files.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    let mut out: Vec<String> = Vec::new();
    for f in files {
        if let Some(id) = id_of_file_name(&f) {
            if id.to_lowercase().starts_with(&prefix) && !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The entry ids of `session` that start with `prefix`, in file order.
fn entry_ids(loc: &Locator, session: &str, prefix: &str) -> Vec<String> {
    let Ok(path) = loc.resolve_session(session) else {
        return Vec::new();
    };
    let Ok(doc) = arbor_store::load_doc(&path) else {
        return Vec::new();
    };
    doc.entries()
        .iter()
        .filter_map(|e| e.id.as_deref())
        .filter(|id| id.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

/// The completion script of `shell`: clap's static one (subcommands, flags, values), with
/// the dynamic values of [`run`] in front of it for bash, zsh and fish.
pub fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "arbor", &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let text = match shell {
        clap_complete::Shell::Bash => {
            let hook = format!(
                r#"
# Session ids and entry ids (--at, --leaf, --parent): asked of arbor itself.
_arbor_dynamic() {{
    local out
    if out="$(arbor {SUBCOMMAND} "$COMP_CWORD" "${{COMP_WORDS[@]}}" 2>/dev/null)"; then
        # The candidates as they are (arbor matched them against the word): no expansion.
        COMPREPLY=()
        [[ -n "$out" ]] && mapfile -t COMPREPLY <<< "$out"
        return 0
    fi
    _arbor "$@"
}}
"#
            );
            let text = text.replace("complete -F _arbor ", "complete -F _arbor_dynamic ");
            format!("{text}{hook}")
        }
        clap_complete::Shell::Zsh => {
            let hook = format!(
                r#"
# Session ids and entry ids (--at, --leaf, --parent): asked of arbor itself.
_arbor_dynamic() {{
    local out
    if out="$(arbor {SUBCOMMAND} $((CURRENT - 1)) "${{words[@]}}" 2>/dev/null)"; then
        [[ -z "$out" ]] && return 1
        local -a ids
        ids=("${{(@f)out}}")
        compadd -a ids
        return
    fi
    _arbor_static "$@"
}}

if [ "$funcstack[1]" = "_arbor" ]; then
    _arbor_dynamic "$@"
else
    compdef _arbor_dynamic arbor
fi
"#
            );
            let tail = "if [ \"$funcstack[1]\" = \"_arbor\" ]; then";
            let body = match text.rfind(tail) {
                Some(at) => &text[..at],
                None => &text[..],
            };
            format!(
                "{}{hook}",
                body.replacen("_arbor() {", "_arbor_static() {", 1)
            )
        }
        clap_complete::Shell::Fish => format!(
            r#"{text}
# Session ids and entry ids (--at, --leaf, --parent): asked of arbor itself.
function __arbor_dynamic
    set -l words (commandline -opc)
    arbor {SUBCOMMAND} (count $words) $words (commandline -ct) 2>/dev/null
end
complete -c arbor -f -n '__arbor_dynamic >/dev/null' -a '(__arbor_dynamic)'
# fish completes an option's value only from that option's own completions.
complete -c arbor -l at -x -n '__arbor_dynamic >/dev/null' -a '(__arbor_dynamic)'
complete -c arbor -l leaf -x -n '__arbor_dynamic >/dev/null' -a '(__arbor_dynamic)'
complete -c arbor -l parent -x -n '__arbor_dynamic >/dev/null' -a '(__arbor_dynamic)'
"#
        ),
        _ => text,
    };
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: &[&str], cur: &str) -> Slot {
        let words: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        slot(&words, cur).0
    }

    #[test]
    fn slots() {
        assert_eq!(at(&["show"], "01"), Slot::Session);
        assert_eq!(at(&["--agent-dir", "/a", "show"], ""), Slot::Session);
        assert_eq!(at(&["show"], "--"), Slot::Other);
        assert_eq!(at(&[], "sh"), Slot::Other);
        assert_eq!(at(&["ls"], ""), Slot::Other);
        assert_eq!(
            at(&["fork", "01ab", "--at"], "e"),
            Slot::Entry(Some("01ab".into()))
        );
        assert_eq!(
            at(&["show", "--leaf"], ""),
            Slot::Entry(None),
            "no SESSION yet"
        );
        assert_eq!(at(&["export", "-o"], ""), Slot::Other, "a file");
        assert_eq!(at(&["export", "-o", "x.md"], "01"), Slot::Session);
        assert_eq!(at(&["append", "01ab"], ""), Slot::Other, "the body");
        assert_eq!(at(&["name"], "01"), Slot::Session);
        assert_eq!(at(&["show", "--full"], "01"), Slot::Session);
    }
}
