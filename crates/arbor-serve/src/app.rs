//! The app's state: what it serves (the catalog, or a shared store), how it was started, and
//! its per-run secrets (the CSRF token).
use crate::ServeError;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Mutex;

/// What `arbor serve` serves and may do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The agent directory (`None`: the environment's and pi's/omp's defaults).
    pub agent_dir: Option<PathBuf>,
    /// `--dir`: only the sessions of this session directory.
    pub dir: Option<PathBuf>,
    /// `--all`: every project's sessions by default (the page's scope can still be changed).
    pub all: bool,
    /// The catalog file (`None`: `$ARBOR_CATALOG`, else the XDG cache, as the CLI).
    pub catalog: Option<PathBuf>,
    /// `--from URL`: serve a shared store (`postgres://…`, `sqlite:PATH`) read-only instead
    /// of this machine's sessions.
    pub from: Option<String>,
    /// `--allow-writes`: rename, label, delete to the trash, fork.
    pub allow_writes: bool,
    /// Whether everything served is redacted (on unless `--no-redact`).
    pub redact: bool,
    /// Whether the server keeps the catalog fresh with a watcher of its own (on unless
    /// `--no-watch`).
    pub watch: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            agent_dir: None,
            dir: None,
            all: false,
            catalog: None,
            from: None,
            allow_writes: false,
            redact: true,
            watch: true,
        }
    }
}

impl Options {
    /// The locator of these options (agent directory and scope), as the CLI builds it.
    pub fn locator(&self) -> arbor_store::locate::Locator {
        arbor_store::locate::Locator::new(self.agent_dir.clone()).scoped(self.dir.clone(), self.all)
    }

    /// The default scope of these options (`--dir`, `--all`, else the current project).
    pub fn scope(&self) -> arbor_store::locate::Scope<'_> {
        arbor_store::locate::Scope::of(self.dir.as_deref(), self.all)
    }
}

/// Where and how the server listens.
#[derive(Debug, Clone)]
pub struct Listen {
    /// `--addr` (default `127.0.0.1:8777`).
    pub addr: SocketAddr,
    /// `--allow-remote`: listen on a non-loopback address (needs `token_file`).
    pub allow_remote: bool,
    /// `--token-file F`: every request must carry the token.
    pub token_file: Option<PathBuf>,
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            addr: SocketAddr::from(([127, 0, 0, 1], 8777)),
            allow_remote: false,
            token_file: None,
        }
    }
}

/// Listen options checked, the token read ([`arbor_store::listen::Checked`], the one check
/// `arbor mcp --http` makes too).
pub type Checked = arbor_store::listen::Checked;

impl Listen {
    /// Refuses what must not run: a non-loopback address without `--allow-remote`,
    /// `--allow-remote` without a token, a token file others may read, a short token
    /// ([`arbor_store::listen::check`]).
    pub fn check(&self) -> Result<Checked, ServeError> {
        arbor_store::listen::check(
            "--addr",
            self.addr,
            self.allow_remote,
            self.token_file.as_deref(),
        )
        .map_err(|e| ServeError::Refused(e.0))
    }
}

/// The running app.
pub struct App {
    /// How it was started.
    pub opts: Options,
    /// The locator of the options.
    pub loc: arbor_store::locate::Locator,
    /// The catalog (one connection; calls take turns).
    pub catalog: Mutex<arbor_index::Catalog>,
    /// The token every request must carry (`--token-file`), if any.
    pub token: Option<Vec<u8>>,
    /// Whether the server listens on a non-loopback address.
    pub remote: bool,
    /// This run's CSRF token: every write form carries it, every write checks it.
    pub csrf: String,
    /// Team mode (`--from`): the shared store served, `None` for this machine's sessions.
    pub team: Option<crate::team::Team>,
    /// The catalog's changes as the server's own watcher reports them: a count that goes up
    /// at each refresh that changed something (the live pages wait on it).
    pub changes: tokio::sync::watch::Sender<u64>,
    /// Whether the server's own watcher has finished its first refresh and vouches for the
    /// catalog (else the live pages look again every few seconds).
    pub watching: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Raised when the server stops: the event streams end then (a graceful shutdown waits
    /// for every open connection, and an event stream never ends by itself).
    pub stopping: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("opts", &self.opts).finish()
    }
}

/// What team mode (`--from`) does not run with: `--allow-writes` (a write would change the
/// private mirror, not the store, and the next refresh would undo it or conflict with it; the
/// team's store is served read-only) and `--dir` (only the store's sessions are served).
fn team_refusals(opts: &Options) -> Result<(), ServeError> {
    if opts.allow_writes {
        return Err(ServeError::Refused(
            "--allow-writes with --from: a shared store is served read-only (a rename, label, \
             trash or fork would change only this server's copy of it); use arbor sync and \
             the CLI to change sessions"
                .into(),
        ));
    }
    if opts.dir.is_some() {
        return Err(ServeError::Refused(
            "--dir with --from: team mode serves the shared store's sessions only".into(),
        ));
    }
    Ok(())
}

impl App {
    /// The app for `opts`: opens the catalog (the CLI's file, or `opts.catalog`).
    ///
    /// With `opts.from` (team mode) it opens the shared store read-only and serves its
    /// private mirror instead ([`crate::team::Team`]): the mirror's agent directory and
    /// catalog replace the options' own, every project is in scope, and the mirror is
    /// refreshed on a timer. `--allow-writes` and `--dir` are refused with it.
    pub fn new(mut opts: Options, listen: &Checked) -> Result<App, ServeError> {
        let team = match opts.from.clone() {
            Some(url) => {
                team_refusals(&opts)?;
                let team = crate::team::Team::open(&url)?;
                opts.agent_dir = Some(team.agent_dir());
                opts.catalog = Some(team.catalog_path());
                opts.dir = None;
                opts.all = true;
                team.refresh_every(crate::team::Team::period());
                Some(team)
            }
            None => None,
        };
        let path = opts
            .catalog
            .clone()
            .unwrap_or_else(arbor_index::default_catalog_path);
        let catalog = arbor_index::Catalog::open_or_memory(&path)?;
        let csrf = {
            use rand::Rng;
            let b: [u8; 16] = rand::rng().random();
            b.iter().map(|x| format!("{x:02x}")).collect()
        };
        let (changes, _) = tokio::sync::watch::channel(0u64);
        let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        if opts.watch && catalog.report.in_memory_because.is_none() && opts.from.is_none() {
            crate::live::watch(
                catalog.path().to_path_buf(),
                opts.locator(),
                changes.clone(),
                watching.clone(),
            );
        }
        Ok(App {
            loc: opts.locator(),
            catalog: Mutex::new(catalog),
            changes,
            watching,
            stopping: tokio::sync::watch::channel(false).0,
            token: listen.token.clone(),
            remote: listen.remote,
            csrf,
            team,
            opts,
        })
    }

    /// The catalog, for one call.
    pub fn catalog(&self) -> Result<std::sync::MutexGuard<'_, arbor_index::Catalog>, ServeError> {
        self.catalog.lock().map_err(|_| {
            ServeError::Other("the catalog is unusable (a call failed while using it)".into())
        })
    }

    /// `text` redacted unless the server was started with `--no-redact`.
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if self.opts.redact {
            arbor_view::secrets::redact(text)
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }
}
