//! `get_messages`: a window of the messages on the path from the root to a leaf
//! ([`arbor_view::agent::messages_window`]); and [`load`], how the reading tools load the
//! session they are asked about.
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_core::doc::SessionDoc;
use arbor_view::agent::{self, Direction, MessageWindow, WindowOpts};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The session a reading tool is asked about, loaded: `session` resolved as the CLI's
/// SESSION and checked to lie in the served directories ([`crate::resolve::session`]),
/// the file mapped as `arbor show` maps it, omp blob references replaced by their blobs
/// (a missing or corrupt blob stays a reference, as `--lenient` leaves it). Another agent's
/// session (Claude Code, Codex, opencode) is read in memory as `arbor import` would make it
/// ([`crate::resolve::open_foreign`]); the path is then its source's.
///
/// The last session loaded is kept ([`LAST`]) while its file is the same file of the same
/// length and modification time: an agent reads a session page after page, and a 1 GB
/// session is parsed once, not once per page.
pub(crate) fn load(
    state: &State,
    work: &Work,
    session: &str,
) -> Result<(PathBuf, Arc<SessionDoc>), ToolError> {
    let path = match crate::resolve::session(state, session) {
        Ok(p) => p,
        // Another agent's session: read in memory as `arbor import` would make it.
        Err(e) => match crate::resolve::open_foreign(state, work, session)? {
            Some(f) => return Ok((f.path, Arc::new(f.doc))),
            None => return Err(e),
        },
    };
    work.check()?;
    let stamp = Stamp::of(&path);
    if let Ok(last) = LAST.lock() {
        if let Some((p, s, doc)) = last.as_ref() {
            if *p == path && stamp.is_some() && *s == stamp {
                return Ok((path, doc.clone()));
            }
        }
    }
    let mut doc = arbor_store::load_doc(&path)
        .map_err(|e| ToolError::new(format!("session '{session}': {e}")))?;
    if !doc.blob_ref_lines().is_empty() {
        let store = arbor_store::blobs::BlobStore::new(arbor_store::blobs::blob_dir_for_session(
            &path,
            state.loc.agent_override(),
        ));
        arbor_store::blobs::resolve_doc_blobs(&mut doc, &store, true)
            .map_err(|e| ToolError::new(format!("session '{session}': {e}")))?;
    }
    work.check()?;
    let doc = Arc::new(doc);
    // Kept only when the file did not change while it was read.
    if stamp.is_some() && Stamp::of(&path) == stamp && !arbor_store::FileBytes::any_open_map_cut() {
        if let Ok(mut last) = LAST.lock() {
            *last = Some((path.clone(), stamp, doc.clone()));
        }
    }
    Ok((path, doc))
}

/// What says a session file is the one read before ([`arbor_store::FileStamp`]: device,
/// inode, length, modification time).
use arbor_store::FileStamp as Stamp;

/// A session [`load`] read: its file, what the file was, the document.
type Loaded = (PathBuf, Option<Stamp>, Arc<SessionDoc>);

/// The last session [`load`] read (one: the memory of one session is what `arbor context`
/// takes).
static LAST: Mutex<Option<Loaded>> = Mutex::new(None);

/// A reader is done with `doc` for this call: the pages of its map go back to the page cache
/// (the kept document's index stays; the next page faults in only the lines it reads), so
/// a server that read a 1 GB session does not hold it resident between calls. On a thread of
/// its own, after the answer: unmapping a 1 GB session's pages took some 15 ms of the first
/// page's time (a later call that reads the document meanwhile faults its pages back in).
pub(crate) fn done(doc: Arc<SessionDoc>) {
    let spawned = std::thread::Builder::new()
        .name("arbor-mcp-release".into())
        .spawn({
            let doc = doc.clone();
            move || arbor_store::release_pages(doc.base_bytes())
        });
    if spawned.is_err() {
        arbor_store::release_pages(doc.base_bytes());
    }
}

/// An `entry_id` argument, checked to name an entry of `doc`.
pub(crate) fn entry_arg<'a>(
    doc: &SessionDoc,
    entry: Option<&'a str>,
) -> Result<Option<&'a str>, ToolError> {
    match entry.map(str::trim).filter(|e| !e.is_empty()) {
        None => Ok(None),
        Some(e) => agent::entry_index(doc, e)
            .map(|_| Some(e))
            .map_err(|err| ToolError::new(format!("entry_id: {err}"))),
    }
}

