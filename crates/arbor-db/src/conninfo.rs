//! Connection strings as they may be shown: [`redact_url`] masks every password a
//! PostgreSQL URL or `key=value` string can hold, `scrub` masks them in a client library's
//! message. Built with or without the `postgres` feature: every message naming a shared store
//! (`sqlite:` ones too) goes through it.

/// Whether a connection parameter holds a secret (in any case): libpq's `password`,
/// `sslpassword` (the client key's), `oauth_client_secret` and the SCRAM keys.
fn is_secret_key(key: &str) -> bool {
    [
        "password",
        "sslpassword",
        "oauth_client_secret",
        "scram_client_key",
        "scram_server_key",
    ]
    .iter()
    .any(|k| key.eq_ignore_ascii_case(k))
}

/// libpq's connection parameters (PostgreSQL 18). A parameter not among them is taken for a
/// piece of a password written without quotes (`password=a b=c`), and not shown.
const LIBPQ_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslkeylogfile",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "min_protocol_version",
    "max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
    "scram_client_key",
    "scram_server_key",
    "oauth_issuer",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
];

fn is_known_key(key: &str) -> bool {
    LIBPQ_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k))
}

/// `%XX` decoded (as the URL parser decodes parameter names); invalid escapes kept.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The URL prefix of a connection URL (`postgres://`, `postgresql://`, in any case), if `s`
/// is one.
fn url_prefix_len(s: &str) -> Option<usize> {
    ["postgres://", "postgresql://"].into_iter().find_map(|p| {
        s.get(..p.len())
            .filter(|h| h.eq_ignore_ascii_case(p))
            .map(|_| p.len())
    })
}

/// The byte ranges of `conninfo` that are (or may be) secret, in order, not overlapping:
///
/// - a URL (`postgres://` or `postgresql://`): the password of `USER:PASSWORD@` (up to the last
///   `@` before the host's end, so a raw `@` in a password is covered too), and the value of a
///   `password=` / `sslpassword=` parameter of the query (its name `%`-decoded, as the parser
///   decodes it);
/// - `sqlite:PATH`, or text without `=`: nothing;
/// - a parameter libpq does not know ([`LIBPQ_KEYS`]): it and all after it;
/// - libpq's `key=value` form (`password=pw`, `password = 'p w'`, `\` escapes): the value of
///   every `password` / `sslpassword`; from a place the grammar does not allow on, everything
///   (what arbor cannot parse is not shown).
fn secret_spans(conninfo: &str) -> Vec<std::ops::Range<usize>> {
    match url_prefix_len(conninfo) {
        Some(start) => url_secret_spans(conninfo, start),
        // A store of another kind (`sqlite:PATH`), or no `key=value` at all: nothing secret.
        None if conninfo.starts_with("sqlite:") || !conninfo.contains('=') => Vec::new(),
        None => keyword_secret_spans(conninfo),
    }
}

fn url_secret_spans(s: &str, start: usize) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let rest = &s[start..];
    let mut after_creds = start;
    // rust-postgres takes the credentials up to the first `@`, libpq up to the first `@`
    // before a `/`: masked is everything from the first `:` up to the last `@` before the
    // host part ends.
    if let Some(at) = rest.find('@') {
        let auth_end = rest[at..].find(['/', '?']).map_or(rest.len(), |e| at + e);
        let last_at = rest[..auth_end].rfind('@').unwrap_or(at);
        match rest[..at].find(':') {
            Some(colon) => spans.push(start + colon + 1..start + last_at),
            None if last_at > at => spans.push(start + at + 1..start + last_at),
            None => {}
        }
        after_creds = start + last_at + 1;
    }
    if let Some(q) = s[after_creds..].find('?') {
        let mut pos = after_creds + q + 1;
        for param in s[pos..].split('&') {
            let key = percent_decoded(param.split_once('=').map_or(param, |(k, _)| k));
            if !is_known_key(&key) {
                // Not a parameter: perhaps a piece of a password with a raw `&`.
                spans.push(pos..s.len());
                break;
            }
            if is_secret_key(&key) {
                let k = param
                    .split_once('=')
                    .map_or(param.len(), |(k, _)| k.len() + 1);
                spans.push(pos + k..pos + param.len());
            }
            pos += param.len() + 1;
        }
    }
    spans.retain(|r| !r.is_empty());
    spans
}

