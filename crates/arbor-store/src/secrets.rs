//! Secrets in session text: API keys and tokens of the common providers, private key blocks,
//! JWTs, password assignments, and high-entropy values next to secret-like names (a rule set of
//! gitleaks' kind, written for arbor). Exports replace each with `[REDACTED:kind]`; `arbor
//! secrets` lists where they are without printing them. A session file is never changed.
use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The rule that found it (`aws-access-key`, `github-token`, ...).
    pub kind: &'static str,
    /// Byte range of the secret in the text.
    pub start: usize,
    /// End of the range.
    pub end: usize,
}

struct Rule {
    kind: &'static str,
    re: Regex,
    /// The capture group holding the secret (0: the whole match).
    group: usize,
    /// Minimum Shannon entropy (bits per character) of the secret, 0 for none.
    entropy: f64,
}

/// The rules. Word boundaries are ASCII (`(?-u:\b)`): every secret is ASCII, and a Unicode
/// boundary would keep the regex engine off its fast path on non-ASCII text (a 100 MB session
/// took 26 s to export instead of 0.65 s).
fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pattern: &str, group, entropy| Rule {
            kind,
            // The patterns are constants of this file, checked by the tests.
            re: Regex::new(pattern).unwrap_or_else(|e| panic!("secret rule {kind}: {e}")),
            group,
            entropy,
        };
        vec![
            r(
                "private-key",
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
                0,
                0.0,
            ),
            r("aws-access-key", r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)", 0, 0.0),
            r(
                "aws-secret-key",
                r#"(?i)aws.{0,20}?(?:secret|private).{0,20}?['"=:\s]+([A-Za-z0-9/+=]{40})(?-u:\b)"#,
                1,
                3.5,
            ),
            r("github-token", r"(?-u:\b)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}(?-u:\b)", 0, 0.0),
            r("github-token", r"(?-u:\b)github_pat_[A-Za-z0-9_]{70,100}(?-u:\b)", 0, 0.0),
            r("anthropic-key", r"(?-u:\b)sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,120}(?-u:\b)", 0, 0.0),
            r("openai-key", r"(?-u:\b)sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,200}(?-u:\b)", 0, 3.0),
            r("openai-key", r"(?-u:\b)sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}(?-u:\b)", 0, 0.0),
            r("openai-key", r"(?-u:\b)sk-[A-Za-z0-9]{40,64}(?-u:\b)", 0, 3.5),
            r("google-api-key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}(?-u:\b)", 0, 0.0),
            r("slack-token", r"(?-u:\b)xox[abposr]-[0-9A-Za-z\-]{10,72}(?-u:\b)", 0, 0.0),
            r(
                "slack-webhook",
                r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{43,56}",
                0,
                0.0,
            ),
            r("stripe-key", r"(?-u:\b)(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,99}(?-u:\b)", 0, 0.0),
            r(
                "jwt",
                r"(?-u:\b)eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
                0,
                0.0,
            ),
            r(
                "password",
                r#"(?i)(?-u:\b)[a-z0-9_\-]*(?:password|passwd)["']?\s*[:=]\s*["']?([^\s"'`,;{}()<>]{6,128})"#,
                1,
                2.5,
            ),
            r(
                "generic-secret",
                r#"(?i)(?-u:\b)[a-z0-9_\-]*(?:secret|token|api[_\-]?key|access[_\-]?key|auth[_\-]?key|client[_\-]?secret)[a-z0-9_\-]*(?-u:\b)["']?\s*[:=]\s*["']?([A-Za-z0-9_\-+/=.]{20,200})"#,
                1,
                3.8,
            ),
        ]
    })
}

/// Shannon entropy of `s` in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// A value that is a placeholder, not a secret (`${TOKEN}`, `<your-key>`, `xxxx…`, `****`).
fn placeholder(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    s.starts_with("${")
        || s.starts_with('<')
        || s.starts_with("process.")
        || s.starts_with("os.environ")
        || lower.contains("example")
        || lower.contains("your")
        || lower.contains("redacted")
        || s.chars()
            .all(|c| c == 'x' || c == 'X' || c == '*' || c == '.' || c == '-')
}

