//! A live watcher of the session directories (`arbor index --watch`), and how other commands
//! ask it whether they may trust the catalog without looking at every file.
//!
//! The watcher refreshes the catalog once, then on every inotify event under the sessions
//! roots (an append, a new file, a rename, a deletion, a new project directory) refreshes
//! the directories the events name, and stamps the catalog (see the module `stamp`). It
//! listens on a Unix socket, `<catalog>-watch.d/sock`, in a private directory of its own.
//!
//! A command that would `stat` every session file asks instead ([`vouches`]): it connects to
//! the socket and names the directories it needs. The watcher answers only after it has
//! taken in every change made before the question: it writes a file (`tick`) in its own
//! directory, which it watches with the same inotify instance as the sessions. inotify
//! queues the events of one instance in the order they happen, so when the watcher reads the
//! tick's event it has read every event of an earlier change; it refreshes what they name and
//! then answers `ok`. A watcher that died leaves a socket nobody accepts on (refused: the
//! command refreshes itself); one that hangs does not answer within [`ASK_TIMEOUT`] (the same);
//! a socket or directory owned by another user is not asked.
//!
//! A command that would read every row of the directories it lists asks for the listing itself
//! ([`listing`], [`listing_json`]): after the same wait for the tick, the watcher answers with
//! the listing prepared from its catalog connection (see the module `prepared`), made once and
//! kept until its own next refresh or until another process commits to the catalog (SQLite's
//! `data_version`), so that what it hands over is exactly what the command would have read from
//! the catalog at that moment. The command reads the whole answer (bounded by [`ASK_TIMEOUT`])
//! before it prints anything; a refusal, a short or malformed answer, or a timeout leaves it to
//! read the catalog itself.
use crate::catalog::{Catalog, Listed};
use crate::error::{IndexError, IoContext};
use crate::prepared::dir_field;
use crate::refresh::RefreshOptions;
use crate::search::{Hit, SearchQuery};
use crate::RefreshStats;
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long a command waits for the watcher's answer before it looks at the files itself.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// The watcher's private directory for the catalog `catalog`.
pub fn control_dir(catalog: &Path) -> PathBuf {
    arbor_store::paths::with_suffix(catalog, "-watch.d")
}

/// Whether a live watcher of the catalog `catalog` has taken in every change made to the
/// directories `dir_keys` (as [`crate::dir_key`] gives them) up to now, so that the catalog's
/// rows for them are the files' current state. `false` when there is no watcher, it died, it
/// does not watch one of them, it has not finished its first refresh, or it does not answer
/// within [`ASK_TIMEOUT`].
pub fn vouches(catalog: &Path, dir_keys: &[String]) -> bool {
    ask(catalog, dir_keys).unwrap_or(false)
}

/// How many refreshes a live watcher of the catalog `catalog` has run since it started (its
/// first included), once it has taken in every change made before the question: a watcher
/// with nothing to do runs none. `None` when no watcher answers.
pub fn refreshes(catalog: &Path) -> Option<u64> {
    let line = request(catalog, "refreshes\n").ok()?;
    line.strip_prefix("refreshes ")?.trim_end().parse().ok()
}

/// The listing of `dirs` as the catalog holds it, in pi's order (what
/// [`Catalog::listed_as_indexed`] and [`crate::sort_like_pi`] give), prepared by a
/// live watcher of the catalog `catalog` that vouches for every one of `dirs` (as [`vouches`]),
/// or `None` (no watcher, it does not vouch, it answers late or wrongly: the caller refreshes).
pub fn listing(catalog: &Path, dirs: &[PathBuf]) -> Option<Vec<Listed>> {
    crate::prepared::decode_rows(&prepared(catalog, "rows", dirs)?)
}

