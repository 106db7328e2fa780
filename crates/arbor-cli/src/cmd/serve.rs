//! `arbor serve`: the flags, handed to `arbor_serve` (the web app lives in its own crate).
use anyhow::Result;
use arbor_store::locate::Locator;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `arbor serve`.
pub struct ServeOpts {
    /// `--dir` / `--all`.
    pub scope: crate::cli::ScopeOpts,
    /// `--addr`.
    pub addr: std::net::SocketAddr,
    /// `--open`.
    pub open: bool,
    /// `--allow-remote`.
    pub allow_remote: bool,
    /// `--token-file F`.
    pub token_file: Option<PathBuf>,
    /// `--from URL`.
    pub from: Option<String>,
    /// `--allow-writes`.
    pub allow_writes: bool,
    /// `--no-redact`.
    pub no_redact: bool,
    /// `--no-watch`.
    pub no_watch: bool,
    /// `--catalog`.
    pub catalog: Option<PathBuf>,
}

/// `arbor serve`.
pub fn serve(o: &ServeOpts, loc: &Locator) -> Result<ExitCode> {
    crate::progress::turn_off();
    let opts = arbor_serve::Options {
        agent_dir: loc.agent_override().map(PathBuf::from),
        dir: o.scope.dir.clone(),
        all: o.scope.all,
        catalog: o.catalog.clone(),
        from: o.from.clone(),
        allow_writes: o.allow_writes,
        redact: !o.no_redact,
        watch: !o.no_watch,
    };
    let listen = arbor_serve::Listen {
        addr: o.addr,
        allow_remote: o.allow_remote,
        token_file: o.token_file.clone(),
    };
    arbor_serve::serve(
        opts,
        listen,
        |url| {
            // The one line a script (or a test) waits for.
            eprintln!("arbor serve: listening on {url}");
            if o.open {
                open_browser(url);
            }
        },
        crate::stop::signalled(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Opens `url` in the desktop's browser (`xdg-open`, which honours `$BROWSER`; `open` on
/// macOS). A failure is said, not fatal: the opener missing, or exiting with an error (no
/// desktop, no browser), gets one line naming it and the URL to open by hand.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let child = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match child {
        Err(e) => eprintln!("arbor serve: cannot open a browser ({opener}: {e}); open {url}"),
        Ok(mut c) => {
            let url = url.to_string();
            // Waited for on a thread of its own: the server is already answering.
            let _ = std::thread::Builder::new()
                .name("arbor-serve-open".into())
                .spawn(move || match c.wait() {
                    Ok(st) if st.success() => {}
                    Ok(st) => eprintln!(
                        "arbor serve: cannot open a browser ({opener} failed: {st}); open {url}"
                    ),
                    Err(e) => {
                        eprintln!("arbor serve: cannot open a browser ({opener}: {e}); open {url}")
                    }
                });
        }
    }
}