/// The secrets in `text`, in order, without overlaps (the earliest, then the longest wins).
///
/// ```
/// let t = "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 done";
/// let s = arbor_store::secrets::find(t);
/// assert_eq!(s.len(), 1);
/// assert_eq!(s[0].kind, "github-token");
/// assert!(arbor_store::secrets::find("no secret here").is_empty());
/// ```
pub fn find(text: &str) -> Vec<Secret> {
    // One pass of every pattern at once says which rules can match at all: most texts hold
    // no secret, and their cost is that pass.
    static SET: OnceLock<regex::RegexSet> = OnceLock::new();
    let set = SET.get_or_init(|| {
        regex::RegexSet::new(rules().iter().map(|r| r.re.as_str()))
            .unwrap_or_else(|e| panic!("secret rules: {e}"))
    });
    if text.len() < 16 {
        return Vec::new();
    }
    let hits = set.matches(text);
    if !hits.matched_any() {
        return Vec::new();
    }
    let mut out: Vec<Secret> = Vec::new();
    for (k, rule) in rules().iter().enumerate() {
        if !hits.matched(k) {
            continue;
        }
        for caps in rule.re.captures_iter(text) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            let v = m.as_str();
            if rule.entropy > 0.0 && entropy(v) < rule.entropy {
                continue;
            }
            if rule.group != 0 && placeholder(v) {
                continue;
            }
            out.push(Secret {
                kind: rule.kind,
                start: m.start(),
                end: m.end(),
            });
        }
    }
    out.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut kept: Vec<Secret> = Vec::new();
    for s in out {
        if kept.last().is_some_and(|k| s.start < k.end) {
            continue;
        }
        kept.push(s);
    }
    kept
}