/// What the watcher's renderer (the `render` of [`run`]) made of the listing [`listing`]
/// would give, for the options `opts` (opaque here: the renderer's own words, which it checks),
/// or `None` as for [`listing`], or when `opts` holds a tab or a newline, or the renderer made
/// nothing of them. The watcher keeps what it rendered as it keeps the listings, by `opts`
/// and directories; it renders only while every sessions root it watches is vouched for (the
/// renderer may look at every session file under them).
pub fn listing_rendered(catalog: &Path, opts: &str, dirs: &[PathBuf]) -> Option<Vec<u8>> {
    if opts.contains(['\t', '\n']) {
        return None;
    }
    prepared(catalog, &format!("render\t{opts}"), dirs)
}

/// The JSON document `arbor ls --json` prints for the listing [`listing`] would give
/// ([`crate::prepared::json_of`]), prepared by a live watcher, or `None` as for [`listing`].
pub fn listing_json(catalog: &Path, dirs: &[PathBuf]) -> Option<Vec<u8>> {
    // Only the watcher's own user can have answered (see `ask_line`); the shape is checked
    // so that an answer of some other kind is never printed as the listing.
    prepared(catalog, "json", dirs).filter(|d| d.starts_with(b"[") && d.ends_with(b"]\n"))
}

/// Which build of arbor this process runs: its version and the identity of the executable
/// file it was started from (device, inode, size, modification time of `/proc/self/exe`,
/// which names the file this process runs even after it was replaced or deleted). A watcher
/// hands a prepared listing only to a command of the same build: one left running across an
/// upgrade (a new file at the same path) would otherwise hand over a listing or table laid out
/// by the old code.
fn build_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::fs::metadata("/proc/self/exe")
            .map(|m| {
                format!(
                    "{}:{}:{}:{}.{}",
                    m.dev(),
                    m.ino(),
                    m.size(),
                    m.mtime(),
                    m.mtime_nsec()
                )
            })
            // Unknown: this process's own id, which no other process matches.
            .unwrap_or_else(|_| format!("unknown-{}", std::process::id()));
        format!("{}-{exe}", env!("CARGO_PKG_VERSION"))
    })
}

/// The most a prepared listing may claim to be (a larger claim is no answer, and the command
/// reads the catalog itself): 1 GiB, the JSON of some million sessions. The buffer is
/// allocated at the claimed size but only touched as the bytes arrive.
const MAX_PREPARED: usize = 1 << 30;

