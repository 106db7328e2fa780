//! A throwaway PostgreSQL server for tests (what was the `arbor-pgtest` crate):
//! [`TestServer::start`] runs `initdb` and `pg_ctl` from Debian's `postgresql` package into a
//! fresh temporary directory, the server listening
//! only on a Unix socket in that directory (no TCP port is opened, except the loopback TLS
//! listener of [`TestServer::start_tls`]), with trust
//! authentication for the superuser `postgres`. Dropping the [`TestServer`] stops the server
//! (`pg_ctl stop -m immediate`) and removes the directory. A server that is never dropped (one
//! kept in a `static` for a whole test binary, or a test process killed by a timeout) is
//! stopped and its directory removed as the process ends, by a small reaper process that
//! waits for the end of a pipe only the test process holds (see `spawn_reaper`).
//!
//! PostgreSQL refuses to run as root: when the tests run as root, `initdb` and `pg_ctl` run as
//! the system user [`RUN_AS_USER`] (created with `useradd --system` when missing) through
//! `runuser`, and the temporary directory is handed to that user (group: the caller's, so the
//! caller can reach the socket).
//!
//! With the environment variable [`URL_ENV`] (`ARBOR_PG_URL`) set, [`TestServer::start`]
//! starts nothing and returns a handle on that existing server instead.
//!
//! ```
//! use arbor_testkit::pg::TestServer;
//!
//! let server = TestServer::start().expect("PostgreSQL test server");
//! let db = server.unique_database("doc").expect("database");
//! let mut client = server.connect_to(&db).expect("connect");
//! let row = client.query_one("SELECT 1 + 1", &[]).expect("query");
//! assert_eq!(row.get::<_, i32>(0), 2);
//! drop(server); // the server is stopped and its directory removed
//! ```
//!
//! [`crate::skip`] is the tests' visible skip (a test that cannot run here says so, and fails under
//! `ARBOR_REQUIRE_ALL=1`).

use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The environment variable naming an existing server to use instead of starting one, as a
/// URL or a key=value connection string that the `postgres` crate accepts (for example
/// `postgres://postgres@%2Fvar%2Frun%2Fpostgresql:5432/postgres`).
pub const URL_ENV: &str = "ARBOR_PG_URL";

/// The environment variable naming a directory holding `initdb` and `pg_ctl`, to use instead
/// of the highest version under `/usr/lib/postgresql/*/bin`.
pub const BINDIR_ENV: &str = "ARBOR_PG_BINDIR";

/// The unprivileged system user that runs PostgreSQL when the caller is root.
pub const RUN_AS_USER: &str = "arbor-pg";

/// The superuser role of a started server (`initdb -U postgres`), trusted without password.
pub const SUPERUSER: &str = "postgres";

/// The database that exists on every server, used for administration.
pub const ADMIN_DB: &str = "postgres";

/// How long to wait for a started server to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A PostgreSQL server for one test: started by [`TestServer::start`] and stopped (its
/// directory removed) on drop, or a handle on an existing server named by [`URL_ENV`].
///
/// ```no_run
/// let server = arbor_testkit::pg::TestServer::start().expect("server");
/// println!("{}", server.conn_string()); // host=/tmp/arbor-pg-XXXX port=NNNNN user=postgres dbname=postgres
/// println!("{}", server.url()); // postgres://postgres@%2Ftmp%2Farbor-pg-XXXX:NNNNN/postgres
/// ```
#[derive(Debug)]
pub struct TestServer {
    target: Target,
    /// The server this handle started; `None` for an external server.
    owned: Option<Owned>,
    /// The loopback TCP port of a server started with TLS ([`TestServer::start_tls`]).
    tls_port: Option<u16>,
}

#[derive(Debug)]
enum Target {
    /// A server of ours: its socket is `<dir>/.s.PGSQL.<port>`.
    Socket { dir: PathBuf, port: u16 },
    /// An existing server ([`URL_ENV`]).
    External { url: String },
}

