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
        use arbor_store::locate::Scope;
        match (&self.dir, self.all) {
            (Some(d), _) => Scope::Dir(d),
            (None, true) => Scope::All,
            (None, false) => Scope::Current,
        }
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

/// Listen options checked, the token read.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The address to bind.
    pub addr: SocketAddr,
    /// The token every request must carry, if any.
    pub token: Option<Vec<u8>>,
    /// Whether the address is not a loopback one.
    pub remote: bool,
}

impl Listen {
    /// Refuses what must not run: a non-loopback address without `--allow-remote`,
    /// `--allow-remote` without a token.
    pub fn check(&self) -> Result<Checked, ServeError> {
        let remote = !self.addr.ip().is_loopback();
        if remote && !self.allow_remote {
            return Err(ServeError::Refused(format!(
                "--addr {}: not a loopback address; to listen there, add --allow-remote --token-file FILE",
                self.addr
            )));
        }
        Ok(Checked {
            addr: self.addr,
            token: None,
            remote,
        })
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
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("opts", &self.opts).finish()
    }
}

impl App {
    /// The app for `opts`: opens the catalog (the CLI's file, or `opts.catalog`).
    pub fn new(opts: Options, listen: &Checked) -> Result<App, ServeError> {
        let path = opts
            .catalog
            .clone()
            .unwrap_or_else(arbor_index::default_catalog_path);
        let catalog = arbor_index::Catalog::open_or_memory(&path)?;
        if opts.watch && catalog.report.in_memory_because.is_none() {
            // As `arbor mcp`: the pages then take the catalog without a look at every file.
            arbor_index::watch::spawn(
                catalog.path().to_path_buf(),
                opts.locator(),
                "arbor-serve-watch",
                "arbor serve",
            );
        }
        let csrf = {
            use rand::Rng;
            let b: [u8; 16] = rand::rng().random();
            b.iter().map(|x| format!("{x:02x}")).collect()
        };
        Ok(App {
            loc: opts.locator(),
            catalog: Mutex::new(catalog),
            token: listen.token.clone(),
            remote: listen.remote,
            csrf,
            team: None,
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