fn prepared(catalog: &Path, form: &str, dirs: &[PathBuf]) -> Option<Vec<u8>> {
    let mut q = format!("list\t{}\t{form}", build_id());
    for d in dirs {
        let (key, shown) = dir_field(d)?;
        q.push('\t');
        q.push_str(&key);
        q.push('\t');
        q.push_str(&shown);
    }
    q.push('\n');
    let (line, mut reader) = ask_line(catalog, &q).ok()?;
    let len: usize = line.strip_prefix("ok ")?.strip_suffix('\n')?.parse().ok()?;
    if len > MAX_PREPARED {
        return None;
    }
    // The whole answer within ASK_TIMEOUT of its first line, however the watcher trickles it.
    let deadline = Instant::now() + ASK_TIMEOUT;
    let mut buf = vec![0u8; len];
    let mut got = 0;
    while got < len {
        let left = deadline.checked_duration_since(Instant::now())?;
        reader
            .get_ref()
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        match reader.read(&mut buf[got..]) {
            Ok(0) => return None,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(buf)
}

/// The hits of the search `q` in the directories `dirs` and the number of matches in all (what
/// [`Catalog::search_with_total`] gives, `q.dirs` being the keys of `dirs`), from a live
/// watcher of `cat`'s catalog that vouches for every one of `dirs` (as [`vouches`]): it
/// searches its own connection, after the same wait for the tick as a listing, and keeps the
/// answer as it keeps listings (until its next refresh or another process's commit). `None`
/// when no watcher answers (as [`listing`]), when the watcher's search failed (a query FTS5
/// cannot read, damage: the command searches itself and reports it), and when the answer has
/// fewer hits than the limit while `cat` (the command's own view of the file) does not trust the
/// text index as checked: damage makes FTS5 find nothing, and only the command's own search
/// checks the index before it says "no match" (see the module `stamp`).
pub fn search(cat: &Catalog, q: &SearchQuery, dirs: &[PathBuf]) -> Option<(Vec<Hit>, u64)> {
    let form = format!("search\t{}", crate::prepared::encode_query(q));
    let (hits, total) = crate::prepared::decode_hits(&prepared(cat.path(), &form, dirs)?)?;
    if q.check_index && hits.len() < q.limit && !cat.trusted().1 {
        return None;
    }
    Some((hits, total))
}

/// How many prepared listings ([`listing`], [`listing_json`]) and searches ([`search`]) a live watcher of the catalog
/// `catalog` has handed over since it started, and how many of them it had to read from the
/// catalog (the others were kept from an earlier question), once it has taken in every change
/// made before the question. `None` when no watcher answers.
pub fn served(catalog: &Path) -> Option<(u64, u64)> {
    let line = request(catalog, "served\n").ok()?;
    let mut nums = line.strip_prefix("served ")?.trim_end().split(' ');
    let served = nums.next()?.parse().ok()?;
    let read = nums.next()?.parse().ok()?;
    Some((served, read))
}

/// Sends one request line to the watcher of `catalog` and returns its answer line.
fn request(catalog: &Path, q: &str) -> std::io::Result<String> {
    Ok(ask_line(catalog, q)?.0)
}

/// Sends one request line to the watcher of `catalog` (only to a socket of this user, in a
/// private directory of this user) and returns its answer line and the rest of the answer.
fn ask_line(catalog: &Path, q: &str) -> std::io::Result<(String, BufReader<UnixStream>)> {
    let dir = control_dir(catalog);
    let me = arbor_store::euid();
    let d = std::fs::symlink_metadata(&dir)?;
    let sock = dir.join("sock");
    let s = std::fs::symlink_metadata(&sock)?;
    if !d.is_dir() || d.uid() != me || d.mode() & 0o077 != 0 {
        return Err(std::io::Error::other(
            "not a private directory of this user",
        ));
    }
    if !s.file_type().is_socket() || s.uid() != me {
        return Err(std::io::Error::other("not a socket of this user"));
    }
    let mut stream = UnixStream::connect(&sock)?;
    stream.set_read_timeout(Some(ASK_TIMEOUT))?;
    stream.set_write_timeout(Some(ASK_TIMEOUT))?;
    stream.write_all(q.as_bytes())?;
    let mut line = String::new();
    let mut reader = BufReader::new(stream);
    // An answer line is short; a peer that sends no newline is not read without end.
    (&mut reader).take(64).read_line(&mut line)?;
    Ok((line, reader))
}

fn ask(catalog: &Path, dir_keys: &[String]) -> std::io::Result<bool> {
    if dir_keys.iter().any(|k| k.contains(['\t', '\n'])) {
        return Ok(false);
    }
    let mut q = String::from("fresh");
    for k in dir_keys {
        q.push('\t');
        q.push_str(k);
    }
    q.push('\n');
    Ok(request(catalog, &q)? == "ok\n")
}

/// What the watcher reports as it works.
#[derive(Debug)]
pub enum WatchEvent<'a> {
    /// The first refresh is done; questions are answered from now on.
    Ready(&'a RefreshStats),
    /// Directories were refreshed after changes.
    Refreshed(&'a RefreshStats),
    /// A sessions root on a network or FUSE file system (changes made on another machine are
    /// no inotify event here), or any root once inotify reported an error (a watch could not
    /// be added): watched, but no longer vouched for.
    NotVouched(&'a Path),
}

/// File systems whose changes may come from elsewhere, unseen by inotify: NFS, SMB/CIFS
/// (three magics), FUSE (sshfs and the like), 9p, Coda, NCP, AFS, Ceph, GPFS, Lustre.
const REMOTE_FS: [u32; 12] = [
    0x6969,
    0x517B,
    0xFF53_4D42,
    0xFE53_4D42,
    0x6573_5546,
    0x0102_1997,
    0x7375_7245,
    0x564C,
    0x6B41_4653,
    0x00C3_6400,
    0x4750_4653,
    0x0BD0_0BD0,
];

/// Whether inotify sees every change under `dir`: a local file system.
fn local_fs(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `libc::statfs` is plain data, for which all zeroes is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: statfs writes into `st`; the path is NUL-terminated.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)]
    let magic = st.f_type as i64 as u32;
    !REMOTE_FS.contains(&magic)
}

/// Whether inotify sees every change to the sessions of the directory `dir`: none of its
/// `*.jsonl` entries is a symbolic link or a file with another hard link (a write through
/// the other name is an event of another directory, or of none watched).
fn sees_every_session(dir: &Path) -> bool {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => return e.kind() == std::io::ErrorKind::NotFound,
    };
    for e in rd {
        let Ok(e) = e else { return false };
        if !e.file_name().as_encoded_bytes().ends_with(b".jsonl") {
            continue;
        }
        match e.path().symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() || (m.is_file() && m.nlink() > 1) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return false,
        }
    }
    true
}