/// A started server: stopped when dropped, then its directory removed (the `TempDir` field
/// is dropped after [`Drop::drop`] runs).
#[derive(Debug)]
struct Owned {
    pg_ctl: PathBuf,
    data: PathBuf,
    log: PathBuf,
    run_as: Option<String>,
    pid: Option<u32>,
    dir: tempfile::TempDir,
    /// The write end of the reaper's pipe and the reaper (see [`spawn_reaper`]): the pipe
    /// closes when this process ends, however it ends.
    reaper: Option<(std::io::PipeWriter, std::process::Child)>,
}

impl TestServer {
    /// Starts a fresh server (or, with [`URL_ENV`] set, checks that the existing server
    /// answers) and waits until it accepts connections (`SELECT 1` answers).
    ///
    /// Errors name the step that failed with the tool's output (and the server log's tail).
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// assert!(server.connect().is_ok());
    /// ```
    pub fn start() -> Result<TestServer, String> {
        match std::env::var(URL_ENV) {
            Ok(url) if !url.trim().is_empty() => {
                let server = TestServer {
                    target: Target::External {
                        url: url.trim().to_string(),
                    },
                    owned: None,
                    tls_port: None,
                };
                wait_ready(&server.conn_string(), Duration::from_secs(5))
                    .map_err(|e| format!("{URL_ENV} server does not answer: {e}"))?;
                Ok(server)
            }
            _ => start_owned(None),
        }
    }

    /// Starts a fresh server that also listens on `127.0.0.1` (a free port) for TLS
    /// connections only, with the certificate chain `cert` and its key `key` (PEM files; the
    /// certificate must name `127.0.0.1`). Clients reach it with [`TestServer::tls_url_for`];
    /// the Unix socket stays as with [`TestServer::start`] (no TLS there). Never an
    /// external server.
    ///
    /// ```no_run
    /// # use std::path::Path;
    /// let server = arbor_testkit::pg::TestServer::start_tls(Path::new("server.crt"), Path::new("server.key"))
    ///     .expect("server");
    /// assert!(server.tls_url_for("t1").is_some());
    /// ```
    ///
    /// # Errors
    /// As [`TestServer::start`]; also when a file cannot be read.
    pub fn start_tls(cert: &Path, key: &Path) -> Result<TestServer, String> {
        let read = |p: &Path| fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
        start_owned(Some((read(cert)?, read(key)?)))
    }

    /// The URL of database `db` over TLS on the loopback port (`sslmode=require`); `None`
    /// for a server not started by [`TestServer::start_tls`].
    pub fn tls_url_for(&self, db: &str) -> Option<String> {
        self.tls_port.map(|port| {
            format!(
                "postgres://{SUPERUSER}@127.0.0.1:{port}/{}?sslmode=require",
                percent_encode(db)
            )
        })
    }

    /// Whether this handle started (and will stop) its server; false for [`URL_ENV`].
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// if server.owns_server() {
    ///     assert!(server.dir().is_some());
    /// }
    /// ```
    pub fn owns_server(&self) -> bool {
        self.owned.is_some()
    }

    /// The temporary directory of a started server (its socket, `data/` and `server.log`).
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// let dir = server.dir().expect("a started server").to_path_buf();
    /// drop(server);
    /// assert!(!dir.exists());
    /// ```
    pub fn dir(&self) -> Option<&Path> {
        self.owned.as_ref().map(|o| o.dir.path())
    }

    /// The process id of a started server's postmaster.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// let pid = server.pid().expect("a started server");
    /// assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    /// ```
    pub fn pid(&self) -> Option<u32> {
        self.owned.as_ref().and_then(|o| o.pid)
    }

    /// The server log of a started server (for a failing test's message).
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// eprintln!("{}", server.log().unwrap_or_default());
    /// ```
    pub fn log(&self) -> Option<String> {
        self.owned
            .as_ref()
            .and_then(|o| fs::read_to_string(&o.log).ok())
    }

