//! Command-line arguments.
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "arbor",
    version,
    about = "Read, write, repair, index and search pi / oh-my-pi session files"
)]
pub struct Cli {
    /// Agent directory (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent and ~/.omp/agent).
    #[arg(long, global = true, value_name = "DIR")]
    pub agent_dir: Option<PathBuf>,
    /// Session catalog database (default: $ARBOR_CATALOG, else $XDG_CACHE_HOME/arbor/catalog.db).
    #[arg(long, global = true, value_name = "PATH")]
    pub catalog: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct WriteOpts {
    /// When appended entries reach the disk: none, flush (default), strict (fdatasync per entry).
    #[arg(long, default_value = "flush", value_name = "POLICY")]
    pub durability: arbor_store::Durability,
    /// Wait up to SECONDS for another writer instead of failing at once (default 30 with no value).
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "30", value_parser = crate::args::seconds)]
    pub wait: Option<Duration>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the context pi builds for a leaf (pi's buildSessionContext), as JSON.
    Context {
        /// Session file path, or session id / unique id prefix.
        session: String,
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
    /// Print the session tree with labels, the leaf marked.
    Tree {
        /// Session file path, or session id / unique id prefix.
        session: String,
        /// JSON output: {leaf, roots, nodes} in depth-first order.
        #[arg(long)]
        json: bool,
    },
    /// Print the conversation on the path to the leaf, readable.
    Show {
        /// Session file path, or session id / unique id prefix.
        session: String,
        /// Leaf entry id (default: the session's leaf).
        #[arg(long)]
        leaf: Option<String>,
        /// Leave a missing or corrupt blob reference in place (reported on stderr) instead of failing.
        #[arg(long)]
        lenient: bool,
        /// For omp sessions: follow omp VERSION's rules (18.3, the default, or 18.2).
        #[arg(long, value_name = "VERSION", default_value = "18.3")]
        omp_version: arbor_core::context::OmpVersion,
    },
    /// List sessions, newest first (through the session catalog).
    Ls {
        /// Session directory to list (default: the current directory's sessions of pi and omp).
        #[arg(long, conflicts_with = "all")]
        dir: Option<PathBuf>,
        /// Every project of every agent directory (pi's and omp's).
        #[arg(long)]
        all: bool,
        /// JSON output: an array of SessionInfo objects (omp's for omp directories, else pi's).
        #[arg(long)]
        json: bool,
        /// Include pi's allMessagesText in JSON output.
        #[arg(long)]
        all_text: bool,
        /// List with omp's rules (omp's SessionInfo), whatever the directory.
        #[arg(long, conflicts_with = "pi")]
        omp: bool,
        /// List with pi's rules (pi's SessionInfo), whatever the directory.
        #[arg(long)]
        pi: bool,
    },
    /// Bring the session catalog up to date with every session of the agent directories.
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
    },
    /// Full-text search across sessions (FTS5: words, "phrases", prefix*, AND/OR/NOT, NEAR).
    Search {
        /// The query.
        query: String,
        /// Search every project of every agent directory.
        #[arg(long, conflicts_with = "dir")]
        all: bool,
        /// Search the sessions of this directory.
        #[arg(long)]
        dir: Option<PathBuf>,
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
        /// JSON output: [{path, sessionId, entryId, role, timestamp, onCurrentBranch, snippet, sessionName}].
        #[arg(long)]
        json: bool,
    },
    /// Prompt history from omp's history.db (newest first), or prompts matching QUERY.
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
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Append entries as pi's SessionManager would (id, parentId, timestamp assigned); prints new ids.
    Append {
        /// Session file path, or session id / unique id prefix.
        session: String,
        /// Parent of the (first) new entry (default: the session's leaf).
        #[arg(long, conflicts_with = "root")]
        parent: Option<String>,
        /// Start a new root (parentId null).
        #[arg(long)]
        root: bool,
        /// The entry body as JSON ({"type": ..., ...}), or - to read one body per stdin line.
        body: String,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Upgrade sessions to format v3 (atomic rewrite; unchanged lines stay byte-identical).
    Migrate {
        /// Session files.
        #[arg(required = true)]
        sessions: Vec<String>,
        /// Only report what would change.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Name a session: pi files get a session_info entry; omp files a title_change entry and their
    /// 256-byte title slot rewritten in place. Prints the new entry's id.
    Name {
        /// Session file path, or session id / unique id prefix.
        session: String,
        /// The new name.
        name: String,
        #[command(flatten)]
        write: WriteOpts,
    },
    /// Verify sessions: header, malformed lines, torn tail, duplicate ids, missing parents, cycles,
    /// compactions off path, blobs. Exit status 1 when problems remain.
    Check {
        /// Session files (paths, ids or id prefixes).
        #[arg(required = true)]
        sessions: Vec<String>,
        /// Fix what can be fixed without losing a byte (removed bytes go to a quarantine sidecar).
        #[arg(long)]
        repair: bool,
        /// JSON output: one report object per session, in an array.
        #[arg(long)]
        json: bool,
        /// Do not read blobs.
        #[arg(long)]
        no_blobs: bool,
        /// Wait up to SECONDS for another writer before repairing (default 30 with no value).
        #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "30", value_parser = crate::args::seconds)]
        wait: Option<Duration>,
    },
    /// Remove blobs no session refers to (a dry run unless --yes).
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
}