/// Refreshes `dirs` and notes which of them inotify cannot vouch for.
fn refresh_noting(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    blind: &mut std::collections::HashSet<String>,
) -> Result<RefreshStats, IndexError> {
    let opts = RefreshOptions::default()
        .with_texts(true)
        .with_listing(false);
    let (_, stats) = cat.refresh_dirs(dirs, opts, &mut |_| {})?;
    for d in dirs {
        let key = crate::dir_key(d);
        if sees_every_session(d) {
            blind.remove(&key);
        } else {
            blind.insert(key);
        }
    }
    cat.stamp();
    Ok(stats)
}

/// A command's question.
enum Question {
    /// `fresh`: are these directory keys vouched for?
    Fresh(Vec<String>),
    /// `refreshes`: how many refreshes so far?
    Count,
    /// `served`: how many listings handed over, and how many of them read from the catalog?
    Served,
    /// `list`: the listing of these directories (key, path as shown), as JSON, as rows or
    /// rendered.
    List {
        /// The asking command's [`build_id`].
        build: String,
        form: Form,
        dirs: Vec<(String, PathBuf)>,
    },
}

/// The form a listing is handed over in.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Form {
    /// The JSON document ([`crate::prepared::json_of`]).
    Json,
    /// Every row ([`crate::prepared::encode_rows`]).
    Rows,
    /// What the renderer makes of the rows with these options.
    Render(String),
    /// The hits of this search ([`crate::prepared::encode_query`]) in these directories
    /// ([`crate::prepared::encode_hits`]).
    Search(String),
}

impl Question {
    /// Parses a request line (without its newline).
    fn parse(line: &str) -> Option<Question> {
        let mut parts = line.split('\t');
        match parts.next()? {
            "fresh" => Some(Question::Fresh(parts.map(str::to_string).collect())),
            "refreshes" => Some(Question::Count),
            "served" => Some(Question::Served),
            "list" => {
                let build = parts.next()?.to_string();
                let form = match parts.next()? {
                    "json" => Form::Json,
                    "rows" => Form::Rows,
                    "render" => Form::Render(parts.next()?.to_string()),
                    "search" => Form::Search(parts.next()?.to_string()),
                    _ => return None,
                };
                let fields: Vec<&str> = parts.collect();
                let pairs = fields.chunks_exact(2);
                if !pairs.remainder().is_empty() {
                    return None;
                }
                let dirs = pairs
                    .map(|c| (c[0].to_string(), PathBuf::from(c[1])))
                    .collect();
                Some(Question::List { build, form, dirs })
            }
            _ => None,
        }
    }
}

enum Msg {
    Fs(notify::Event),
    FsError,
    Ask(Question, UnixStream),
}