    /// The key=value connection string of the `postgres` database, for example
    /// `host=/tmp/arbor-pg-XXXX port=NNNNN user=postgres dbname=postgres`. For an external
    /// server, the [`URL_ENV`] value as given.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// let client = postgres::Client::connect(&server.conn_string(), postgres::NoTls);
    /// assert!(client.is_ok());
    /// ```
    pub fn conn_string(&self) -> String {
        self.conn_string_for(ADMIN_DB)
    }

    /// The connection string of database `db` (see [`TestServer::conn_string`]). For an
    /// external server, its URL with the database replaced.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// server.create_database("t1").expect("database");
    /// assert!(server.conn_string_for("t1").ends_with("dbname=t1"));
    /// ```
    pub fn conn_string_for(&self, db: &str) -> String {
        match &self.target {
            Target::Socket { dir, port } => format!(
                "host={} port={port} user={SUPERUSER} dbname={}",
                quote_value(&dir.to_string_lossy()),
                quote_value(db)
            ),
            Target::External { url } => url_with_dbname(url, db),
        }
    }

    /// The URL of the `postgres` database, the socket directory percent-encoded as the host,
    /// for example `postgres://postgres@%2Ftmp%2Farbor-pg-XXXX:NNNNN/postgres` (the form the
    /// `postgres` crate and libpq accept). For an external server, the [`URL_ENV`] value.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// assert!(postgres::Client::connect(&server.url(), postgres::NoTls).is_ok());
    /// ```
    pub fn url(&self) -> String {
        self.url_for(ADMIN_DB)
    }

    /// The URL of database `db` (see [`TestServer::url`]).
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// assert!(server.url_for("t1").ends_with("/t1"));
    /// ```
    pub fn url_for(&self, db: &str) -> String {
        match &self.target {
            Target::Socket { dir, port } => format!(
                "postgres://{SUPERUSER}@{}:{port}/{}",
                percent_encode(&dir.to_string_lossy()),
                percent_encode(db)
            ),
            Target::External { url } => url_with_dbname(url, db),
        }
    }

    /// A new connection (without TLS) to the `postgres` database.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// let mut client = server.connect().expect("connect");
    /// client.batch_execute("SELECT 1").expect("query");
    /// ```
    pub fn connect(&self) -> Result<postgres::Client, String> {
        self.connect_to(ADMIN_DB)
    }

    /// A new connection (without TLS) to database `db`.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// server.create_database("t1").expect("database");
    /// let mut client = server.connect_to("t1").expect("connect");
    /// client.batch_execute("CREATE TABLE t (x int)").expect("create");
    /// ```
    pub fn connect_to(&self, db: &str) -> Result<postgres::Client, String> {
        postgres::Client::connect(&self.conn_string_for(db), postgres::NoTls)
            .map_err(|e| format!("connecting to database {db:?}: {}", pg_error(&e)))
    }

    /// Creates database `name` (any name: it is quoted as an identifier). It is an error if
    /// it exists. On an external server the database outlives the handle: prefer
    /// [`TestServer::unique_database`] there.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// server.create_database("sessions").expect("database");
    /// assert!(server.create_database("sessions").is_err());
    /// ```
    pub fn create_database(&self, name: &str) -> Result<(), String> {
        let mut client = self.connect()?;
        client
            .batch_execute(&format!("CREATE DATABASE {}", quote_ident(name)))
            .map_err(|e| format!("CREATE DATABASE {name:?}: {}", pg_error(&e)))
    }