fn keyword_secret_spans(s: &str) -> Vec<std::ops::Range<usize>> {
    let b = s.as_bytes();
    let n = b.len();
    let mut spans = Vec::new();
    let ws = |c: u8| c.is_ascii_whitespace();
    let mut i = 0;
    loop {
        while i < n && ws(b[i]) {
            i += 1;
        }
        if i == n {
            break;
        }
        let key_start = i;
        while i < n && !ws(b[i]) && b[i] != b'=' {
            i += 1;
        }
        let key = &s[key_start..i];
        while i < n && ws(b[i]) {
            i += 1;
        }
        if key.is_empty() || i == n || b[i] != b'=' || !is_known_key(key) {
            // Not `key = value`: nothing from here on is shown.
            spans.push(key_start..n);
            break;
        }
        i += 1;
        while i < n && ws(b[i]) {
            i += 1;
        }
        let value_start = i;
        let mut closed = true;
        if i < n && b[i] == b'\'' {
            i += 1;
            closed = false;
            while i < n {
                match b[i] {
                    b'\\' => i += 2,
                    b'\'' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    _ => i += 1,
                }
            }
        } else {
            while i < n && !ws(b[i]) {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
        }
        let i_end = i.min(n);
        if !closed || i_end == value_start {
            spans.push(
                if is_secret_key(key) {
                    value_start
                } else {
                    key_start
                }..n,
            );
            break;
        }
        if is_secret_key(key) {
            spans.push(value_start..i_end);
        }
        i = i_end;
    }
    spans.retain(|r| !r.is_empty());
    spans
}

/// A connection string as it may be shown: every password replaced by `***` (see
/// `secret_spans` for the forms: `postgres://USER:PASSWORD@…`, `?password=…`,
/// `password=…` / `password='…'` key-value strings, `sslpassword`). The one masking of
/// arbor's: every message naming a PostgreSQL store goes through it.
///
/// ```
/// use arbor_db::redact_url;
/// assert_eq!(redact_url("postgres://ann:pw@db/s"), "postgres://ann:***@db/s");
/// assert_eq!(redact_url("postgres://db/s?password=pw&sslmode=require"), "postgres://db/s?password=***&sslmode=require");
/// assert_eq!(redact_url("host=db password='p w' dbname=s"), "host=db password=*** dbname=s");
/// ```
pub fn redact_url(conninfo: &str) -> String {
    let mut out = String::with_capacity(conninfo.len());
    let mut at = 0;
    for r in secret_spans(conninfo) {
        out.push_str(&conninfo[at..r.start]);
        out.push_str("***");
        at = r.end;
    }
    out.push_str(&conninfo[at..]);
    out
}

/// `text` (a message from the client library about `conninfo`) with every secret of
/// `conninfo` masked: each secret as written and as decoded, and each piece of it between
/// spaces, quotes and `=` of at least two characters (a parser's message may quote a piece of
/// an unquoted password with a space in it as an unknown option).
#[cfg(feature = "postgres")]
pub(crate) fn scrub(text: &str, conninfo: &str) -> String {
    let mut secrets: Vec<String> = Vec::new();
    for r in secret_spans(conninfo) {
        let raw = &conninfo[r];
        let unquoted = raw.trim_matches('\'');
        for v in [
            raw.to_string(),
            percent_decoded(raw),
            unquoted.replace('\\', ""),
        ] {
            secrets.extend(
                v.split(|c: char| c.is_whitespace() || c == '=' || c == '\'')
                    .filter(|p| p.chars().count() >= 2)
                    .map(str::to_string),
            );
            secrets.push(v);
        }
    }
    secrets.retain(|s| !s.is_empty());
    // Longest first: a whole secret is masked before its pieces.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for s in &secrets {
        out = out.replace(s.as_str(), "***");
    }
    out
}
#[cfg(test)]
mod masking {
    use super::redact_url;
    #[cfg(feature = "postgres")]
    use super::scrub;