/// Listings prepared for `list` questions, by question, and the catalog's `data_version` they
/// were read at. Emptied by every refresh of the watcher's own; a different `data_version`
/// (another process committed) empties it too.
struct PreparedCache {
    version: Option<i64>,
    by_question: HashMap<Asked, Arc<Vec<u8>>>,
    /// Searches' answers, apart (many small answers, which do not push out the listings).
    searches: HashMap<Asked, Arc<Vec<u8>>>,
    /// Listings handed over, and listings read from the catalog.
    served: u64,
    read: u64,
}

/// A `list` question: its form, and the directories (key, path as shown).
type Asked = (Form, Vec<(String, PathBuf)>);

/// At most this many listings are kept (each is the size of its JSON).
const MAX_KEPT: usize = 8;

/// At most this many searches' answers are kept (each is its hits: some kB for the default 20).
const MAX_KEPT_SEARCHES: usize = 64;

/// A search's answer larger than this (a `--limit` in the thousands) is handed over but not
/// kept, so that what is kept stays under 64 MiB.
const MAX_KEPT_SEARCH_BYTES: usize = 1 << 20;

impl PreparedCache {
    fn clear(&mut self) {
        self.version = None;
        self.by_question.clear();
        self.searches.clear();
    }

    /// The listing asked for, as the catalog holds it now (`None`: the renderer made nothing
    /// of the options).
    fn get(
        &mut self,
        cat: &Catalog,
        form: Form,
        dirs: &[(String, PathBuf)],
        render: Renderer<'_>,
    ) -> Result<Option<Arc<Vec<u8>>>, IndexError> {
        let now = cat.data_version()?;
        if self.version != Some(now) {
            self.by_question.clear();
            self.searches.clear();
            self.version = Some(now);
        }
        let key = (form, dirs.to_vec());
        let search = matches!(key.0, Form::Search(_));
        let kept = if search {
            &self.searches
        } else {
            &self.by_question
        };
        if let Some(b) = kept.get(&key) {
            self.served += 1;
            return Ok(Some(Arc::clone(b)));
        }
        let listed = || -> Result<Vec<Listed>, IndexError> {
            let mut listed = cat.listed_as_indexed_keyed(dirs)?;
            crate::sort_like_pi(&mut listed, dirs.len() > 1);
            Ok(listed)
        };
        let bytes = Arc::new(match &key.0 {
            Form::Json => crate::prepared::json_of(&listed()?),
            Form::Rows => crate::prepared::encode_rows(&listed()?),
            Form::Render(opts) => match render(opts, &listed()?) {
                Some(b) => b,
                None => return Ok(None),
            },
            Form::Search(hex) => {
                let Some(mut q) = crate::prepared::decode_query(hex) else {
                    return Ok(None);
                };
                // Exactly the directories vouched for.
                q.dirs = Some(dirs.iter().map(|(k, _)| k.clone()).collect());
                let (hits, total) = cat.search_with_total(&q)?;
                crate::prepared::encode_hits(&hits, total)
            }
        });
        let (kept, max) = if search {
            (&mut self.searches, MAX_KEPT_SEARCHES)
        } else {
            (&mut self.by_question, MAX_KEPT)
        };
        if !search || bytes.len() <= MAX_KEPT_SEARCH_BYTES {
            if kept.len() >= max {
                kept.clear();
            }
            kept.insert(key, Arc::clone(&bytes));
        }
        self.served += 1;
        self.read += 1;
        Ok(Some(bytes))
    }
}

/// Hands a prepared listing to the command that asked, from a thread of its own (a command
/// that reads slowly, or not at all, does not hold up the watcher; the socket's write timeout
/// ends the thread).
fn send_prepared(mut conn: UnixStream, bytes: Arc<Vec<u8>>) {
    std::thread::spawn(move || {
        if conn
            .write_all(format!("ok {}\n", bytes.len()).as_bytes())
            .is_ok()
        {
            let _ = conn.write_all(&bytes);
        }
    });
}

