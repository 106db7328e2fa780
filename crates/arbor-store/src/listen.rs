//! Who may talk to arbor's network servers (`arbor mcp --http`, `arbor serve`): loopback only
//! unless `--allow-remote`, which needs a bearer token from a file only its owner may read;
//! the token compared in constant time. The one implementation both servers use.

use std::net::SocketAddr;
use std::path::Path;

/// The shortest token accepted, in bytes.
pub const MIN_TOKEN: usize = 16;

/// Why a server must not start as asked (said to the user as is).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

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

/// Refuses what must not run: a non-loopback `addr` without `allow_remote`, `allow_remote`
/// without a token file, a token file others may read (as ssh refuses such a key), an empty
/// or short token. `flag` names the address's flag in the messages (`--http`, `--addr`).
///
/// ```
/// use arbor_store::listen::check;
/// let e = check("--addr", "0.0.0.0:8765".parse().unwrap(), false, None).unwrap_err();
/// assert!(e.to_string().contains("not a loopback address"));
/// assert!(check("--addr", "127.0.0.1:8765".parse().unwrap(), false, None).is_ok());
/// let e = check("--addr", "0.0.0.0:8765".parse().unwrap(), true, None).unwrap_err();
/// assert!(e.to_string().contains("--token-file"));
/// ```
pub fn check(
    flag: &str,
    addr: SocketAddr,
    allow_remote: bool,
    token_file: Option<&Path>,
) -> Result<Checked, Refused> {
    let loopback = addr.ip().is_loopback();
    if !loopback && !allow_remote {
        return Err(Refused(format!(
            "{flag} {addr}: not a loopback address; to listen there, add --allow-remote --token-file FILE (every request must then carry the file's token)"
        )));
    }
    if allow_remote && token_file.is_none() {
        return Err(Refused(
            "--allow-remote needs --token-file FILE (a bearer token every request must carry)"
                .into(),
        ));
    }
    let token = match token_file {
        None => None,
        Some(f) => Some(read_token(f)?),
    };
    Ok(Checked {
        addr,
        token,
        remote: !loopback,
    })
}

/// The token of `--token-file`: refused when others may read the file or it is not a
/// regular file; trimmed; at least [`MIN_TOKEN`] bytes, one word.
pub fn read_token(f: &Path) -> Result<Vec<u8>, Refused> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| Refused(format!("--token-file {}: {why}", f.display()));
    let meta = std::fs::metadata(f).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(refuse(format!(
            "readable by others (mode {mode:03o}); chmod 600 {}",
            f.display()
        )));
    }
    let text = std::fs::read(f).map_err(|e| refuse(e.to_string()))?;
    let token = text.trim_ascii().to_vec();
    if token.len() < MIN_TOKEN {
        return Err(refuse(format!(
            "the token must be at least {MIN_TOKEN} characters (e.g. openssl rand -hex 32 > FILE)"
        )));
    }
    if token
        .iter()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(refuse(
            "the token must be one word (no spaces or control characters)".into(),
        ));
    }
    Ok(token)
}

/// Whether `given` is `want`, in time that does not depend on where they differ.
///
/// ```
/// use arbor_store::listen::same_token;
/// assert!(same_token(b"0123456789abcdef", b"0123456789abcdef"));
/// assert!(!same_token(b"0123456789abcdeX", b"0123456789abcdef"));
/// assert!(!same_token(b"short", b"0123456789abcdef"));
/// ```
pub fn same_token(given: &[u8], want: &[u8]) -> bool {
    // Every byte of `want` is looked at whatever `given` holds; only the length can show.
    let mut diff = u8::from(given.len() != want.len());
    for (k, w) in want.iter().enumerate() {
        let g = given.get(k).copied().unwrap_or(!*w);
        diff |= g ^ w;
    }
    std::hint::black_box(diff) == 0
}

/// Whether an `Authorization` header's value (`None`: no such header) is `Bearer TOKEN`
/// with the token `want`.
///
/// ```
/// use arbor_store::listen::bearer;
/// assert!(bearer(Some(b"Bearer 0123456789abcdef"), b"0123456789abcdef"));
/// assert!(bearer(Some(b"bearer  0123456789abcdef "), b"0123456789abcdef"));
/// assert!(!bearer(Some(b"Basic 0123456789abcdef"), b"0123456789abcdef"));
/// assert!(!bearer(None, b"0123456789abcdef"));
/// ```
pub fn bearer(authorization: Option<&[u8]>, want: &[u8]) -> bool {
    let Some(v) = authorization else {
        return false;
    };
    let Some(given) = v
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case(b"bearer "))
        .and_then(|_| v.get(7..))
        .map(|t| t.trim_ascii())
    else {
        return false;
    };
    same_token(given, want)
}

/// Polls a server's `stop` future once, before the server says it listens: whatever it waits
/// on is then in place (a Ctrl-C or SIGTERM handler installs itself at the first poll), so a
/// signal sent as soon as the listening line is out stops the server cleanly instead of
/// killing it. `true` when `stop` has already resolved (do not poll it again: stop now).
///
/// ```
/// use std::future::Future;
/// let mut stop = Box::pin(std::future::pending::<()>());
/// let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// let mut armed = std::pin::pin!(arbor_store::listen::armed(&mut stop));
/// assert_eq!(armed.as_mut().poll(&mut cx), std::task::Poll::Ready(false));
/// ```
pub async fn armed<F: std::future::Future<Output = ()> + Unpin>(stop: &mut F) -> bool {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::pin::Pin::new(&mut *stop).poll(cx).is_ready())
    })
    .await
}