    /// Every form libpq (and rust-postgres) takes a password in, and what is shown of it.
    const FORMS: &[(&str, &str)] = &[
        ("postgres://ann:S3kr1t@db/s", "postgres://ann:***@db/s"),
        (
            "postgresql://ann:S3kr1t@db:5432/s",
            "postgresql://ann:***@db:5432/s",
        ),
        ("POSTGRES://ann:S3kr1t@db/s", "POSTGRES://ann:***@db/s"),
        // A raw `@` or `/` in the password.
        ("postgres://ann:S3k@r1t@db/s", "postgres://ann:***@db/s"),
        ("postgres://ann:S3k/r1t@db/s", "postgres://ann:***@db/s"),
        (
            "postgres://ann:S3kr1t@h1,h2/s",
            "postgres://ann:***@h1,h2/s",
        ),
        (
            "postgres://db/s?password=S3kr1t",
            "postgres://db/s?password=***",
        ),
        (
            "postgres://db/s?sslmode=require&password=S3kr1t&application_name=x",
            "postgres://db/s?sslmode=require&password=***&application_name=x",
        ),
        (
            "postgres://db/s?pass%77ord=S3kr1t",
            "postgres://db/s?pass%77ord=***",
        ),
        (
            "postgres://db/s?PASSWORD=S3kr1t",
            "postgres://db/s?PASSWORD=***",
        ),
        (
            "postgres://db/s?sslpassword=S3kr1t",
            "postgres://db/s?sslpassword=***",
        ),
        (
            "postgres://ann:S3kr1t@db/s?password=S3kr1t",
            "postgres://ann:***@db/s?password=***",
        ),
        (
            "postgres://?host=/run/pg&password=S3kr1t",
            "postgres://?host=/run/pg&password=***",
        ),
        (
            "host=db password=S3kr1t dbname=s",
            "host=db password=*** dbname=s",
        ),
        (
            "host=db password = S3kr1t dbname=s",
            "host=db password = *** dbname=s",
        ),
        ("password='S3 kr1t' host=db", "password=*** host=db"),
        (r"password='S3\'kr1t' host=db", "password=*** host=db"),
        (r"password=S3\ kr1t host=db", "password=*** host=db"),
        ("host=db sslpassword=S3kr1t", "host=db sslpassword=***"),
        // Unterminated quote, and text the grammar does not allow: not shown.
        ("host=db password='S3 kr1t", "host=db password=***"),
        ("host=db password=S3 kr1t x", "host=db password=*** ***"),
        ("host=db junk password=S3kr1t", "host=db ***"),
        // A parameter libpq does not know after a password: a piece of it, not shown.
        ("host=db password=S3kr1t wOrd=x", "host=db password=*** ***"),
        (
            "postgres://db/s?password=S3k&r1t=x",
            "postgres://db/s?password=***&***",
        ),
        (
            "host=db oauth_client_secret=S3kr1t",
            "host=db oauth_client_secret=***",
        ),
        // Nothing secret: as it is.
        ("postgres://ann@db/s", "postgres://ann@db/s"),
        ("host=db user=ann", "host=db user=ann"),
        ("sqlite:/tmp/x.db", "sqlite:/tmp/x.db"),
    ];

    #[test]
    fn every_form_of_password_is_masked() {
        for (form, shown) in FORMS {
            let r = redact_url(form);
            assert_eq!(r, *shown, "{form}");
            for piece in ["S3k", "r1t"] {
                assert!(!r.contains(piece), "{form} -> {r}");
            }
        }
    }

    #[test]
    #[cfg(feature = "postgres")]
    fn messages_lose_every_piece_of_the_password() {
        let url = "host=db password=S3cr3t wOrd=x";
        // rust-postgres reads `wOrd` as an option of its own and names it.
        let msg = "invalid connection string: unknown option `wOrd`";
        assert_eq!(
            scrub(msg, "host=db password='S3cr3t wOrd=x'"),
            "invalid connection string: unknown option `***`"
        );
        assert!(!scrub(msg, url).contains("wOrd"), "{}", scrub(msg, url));
        assert_eq!(
            scrub("auth failed for S3%63ret", "postgres://a:S3%63ret@h/d"),
            "auth failed for ***"
        );
        assert_eq!(
            scrub("auth failed for S3cret", "postgres://a:S3%63ret@h/d"),
            "auth failed for ***"
        );
    }
}