/// The project directories of a refresh: the parent of each changed path below a root (or
/// the path itself when it is a directory directly under a root, created or removed).
fn dirs_of_event(roots: &[PathBuf], ev: &notify::Event, out: &mut BTreeSet<PathBuf>) -> bool {
    let mut rescan = ev.need_rescan();
    for p in &ev.paths {
        let Some(root) = roots.iter().find(|r| p.starts_with(r)) else {
            continue;
        };
        if p == root {
            rescan = true;
            continue;
        }
        match p.parent() {
            Some(parent) if parent == root => {
                // A project directory (created, removed, renamed), or a file in the root.
                out.insert(p.clone());
            }
            Some(parent) => {
                out.insert(parent.to_path_buf());
            }
            None => {}
        }
    }
    rescan
}

/// What a watcher makes of a listing for a `render` question ([`listing_rendered`]): the
/// question's options and the rows, in pi's order, to the bytes handed over (`None`: it makes
/// nothing of these options, and the command is told `no`).
pub type Renderer<'a> = &'a dyn Fn(&str, &[Listed]) -> Option<Vec<u8>>;

/// Starts the watcher of the catalog `catalog` ([`run`], what `arbor index --watch` runs) on
/// a thread named `name`, for a server (`arbor mcp`, `arbor serve`) while it lives (no
/// daemon): it refreshes every project of `loc` once, then keeps the catalog fresh from
/// inotify and vouches for it, so that answers skip looking at every file. Nothing when
/// another watcher serves the catalog already; `ls`'s prepared tables are not made (`render`
/// answers none). An error is said on stderr after `who: `: the catalog is then refreshed at
/// each call, as without a watcher.
pub fn spawn(catalog: PathBuf, loc: arbor_store::locate::Locator, name: &str, who: &'static str) {
    let spawned = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let roots = loc.existing_sessions_roots();
            if roots.is_empty() {
                return;
            }
            let Ok(mut cat) = Catalog::open(&catalog) else {
                return;
            };
            let r = run(
                &mut cat,
                &roots,
                &|| loc.all_project_dirs(),
                &|_, _| None,
                &mut |_| {},
            );
            match r {
                Err(IndexError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AddrInUse => {}
                Err(e) => eprintln!("{who}: the catalog is refreshed at each call: {e}"),
                Ok(()) => {}
            }
        });
    if let Err(e) = spawned {
        eprintln!("{who}: the catalog is refreshed at each call: {e}");
    }
}