    /// Creates a database whose name starts with `prefix` and is unique across processes and
    /// calls (`<prefix>_<pid>_<counter>_<nanos>`), and returns its name.
    ///
    /// ```no_run
    /// let server = arbor_testkit::pg::TestServer::start().expect("server");
    /// let a = server.unique_database("t").expect("database");
    /// let b = server.unique_database("t").expect("database");
    /// assert_ne!(a, b);
    /// ```
    pub fn unique_database(&self, prefix: &str) -> Result<String, String> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "{prefix}_{}_{}_{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        self.create_database(&name)?;
        Ok(name)
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // Stop the server; the TempDir field then removes the directory.
        if self.data.join("postmaster.pid").exists() {
            let mut cmd = run_as(self.run_as.as_deref(), &self.pg_ctl);
            cmd.arg("stop")
                .arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "-w", "-t", "30", "-s"])
                .current_dir(self.dir.path());
            let _ = run(cmd);
        }
        if let Some(pid) = self.pid {
            if process_running(pid) {
                // pg_ctl failed: kill the postmaster (its backends exit when it is gone).
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                let deadline = Instant::now() + Duration::from_secs(5);
                while process_running(pid) && Instant::now() < deadline {
                    thread::sleep(Duration::from_millis(10));
                }
            }
        }
        // The reaper finds the server stopped and removes the directory (as the TempDir does).
        if let Some((pipe, mut reaper)) = self.reaper.take() {
            drop(pipe);
            let _ = reaper.wait();
        }
    }
}

/// Starts a server of our own (see the crate's doc).
/// A free TCP port on the loopback interface (bound, then released for the server).
fn free_tcp_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port on 127.0.0.1: {e}"))
}