/// `text` with every secret replaced by `[REDACTED:kind]` (borrowed when there is none).
///
/// ```
/// let t = "key AKIAIOSFODNN7EXAMPLE in the log";
/// assert_eq!(arbor_store::secrets::redact(t), "key [REDACTED:aws-access-key] in the log");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    let found = find(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in found {
        out.push_str(&text[at..s.start]);
        out.push_str("[REDACTED:");
        out.push_str(s.kind);
        out.push(']');
        at = s.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(t: &str) -> Vec<&'static str> {
        find(t).into_iter().map(|s| s.kind).collect()
    }

    #[test]
    fn every_rule_finds_its_secret() {
        let pk = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd\n-----END RSA PRIVATE KEY-----";
        let cases: &[(&str, &str)] = &[
            (pk, "private-key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "private-key"),
            ("AKIAQWERTYUIOPASDFGH", "aws-access-key"),
            ("aws_secret_access_key = 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", "aws-secret-key"),
            ("ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "github-token"),
            ("token: gho_16C7e42F292c6912E7710c838347Ae178B4a", "github-token"),
            (concat!("github_pat_11ABCDEFG0123456789_", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij"), "github-token"),
            (concat!("sk-ant-api03-", "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3hI5jK7lM9nO1pQ3rS5tU7vW9xY1zA3bC5dE7fG9hI1jK3lM5nO7pQ9-AA"), "anthropic-key"),
            ("sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9", "openai-key"),
            ("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", "openai-key"),
            ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google-api-key"),
            ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"),
            ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXXa1b2c3d4e5f6g7h8i9", "slack-webhook"),
            (concat!("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"), "stripe-key"),
            ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
            ("DB_PASSWORD=Tr0ub4dor&3x!", "password"),
            ("password: \"hunter2hunter2\"", "password"),
            ("CLIENT_SECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e", "generic-secret"),
            ("\"api_key\": \"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc\"", "generic-secret"),
        ];
        for (text, kind) in cases {
            let k = kinds(text);
            assert_eq!(k, vec![*kind], "{text}");
            let r = redact(text);
            assert!(r.contains(&format!("[REDACTED:{kind}]")), "{r}");
        }
    }

    #[test]
    fn look_alikes_are_not_secrets() {
        for text in [
            "the AKIA prefix is documented",
            "ghp_short",
            "sk-this-is-not-a-key",
            "password: ${DB_PASSWORD}",
            "password = <your password>",
            "password: xxxxxxxx",
            "the token is stored in ~/.config/app/token.json",
            "api_key = process.env.API_KEY",
            "let pwd = process.cwd();",
            "password = os.environ['DB_PASSWORD']",
            "secret_name: my-secret-in-vault",
            "sha256:9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9f8e7d6c5b4a3f2e1d0c9b8a",
            "commit 1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e",
            "uuid 01a2031c-aa28-755e-9ecf-bfbc78024ba4",
            "eyJhbGciOiJIUzI1NiJ9 alone is a header",
            "AIzaSy too short",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
            "my_token_count = 1234567890",
            "TOKEN_LIMIT=aaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn overlapping_findings_are_redacted_once() {
        let t = "token=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 and AKIAQWERTYUIOPASDFGH";
        let r = redact(t);
        assert_eq!(r.matches("[REDACTED:").count(), 2, "{r}");
        assert!(!r.contains("ghp_") && !r.contains("AKIA"), "{r}");
    }
}

/// A secret in a session: where, and of what kind (never the secret itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based line of the file.
    pub line: usize,
    /// The entry's id.
    pub entry_id: Option<String>,
    /// Where in the entry, as a JSON path (`message.content[0].text`).
    pub path: String,
    /// The rule.
    pub kind: &'static str,
    /// The secret's length in characters.
    pub chars: usize,
}

/// Every secret in the string values of `doc`'s entries (and its header), in file order.
pub fn scan_doc(doc: &arbor_core::SessionDoc) -> Vec<Located> {
    use arbor_core::json::JsValue;
    fn walk(v: &JsValue, path: &mut String, out: &mut Vec<(String, &'static str, usize)>) {
        match v {
            JsValue::String(s) => {
                let text = s.to_string_lossy();
                for f in find(&text) {
                    out.push((path.clone(), f.kind, text[f.start..f.end].chars().count()));
                }
            }
            JsValue::Array(items) => {
                for (k, item) in items.iter().enumerate() {
                    let at = path.len();
                    path.push_str(&format!("[{k}]"));
                    walk(item, path, out);
                    path.truncate(at);
                }
            }
            JsValue::Object(members) => {
                for (key, item) in members {
                    let at = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key.to_string_lossy());
                    walk(item, path, out);
                    path.truncate(at);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut scan = |line: &[u8], line_no: usize, id: Option<String>| {
        // Only lines that could hold one are parsed (every rule needs a run of letters and
        // digits; a line of a few bytes cannot).
        if line.len() < 16 {
            return;
        }
        let Ok(v) = JsValue::parse(line) else {
            return;
        };
        let mut found = Vec::new();
        walk(&v, &mut String::new(), &mut found);
        for (path, kind, chars) in found {
            out.push(Located {
                line: line_no,
                entry_id: id.clone(),
                path,
                kind,
                chars,
            });
        }
    };
    scan(doc.header_line(), doc.header().line_no, None);
    for (i, e) in doc.entries().iter().enumerate() {
        scan(
            doc.entry_line(i),
            e.line_no,
            e.id.as_deref().map(str::to_string),
        );
    }
    out
}

/// Redacts every string of `v` in place (keys are left alone); returns how many secrets.
pub fn redact_value(v: &mut arbor_core::json::JsValue) -> usize {
    use arbor_core::json::{JsStr, JsValue};
    match v {
        JsValue::String(s) => {
            let text = s.to_string_lossy();
            let found = find(&text).len();
            if found > 0 {
                let r = redact(&text).into_owned();
                *s = JsStr::from(r);
            }
            found
        }
        JsValue::Array(items) => items.iter_mut().map(redact_value).sum(),
        JsValue::Object(members) => members.iter_mut().map(|(_, x)| redact_value(x)).sum(),
        _ => 0,
    }
}

/// `bytes` of a session file with the secrets of every entry line redacted: lines without
/// one stay byte for byte, a line with one is written again as `JSON.stringify` writes it;
/// the first line (header or omp's title slot) and lines that are not JSON objects are kept.
/// Returns the new bytes and how many secrets.
pub fn redact_session_bytes(bytes: &[u8]) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(bytes.len());
    let mut total = 0;
    for (n, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let text = String::from_utf8_lossy(body);
        let is_header = n == 0 || text.contains("\"type\":\"session\"");
        if is_header || !text.starts_with('{') || find(&text).is_empty() {
            out.extend_from_slice(line);
            continue;
        }
        match arbor_core::json::JsValue::parse(body) {
            Ok(mut v) => {
                total += redact_value(&mut v);
                out.extend_from_slice(&v.to_json());
                if line.ends_with(b"\n") {
                    out.push(b'\n');
                }
            }
            Err(_) => out.extend_from_slice(line),
        }
    }
    (out, total)
}