/// Runs the watcher until its socket can no longer be served: refreshes `all_dirs()` (the
/// project directories under `roots`, the sessions roots), then keeps the catalog fresh (see
/// the module documentation). `report` is told what was done; `render` answers the `render`
/// questions ([`listing_rendered`]).
///
/// # Errors
/// [`IndexError::Io`] when the control directory or the socket cannot be made, or another
/// watcher of this catalog is live; refresh errors as [`Catalog::refresh_dirs`].
pub fn run(
    cat: &mut Catalog,
    roots: &[PathBuf],
    all_dirs: &dyn Fn() -> Vec<PathBuf>,
    render: Renderer<'_>,
    report: &mut dyn FnMut(WatchEvent<'_>),
) -> Result<(), IndexError> {
    // Absolute: inotify's events name absolute paths (notify joins a relative path to the
    // working directory), and the tick's event is recognised by its path; a catalog named
    // relatively (`--catalog my.db`) never saw its tick, and the watcher never answered.
    let ctl = control_dir(cat.path());
    let ctl = std::path::absolute(&ctl).at(&ctl)?;
    arbor_store::create_dir_private(&ctl).at(&ctl)?;
    let m = std::fs::symlink_metadata(&ctl).at(&ctl)?;
    if !m.is_dir() || m.uid() != arbor_store::euid() || m.mode() & 0o077 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "is not a private directory of this user (mode 0700)",
        ))
        .at(&ctl);
    }
    let sock = ctl.join("sock");
    if UnixStream::connect(&sock).is_ok() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AddrInUse,
            "another arbor watcher serves this catalog",
        ))
        .at(&sock);
    }
    match std::fs::symlink_metadata(&sock) {
        Ok(_) => std::fs::remove_file(&sock).at(&sock)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).at(&sock),
    }
    let tick = ctl.join("tick");
    let roots: Vec<PathBuf> = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .collect();

    let (tx, rx) = mpsc::channel::<Msg>();
    let fs_tx = tx.clone();
    let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        let _ = fs_tx.send(match e {
            Ok(ev) => Msg::Fs(ev),
            Err(_) => Msg::FsError,
        });
    })
    .map_err(|e| std::io::Error::other(e.to_string()))
    .at(&ctl)?;
    use notify::Watcher as _;
    watcher
        .watch(&ctl, notify::RecursiveMode::NonRecursive)
        .map_err(|e| std::io::Error::other(e.to_string()))
        .at(&ctl)?;
    for r in &roots {
        watcher
            .watch(r, notify::RecursiveMode::Recursive)
            .map_err(|e| std::io::Error::other(e.to_string()))
            .at(r)?;
    }
    // Only roots on a local file system are vouched for.
    let mut vouched: Vec<PathBuf> = Vec::new();
    for r in &roots {
        if local_fs(r) {
            vouched.push(r.clone());
        } else {
            report(WatchEvent::NotVouched(r));
        }
    }
    // Project directories holding a session inotify cannot follow (a symlink, a hard link).
    let mut blind = std::collections::HashSet::new();
    // The first refresh, after the watches are in place: a change during it is an event.
    let stats = refresh_noting(cat, &all_dirs(), &mut blind)?;
    let mut epoch = cat.epoch()?;
    // Questions are taken only now (a command meanwhile finds nobody and looks itself).
    let listener = UnixListener::bind(&sock).at(&sock)?;
    report(WatchEvent::Ready(&stats));

    let ask_tx = tx;
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let _ = conn.set_read_timeout(Some(ASK_TIMEOUT));
            let _ = conn.set_write_timeout(Some(ASK_TIMEOUT));
            let mut line = String::new();
            let Ok(reader) = conn.try_clone() else {
                continue;
            };
            // A request line names a few directories: 1 MB is more than any needs.
            if BufReader::new(reader)
                .take(1 << 20)
                .read_line(&mut line)
                .is_err()
            {
                continue;
            }
            let Some(q) = line.strip_suffix('\n').and_then(Question::parse) else {
                continue;
            };
            if ask_tx.send(Msg::Ask(q, conn)).is_err() {
                break;
            }
        }
    });

    // An error of inotify (a watch that could not be added to a new directory: the limit of
    // watches) means changes may go unseen from then on: nothing is vouched for any more.
    let mut failed = false;
    let covered = |keys: &[String], blind: &std::collections::HashSet<String>, failed: bool| {
        !failed
            && keys.iter().all(|k| {
                vouched.iter().any(|r| Path::new(k).starts_with(r)) && !blind.contains(k.as_str())
            })
    };
    let mut refreshes: u64 = 1;
    let mut pending: BTreeSet<PathBuf> = BTreeSet::new();
    let mut rescan = false;
    // Questions the written tick answers, and those that came after it was written.
    let mut waiting: Vec<(Question, UnixStream)> = Vec::new();
    let mut next: Vec<(Question, UnixStream)> = Vec::new();
    let mut cache = PreparedCache {
        version: None,
        by_question: HashMap::new(),
        searches: HashMap::new(),
        served: 0,
        read: 0,
    };
    let write_tick = || arbor_store::replace_file(&tick, b"tick\n").at(&tick);
    loop {
        // Block for the next message, then take every queued one before refreshing.
        let Ok(first) = rx.recv() else { break };
        let mut msgs = vec![first];
        msgs.extend(rx.try_iter());
        let mut ticked = false;
        // Events were lost (the queue overflowed, or an error): the tick's may be among them,
        // so the refresh of everything below answers the questions waiting for it.
        let mut lost = false;
        for m in msgs {
            match m {
                Msg::Fs(ev) => {
                    if ev.paths.iter().any(|p| p == &tick) {
                        ticked = true;
                        continue;
                    }
                    // Opening and closing change nothing (and the refresh's own reading of a
                    // directory is an open: taken as a change, it would refresh forever).
                    if matches!(ev.kind, notify::EventKind::Access(_)) {
                        continue;
                    }
                    lost |= ev.need_rescan();
                    rescan |= dirs_of_event(&roots, &ev, &mut pending);
                    // A project directory renamed: notify's paths for the watches below it may
                    // be stale, so the roots are watched again (and everything refreshed).
                    if matches!(
                        ev.kind,
                        notify::EventKind::Modify(notify::event::ModifyKind::Name(_))
                    ) && ev
                        .paths
                        .iter()
                        .any(|p| p.parent().is_some_and(|d| roots.iter().any(|r| r == d)))
                    {
                        for r in &roots {
                            let _ = watcher.unwatch(r);
                            watcher
                                .watch(r, notify::RecursiveMode::Recursive)
                                .map_err(|e| std::io::Error::other(e.to_string()))
                                .at(r)?;
                        }
                        rescan = true;
                    }
                }
                Msg::FsError => {
                    if !failed {
                        for r in &vouched {
                            report(WatchEvent::NotVouched(r));
                        }
                    }
                    failed = true;
                    lost = true;
                    rescan = true;
                }
                // Asked after the tick in flight was written, maybe: the next tick answers.
                Msg::Ask(q, conn) => next.push((q, conn)),
            }
        }
        if ticked && cat.epoch()? != epoch {
            // Another process emptied the catalog (new kinds, `--rebuild`) or replaced it
            // (set aside as damaged): everything again, from the file now at the path.
            if cat.epoch()?.0 != epoch.0 {
                let path = cat.path().to_path_buf();
                *cat = Catalog::open(&path)?;
            }
            rescan = true;
        }
        if rescan || !pending.is_empty() {
            let dirs: Vec<PathBuf> = if rescan {
                all_dirs()
            } else {
                std::mem::take(&mut pending).into_iter().collect()
            };
            rescan = false;
            pending.clear();
            let stats = refresh_noting(cat, &dirs, &mut blind)?;
            // What was prepared before may have changed (or the catalog was opened again).
            cache.clear();
            refreshes += 1;
            epoch = cat.epoch()?;
            report(WatchEvent::Refreshed(&stats));
        }
        if ticked || lost {
            for (q, mut conn) in waiting.drain(..) {
                let keys = match q {
                    Question::Count => {
                        let _ = conn.write_all(format!("refreshes {refreshes}\n").as_bytes());
                        continue;
                    }
                    Question::Served => {
                        let answer = format!("served {} {}\n", cache.served, cache.read);
                        let _ = conn.write_all(answer.as_bytes());
                        continue;
                    }
                    Question::Fresh(keys) => keys,
                    Question::List { build, form, dirs } => {
                        // A listing made by another build of arbor (a watcher left running
                        // across an upgrade) may be laid out or encoded differently: the
                        // command reads the catalog itself.
                        if build != build_id() {
                            let _ = conn.write_all(b"no\n");
                            continue;
                        }
                        let mut keys: Vec<String> = dirs.iter().map(|(k, _)| k.clone()).collect();
                        // A renderer may look at every session file under the roots.
                        if matches!(form, Form::Render(_)) {
                            keys.extend(roots.iter().map(|r| r.to_string_lossy().into_owned()));
                        }
                        let got = if covered(&keys, &blind, failed) {
                            cache.get(cat, form, &dirs, render).ok().flatten()
                        } else {
                            None
                        };
                        match got {
                            Some(bytes) => send_prepared(conn, bytes),
                            None => {
                                let _ = conn.write_all(b"no\n");
                            }
                        }
                        continue;
                    }
                };
                let answer: &[u8] = if covered(&keys, &blind, failed) {
                    b"ok\n"
                } else {
                    b"no\n"
                };
                let _ = conn.write_all(answer);
            }
        }
        if waiting.is_empty() && !next.is_empty() {
            waiting = std::mem::take(&mut next);
            write_tick()?;
        }
    }
    drop(watcher);
    Ok(())
}