/// Arguments of `get_messages`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessagesArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// Read the branch through this entry (the current branch when the entry is on it,
    /// otherwise the branch to the newest leaf below it) and start at it. Default: the
    /// session's current branch, starting at its newest message (direction "older") or its
    /// first (direction "newer").
    #[serde(default)]
    pub entry_id: Option<String>,
    /// Start at this position on the branch instead (0 is the oldest message; see `total`).
    #[serde(default)]
    pub offset: Option<u64>,
    /// "older" (default): the start and the messages before it; "newer": the start and the
    /// messages after it. Messages are always given oldest first.
    #[serde(default)]
    pub direction: Direction,
    /// Tool results and bash output in full (default: folded to their size and first line;
    /// tool call arguments to one line).
    #[serde(default)]
    pub tool_output: bool,
    /// Thinking in full (default: folded to its size).
    #[serde(default)]
    pub thinking: bool,
    /// At most this many messages per answer (1 to 1000; default 20).
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue the same way.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// The answer of `get_messages`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MessagesAnswer {
    /// The session file.
    pub path: String,
    /// The window.
    #[serde(flatten)]
    pub window: MessageWindow,
    /// Pass this back as `cursor` (same arguments) to continue in the same direction;
    /// absent at the end of the branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn run(state: &State, work: &Work, a: &MessagesArgs) -> Result<MessagesAnswer, ToolError> {
    let limit = bound::limit(a.limit, 20)?;
    let budget = Budget::new(a.budget)?;
    let key = serde_json::to_string(&(
        &a.session,
        &a.entry_id,
        a.direction,
        a.tool_output,
        a.thinking,
    ))
    .unwrap_or_default();
    let from_cursor = a
        .cursor
        .as_deref()
        .filter(|c| !c.is_empty())
        .map(|c| bound::offset(Some(c), "get_messages", &key))
        .transpose()?;
    let (path, doc) = load(state, work, &a.session)?;
    let entry = entry_arg(&doc, a.entry_id.as_deref())?;
    let offset = match (from_cursor, a.offset) {
        (Some(o), _) => Some(o),
        (None, Some(o)) => Some(usize::try_from(o).unwrap_or(usize::MAX)),
        (None, None) => None,
    };
    let opts = WindowOpts {
        entry,
        offset,
        direction: a.direction,
        limit,
        // Room for the JSON around the texts.
        budget: budget.0 * 3 / 4,
        tool_output: a.tool_output,
        thinking: a.thinking,
    };
    let w = agent::messages_window(&doc, &opts).map_err(|e| ToolError::new(e.to_string()));
    done(doc);
    let w = w?;
    let next = match a.direction {
        Direction::Older => w.older,
        Direction::Newer => w.newer,
    };
    Ok(MessagesAnswer {
        path: path.to_string_lossy().into_owned(),
        next_cursor: next.map(|o| bound::cursor("get_messages", &key, o)),
        window: w,
    })
}

/// The answer as text: a heading per message, then its text.
fn render(a: &MessagesAnswer) -> String {
    let w = &a.window;
    let mut text = format!(
        "{} · branch to {}{} · {} of {} messages",
        a.path,
        w.leaf.as_deref().unwrap_or("(none)"),
        if w.current { " (current)" } else { "" },
        w.messages.len(),
        w.total
    );
    if let (Some(f), Some(l)) = (w.messages.first(), w.messages.last()) {
        text.push_str(&format!(" (offsets {} to {})", f.offset, l.offset));
    }
    text.push('\n');
    for m in &w.messages {
        text.push_str(&format!(
            "\n── [{}] {}{} · {}{}{}\n{}\n",
            m.offset,
            m.role,
            m.name
                .as_deref()
                .map(|n| format!(" {n}"))
                .unwrap_or_default(),
            m.entry_id,
            m.timestamp
                .as_deref()
                .map(|t| format!(" · {t}"))
                .unwrap_or_default(),
            m.error
                .as_deref()
                .map(|e| format!(" · ✗ {e}"))
                .unwrap_or_default(),
            m.text
        ));
    }
    text.push_str(bound::more_note(a.next_cursor.as_deref()).trim_start());
    text
}

#[rmcp::tool_router(router = messages_router, vis = "pub(crate)")]
impl ArborServer {
    /// `get_messages`.
    #[rmcp::tool(
        name = "get_messages",
        description = "Read a session's conversation: a window of the messages on one branch (the path from the root to a leaf), each with its entry id, role, time and text. Default: the newest 20 messages of the current branch. `entry_id` reads the branch through that entry starting at it (e.g. a search hit); `offset` starts at a position (0 = oldest); `direction` older|newer. Tool output and thinking are folded to their size unless `tool_output`/`thinking` are true; images are placeholders ([image: image/png, N bytes]). Bounded: `limit` messages and `budget` characters per answer; pass `next_cursor` back as `cursor` to continue. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<MessagesAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_messages(
        &self,
        Parameters(args): Parameters<MessagesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let budget = Budget::new(args.budget).unwrap_or(Budget(bound::DEFAULT_BUDGET));
        let r = self.blocking(&ctx, move |s, w| run(s, w, &args)).await;
        self.answer(r, budget, render)
    }
}