/// `tls`: the certificate chain and key (PEM) for a loopback TLS listener.
fn start_owned(tls: Option<(Vec<u8>, Vec<u8>)>) -> Result<TestServer, String> {
    let bin = find_bindir()?;
    let initdb = bin.join("initdb");
    let pg_ctl = bin.join("pg_ctl");
    let user = if crate::skip::am_root() {
        Some(ensure_user(RUN_AS_USER)?)
    } else {
        None
    };
    // Under /tmp, not $TMPDIR: the run-as user must reach it, and a socket path must stay
    // under ~100 bytes.
    let dir = tempfile::Builder::new()
        .prefix("arbor-pg-")
        .tempdir_in("/tmp")
        .map_err(|e| format!("creating a temporary directory in /tmp: {e}"))?;
    if let Some(u) = &user {
        // Owner: the run-as user; group: ours, so that we reach the socket (mode 0750).
        std::os::unix::fs::chown(dir.path(), Some(u.uid), Some(egid()))
            .map_err(|e| format!("chown {} to {}: {e}", dir.path().display(), u.name))?;
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o750))
            .map_err(|e| format!("chmod {}: {e}", dir.path().display()))?;
    }
    let data = dir.path().join("data");
    let log = dir.path().join("server.log");
    let run_as_name = user.as_ref().map(|u| u.name.clone());
    let sock_dir = dir.path().to_path_buf();
    let reaper = spawn_reaper(run_as_name.as_deref(), &pg_ctl, &data, dir.path())?;
    let port = pick_port();
    // From here on, dropping `server` stops whatever was started and removes the directory.
    let mut server = TestServer {
        target: Target::Socket {
            dir: sock_dir.clone(),
            port,
        },
        owned: Some(Owned {
            pg_ctl: pg_ctl.clone(),
            data: data.clone(),
            log: log.clone(),
            run_as: run_as_name.clone(),
            pid: None,
            dir,
            reaper: Some(reaper),
        }),
        tls_port: None,
    };

    let mut cmd = run_as(run_as_name.as_deref(), &initdb);
    cmd.arg("-D")
        .arg(&data)
        .args([
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        ])
        .current_dir(&sock_dir);
    run_checked(cmd, "initdb")?;

    // Only the Unix socket in our directory; the port names the socket file (.s.PGSQL.PORT),
    // which no other server shares, the directory being new.
    let mut conf = format!(
        "\n# arbor-testkit\nlisten_addresses = ''\nunix_socket_directories = '{}'\nport = {port}\n\
         fsync = off\nfull_page_writes = off\nlogging_collector = off\n",
        sock_dir.to_string_lossy().replace('\'', "''")
    );
    if let Some((cert, key)) = &tls {
        // The loopback interface only, TLS only (pg_hba: hostssl trusted, plain refused).
        let tcp = free_tcp_port()?;
        server.tls_port = Some(tcp);
        let write_private = |name: &str, bytes: &[u8]| -> Result<(), String> {
            let p = data.join(name);
            fs::write(&p, bytes).map_err(|e| format!("writing {}: {e}", p.display()))?;
            fs::set_permissions(&p, fs::Permissions::from_mode(0o600))
                .map_err(|e| format!("chmod {}: {e}", p.display()))?;
            if let Some(u) = &user {
                std::os::unix::fs::chown(&p, Some(u.uid), None)
                    .map_err(|e| format!("chown {}: {e}", p.display()))?;
            }
            Ok(())
        };
        write_private("server.crt", cert)?;
        write_private("server.key", key)?;
        // A socket's port and the TCP port are one setting: the socket file takes the TCP
        // port's number.
        conf = conf.replace(&format!("port = {port}\n"), &format!("port = {tcp}\n"));
        conf.push_str(
            "listen_addresses = '127.0.0.1'\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
        );
        let hba_path = data.join("pg_hba.conf");
        let hba = fs::read_to_string(&hba_path)
            .map_err(|e| format!("reading {}: {e}", hba_path.display()))?;
        fs::write(
            &hba_path,
            format!(
                "hostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n{hba}"
            ),
        )
        .map_err(|e| format!("writing {}: {e}", hba_path.display()))?;
        server.target = Target::Socket {
            dir: sock_dir.clone(),
            port: tcp,
        };
    }
    let conf_path = data.join("postgresql.conf");
    let mut text = fs::read_to_string(&conf_path)
        .map_err(|e| format!("reading {}: {e}", conf_path.display()))?;
    text.push_str(&conf);
    fs::write(&conf_path, text).map_err(|e| format!("writing {}: {e}", conf_path.display()))?;

    let mut cmd = run_as(run_as_name.as_deref(), &pg_ctl);
    cmd.arg("start")
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(&log)
        .args(["-w", "-t", "30", "-s"])
        .current_dir(&sock_dir);
    let started = run_checked(cmd, "pg_ctl start");
    if let Some(owned) = server.owned.as_mut() {
        owned.pid = read_pid(&data);
    }
    started.map_err(|e| format!("{e}\nserver log:\n{}", tail(&log)))?;
    wait_ready(&server.conn_string(), READY_TIMEOUT).map_err(|e| {
        format!(
            "server did not accept connections: {e}\nserver log:\n{}",
            tail(&log)
        )
    })?;
    Ok(server)
}

/// Connects and runs `SELECT 1` until it succeeds or `timeout` passes.
fn wait_ready(conn: &str, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let attempt = postgres::Client::connect(conn, postgres::NoTls)
            .and_then(|mut c| c.simple_query("SELECT 1").map(|_| ()));
        match attempt {
            Ok(()) => return Ok(()),
            Err(e) if Instant::now() >= deadline => return Err(pg_error(&e)),
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// `$ARBOR_PG_BINDIR`, or the highest version's `/usr/lib/postgresql/<version>/bin` that has
/// both `initdb` and `pg_ctl`.
fn find_bindir() -> Result<PathBuf, String> {
    let has_tools = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(dir) = std::env::var_os(BINDIR_ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return if has_tools(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "{BINDIR_ENV}={} has no initdb and pg_ctl",
                dir.display()
            ))
        };
    }
    let root = Path::new("/usr/lib/postgresql");
    let mut best: Option<(Vec<u32>, PathBuf)> = None;
    if let Ok(entries) = fs::read_dir(root) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(version) = name
                .split('.')
                .map(str::parse::<u32>)
                .collect::<Result<Vec<u32>, _>>()
            else {
                continue;
            };
            let bin = entry.path().join("bin");
            if has_tools(&bin) && best.as_ref().is_none_or(|(v, _)| version > *v) {
                best = Some((version, bin));
            }
        }
    }
    best.map(|(_, bin)| bin).ok_or_else(|| {
        "no PostgreSQL server found: no /usr/lib/postgresql/*/bin/{initdb,pg_ctl} \
         (install Debian's postgresql package, or set ARBOR_PG_URL or ARBOR_PG_BINDIR)"
            .to_string()
    })
}

