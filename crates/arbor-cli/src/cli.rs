//! Command-line arguments.
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

const TOUR: &str = "\
Examples:
  arbor ls                       sessions of the current project, newest first
  arbor show 01a2f3              the conversation of a session (id prefix from ls)
  arbor tree 01a2f3              its branches
  arbor fork 01a2f3 --at e4b1    a new session ending at entry e4b1
  arbor search 'walrus NOT test' full-text search
  arbor rm 01a2f3                move a session to the trash

SESSION is a path, or a session id or unique id prefix under the agent directories.";

/// The heading the options every command takes are listed under, after each command's own.
pub const GLOBAL: &str = "Global options";

#[derive(Parser, Debug)]
#[command(
    name = "arbor",
    version,
    about = "Read, write, repair, index and search pi / oh-my-pi session files",
    after_help = TOUR
)]
pub struct Cli {
    /// Agent directory (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent and ~/.omp/agent).
    #[arg(long, global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub agent_dir: Option<PathBuf>,
    /// Colour: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto", help_heading = GLOBAL)]
    pub color: crate::term::ColorWhen,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--catalog`, on the commands that use the catalog.
#[derive(Args, Debug, Clone)]
pub struct CatalogOpt {
    /// Session catalog database (default: $ARBOR_CATALOG, else $XDG_CACHE_HOME/arbor/catalog.db).
    #[arg(long, value_name = "PATH")]
    pub catalog: Option<PathBuf>,
}

/// Which sessions a command that reads many looks at: `--dir`, `--all`, or (neither) the
/// current project's. `ls`, `search`, `stats`, `check`, `secrets` and every command that takes
/// a SESSION share it, so that the same flags mean the same sessions everywhere.
#[derive(Args, Debug, Clone, Default)]
pub struct ScopeOpts {
    /// The sessions of this directory (default: the current project's, of pi and omp); a
    /// SESSION id is resolved there (the ids `ls --dir DIR` prints), and without a SESSION
    /// its newest is taken.
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub dir: Option<PathBuf>,
    /// Every project of every agent directory (pi's and omp's); a SESSION id is resolved over
    /// all of them, the current project not preferred.
    #[arg(short = 'a', long)]
    pub all: bool,
}

impl ScopeOpts {
    /// The scope the flags name.
    pub fn scope(&self) -> arbor_store::locate::Scope<'_> {
        arbor_store::locate::Scope::of(self.dir.as_deref(), self.all)
    }

    /// Whether `--dir` or `--all` was given.
    pub fn named(&self) -> bool {
        self.dir.is_some() || self.all
    }

    /// `loc` resolving SESSION ids (and picking the newest session) in this scope.
    pub fn apply(&self, loc: &arbor_store::locate::Locator) -> arbor_store::locate::Locator {
        loc.clone().scoped(self.dir.clone(), self.all)
    }
}

/// `--wait`, on the commands that take the writer lock.
#[derive(Args, Debug, Clone)]
pub struct WaitOpt {
    /// Wait for another writer instead of failing at once: 30 s, or `--wait=SECONDS`.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, require_equals = true, default_missing_value = "30", value_parser = crate::args::seconds)]
    pub wait: Option<Duration>,
}

#[derive(Args, Debug, Clone)]
pub struct WriteOpts {
    /// When appended entries reach the disk: none, flush (default), strict (fdatasync per entry).
    #[arg(long, default_value = "flush", value_name = "POLICY")]
    pub durability: arbor_store::Durability,
    #[command(flatten)]
    pub wait: WaitOpt,
}

/// How `show` prints.
#[derive(Args, Debug, Clone)]
pub struct ShowOpts {
    /// Only what the model sees (the context), not the whole path.
    #[arg(long)]
    pub context: bool,
    /// Print tool output and thinking in full (default: folded to a few lines).
    #[arg(long)]
    pub full: bool,
    /// Leave tool calls, tool results and bash output out.
    #[arg(long)]
    pub no_tools: bool,
    /// Leave thinking out.
    #[arg(long)]
    pub no_thinking: bool,
    /// JSON output: the entries of the path (or, with --context, the context's messages).
    #[arg(long)]
    pub json: bool,
    /// Never start a pager ($PAGER, else less) even when the output is taller than the screen.
    #[arg(long)]
    pub no_pager: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The full-screen browser: pick a session (type to search every word said), open its
    /// tree, resume it in pi or omp, continue from an entry or fork at a message. `arbor` alone
    /// on a terminal opens it too.
    #[command(
        after_help = "Picker: type to search (fuzzy titles and first messages, full text: words, \"phrases\",\nprefix*, re:regex), ↑↓ move, Enter tree, ^R resume, Tab this project / all, ^S sort\n(recent, created, threaded, relevance), ^E rename, ^D delete to the trash, ^Y copy path,\n^T copy id, Esc clear / quit.\nTree: ↑↓ move, ←→ fold, / search, f or 1-5 filter, L label, Enter continue from here, r\nresume, F fork at a user message, Esc back.\nResume runs `pi --session PATH` (omp files: `omp --session PATH`); $ARBOR_PI and $ARBOR_OMP\nreplace those commands.\nClaude Code, Codex and opencode sessions are listed too (TOOL claude, codex, opencode): only\nread; Enter shows them as arbor import would make them, ^R (or r in the tree) imports one\ninto pi's sessions and resumes the copy; rename, delete, fork and label are refused.\n\nExamples:\n  arbor\n  arbor browse --all walrus\n  arbor browse --all --agent claude"
    )]
    Browse {
        /// Start with every project (Tab switches).
        #[arg(long)]
        all: bool,
        /// Start searching for this.
        query: Option<String>,
        /// Only this agent's sessions: pi, omp, claude, codex or opencode (as arbor ls).
        #[arg(long, visible_alias = "tool", value_name = "AGENT")]
        agent: Option<Tool>,
        #[command(flatten)]
        catalog: CatalogOpt,
        /// Benchmark: time the browser typing this query, without a terminal (JSON).
        #[arg(long, hide = true, value_name = "QUERY")]
        measure: Option<String>,
        /// Benchmark: also time opening, scrolling and folding this session's tree.
        #[arg(long, hide = true, value_name = "SESSION", requires = "measure")]
        measure_tree: Option<PathBuf>,
    },
    /// Print the context pi builds for a leaf (pi's buildSessionContext), as JSON.
    #[command(
        after_help = "Examples:\n  arbor context 01a2f3\n  arbor context 01a2f3 --leaf e4b1 --llm"
    )]
    Context {
        /// Session file path, or session id / unique id prefix (default: this project's newest).
        session: Option<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Leaf entry id (default: the leaf pi picks on open, the last entry).
        #[arg(long)]
        leaf: Option<String>,
        /// Apply pi's convertToLlm to the messages.
        #[arg(long)]
        llm: bool,
        /// Leave a missing or corrupt blob reference in place (reported on stderr) instead of failing.
        #[arg(long)]
        lenient: bool,
        /// For omp sessions: follow omp VERSION's rules (18.3, the default, or 18.2).
        #[arg(long, value_name = "VERSION", default_value = "18.3")]
        omp_version: arbor_core::context::OmpVersion,
    },
    /// Print the session tree: branches, labels, the current path and the leaf.
    #[command(
        after_help = "Entries between user messages are folded into one line unless --full.\n\nExamples:\n  arbor tree 01a2f3\n  arbor tree 01a2f3 --full --color=always | less -R"
    )]
    Tree {
        /// Session file path, or session id / unique id prefix (default: this project's newest).
        session: Option<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Every entry on its own line (default: runs of entries between user messages folded).
        #[arg(long)]
        full: bool,
        /// JSON output: {leaf, roots, nodes} in depth-first order.
        #[arg(long)]
        json: bool,
        /// Never start a pager.
        #[arg(long)]
        no_pager: bool,
    },
    /// Print the conversation on the path to the leaf, readable.
    #[command(
        after_help = "Examples:\n  arbor show 01a2f3\n  arbor show 01a2f3 --context --no-tools\n  arbor show 01a2f3 --leaf e4b1 --full"
    )]
    Show {
        /// Session file path, or session id / unique id prefix (default: this project's newest).
        session: Option<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Leaf entry id (default: the session's leaf).
        #[arg(long)]
        leaf: Option<String>,
        #[command(flatten)]
        opts: ShowOpts,
        /// Leave a missing or corrupt blob reference in place (reported on stderr) instead of failing.
        #[arg(long)]
        lenient: bool,
        /// For omp sessions: follow omp VERSION's rules (18.3, the default, or 18.2).
        #[arg(long, value_name = "VERSION", default_value = "18.3")]
        omp_version: arbor_core::context::OmpVersion,
    },
    /// List sessions, newest first.
    #[command(
        after_help = "Each row starts with the session's shortest unique id prefix, which show, tree,\ncontext, fork and rm take.\n\nExamples:\n  arbor ls\n  arbor ls --all --long\n  arbor ls --dir ~/.pi/agent/sessions/--home-me-app-- --json"
    )]
    Ls {
        #[command(flatten)]
        scope: ScopeOpts,
        /// Also show each session's project (cwd) and file.
        #[arg(short = 'l', long)]
        long: bool,
        /// At most N sessions (the newest).
        #[arg(short = 'n', long, value_name = "N")]
        limit: Option<usize>,
        /// Only sessions active since a date (2025-01-31), a date-time, or a span back (30m,
        /// 12h, 7d, 2w).
        #[arg(long, value_name = "DATE", value_parser = crate::args::since)]
        since: Option<crate::args::Since>,
        /// Only this agent's sessions: pi, omp, claude, codex or opencode.
        #[arg(long, visible_alias = "agent", value_name = "AGENT")]
        tool: Option<Tool>,
        /// Only sessions whose title (name) or first message holds TEXT, in any case.
        #[arg(long, value_name = "TEXT")]
        grep: Option<String>,
        /// Order: modified (last activity, the default), created, size (largest first) or name
        /// (the title, A to Z); dates newest first.
        #[arg(long, value_name = "KEY", default_value = "modified")]
        sort: LsSort,
        /// Reverse the order.
        #[arg(long)]
        reverse: bool,
        /// JSON output: an array of SessionInfo objects (omp's for omp directories, else pi's).
        #[arg(long)]
        json: bool,
        /// Include pi's allMessagesText in JSON output.
        #[arg(long)]
        all_text: bool,
        /// List with omp's rules (order, age, JSON objects), whatever the directory.
        #[arg(long, conflicts_with = "pi")]
        omp: bool,
        /// List with pi's rules (order, age, JSON objects), whatever the directory.
        #[arg(long)]
        pi: bool,
        #[command(flatten)]
        catalog: CatalogOpt,
    },
    /// Bring the session catalog up to date with every session of the agent directories.
    #[command(
        after_help = "Examples:\n  arbor index\n  arbor index --rebuild --thinking --tools\n  arbor index --watch &"
    )]
    Index {
        /// Start from an empty catalog.
        #[arg(long)]
        rebuild: bool,
        /// Also index assistant thinking (kept for later runs).
        #[arg(long)]
        thinking: bool,
        /// Also index tool results and bash output (kept for later runs).
        #[arg(long)]
        tools: bool,
        /// JSON output: what was done.
        #[arg(long)]
        json: bool,
        /// Keep running: keep the catalog fresh through inotify, so that `ls`, `search` and
        /// the browser trust it instead of looking at every session file (Ctrl-C stops).
        #[arg(long)]
        watch: bool,
        #[command(flatten)]
        catalog: CatalogOpt,
    },
    /// Full-text search across sessions (FTS5: words, "phrases", prefix*, AND/OR/NOT, NEAR).
    #[command(
        after_help = "Exit status: 0 with matches, 1 with none (like grep), 2 for a query or flag arbor\ncannot use.\n\nExamples:\n  arbor search walrus\n  arbor search '\"exact phrase\" OR pref*' --all --role user --since 7d\n  arbor search timeout --tools --json"
    )]
    Search {
        /// The query.
        query: String,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Only these kinds of text: user, assistant, thinking, toolResult, bashExecution, tool,
        /// compaction, branchSummary, summary, name, label, system, contextEdit (repeatable or
        /// comma-separated).
        #[arg(long, value_name = "ROLE")]
        role: Vec<String>,
        /// Only entries since a date (2025-01-31), a date-time, or a span back (30m, 12h, 7d, 2w).
        #[arg(long, value_name = "DATE", value_parser = crate::args::since)]
        since: Option<crate::args::Since>,
        /// Also search assistant thinking (indexed on first use).
        #[arg(long)]
        thinking: bool,
        /// Also search tool results and bash output (indexed on first use).
        #[arg(long)]
        tools: bool,
        /// At most N hits (1 to 1,000,000).
        #[arg(long, default_value = "20", value_name = "N", value_parser = crate::args::hits)]
        limit: usize,
        /// Rank every match (default: a query matching more than 2,000 texts is ranked among the
        /// newest 2,000).
        #[arg(long)]
        rank_all: bool,
        /// Count every match past --limit (default: up to 1,000; more are reported as "more
        /// than 1000").
        #[arg(long)]
        count_all: bool,
        /// Also print each hit's session file and the time of its entry.
        #[arg(long)]
        long: bool,
        /// JSON output: {hits: [{path, sessionId, entryId, role, timestamp, onCurrentBranch,
        /// snippet, highlights, sessionName, agent?}], more, moreCapped?}.
        #[arg(long)]
        json: bool,
        /// Only this agent's sessions: pi, omp, claude, codex or opencode.
        #[arg(long, visible_alias = "tool", value_name = "AGENT")]
        agent: Option<Tool>,
        #[command(flatten)]
        catalog: CatalogOpt,
    },
    /// Prompt history from omp's history.db (newest first), or prompts matching QUERY.
    #[command(
        after_help = "Examples:\n  arbor history\n  arbor history 'migrate walrus' --limit 5\n  arbor history --add 'run the tests' --cwd ~/app"
    )]
    History {
        /// Words that must all appear (as word prefixes or anywhere in the prompt).
        query: Option<String>,
        /// At most N prompts (up to 1000).
        #[arg(long, default_value = "100", value_name = "N", value_parser = crate::args::history_limit)]
        limit: f64,
        /// Record a prompt instead (as omp does when one is submitted).
        #[arg(long, value_name = "PROMPT", conflicts_with = "query")]
        add: Option<String>,
        /// With --add: the working directory recorded (default: the current one).
        #[arg(long, requires = "add")]
        cwd: Option<String>,
        /// With --add: the session id recorded.
        #[arg(long, requires = "add")]
        session: Option<String>,
        /// JSON output: [{id, prompt, created_at, cwd?, sessionId?}] as omp's HistoryEntry.
        #[arg(long)]
        json: bool,
    },
    /// Create a new session and print its path.
    #[command(
        after_help = "Examples:\n  arbor new --cwd ~/app\n  arbor new --omp --id my-session"
    )]
    New {
        /// Directory for the session file (default: the cwd's directory under the agent dir).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Working directory recorded in the header (default: the current directory).
        #[arg(long)]
        cwd: Option<String>,
        /// Write in omp's dialect (UUIDv7 session id, omp key orders).
        #[arg(long)]
        omp: bool,
        /// The session id (pi 1.5's `--session-id`; default: a new UUIDv7). Letters, digits,
        /// `.`, `_` and `-`, starting and ending with a letter or digit.
        #[arg(long)]
        id: Option<String>,
    },
    /// Append entries as pi's SessionManager would (id, parentId, timestamp assigned); prints new ids.
    #[command(
        after_help = "A body pi would not read back (an unknown type, a message with an unknown role or\nwithout a timestamp) is refused unless --raw.\n\nExamples:\n  arbor append 01a2f3 '{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1767225600000}}'\n  jq -c '.[]' bodies.json | arbor append 01a2f3 -"
    )]
    Append {
        /// Session file path, or session id / unique id prefix.
        session: String,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Parent of the (first) new entry (default: the session's leaf).
        #[arg(long, conflicts_with = "root")]
        parent: Option<String>,
        /// Start a new root (parentId null).
        #[arg(long)]
        root: bool,
        /// The entry body as JSON ({"type": ..., ...}), or - to read one body per stdin line.
        body: String,
        /// Write bodies arbor does not recognise as pi entries too (unknown types or roles).
        #[arg(long)]
        raw: bool,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Upgrade sessions to format v3 (atomic rewrite; unchanged lines stay byte-identical).
    #[command(
        after_help = "Examples:\n  arbor migrate 01a2f3 --dry-run\n  arbor migrate ~/.pi/agent/sessions/*/*.jsonl"
    )]
    Migrate {
        /// Sessions (paths, ids or id prefixes).
        #[arg(required = true)]
        sessions: Vec<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Only report what would change.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Name a session: pi files get a session_info entry; omp files a title_change entry and their
    /// 256-byte title slot rewritten in place. Prints the new entry's id.
    #[command(
        after_help = "A name that is empty or only whitespace is refused (pi keeps the name trimmed and\nnever stores an empty one).\n\nExample:\n  arbor name 01a2f3 'walrus migration'"
    )]
    Name {
        /// Session file path, or session id / unique id prefix.
        session: String,
        #[command(flatten)]
        scope: ScopeOpts,
        /// The new name (not empty).
        name: String,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Verify sessions: header, malformed lines, torn tail, duplicate ids, missing parents, cycles,
    /// compactions off path, blobs. Exit status 1 when problems remain.
    #[command(
        after_help = "Without SESSION: the current project's sessions (--dir DIR: a directory's, --all:\nevery project's). Prints the problems found and a one-line summary (--verbose: every\nfile).\n\nExamples:\n  arbor check\n  arbor check --all --verbose\n  arbor check 01a2f3 --repair --wait=10"
    )]
    Check {
        /// Sessions (paths, ids or id prefixes); none: the sessions of the scope.
        sessions: Vec<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Also list every healthy file (default: only problems and a summary).
        #[arg(long)]
        verbose: bool,
        /// Fix what can be fixed without losing a byte (removed bytes go to a quarantine sidecar).
        #[arg(long)]
        repair: bool,
        /// JSON output: one report object per session, in an array.
        #[arg(long)]
        json: bool,
        /// Do not read blobs.
        #[arg(long)]
        no_blobs: bool,
        #[command(flatten)]
        wait: WaitOpt,
    },
    /// Remove blobs no session refers to (a dry run unless --yes).
    #[command(
        after_help = "Example:\n  arbor gc --blobs          (report)\n  arbor gc --blobs --yes    (remove)"
    )]
    Gc {
        /// Collect unreferenced blobs of the agent directory's blob store.
        #[arg(long, required = true)]
        blobs: bool,
        /// Really remove them (default: only report).
        #[arg(long)]
        yes: bool,
        /// Keep blobs younger than SECONDS (a writer stores a blob just before the line naming it).
        #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = crate::args::seconds)]
        min_age: Duration,
        /// Also scan session files under DIR for references (repeatable).
        #[arg(long, value_name = "DIR")]
        sessions_dir: Vec<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Copy a session into a new one (pi's --fork), or only the path to an entry (pi's /fork);
    /// prints the new session's path and id.
    #[command(
        after_help = "The new session's parentSession names the source. Without --at the whole tree is\ncopied; with --at ID the new session holds the path from the root to ID (labels of\nthose entries kept), and continues from ID.\n\nExamples:\n  arbor fork 01a2f3\n  arbor fork 01a2f3 --at e4b1 --cwd ~/other-project"
    )]
    Fork {
        /// Session file path, or session id / unique id prefix (default: this project's newest).
        session: Option<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// The entry the new session ends at (default: copy every entry).
        #[arg(long, value_name = "ID")]
        at: Option<String>,
        /// The new session's working directory and project (default: the source's own).
        #[arg(long, value_name = "DIR")]
        cwd: Option<String>,
        /// JSON output: {path, id, parentSession}.
        #[arg(long)]
        json: bool,
        /// Then resume the new session in its agent (pi --session PATH, omp --session PATH).
        #[arg(long, conflicts_with = "json")]
        resume: bool,
        /// Redact secrets in the copy (a session to hand to someone; pi and omp open it).
        #[arg(long)]
        redact: bool,
        #[command(flatten)]
        wait: WaitOpt,
    },
    /// Move sessions (with their lock, repair sidecars and omp artifact directory) to the trash.
    #[command(
        after_help = "Nothing is deleted: `arbor trash restore` brings a session back. --force removes\nthe files for good instead.\n\nExamples:\n  arbor rm 01a2f3\n  arbor trash list"
    )]
    Rm {
        /// Sessions (paths, ids or id prefixes).
        #[arg(required = true)]
        sessions: Vec<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Delete for good instead of moving to the trash.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        wait: WaitOpt,
    },
    /// The sessions `arbor rm` moved to the trash: list, restore, empty.
    #[command(subcommand)]
    Trash(TrashCommand),
    /// Export a session as Markdown (stable, for git and bug reports) or as arbor's JSON, with
    /// secrets redacted.
    #[command(
        after_help = "Markdown: the path to the leaf (every branch with --tree, each under its own heading),\ntool calls and results as fenced blocks, thinking in <details>, images written once to\nFILE.assets/ and linked (placeholders on stdout). JSON: {format: \"arbor-export/1\",\nsessionId, file, cwd, name, tool, redacted, entries: [{id, parentId, type, timestamp, role,\nmodel, toolName, stopReason, text, thinking, toolCalls, isError, usage}]}.\nSecrets become [REDACTED:kind] unless --no-redact; the session file is never changed.\nFILE is private (0600, FILE.assets/ 0700) and replaces only an earlier export (--force: any\nfile but the session).\n\nExamples:\n  arbor export 01a2f3 -o walrus.md\n  arbor export 01a2f3 --tree --format json -o walrus.json"
    )]
    Export {
        /// Session file path, or session id / unique id prefix (default: this project's newest).
        session: Option<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Export the path to this entry (default: the session's leaf).
        #[arg(long, conflicts_with = "tree")]
        leaf: Option<String>,
        /// Every branch, not only the path to the leaf.
        #[arg(long)]
        tree: bool,
        /// md, html (one self-contained page of the whole tree) or json.
        #[arg(long, value_name = "FORMAT", default_value = "md")]
        format: ExportFormat,
        /// Write to FILE (images next to it in FILE.assets/) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Keep secrets as they are.
        #[arg(long)]
        no_redact: bool,
        /// Leave a corrupt or malformed blob reference in place (reported on stderr) instead of
        /// failing.
        #[arg(long)]
        lenient: bool,
        /// Replace an existing FILE that no earlier export wrote (never the session itself).
        #[arg(long, requires = "output")]
        force: bool,
    },
    /// Tokens and cost: the path each session resumes apart from the branches it left, pi 1.5's
    /// usage entries (summaries) apart, a fork's copies of its parent's turns counted once.
    #[command(
        after_help = "Without SESSION, --dir or --all: the current project's sessions. COST PATH is the\ncurrent path and the summaries; BRANCHES what went into branches that were left.\n\nExamples:\n  arbor stats\n  arbor stats --all --by month\n  arbor stats 01a2f3 --json"
    )]
    Stats {
        /// Sessions (paths, ids or id prefixes).
        sessions: Vec<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// Group by session, day, week, month, model, project or agent.
        #[arg(long, value_name = "WHAT", default_value = "session")]
        by: crate::cmd::stats::By,
        /// Only turns since a date (2025-01-31), a date-time, or a span back (30m, 12h, 7d, 2w).
        #[arg(long, value_name = "DATE", value_parser = crate::args::since)]
        since: Option<crate::args::Since>,
        /// JSON output: {by, sessions, forkCopiesSkipped, rows: [{group, turns, currentPath,
        /// otherBranches, summaries}], total}.
        #[arg(long)]
        json: bool,
        /// Read every session file instead of the totals the catalog keeps.
        #[arg(long)]
        no_catalog: bool,
        /// Only this agent's sessions: pi, omp, claude, codex or opencode (Claude Code's and
        /// Codex's costs are estimated from arbor's price table).
        #[arg(long, visible_alias = "tool", value_name = "AGENT")]
        agent: Option<Tool>,
        #[command(flatten)]
        catalog: CatalogOpt,
    },
    /// Sessions between this machine and a shared store (PostgreSQL, or a SQLite database
    /// file): push sends
    /// what it lacks, pull writes here what only it has (byte-identical files, laid out as pi
    /// and omp lay them out), status compares. A session both sides appended to is merged
    /// (each file keeps its own last line, where pi resumes); an entry changed on one side is
    /// a conflict, never merged.
    #[command(
        after_help = "The shared store: --to (push) / --from (pull, status) URL, or $ARBOR_SYNC_URL. URLs:\n  postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE   (?host=/socket/dir for a Unix socket;\n      password from the URL, $PGPASSWORD or $PGPASSFILE / ~/.pgpass; TLS when the server asks)\n  sqlite:PATH   one database file holding many sessions\nWithout SESSION: every session. Exit status 1 when a conflict is left.\n\nExamples:\n  arbor sync push --to postgres://ann@db.example/sessions\n  arbor sync push --to sqlite:/shared/sessions.db\n  arbor sync pull --from sqlite:/shared/sessions.db --map-cwd /home/ann/proj=/work/proj\n  arbor sync status --from sqlite:/shared/sessions.db 01a2f3\n  arbor sync push --to sqlite:/shared/sessions.db --watch"
    )]
    Sync {
        /// push, pull or status.
        action: crate::cmd::sync::Action,
        /// Sessions (ids, id prefixes or paths); default: all.
        sessions: Vec<String>,
        /// Every session (the default).
        #[arg(long, conflicts_with = "sessions")]
        all: bool,
        /// The shared store to push to.
        #[arg(long, value_name = "URL", conflicts_with = "from")]
        to: Option<String>,
        /// The shared store to pull from (or compare with).
        #[arg(long, value_name = "URL")]
        from: Option<String>,
        /// Place a pulled session of project FROM (or below it) in project TO here; the
        /// session's bytes are not changed. Repeatable.
        #[arg(long, value_name = "FROM=TO")]
        map_cwd: Vec<String>,
        /// pull: keep the shared copy of a conflicting session as a fork of the local one.
        #[arg(long)]
        fork_on_conflict: bool,
        /// push: keep running, pushing each append within a second (inotify).
        #[arg(long)]
        watch: bool,
        /// JSON output: [{id, path?, state, lines, bytes, blobs, note?, missingBlobs?}].
        #[arg(long)]
        json: bool,
    },
    /// List the secrets sessions hold (API keys and tokens, private keys, JWTs, passwords):
    /// file, line, entry, field and kind, never the secret itself.
    #[command(
        after_help = "Without SESSION: the current project's sessions (--dir DIR: a directory's, --all:\nevery project's). Exit status: 0 when none is found, 1 when some are (as a linter), 2 for\na usage error. Exports redact them by default.\n\nExamples:\n  arbor secrets\n  arbor secrets 01a2f3\n  arbor secrets --all --json"
    )]
    Secrets {
        /// Sessions (paths, ids or id prefixes); none: the sessions of the scope.
        sessions: Vec<String>,
        #[command(flatten)]
        scope: ScopeOpts,
        /// JSON output: [{path, line, entryId, field, kind, chars}].
        #[arg(long)]
        json: bool,
    },
    /// Import other agents' sessions (Claude Code, Codex, opencode) as pi sessions, tree kept:
    /// branches stay branches, subagents become child sessions, compactions compactions.
    #[command(
        after_help = "SESSION: a session file (Claude Code, Codex), or a session id or unique id prefix\n(opencode: its ses_ id). --all: every session of that agent (--project DIR: those that ran\nin DIR). Each is written into pi's session directory for its cwd (--omp: omp's), with a\ncustom entry arbor-import naming the source: importing it again appends only what is new.\nThe source is only read. Lines arbor cannot read are reported (file:line) and skipped.\n\nExamples:\n  arbor import claude ~/.claude/projects/-work-app/0d5c6a8e-....jsonl\n  arbor import codex --all --project ~/work/app\n  arbor import opencode ses_3f1a --omp"
    )]
    Import {
        /// The agent whose sessions to import.
        agent: ImportAgent,
        /// Sessions: files, ids or unique id prefixes.
        #[arg(required_unless_present = "all")]
        sessions: Vec<String>,
        /// Every session of that agent.
        #[arg(long, conflicts_with = "sessions")]
        all: bool,
        /// With --all: only the sessions that ran in DIR.
        #[arg(long, value_name = "DIR", requires = "all")]
        project: Option<PathBuf>,
        /// Write omp sessions (omp's directory and layout) instead of pi's.
        #[arg(long)]
        omp: bool,
        /// Where the agent keeps its sessions (default: ~/.claude/projects, ~/.codex,
        /// ~/.local/share/opencode; CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_DATA_HOME respected).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// JSON output: [{agent, sourceId, source, file, outcome, appended, entries, changed,
        /// badLines, unknown, children}].
        #[arg(long)]
        json: bool,
    },
    /// Serve the sessions to agents over the Model Context Protocol (stdio, or --http).
    #[command(
        after_help = "Tools: search_sessions, list_sessions, get_session, get_usage, get_messages,\nget_context, get_tree, get_tool_calls, get_file_edits; with --allow-writes also\nlabel_entry, name_session, fork_session. Resources: arbor://session/ID.\nEverything served is redacted unless --no-redact, and bounded (a cursor\ncontinues). Stdout carries only the protocol; messages go to stderr.\n\nExamples:\n  pi mcp add arbor -- arbor mcp --all\n  arbor mcp --http 127.0.0.1:8765\n  arbor mcp --http 0.0.0.0:8765 --allow-remote --token-file ~/.config/arbor/token"
    )]
    Mcp {
        #[command(flatten)]
        scope: ScopeOpts,
        /// Serve streamable HTTP at this address (a loopback one unless --allow-remote)
        /// instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// With --http: listen on a non-loopback address; every request must then carry
        /// `Authorization: Bearer TOKEN` with the token of --token-file.
        #[arg(long, requires = "http", requires = "token_file")]
        allow_remote: bool,
        /// With --http: the bearer token every request must carry (a file readable by its
        /// owner alone, as ssh wants its keys).
        #[arg(long, value_name = "FILE", requires = "http")]
        token_file: Option<PathBuf>,
        /// Offer the write tools (label_entry, name_session, fork_session).
        #[arg(long)]
        allow_writes: bool,
        /// Serve session text as it is (default: secrets replaced by `[REDACTED:kind]`).
        #[arg(long)]
        no_redact: bool,
        /// No watcher of the server's own: look at the session files at each call (default:
        /// while it runs, the server keeps the catalog fresh as `arbor index --watch` does,
        /// unless such a watcher already serves it).
        #[arg(long)]
        no_watch: bool,
        #[command(flatten)]
        catalog: CatalogOpt,
    },
    /// Serve the sessions in a web browser: the list and search, a session's tree and
    /// conversation, usage charts; live while sessions grow.
    #[command(
        after_help = "Pages: / (sessions, search), /session/ID (the conversation and its tree), /usage\n(charts and tables). Loopback only unless --allow-remote with --token-file;\neverything served is redacted unless --no-redact; writes only with\n--allow-writes.\n\nExamples:\n  arbor serve --open\n  arbor serve --all --addr 127.0.0.1:9000\n  arbor serve --from postgres://arbor@db/team"
    )]
    Serve {
        #[command(flatten)]
        scope: ScopeOpts,
        /// The address to listen on (a loopback one unless --allow-remote).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8777")]
        addr: std::net::SocketAddr,
        /// Open the app in the default web browser once it listens.
        #[arg(long)]
        open: bool,
        /// Listen on a non-loopback address; every request must then carry the token of
        /// --token-file.
        #[arg(long, requires = "token_file")]
        allow_remote: bool,
        /// The token every request must carry (a file readable by its owner alone).
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// Serve a shared store read-only (postgres://… or sqlite:PATH) instead of this
        /// machine's sessions.
        #[arg(long, value_name = "URL")]
        from: Option<String>,
        /// Allow renaming, labelling, deleting to the trash and forking from the pages.
        #[arg(long)]
        allow_writes: bool,
        /// Serve session text as it is (default: secrets replaced by `[REDACTED:kind]`).
        #[arg(long)]
        no_redact: bool,
        /// No watcher of the server's own: look at the session files at each request.
        #[arg(long)]
        no_watch: bool,
        #[command(flatten)]
        catalog: CatalogOpt,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Examples:\n  arbor completions bash > ~/.local/share/bash-completion/completions/arbor\n  arbor completions zsh > ~/.zfunc/_arbor\n  arbor completions fish > ~/.config/fish/completions/arbor.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a directory.
    #[command(
        after_help = "Examples:\n  arbor man | man -l -\n  arbor man --dir ~/.local/share/man/man1"
    )]
    Man {
        /// Write arbor.1 and arbor-COMMAND.1 here instead of printing arbor.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `arbor trash`.
#[derive(Subcommand, Debug)]
pub enum TrashCommand {
    /// List the sessions in the trash (newest first).
    List {
        /// JSON output: [{id, path, deletedAt, items}].
        #[arg(long)]
        json: bool,
    },
    /// Put sessions back where they were (refused when something now stands there).
    Restore {
        /// Trashed sessions: their trash id (from `arbor trash list`), session id prefix or
        /// original path.
        #[arg(required = true)]
        sessions: Vec<String>,
    },
    /// Delete the trashed sessions for good (a report unless --force).
    Empty {
        /// Really delete.
        #[arg(long)]
        force: bool,
    },
}

/// `arbor import AGENT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportAgent {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// opencode.
    Opencode,
}

/// `--agent` (`--tool`): which agent's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    /// pi's sessions.
    Pi,
    /// oh-my-pi's sessions.
    Omp,
    /// Claude Code's sessions (read-only).
    Claude,
    /// Codex CLI's sessions (read-only).
    Codex,
    /// opencode's sessions (read-only).
    Opencode,
}

/// `arbor ls --sort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LsSort {
    /// Last activity, newest first (each directory by its tool's rules).
    #[default]
    Modified,
    /// Creation time (the header's timestamp), newest first.
    Created,
    /// File size, largest first.
    Size,
    /// Title (name, omp title or first message), A to Z in any case.
    Name,
}

/// `arbor export --format`: the flag's values for [`arbor_view::Format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One self-contained HTML page (the whole tree).
    Html,
    /// Markdown.
    Md,
    /// arbor's JSON export schema (`arbor-export/1`).
    Json,
}

impl From<ExportFormat> for arbor_view::Format {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Html => arbor_view::Format::Html,
            ExportFormat::Md => arbor_view::Format::Md,
            ExportFormat::Json => arbor_view::Format::Json,
        }
    }
}