/// The run-as user's name and ids.
struct User {
    name: String,
    uid: u32,
}

/// Creates the system user `name` when missing (serialized in this process; a concurrent
/// `useradd` by another process is retried) and returns its uid.
fn ensure_user(name: &str) -> Result<User, String> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut last_err = String::new();
    for attempt in 0..10 {
        if let Some(uid) = user_id(name) {
            return Ok(User {
                name: name.to_string(),
                uid,
            });
        }
        if attempt > 0 {
            thread::sleep(Duration::from_millis(100));
        }
        let mut cmd = Command::new("useradd");
        cmd.args([
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            name,
        ]);
        match run_checked(cmd, "useradd") {
            Ok(_) => {}
            Err(e) => last_err = e,
        }
    }
    user_id(name)
        .map(|uid| User {
            name: name.to_string(),
            uid,
        })
        .ok_or_else(|| format!("creating system user {name}: {last_err}"))
}

/// `id -u NAME`, or `None` when there is no such user.
fn user_id(name: &str) -> Option<u32> {
    let out = Command::new("id")
        .args(["-u", name])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// A command running `program`, through `runuser -u USER --` when `user` is given.
/// The environment variables libpq and the PostgreSQL tools read, removed from every tool
/// started for a server of ours.
const PG_ENV: [&str; 6] = [
    "PGDATA",
    "PGPORT",
    "PGHOST",
    "PGUSER",
    "PGDATABASE",
    "PGOPTIONS",
];

fn run_as(user: Option<&str>, program: &Path) -> Command {
    let mut cmd = match user {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    };
    // The server's settings are ours alone.
    for var in PG_ENV {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Starts the reaper of a server's directory `dir`: a shell in its own process group that
/// blocks reading a pipe whose only write end this process keeps (`std::io::pipe` makes both
/// ends close-on-exec, so no server or tool started later inherits it). When the write end
/// closes (the [`TestServer`] dropped, or this process gone: a `static` server is never
/// dropped, and a test binary killed by a timeout drops nothing) the read returns and the
/// reaper stops the server if it still runs (`pg_ctl stop -m immediate`, as the run-as user)
/// and removes the directory. Without it every run of a test binary that keeps its server in
/// a `static` left a running PostgreSQL and ~180 MB under /tmp.
fn spawn_reaper(
    user: Option<&str>,
    pg_ctl: &Path,
    data: &Path,
    dir: &Path,
) -> Result<(std::io::PipeWriter, std::process::Child), String> {
    use std::os::unix::process::CommandExt;
    let (read, write) = std::io::pipe().map_err(|e| format!("creating the reaper's pipe: {e}"))?;
    let script = r#"read _ignored
data=$1; dir=$2; shift 2
if [ -f "$data/postmaster.pid" ]; then "$@" stop -D "$data" -m immediate -w -t 30 -s; fi
rm -rf -- "$dir""#;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg("arbor-pg-reaper")
        .arg(data)
        .arg(dir);
    if let Some(user) = user {
        cmd.args(["runuser", "-u", user, "--"]);
    }
    cmd.arg(pg_ctl)
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    for var in PG_ENV {
        cmd.env_remove(var);
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("starting the reaper of {}: {e}", dir.display()))?;
    Ok((write, child))
}

fn run(mut cmd: Command) -> Result<Output, String> {
    cmd.output()
        .map_err(|e| format!("running {:?}: {e}", cmd.get_program()))
}

/// Runs `cmd`, an error (with its output) unless it exits with status 0.
fn run_checked(cmd: Command, what: &str) -> Result<Output, String> {
    let out = run(cmd)?;
    if out.status.success() {
        return Ok(out);
    }
    let mut msg = format!("{what} failed ({})", out.status);
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        if !text.trim().is_empty() {
            let _ = write!(msg, "\n{}", text.trim_end());
        }
    }
    Err(msg)
}

/// The postmaster's pid: the first line of `data/postmaster.pid`.
fn read_pid(data: &Path) -> Option<u32> {
    fs::read_to_string(data.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Whether process `pid` exists and is not a zombie.
fn process_running(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// The last 4 KB of the server log.
fn tail(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let start = text.len().saturating_sub(4096);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..].to_string()
}

/// A port number in 20000..60000, different for each server of this process. It only names
/// the socket file in the server's own directory, so it cannot clash; nothing listens on TCP.
fn pick_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = std::process::id()
        .wrapping_mul(7919)
        .wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed));
    (20000 + n % 40000) as u16
}

fn egid() -> u32 {
    // SAFETY: getegid has no preconditions and cannot fail.
    unsafe { libc::getegid() }
}

/// A value of a key=value connection string, single-quoted when it needs to be.
fn quote_value(v: &str) -> String {
    if !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A client error with the server's message, when it has one (`postgres::Error` displays a
/// server error as only "db error").
///
/// ```no_run
/// let server = arbor_testkit::pg::TestServer::start().expect("server");
/// let mut client = server.connect().expect("connect");
/// let err = client.batch_execute("SELECT nonsense").expect_err("an error");
/// assert!(arbor_testkit::pg::pg_error(&err).contains("42703"));
/// ```
pub fn pg_error(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        None => {
            // The cause of a connection error is in the source chain, not in Display.
            let mut msg = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                let _ = write!(msg, ": {cause}");
                source = cause.source();
            }
            msg
        }
    }
}

/// An SQL identifier, double-quoted.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `url` with its database (the path) replaced by `db`; a key=value string gets (or has
/// replaced) its `dbname=`.
fn url_with_dbname(url: &str, db: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        // key=value form: append dbname, which overrides an earlier one.
        return format!("{url} dbname={}", quote_value(db));
    };
    let after = scheme_end + 3;
    let rest = &url[after..];
    let authority_end = rest.find(['/', '?', '#']).map_or(url.len(), |i| after + i);
    let query_start = url[authority_end..]
        .find(['?', '#'])
        .map_or(url.len(), |i| authority_end + i);
    format!(
        "{}/{}{}",
        &url[..authority_end],
        percent_encode(db),
        &url[query_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_dbname_replaced() {
        assert_eq!(
            url_with_dbname("postgres://u@h:5/p?sslmode=disable", "x y"),
            "postgres://u@h:5/x%20y?sslmode=disable"
        );
        assert_eq!(
            url_with_dbname("postgresql://u@h", "d"),
            "postgresql://u@h/d"
        );
        assert_eq!(
            url_with_dbname("postgres://h?x=1", "d"),
            "postgres://h/d?x=1"
        );
        assert_eq!(
            url_with_dbname("host=/s user=u", "d"),
            "host=/s user=u dbname=d"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_value("/tmp/a"), "/tmp/a");
        assert_eq!(quote_value("a b'c\\"), "'a b\\'c\\\\'");
        assert_eq!(quote_value(""), "''");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(percent_encode("/tmp/arbor-pg-x"), "%2Ftmp%2Farbor-pg-x");
    }

    #[test]
    fn ports_in_range() {
        for _ in 0..100 {
            assert!((20000..60000).contains(&pick_port()));
        }
    }
}
