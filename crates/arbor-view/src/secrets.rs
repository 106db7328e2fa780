//! Secrets in session text: API keys and tokens of the common providers, private key blocks,
//! JWTs, password assignments, and high-entropy values next to secret-like names (a rule set of
//! gitleaks' kind, written for arbor). Exports replace each with `[REDACTED:kind]`; `arbor
//! secrets` lists where they are without printing them. A session file is never changed.
use arbor_core::json::{JsStr, JsValue, JsonError};
use arbor_core::SessionDoc;
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
    /// Literals one of which every match of `re` contains (ASCII case folded when the
    /// pattern starts with `(?i)`): what [`may_hold_secret`] looks for in a raw line.
    needs: &'static [&'static str],
}

impl Rule {
    /// A match of this rule (`whole`, its secret `m`): whether it is turned down (not random
    /// enough, a placeholder), and where the search goes on if it is. A value a rule turns down
    /// may hold a secret itself (`"api_key": "API_TOKEN=…"`, where `API_TOKEN=…` is not random
    /// as a whole): the search goes on from the value's start, not past it (always forward: a
    /// name comes before its value).
    fn judge(&self, whole: regex::Match<'_>, m: regex::Match<'_>) -> (bool, usize) {
        let next = if m.start() > whole.start() {
            m.start()
        } else {
            whole.end().max(whole.start() + 1)
        };
        let v = m.as_str();
        let rejected = if self.entropy == RELATIVE {
            !random_enough(v)
        } else {
            self.entropy > 0.0 && entropy(v) < self.entropy
        } || (self.group != 0 && placeholder(v));
        (rejected, next)
    }
}

/// The rules. Word boundaries are ASCII (`(?-u:\b)`): every secret is ASCII, and a Unicode
/// boundary would keep the regex engine off its fast path on non-ASCII text (a 100 MB session
/// took 26 s to export instead of 0.65 s).
fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pattern: &str, group, entropy, needs| Rule {
            kind,
            // The patterns are constants of this file, checked by the tests.
            re: Regex::new(pattern).unwrap_or_else(|e| panic!("secret rule {kind}: {e}")),
            group,
            entropy,
            needs,
        };
        // A quote before `:`/`=` may be escaped (`\"api_key\": \"…\"`: JSON inside a
        // string that is itself JSON text).
        let q = r#"(?:\\*["'])?"#;
        vec![
            // A block cut before its END line (a truncated paste, `head -5 id_rsa`) is still
            // a key: its base64 lines are taken.
            r(
                "private-key",
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=:,\- \t\r\n\\]*)",
                0,
                0.0,
                &["-----BEGIN"],
            ),
            r("aws-access-key", r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)", 0, 0.0, &["AKIA", "ASIA", "ABIA", "ACCA"]),
            r(
                "aws-secret-key",
                r#"(?i)aws.{0,20}?(?:secret|private).{0,20}?['"=:\s]+([A-Za-z0-9/+=]{40})(?-u:\b)"#,
                1,
                3.5,
                &["aws"],
            ),
            r("github-token", r"(?-u:\b)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}(?-u:\b)", 0, 0.0, &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
            r("github-token", r"(?-u:\b)github_pat_[A-Za-z0-9_]{70,100}(?-u:\b)", 0, 0.0, &["github_pat_"]),
            r("gitlab-token", r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,64}(?-u:\b)", 0, 0.0, &["glpat-"]),
            // API keys, and the OAuth access and refresh tokens pi's `/login` stores.
            r(
                "anthropic-key",
                r"(?-u:\b)sk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{40,200}",
                0,
                0.0,
                &["sk-ant-"],
            ),
            r("openai-key", r"(?-u:\b)sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,200}(?-u:\b)", 0, 3.0, &["sk-"]),
            r("openai-key", r"(?-u:\b)sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}(?-u:\b)", 0, 0.0, &["sk-"]),
            r("openai-key", r"(?-u:\b)sk-[A-Za-z0-9]{40,64}(?-u:\b)", 0, 3.5, &["sk-"]),
            r("google-api-key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}(?-u:\b)", 0, 0.0, &["AIza"]),
            r("slack-token", r"(?-u:\b)xox[a-z]-[0-9A-Za-z\-]{10,72}(?-u:\b)", 0, 0.0, &["xox"]),
            r(
                "slack-webhook",
                r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{43,56}",
                0,
                0.0,
                &["hooks.slack.com"],
            ),
            r("stripe-key", r"(?-u:\b)(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,99}(?-u:\b)", 0, 0.0, &["_live_", "_test_"]),
            r("npm-token", r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)", 0, 0.0, &["npm_"]),
            r("huggingface-token", r"(?-u:\b)hf_[A-Za-z0-9]{30,40}(?-u:\b)", 0, 3.0, &["hf_"]),
            r(
                "jwt",
                r"(?-u:\b)eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
                0,
                0.0,
                &["eyJ"],
            ),
            // `postgres://user:PASS@host`, any scheme: the password.
            r(
                "url-credentials",
                r#"(?i)(?-u:\b)[a-z][a-z0-9+.\-]{1,30}://[^\s:/?#@"'<>`\\]{1,200}:([^\s/?#@"'<>`\\]{1,200})@[^\s/?#@"'<>`\\]"#,
                1,
                0.0,
                &["://"],
            ),
            // `Authorization: Bearer …` / `Basic …` (a header, a curl `-H`, a member).
            r(
                "authorization",
                &format!(r#"(?i)(?-u:\b)(?:proxy-)?authorization{q}\s*[:=]\s*{q}(?:bearer|basic|token|digest)\s+([A-Za-z0-9_\-+/=.~]{{8,}})"#),
                1,
                0.0,
                &["authorization"],
            ),
            r(
                "password",
                &format!(r#"(?i)(?:(?-u:\b)[a-z0-9_\-]*(?:password|passwd|passphrase)|(?-u:\b)(?:[a-z0-9]+[_\-])*(?:pass|pwd|pw))(?-u:\b){q}\s*[:=]\s*{q}([^\s"'`,;{{}}()<>\\]{{6,128}})"#),
                1,
                2.5,
                &["pass", "pw"],
            ),
            // A value under a secret-like name: high entropy for its alphabet (see
            // `random_enough`), so that random hex is found as well as base64.
            r(
                "generic-secret",
                &format!(r#"(?i)(?-u:\b)[a-z0-9_\-]*(?:secret|token|api[_\-]?key|access[_\-]?key|auth[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?)[a-z0-9_\-]*(?-u:\b){q}\s*[:=]\s*{q}([A-Za-z0-9_\-+/=.]{{20,200}})"#),
                1,
                RELATIVE,
                &[
                    "secret", "token", "credential", "apikey", "api_key", "api-key",
                    "accesskey", "access_key", "access-key", "authkey", "auth_key", "auth-key",
                    "privatekey", "private_key", "private-key",
                ],
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

/// The entropy floor of a rule that compares a value with the most its alphabet and length
/// allow (see [`random_enough`]) instead of a fixed number of bits.
const RELATIVE: f64 = -1.0;

/// Whether `v` looks random: not words joined by `_`, `-` or `.` (`cl100k_base_tokenizer`,
/// `access_token_expires_in`), and its entropy is at least 3/4 of the most a string of its
/// length over its alphabet can have (hex: 4 bits a character; else up to 6). A fixed floor
/// of 3.8 bits sat near hex's maximum: 19 of 20 random 32-character hex tokens fell under it.
fn random_enough(v: &str) -> bool {
    let parts: Vec<&str> = v.split(['_', '-', '.']).filter(|p| !p.is_empty()).collect();
    let wordy = parts
        .iter()
        .filter(|p| p.len() >= 3 && p.bytes().all(|c| c.is_ascii_lowercase()))
        .count();
    if parts.len() >= 3 && !v.bytes().any(|c| c.is_ascii_uppercase()) && wordy * 2 >= parts.len() {
        return false;
    }
    let e = entropy(v);
    if v.bytes().all(|c| c.is_ascii_hexdigit()) {
        return e >= 2.8;
    }
    let most = 64f64.min(v.chars().count() as f64).log2();
    e >= 3.0 && e >= 0.75 * most
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
        // A marker cut short in a one-line summary (`[REDACT…`).
        || s.starts_with("[REDACT")
        || s.chars()
            .all(|c| c == 'x' || c == 'X' || c == '*' || c == '.' || c == '-')
}

/// The non-ASCII characters that a `(?i)` rule matches for an ASCII letter (Unicode simple
/// case folding: `ſ` for `s`, the Kelvin sign for `k`; the test
/// `only_two_characters_fold_to_ascii_letters` checks the list against the regex engine).
const FOLDS_TO_ASCII: [char; 2] = ['\u{17F}', '\u{212A}'];

/// The literals of every rule, found in raw line bytes (see [`may_hold_secret`]).
struct Prefilter {
    /// Every rule's literals and the UTF-8 of [`FOLDS_TO_ASCII`], in one automaton, ASCII
    /// case folded for all of them (for a case-sensitive rule that finds more than it needs,
    /// never less; one pass over a line instead of two, as a DFA: twice as fast as two NFAs).
    all: aho_corasick::AhoCorasick,
    /// For each pattern of `all`, the rules (bits of their index in [`rules`]) that may
    /// match where it is.
    rules_of: Vec<u64>,
    /// The characters of every literal (both cases for the folded ones): an escape that
    /// decodes to one of them could spell a literal that the raw bytes do not show.
    chars: [bool; 128],
}

fn prefilter() -> &'static Prefilter {
    static P: OnceLock<Prefilter> = OnceLock::new();
    P.get_or_init(|| {
        let mut lits: Vec<String> = FOLDS_TO_ASCII.iter().map(|c| c.to_string()).collect();
        let mut chars = [false; 128];
        // A character that folds to an ASCII letter may stand in any `(?i)` rule's literal.
        let any_folded = rules()
            .iter()
            .enumerate()
            .filter(|(_, r)| r.re.as_str().starts_with("(?i)"))
            .fold(0u64, |m, (i, _)| m | 1 << i);
        let mut rules_of = vec![any_folded; lits.len()];
        for (i, rule) in rules().iter().enumerate() {
            let fold = rule.re.as_str().starts_with("(?i)");
            for lit in rule.needs {
                for b in lit.bytes() {
                    // Literals are ASCII: a rule constant of this file (checked by the tests).
                    let b = b & 0x7f;
                    chars[usize::from(b)] = true;
                    if fold {
                        chars[usize::from(b.to_ascii_lowercase())] = true;
                        chars[usize::from(b.to_ascii_uppercase())] = true;
                    }
                }
                lits.push(lit.to_string());
                rules_of.push(1u64 << i);
            }
        }
        let all = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .prefilter(false)
            .build(&lits)
            .unwrap_or_else(|e| panic!("secret prefilter: {e}"));
        Prefilter {
            all,
            rules_of,
            chars,
        }
    })
}

/// Whether a JSON escape in `line` could decode to a character of a rule's literal (or to
/// one of [`FOLDS_TO_ASCII`]): `\/`, `\u0041`, ... The other escapes decode to `"`, `\` and
/// control characters, which no literal holds (`the_literals_are_what_the_prefilter_assumes`).
/// Every `\u` is read as an escape, even after another backslash (`\\u0041`): that
/// over-counts, never under-counts. Two SIMD substring searches, not a step per backslash
/// (code in a tool result has an escape every few dozen bytes).
fn escape_may_spell(line: &[u8], starts_before: usize, chars: &[bool; 128]) -> bool {
    if memchr::memmem::find(line, b"\\/").is_some() {
        return true;
    }
    for i in memchr::memmem::find_iter(line, b"\\u") {
        if i >= starts_before {
            // In the next window, whole.
            break;
        }
        let hex = line
            .get(i + 2..i + 6)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        let spells = match hex {
            Some(c) if c < 128 => usize::try_from(c).is_ok_and(|c| chars[c]),
            Some(c) => FOLDS_TO_ASCII.iter().any(|&f| u32::from(f) == c),
            // Not an escape JSON accepts: the line is read whole anyway.
            None => true,
        };
        if spells {
            return true;
        }
    }
    false
}

/// Compiles the scanner's rules and prefilters now instead of at the first scan (about 40 ms
/// of regex compilation): a server calls it while it starts, so that its first page does not
/// pay for it. Calling it again costs nothing.
///
/// ```
/// arbor_view::secrets::prepare();
/// assert_eq!(arbor_view::secrets::find("ghp_0123456789abcdefghijABCDEFGHIJ012345").len(), 1);
/// ```
pub fn prepare() {
    let _ = (rules(), prefilter(), in_progress());
}

/// Whether some decoded string or key of the JSON line `line` could hold a secret, read on
/// its raw bytes: `false` only when no rule can match (every match of a rule contains one of
/// its literals, `Rule::needs`; none is in the raw bytes, case folded where the rule is, no
/// character that folds to an ASCII letter is there, and no escape decodes to a character
/// of a literal). Then every decoded string is the raw text minus escapes that cannot be part
/// of a literal, so it holds no literal either, nor does a member's `name=value` (`=` is in
/// no literal). Exactly conservative: the property test `prefilter_agrees_with_full_scan`
/// compares it with the full scan.
///
/// ```
/// assert!(!arbor_view::secrets::may_hold_secret(br#"{"text":"hello\nworld"}"#));
/// assert!(arbor_view::secrets::may_hold_secret(br#"{"text":"ghp_x"}"#));
/// assert!(arbor_view::secrets::may_hold_secret(br#"{"text":"\u0067hp_x"}"#));
/// ```
pub fn may_hold_secret(line: &[u8]) -> bool {
    may_hold_secret_windows(line, PREFILTER_WINDOW, PREFILTER_OVERLAP)
}

/// [`may_hold_secret`], `window` bytes at a time, each read `overlap` bytes into the next.
fn may_hold_secret_windows(line: &[u8], window: usize, overlap: usize) -> bool {
    let p = prefilter();
    // A long line a window at a time, the map's pages behind released: a literal or an
    // escape that starts in a window ends in it or in its overlap with the next (the
    // overlap is longer than any literal and than `\uXXXX`), so each is found whole, and
    // only in windows that hold all of it.
    arbor_core::json::find_in_windows(line, window, overlap, |_, w, own| {
        (p.all.is_match(w) || escape_may_spell(w, own, &p.chars)).then_some(())
    })
    .is_some()
}

/// How much of a line [`may_hold_secret`] reads before it releases the pages behind.
const PREFILTER_WINDOW: usize = 8 << 20;
/// How far each window of [`may_hold_secret`] reads into the next (see the test
/// `literals_are_ascii_and_shorter_than_the_overlap`).
const PREFILTER_OVERLAP: usize = 256;

/// Whether `line` is one JSON value (the validator `JsValue::parse` agrees with).
fn valid_json(line: &[u8]) -> bool {
    use arbor_core::json::{skip_ws, value_end};
    value_end(line, skip_ws(line, 0)).is_ok_and(|end| skip_ws(line, end) == line.len())
}

/// The rules (bits of their index in [`rules`]) that may match somewhere in `text`: those one
/// of whose literals is in it, and every `(?i)` rule when a character folding to an ASCII
/// letter is.
fn candidates(text: &str) -> u64 {
    #[cfg(test)]
    if UNFILTERED.with(std::cell::Cell::get) {
        return u64::MAX;
    }
    let p = prefilter();
    let mut m = 0u64;
    for hit in p.all.find_overlapping_iter(text) {
        m |= p
            .rules_of
            .get(hit.pattern().as_usize())
            .copied()
            .unwrap_or(u64::MAX);
    }
    m
}

#[cfg(test)]
thread_local! {
    /// Tests: every rule on every text (the scan the prefilters must agree with).
    static UNFILTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The secrets in `text`, in order, without overlaps (the earliest, then the longest wins).
///
/// ```
/// let t = "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 done";
/// let s = arbor_view::secrets::find(t);
/// assert_eq!(s.len(), 1);
/// assert_eq!(s[0].kind, "github-token");
/// assert!(arbor_view::secrets::find("no secret here").is_empty());
/// ```
pub fn find(text: &str) -> Vec<Secret> {
    // Each rule on its own: most start with a literal that the regex engine finds with a
    // fast substring search. (One `RegexSet` of every pattern was a single automaton too large
    // for its cache: 38 MB/s, five times slower than the rules one by one.)
    if text.len() < 16 {
        return Vec::new();
    }
    let candidates = candidates(text);
    let mut out: Vec<Secret> = Vec::new();
    for (i, rule) in rules().iter().enumerate() {
        // A rule none of whose literals is in the text cannot match it (see `Rule::needs`).
        if candidates & (1 << i) == 0 {
            continue;
        }
        let mut at = 0;
        while let Some(caps) = rule.re.captures_at(text, at) {
            let (Some(whole), Some(m)) = (caps.get(0), caps.get(rule.group)) else {
                break;
            };
            let (rejected, next) = rule.judge(whole, m);
            if rejected {
                at = next;
            } else {
                out.push(Secret {
                    kind: rule.kind,
                    start: m.start(),
                    end: m.end(),
                });
                at = whole.end().max(whole.start() + 1);
            }
            while at < text.len() && !text.is_char_boundary(at) {
                at += 1;
            }
            if at > text.len() {
                break;
            }
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

/// For each rule, the tail of a text that a match of the rule could still be in the middle
/// of: `(?:P)\z`, where `P` matches every prefix of every match (the rule's syntax tree with
/// its assertions dropped, which only adds strings: see [`prefixes`]). [`Finder`] keeps the
/// text from where the leftmost such tail starts.
fn in_progress() -> &'static [Regex] {
    static P: OnceLock<Vec<Regex>> = OnceLock::new();
    P.get_or_init(|| {
        rules()
            .iter()
            .map(|r| {
                // The patterns are constants of this file, checked by the tests.
                let hir = regex_syntax::Parser::new()
                    .parse(r.re.as_str())
                    .unwrap_or_else(|e| panic!("secret rule {}: {e}", r.kind));
                let p = format!("(?:{})\\z", prefixes(&hir));
                // A lazy DFA's cache larger than the default 2 MB: with that one the engine gave up
                // on the larger rules' automata and ran its NFA (35 s of CPU for a 120 MB
                // string; 0.7 s with 8 MB).
                regex::RegexBuilder::new(&p)
                    .size_limit(64 << 20)
                    .dfa_size_limit(8 << 20)
                    .build()
                    .unwrap_or_else(|e| panic!("secret rule {} in progress: {e}", r.kind))
            })
            .collect()
    })
}

/// Every prefix of every string `h` matches (the empty one and the whole ones included),
/// or more: assertions are dropped.
fn prefixes(h: &regex_syntax::hir::Hir) -> regex_syntax::hir::Hir {
    use regex_syntax::hir::{Hir, HirKind, Repetition};
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Hir::empty(),
        HirKind::Literal(lit) => {
            // Cut between characters only (the rules' literals are text).
            let s = String::from_utf8_lossy(&lit.0);
            let mut alts = vec![Hir::empty()];
            for (i, c) in s.char_indices() {
                alts.push(Hir::literal(s[..i + c.len_utf8()].as_bytes()));
            }
            Hir::alternation(alts)
        }
        HirKind::Class(_) => Hir::alternation(vec![Hir::empty(), h.clone()]),
        HirKind::Repetition(r) => match r.max {
            Some(0) => Hir::empty(),
            max => Hir::concat(vec![
                Hir::repetition(Repetition {
                    min: 0,
                    max: max.map(|m| m - 1),
                    greedy: true,
                    sub: Box::new(unasserted(&r.sub)),
                }),
                prefixes(&r.sub),
            ]),
        },
        HirKind::Capture(c) => prefixes(&c.sub),
        HirKind::Concat(subs) => Hir::alternation(
            (0..subs.len())
                .map(|k| {
                    let mut parts: Vec<Hir> = subs[..k].iter().map(unasserted).collect();
                    parts.push(prefixes(&subs[k]));
                    Hir::concat(parts)
                })
                .collect(),
        ),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(prefixes).collect()),
    }
}

/// `h` without its assertions and captures: it matches what `h` matches, and more.
fn unasserted(h: &regex_syntax::hir::Hir) -> regex_syntax::hir::Hir {
    use regex_syntax::hir::{Hir, HirKind, Repetition};
    match h.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => h.clone(),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(unasserted(&r.sub)),
        }),
        HirKind::Capture(c) => unasserted(&c.sub),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(unasserted).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(unasserted).collect()),
    }
}

/// How much new text [`Finder`] gathers before it scans.
const FIND_WINDOW: usize = 1 << 20;

/// [`find`] of a text given in pieces (a long string decoded a piece at a time), without
/// holding it: the same secrets at the same offsets (of the whole text), in the same order.
///
/// Each rule runs as in `find`, from where its last match left it, on what is held of the
/// text; a match is taken only when it starts before the rule's tail in progress
/// (`in_progress`: where a match that the text still to come could extend, or complete,
/// may start). Such a match is the one `find` takes on the whole text: a match of the whole
/// text that starts earlier ends inside what is held (else its start would be in progress),
/// so it would have been found first, and no longer match at the same start can exist for
/// the same reason. Otherwise the rule waits for more text, and what is before its tail in
/// progress holds no match start: it is let go. What is held is so the text from the
/// leftmost tail in progress among the rules (a few bytes for ordinary text; from a
/// `-----BEGIN … PRIVATE KEY-----` to its END line or the text's end, whose body any text may
/// continue) plus the window.
///
/// ```
/// let t = "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 done";
/// let mut f = arbor_view::secrets::Finder::new();
/// for piece in t.as_bytes().chunks(7) {
///     f.push(std::str::from_utf8(piece).unwrap());
/// }
/// assert_eq!(f.finish(), arbor_view::secrets::find(t));
/// ```
#[derive(Debug)]
pub struct Finder {
    /// The text held, from `base` in the whole text.
    buf: String,
    base: usize,
    /// Bytes pushed since the last scan.
    fresh: usize,
    /// For each rule, where its next search starts (in the whole text); `usize::MAX`: done.
    at: Vec<usize>,
    /// Found: the rule's index and the secret.
    found: Vec<(usize, Secret)>,
    total: usize,
    window: usize,
}

impl Default for Finder {
    fn default() -> Self {
        Finder::new()
    }
}

impl Finder {
    /// An empty text.
    pub fn new() -> Self {
        Finder::with_window(FIND_WINDOW)
    }

    /// Scanning each time `window` bytes were added (tests: small windows).
    fn with_window(window: usize) -> Self {
        Finder {
            buf: String::new(),
            base: 0,
            fresh: 0,
            at: vec![0; rules().len()],
            found: Vec::new(),
            total: 0,
            window: window.max(1),
        }
    }

    /// The next piece of the text.
    pub fn push(&mut self, piece: &str) {
        self.buf.push_str(piece);
        self.total += piece.len();
        self.fresh += piece.len();
        if self.fresh >= self.window {
            self.scan(false);
            self.fresh = 0;
        }
    }

    /// The text has ended: its secrets, as [`find`] gives them.
    pub fn finish(mut self) -> Vec<Secret> {
        if self.total < 16 {
            return Vec::new();
        }
        self.scan(true);
        let mut out = std::mem::take(&mut self.found);
        // `find`'s order: a tie (the same range from two rules) goes to the earlier rule.
        out.sort_by(|(ra, a), (rb, b)| {
            a.start
                .cmp(&b.start)
                .then(b.end.cmp(&a.end))
                .then(ra.cmp(rb))
        });
        let mut kept: Vec<Secret> = Vec::new();
        for (_, s) in out {
            if kept.last().is_some_and(|k| s.start < k.end) {
                continue;
            }
            kept.push(s);
        }
        kept
    }

    /// Runs every rule on what is held; `last`: the text ends there.
    fn scan(&mut self, last: bool) {
        let candidates = candidates(&self.buf);
        let progress = in_progress();
        let text = self.buf.as_str();
        let base = self.base;
        for (i, rule) in rules().iter().enumerate() {
            // Where the rule's tail in progress starts (relative), once asked.
            let mut tail: Option<usize> = None;
            while let Some(rel) = self.at[i].checked_sub(base).filter(|&r| r <= text.len()) {
                let limit = if last {
                    usize::MAX
                } else {
                    match tail {
                        Some(t) if t >= rel => t,
                        _ => {
                            let t = progress
                                .get(i)
                                .and_then(|p| p.find_at(text, rel))
                                .map_or(rel, |m| m.start());
                            tail = Some(t);
                            t
                        }
                    }
                };
                let caps = if candidates & (1 << i) != 0 {
                    rule.re.captures_at(text, rel)
                } else {
                    None
                };
                let Some(caps) = caps.filter(|c| c.get(0).is_some_and(|w| w.start() < limit))
                else {
                    self.at[i] = base + if last { text.len() + 1 } else { limit };
                    break;
                };
                let (Some(whole), Some(m)) = (caps.get(0), caps.get(rule.group)) else {
                    self.at[i] = usize::MAX;
                    break;
                };
                // As `find` does, offsets in the whole text.
                let (rejected, next) = rule.judge(whole, m);
                let mut at = if rejected {
                    next
                } else {
                    self.found.push((
                        i,
                        Secret {
                            kind: rule.kind,
                            start: base + m.start(),
                            end: base + m.end(),
                        },
                    ));
                    whole.end().max(whole.start() + 1)
                };
                while at < text.len() && !text.is_char_boundary(at) {
                    at += 1;
                }
                self.at[i] = if at > text.len() && last {
                    usize::MAX
                } else {
                    base + at
                };
            }
        }
        if last {
            return;
        }
        // What no rule reads again goes (a few bytes kept before: a word boundary looks at
        // the byte before a match).
        let keep = self.at.iter().map(|&a| a.max(base)).min().unwrap_or(base) - base;
        let mut cut = keep.min(self.buf.len()).saturating_sub(8);
        while !self.buf.is_char_boundary(cut) {
            cut -= 1;
        }
        self.buf.drain(..cut);
        self.base += cut;
    }
}

/// `text` with every secret replaced by `[REDACTED:kind]` (borrowed when there is none).
///
/// ```
/// let t = "key AKIAIOSFODNN7EXAMPLE in the log";
/// assert_eq!(arbor_view::secrets::redact(t), "key [REDACTED:aws-access-key] in the log");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    let found = find(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(replace(text, &found))
}

/// [`redact`] for a string value whose member name is `key` (see [`find_in`]): what the
/// MCP server applies to every string it serves.
///
/// ```
/// use arbor_view::secrets::redact_in;
/// assert_eq!(redact_in(None, "no secret here"), "no secret here");
/// assert_eq!(redact_in(None, "AKIAIOSFODNN7EXAMPLE"), "[REDACTED:aws-access-key]");
/// ```
pub fn redact_in<'a>(key: Option<&str>, text: &'a str) -> Cow<'a, str> {
    let found = find_in(key, text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(replace(text, &found))
}

/// `text` with each of `found` (in order, without overlaps) replaced by `[REDACTED:kind]`.
fn replace(text: &str, found: &[Secret]) -> String {
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
    out
}

/// Whether a member's name says its value is a secret (`password`, `api_key`,
/// `Authorization`, ...): such a value is also read as `name=value`, so that the rules that
/// need a name find it when the name is the member's key (`{"password": "…"}`).
fn secret_name(key: &str) -> bool {
    key.len() <= 64 && {
        let k = key.to_ascii_lowercase();
        [
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
        ]
        .iter()
        .any(|w| k.contains(w))
    }
}

/// The secrets in a string value whose member name is `key` (`None`: an array item, a key
/// or a whole text): those of the text itself and, under a secret-like name, those the
/// rules find in `key=text` that lie in the text. In order, without overlaps.
///
/// This is the one place a decoded string is scanned: [`scan_value`] reports and
/// [`redact_value`] replaces exactly these ranges.
pub fn find_in(key: Option<&str>, text: &str) -> Vec<Secret> {
    let mut found = find(text);
    if let Some(k) = key.filter(|k| secret_name(k) && text.len() <= 4096) {
        let joined = format!("{k}={text}");
        let at = k.len() + 1;
        let before = found.len();
        found.extend(find(&joined).into_iter().filter_map(|s| {
            (s.start >= at).then(|| Secret {
                kind: s.kind,
                start: s.start - at,
                end: s.end - at,
            })
        }));
        if found.len() > before {
            found.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
            let mut kept: Vec<Secret> = Vec::with_capacity(found.len());
            for s in found {
                if kept.last().is_some_and(|k| s.start < k.end) {
                    continue;
                }
                kept.push(s);
            }
            found = kept;
        }
    }
    found
}

/// A secret in a JSON value: where (never what).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where, as a JSON path (`message.content[0].text`); a key that holds a secret itself
    /// is written redacted (`arguments.[REDACTED:github-token]`).
    pub path: String,
    /// The rule.
    pub kind: &'static str,
    /// The secret's length in characters.
    pub chars: usize,
}

/// One step of a JSON path.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a JsStr),
    Index(usize),
}

/// The path of `segs`; a path deeper than 32 steps shows its first 16 and last 8 steps.
fn path_of(segs: &[Seg<'_>]) -> String {
    let mut p = String::new();
    let n = segs.len();
    for (k, s) in segs.iter().enumerate() {
        if n > 32 && (16..n - 8).contains(&k) {
            if k == 16 {
                p.push_str(&format!("…({} levels)…", n - 24));
            }
            continue;
        }
        match s {
            Seg::Key(k) => {
                if !p.is_empty() {
                    p.push('.');
                }
                p.push_str(&redact(&k.to_string_lossy()));
            }
            Seg::Index(i) => p.push_str(&format!("[{i}]")),
        }
    }
    p
}

/// Every secret in `v`: in every string value and every object key, at any depth (the walk
/// is iterative: a value nested 100 000 levels deep does not exhaust the stack).
pub fn scan_value(v: &JsValue) -> Vec<Found> {
    let mut out = Vec::new();
    let mut segs: Vec<Seg<'_>> = Vec::new();
    // (value, its path's length, its own step, its member name)
    let mut stack: Vec<(&JsValue, usize, Option<Seg<'_>>, Option<&JsStr>)> =
        vec![(v, 0, None, None)];
    while let Some((x, depth, seg, key)) = stack.pop() {
        segs.truncate(depth.saturating_sub(usize::from(seg.is_some())));
        if let Some(s) = seg {
            segs.push(s);
        }
        match x {
            JsValue::String(s) => {
                let text = s.to_string_lossy();
                let key = key.map(|k| k.to_string_lossy());
                for f in find_in(key.as_deref(), &text) {
                    out.push(Found {
                        path: path_of(&segs),
                        kind: f.kind,
                        chars: text[f.start..f.end].chars().count(),
                    });
                }
            }
            JsValue::Array(items) => {
                for (k, item) in items.iter().enumerate().rev() {
                    stack.push((item, segs.len() + 1, Some(Seg::Index(k)), None));
                }
            }
            JsValue::Object(members) => {
                for (k, _) in members {
                    let name = k.to_string_lossy();
                    for f in find(&name) {
                        segs.push(Seg::Key(k));
                        out.push(Found {
                            path: path_of(&segs),
                            kind: f.kind,
                            chars: name[f.start..f.end].chars().count(),
                        });
                        segs.pop();
                    }
                }
                for (k, item) in members.iter().rev() {
                    stack.push((item, segs.len() + 1, Some(Seg::Key(k)), Some(k)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Replaces in `s` what [`find_in`] finds; returns how many.
fn redact_js_str(s: &mut JsStr, key: Option<&str>) -> usize {
    let text = s.to_string_lossy();
    let found = find_in(key, &text);
    if found.is_empty() {
        return 0;
    }
    let new = replace(&text, &found);
    *s = JsStr::from(new);
    found.len()
}

/// Redacts, in place, exactly what [`scan_value`] reports: the secrets of every string value
/// and every object key (a key that becomes equal to another gets ` #2`, ` #3`, ... so that
/// no member is lost). Iterative. Returns how many secrets.
pub fn redact_value(v: &mut JsValue) -> usize {
    let mut n = 0;
    let mut stack: Vec<(&mut JsValue, Option<String>)> = vec![(v, None)];
    while let Some((x, key)) = stack.pop() {
        match x {
            JsValue::String(s) => n += redact_js_str(s, key.as_deref()),
            JsValue::Array(items) => stack.extend(items.iter_mut().map(|i| (i, None))),
            JsValue::Object(members) => {
                // The keys first (their original names are the values' context), then the
                // values are walked.
                let mut names = Vec::with_capacity(members.len());
                let mut renamed = false;
                for (k, _) in members.iter_mut() {
                    let name = k.to_string_lossy().into_owned();
                    let found = redact_js_str(k, None);
                    renamed |= found > 0;
                    n += found;
                    names.push(secret_name(&name).then_some(name));
                }
                if renamed {
                    let mut seen = std::collections::HashSet::new();
                    for (k, _) in members.iter_mut() {
                        let mut candidate = k.clone();
                        let mut i = 2;
                        while !seen.insert(candidate.clone()) {
                            let mut b = k.0.clone();
                            b.extend_from_slice(format!(" #{i}").as_bytes());
                            candidate = JsStr(b);
                            i += 1;
                        }
                        *k = candidate;
                    }
                }
                stack.extend(members.iter_mut().map(|(_, v)| v).zip(names));
            }
            _ => {}
        }
    }
    n
}

/// The secrets of one JSON line (see [`scan_value`]).
///
/// # Errors
/// The line is not JSON.
pub fn scan_line(line: &[u8]) -> Result<Vec<Found>, JsonError> {
    // A line that cannot hold one is not decoded (validated only: an error stays an error).
    if !may_hold_secret(line) && valid_json(line) {
        return Ok(Vec::new());
    }
    Ok(scan_value(&JsValue::parse(line)?))
}

/// One JSON line with its secrets redacted (see [`redact_value`]), as `JSON.stringify`
/// writes it, and how many; `None` when it holds none (the line stays byte for byte).
///
/// # Errors
/// The line is not JSON.
pub fn redact_line(line: &[u8]) -> Result<Option<(Vec<u8>, usize)>, JsonError> {
    redact_line_after(line, may_hold_secret(line))
}

/// [`redact_line`], `may` being what [`may_hold_secret`] says of the line.
fn redact_line_after(line: &[u8], may: bool) -> Result<Option<(Vec<u8>, usize)>, JsonError> {
    if !may && valid_json(line) {
        return Ok(None);
    }
    let mut v = JsValue::parse(line)?;
    let n = redact_value(&mut v);
    Ok((n > 0).then(|| (v.to_json(), n)))
}

/// Which line of a session a finding is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// omp's title slot (line 1).
    TitleSlot,
    /// The header line.
    Header,
    /// An entry, with its id.
    Entry(Option<String>),
}

/// A secret in a session: where, and of what kind (never the secret itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based line of the file.
    pub line: usize,
    /// The line's role.
    pub place: Place,
    /// Where in the line, as a JSON path (`message.content[0].text`).
    pub path: String,
    /// The rule.
    pub kind: &'static str,
    /// The secret's length in characters.
    pub chars: usize,
}

/// A line that was not scanned, and why (never its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unscanned {
    /// 1-based line of the file.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// What [`scan_doc`] found.
#[derive(Debug, Default)]
pub struct DocScan {
    /// The secrets, in file order.
    pub found: Vec<Located>,
    /// Lines that could not be scanned (malformed, torn): a scan with any is not clean.
    pub unscanned: Vec<Unscanned>,
}

/// The lines of `doc` a scan or a redaction covers: omp's title slot, the header, then the
/// entries (all, or those of `only`), each with its line number and place.
fn doc_lines<'d>(
    doc: &'d SessionDoc,
    only: Option<&'d [usize]>,
) -> impl Iterator<Item = (Option<usize>, usize, Place, &'d [u8])> + 'd {
    let slot = doc
        .title_slot()
        .map(|s| (None, 1, Place::TitleSlot, doc.line(&s.line)));
    let header = std::iter::once((None, doc.header().line_no, Place::Header, doc.header_line()));
    let all: Box<dyn Iterator<Item = usize> + 'd> = match only {
        Some(list) => Box::new(list.iter().copied()),
        None => Box::new(0..doc.entries().len()),
    };
    let entries = all.map(move |i| {
        let e = &doc.entries()[i];
        (
            Some(i),
            e.line_no,
            Place::Entry(e.id.as_deref().map(str::to_string)),
            doc.entry_line(i),
        )
    });
    slot.into_iter().chain(header).chain(entries)
}

/// Every secret in `doc` (omp's title slot, the header and every entry: each string value
/// and each key, decoded), in file order, and every line that could not be scanned.
pub fn scan_doc(doc: &SessionDoc) -> DocScan {
    let mut scan = DocScan::default();
    for bad in doc.report().malformed.iter().chain(&doc.report().torn_tail) {
        scan.unscanned.push(Unscanned {
            line: bad.line_no,
            problem: format!("not JSON ({})", bad.error),
        });
    }
    let mut behind = arbor_store::Resident::new(doc.base_bytes());
    for (_, line_no, place, line) in doc_lines(doc, None) {
        let scanned = scan_line(line);
        behind.read(line);
        match scanned {
            Ok(found) => scan.found.extend(found.into_iter().map(|f| Located {
                line: line_no,
                place: place.clone(),
                path: f.path,
                kind: f.kind,
                chars: f.chars,
            })),
            Err(e) => scan.unscanned.push(Unscanned {
                line: line_no,
                problem: format!("not JSON ({} at byte {})", e.message, e.offset),
            }),
        }
    }
    behind.done();
    // Further `type: "session"` lines (pi's duplicate-header bug) are not entries, but they
    // are in the file: scanned too (no export or fork writes them).
    let extra = &doc.report().extra_headers;
    if !extra.is_empty() {
        let lines = doc.base_bytes()[..doc.complete_len()].split(|&b| b == b'\n');
        for (n, line) in lines.enumerate() {
            let line_no = n + 1;
            if !extra.contains(&line_no) {
                continue;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            match scan_line(line) {
                Ok(found) => scan.found.extend(found.into_iter().map(|f| Located {
                    line: line_no,
                    place: Place::Header,
                    path: f.path,
                    kind: f.kind,
                    chars: f.chars,
                })),
                Err(e) => scan.unscanned.push(Unscanned {
                    line: line_no,
                    problem: format!("not JSON ({} at byte {})", e.message, e.offset),
                }),
            }
        }
    }
    scan.found.sort_by_key(|l| l.line);
    scan.unscanned.sort_by_key(|u| u.line);
    scan
}

/// A line [`redact_doc`] could not redact.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {problem} (nothing was redacted or written)")]
pub struct RedactError {
    /// 1-based line of the file.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

/// Redacts `doc` in memory, exactly where [`scan_doc`] reports: omp's title slot, the
/// header and the entries (all, or those of `only`). A line with a secret is replaced by
/// its redacted `JSON.stringify` form; every other line is left as it is. Returns how many
/// secrets. The file is not touched.
///
/// # Errors
/// A line that does not parse or whose redacted form is not an entry any more; `doc` is then
/// unchanged.
pub fn redact_doc(doc: &mut SessionDoc, only: Option<&[usize]>) -> Result<usize, RedactError> {
    redact_doc_deferring(doc, only, &|_, _| Vec::new()).map(|(n, _)| n)
}

/// Long strings whose secrets [`redact_doc_deferring`] left to its caller: for each entry
/// (its index), each string's raw contents (a byte range of the entry's line) and its
/// secrets, in the string decoded (lossily, as [`redact_value`] reads it).
pub type Deferred = Vec<(usize, Vec<(std::ops::Range<usize>, Vec<Secret>)>)>;

/// What [`redact_doc_deferring`] asks of an entry line: the byte ranges of the raw contents
/// of the strings its caller reads itself.
pub type LongStrings =
    dyn Fn(&arbor_core::entry::Entry, &[u8]) -> Vec<std::ops::Range<usize>> + Sync;

/// The least a string must take in its line to be left to the caller (decoded, it is longer
/// than the 4,096 bytes under which [`find_in`] also reads a member as `name=value`).
const DEFER_AT_LEAST: usize = 1 << 16;

/// [`redact_doc`], except that in an entry line the string values `long(entry, line)` names
/// (raw contents: byte ranges of the line, each at least 64 KB) are not redacted in the
/// line when the line holds no secret elsewhere: the line is kept as it is, and each
/// string's secrets, found as it is decoded a piece at a time ([`Finder`], never the string
/// whole), are returned for the caller to replace as it reads the string (an export
/// streaming it). They are exactly those `redact_value` replaces in the string. A line with
/// a secret outside those strings (or one they cannot be read for) is redacted whole, as
/// `redact_doc` does. Returns how many secrets, counting the deferred ones.
///
/// # Errors
/// As [`redact_doc`].
pub fn redact_doc_deferring(
    doc: &mut SessionDoc,
    only: Option<&[usize]>,
    long: &LongStrings,
) -> Result<(usize, Deferred), RedactError> {
    redact_in_parts(doc, only, long, PART_BYTES)
}

/// [`redact_doc_deferring`], the entries cut in parts of about `part_bytes` of lines.
fn redact_in_parts(
    doc: &mut SessionDoc,
    only: Option<&[usize]>,
    long: &LongStrings,
    part_bytes: usize,
) -> Result<(usize, Deferred), RedactError> {
    let d: &SessionDoc = doc;
    // omp's title slot and the header first, then the entries.
    let slot = match d.title_slot() {
        Some(s) => redact_one(d, None, 1, d.line(&s.line), long)?,
        None => Redacted::Kept,
    };
    let header = redact_one(d, None, d.header().line_no, d.header_line(), long)?;
    let all: Vec<usize> = only.map_or_else(|| (0..d.entries().len()).collect(), <[usize]>::to_vec);
    // First a look at every line (the prefilter and, for a line it clears, the JSON check:
    // most of the time, and nothing allocated), on two threads; then the lines that may hold
    // a secret, redacted in order on this one (what allocates: one thread's memory, as
    // before the looks were shared out).
    let looks = look_in_parts(d, &all, part_bytes);
    let mut n = 0;
    let mut entries = Vec::new();
    let mut deferred = Vec::new();
    let mut behind = arbor_store::Resident::new(d.base_bytes());
    for (&i, look) in all.iter().zip(looks) {
        let Look::May(may) = look else { continue };
        let line = d.entry_line(i);
        let r = redact_one_after(d, Some(i), d.entries()[i].line_no, line, long, may);
        // Read once: the pages of a mapped session go back to the page cache (a long line is
        // not resident twice, as map and as parsed text, while the export renders).
        behind.read(line);
        match r? {
            Redacted::Kept => {}
            Redacted::Whole(new, k) => {
                n += k;
                entries.push((i, new));
            }
            Redacted::Deferred(strings) => {
                let k: usize = strings.iter().map(|(_, s)| s.len()).sum();
                if k > 0 {
                    n += k;
                    deferred.push((i, strings));
                }
            }
        }
    }
    behind.done();
    let fail = |line: usize, e: arbor_core::entry::LineError| RedactError {
        line,
        problem: e.to_string(),
    };
    if let Redacted::Whole(mut new, k) = slot {
        n += k;
        new.push(b'\n');
        doc.set_title_slot(&new).map_err(|e| fail(1, e))?;
    }
    if let Redacted::Whole(new, k) = header {
        n += k;
        let line = doc.header().line_no;
        doc.set_header_line(new).map_err(|e| fail(line, e))?;
    }
    let first = entries
        .first()
        .map_or(0, |(i, _)| doc.entries()[*i].line_no);
    doc.replace_entry_lines(entries)
        .map_err(|e| fail(first, e))?;
    Ok((n, deferred))
}

/// What [`redact_one`] made of a line.
enum Redacted {
    /// No secret: the line stays.
    Kept,
    /// The line redacted whole, and how many secrets.
    Whole(Vec<u8>, usize),
    /// The line stays; its long strings' secrets are left to the caller.
    Deferred(Vec<(std::ops::Range<usize>, Vec<Secret>)>),
}

/// One line of `doc` (entry `i`'s, or the header's or title slot's when `None`), redacted as
/// [`redact_doc_deferring`] says.
fn redact_one(
    doc: &SessionDoc,
    i: Option<usize>,
    line_no: usize,
    line: &[u8],
    long: &LongStrings,
) -> Result<Redacted, RedactError> {
    // The prefilter once per line (it is most of the cost of a line without secrets).
    redact_one_after(doc, i, line_no, line, long, may_hold_secret(line))
}

/// [`redact_one`], `may` being what [`may_hold_secret`] says of the line.
fn redact_one_after(
    doc: &SessionDoc,
    i: Option<usize>,
    line_no: usize,
    line: &[u8],
    long: &LongStrings,
    may: bool,
) -> Result<Redacted, RedactError> {
    let strings = i
        .filter(|_| may)
        .map(|i| long(&doc.entries()[i], line))
        .and_then(|r| defer(line, &r));
    if let (Some(_), Some(strings)) = (i, strings) {
        return Ok(Redacted::Deferred(strings));
    }
    match redact_line_after(line, may) {
        Ok(Some((new, k))) => Ok(Redacted::Whole(new, k)),
        Ok(None) => Ok(Redacted::Kept),
        Err(e) => Err(RedactError {
            line: line_no,
            problem: format!("not JSON ({} at byte {})", e.message, e.offset),
        }),
    }
}

/// What a first look at a line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// No secret can be in it (the prefilter says so) and it is JSON: it stays as it is.
    Clean,
    /// To be read whole; what [`may_hold_secret`] said of it.
    May(bool),
}

/// The first look at each entry of `part`: [`may_hold_secret`], and for a line it clears
/// whether it is JSON (else the redaction reads it, to give the error).
fn look_part(doc: &SessionDoc, part: &[usize]) -> Vec<Look> {
    let mut behind = arbor_store::Resident::new(doc.base_bytes());
    let looks = part
        .iter()
        .map(|&i| {
            let line = doc.entry_line(i);
            let may = may_hold_secret(line);
            let look = if !may && valid_json(line) {
                Look::Clean
            } else {
                Look::May(may)
            };
            behind.read(line);
            look
        })
        .collect();
    behind.done();
    looks
}

/// [`look_part`] of every entry of `all`, in order: in parts of about `part_bytes` of lines,
/// taken in turn by two threads when there are two cores (a look allocates nothing, so the
/// two threads do not double the memory the redaction uses).
fn look_in_parts(doc: &SessionDoc, all: &[usize], part_bytes: usize) -> Vec<Look> {
    let parts = in_parts(doc, all, part_bytes);
    let done = std::sync::Mutex::new(Vec::with_capacity(parts.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || loop {
        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(part) = parts.get(k) else { return };
        let looks = look_part(doc, part);
        if let Ok(mut done) = done.lock() {
            done.push((k, looks));
        }
    };
    if parts.len() > 1 && arbor_core::two_cores() {
        std::thread::scope(|s| {
            s.spawn(work);
            work();
        });
    } else {
        work();
    }
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(k, _)| *k);
    let mut looks = Vec::with_capacity(all.len());
    for (_, part) in done {
        looks.extend(part);
    }
    looks
}

/// How many bytes of entry lines a part of [`redact_doc_deferring`]'s first look holds (parts
/// are taken in turn by two threads: small enough that neither waits long for the other).
const PART_BYTES: usize = 4 << 20;

/// `all` cut into parts of about `part_bytes` of lines each, in order.
fn in_parts<'a>(doc: &SessionDoc, all: &'a [usize], part_bytes: usize) -> Vec<&'a [usize]> {
    let mut parts = Vec::new();
    let (mut from, mut bytes) = (0, 0);
    for (k, &i) in all.iter().enumerate() {
        bytes += doc.entry_line(i).len();
        if bytes >= part_bytes {
            parts.push(&all[from..=k]);
            (from, bytes) = (k + 1, 0);
        }
    }
    if from < all.len() {
        parts.push(&all[from..]);
    }
    parts
}

/// The secrets of each of `strings` (raw contents in `line`, in order, not overlapping),
/// read in pieces, when the line without them holds none; `None`: the line is to be
/// redacted whole (no such string, a secret elsewhere, a string that does not decode).
fn defer(
    line: &[u8],
    strings: &[std::ops::Range<usize>],
) -> Option<Vec<(std::ops::Range<usize>, Vec<Secret>)>> {
    if strings.is_empty() || strings.iter().any(|r| r.len() < DEFER_AT_LEAST) {
        return None;
    }
    // The line with those strings empty: no secret may be left in it.
    let mut masked = Vec::new();
    let mut from = 0;
    for r in strings {
        masked.extend_from_slice(line.get(from..r.start)?);
        from = r.end;
    }
    masked.extend_from_slice(line.get(from..)?);
    if !matches!(redact_line(&masked), Ok(None)) {
        return None;
    }
    let mut out = Vec::with_capacity(strings.len());
    for r in strings {
        let raw = line.get(r.clone())?;
        let mut finder = Finder::new();
        let mut pieces = arbor_core::json::StrPieces::new(raw, FIND_WINDOW);
        let mut released = 0;
        while let Some(p) = pieces.next() {
            finder.push(&p.ok()?);
            // The string's pages behind are not read again by this pass.
            let done = pieces.consumed();
            arbor_store::release_pages(raw.get(released..done).unwrap_or_default());
            released = done.saturating_sub(1 << 16);
        }
        out.push((r.clone(), finder.finish()));
    }
    Some(out)
}

/// Search hits as they may be shown with redaction on (`arbor mcp`'s search, `arbor serve`'s):
/// a hit whose text holds a secret gets its snippet made again from the redacted text (a
/// snippet is a window of the text and could cut a secret to a piece the scanner no longer
/// recognizes), and a hit whose match lies only inside a secret is dropped (else a query could
/// confirm a secret a prefix at a time). `marks` are the search's marks around matched words.
/// The hits' titles and the snippets of hits whose text was not found again are left to the
/// caller to redact.
///
/// # Errors
/// The catalog's own errors.
pub fn redacted_hits(
    cat: &arbor_index::Catalog,
    hits: Vec<arbor_index::Hit>,
    marks: &(String, String),
) -> Result<Vec<arbor_index::Hit>, arbor_index::IndexError> {
    let mut out = Vec::with_capacity(hits.len());
    for mut h in hits {
        let texts = cat.texts_near(&h.path, h.seq, h.seq, 16)?;
        let Some(full) = texts
            .iter()
            .find(|t| t.kind == h.kind && t.entry_id == h.entry_id)
            .map(|t| t.text.as_str())
        else {
            // Not found again (the file changed since): served as found, redacted later.
            out.push(h);
            continue;
        };
        if find(full).is_empty() {
            out.push(h);
            continue;
        }
        let redacted = redact(full);
        // The first matched word of the snippet, found again in the redacted text.
        let word: Option<String> = h
            .snippet
            .split(marks.0.as_str())
            .nth(1)
            .and_then(|rest| rest.split(marks.1.as_str()).next())
            .map(str::to_ascii_lowercase)
            .filter(|w| !w.is_empty());
        let lower = redacted.to_ascii_lowercase();
        let Some(start) = word.as_deref().and_then(|w| lower.find(w)) else {
            continue;
        };
        let end = start + word.as_deref().map_or(0, str::len);
        h.snippet = arbor_index::regex_snippet(&redacted, start, end, marks);
        out.push(h);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of `n` entries: a token, plain text, a long string with a key.
    fn session_with_secrets(n: usize) -> SessionDoc {
        let mut s = String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n");
        let mut parent = "null".to_string();
        for k in 0..n {
            let text = match k % 3 {
                0 => format!("step {k} ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x{k:03}"),
                1 => format!("plain {k} {}", "x".repeat(k * 7)),
                _ => format!("{} AKIAQWERTYUIOPASDFGH", "y".repeat(70_000)),
            };
            let line = format!("{{\"type\":\"message\",\"id\":\"e{k}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}");
            s.push_str(&line);
            s.push('\n');
            parent = format!("\"e{k}\"");
        }
        SessionDoc::parse(std::sync::Arc::new(s.into_bytes())).expect("a session")
    }

    /// An entry's `content` string when it is long: the caller reads it (as an export does).
    fn long_contents(_: &arbor_core::entry::Entry, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        let at = memchr::memmem::find(line, b"\"content\":\"").map(|i| i + 11);
        let end = at.and_then(|a| memchr::memchr(b'"', &line[a..]).map(|e| a + e));
        match (at, end) {
            (Some(a), Some(b)) if b - a >= DEFER_AT_LEAST => std::iter::once(a..b).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn redacting_in_parts_on_two_threads_is_redacting_in_one() {
        for only in [None, Some(vec![0usize, 2, 3, 5, 7, 8, 11, 29])] {
            let mut whole = session_with_secrets(30);
            let mut parts = session_with_secrets(30);
            let a = redact_in_parts(&mut whole, only.as_deref(), &long_contents, usize::MAX)
                .expect("redacted");
            // A part per entry: every part boundary there is.
            let b =
                redact_in_parts(&mut parts, only.as_deref(), &long_contents, 1).expect("redacted");
            assert!(a.0 > 0);
            assert_eq!(a.0, b.0);
            assert_eq!(a.1, b.1);
            assert!(!a.1.is_empty(), "the long strings' secrets are deferred");
            for i in 0..whole.entries().len() {
                assert_eq!(whole.entry_line(i), parts.entry_line(i), "entry {i}");
            }
        }
    }

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

    /// The kinds the README lists that the rules missed, and the common ones added: each
    /// found (with its kind), and its look-alike kept.
    #[test]
    fn added_rules_find_their_secret_and_keep_their_look_alike() {
        let oat = concat!("sk-ant-oat01-", "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3hI5jK7lM9nO1pQ3rS5tU7vW9xY1zA3bC5dE7-xYzAA");
        let ort = concat!("sk-ant-ort01-", "Zz3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3hI5jK7lM9nO1pQ3rS5tU7vW9xY1zA3bC5dE7-xYzAA");
        let cases: &[(&str, &str, &str)] = &[
            (oat, "anthropic-key", "sk-ant-oat01-short"),
            (ort, "anthropic-key", "sk-ant-ort01-"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQy",
                "private-key",
                "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
            ),
            (
                "DATABASE_URL=postgres://app:s3cr3tPa55@db.internal:5432/prod",
                "url-credentials",
                "DATABASE_URL=postgres://app@db.internal:5432/prod",
            ),
            (
                "git clone https://oauth2:Xy7Gh2Kp9Lq4@gitlab.example.org/group/repo.git",
                "url-credentials",
                "see https://user:${PASSWORD}@host/ or mailto:a@b.c",
            ),
            (
                "curl -H 'Authorization: Bearer 4f9c2a7e1b3d5f6a8c0e2b4d6f8a0c1e'",
                "authorization",
                "curl -H \"Authorization: Bearer $TOKEN\"",
            ),
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
                "authorization",
                "the Authorization header: Basic auth is described in RFC 7617",
            ),
            (
                "//registry.npmjs.org/:_authToken=npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
                "npm-token",
                "npm_config_cache=/tmp/npm",
            ),
            ("glpat-aB3dE5fG7hI9jK1lM3nO", "gitlab-token", "glpat-short"),
            (
                "HF_TOKEN hf_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x",
                "huggingface-token",
                "hf_hub_download(repo_id)",
            ),
            (
                "xoxe-1-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
                "slack-token",
                "xox-nothing",
            ),
            ("DB_PASS=Tr0ub4dor3x", "password", "DB_PASS=${DB_PASS}"),
            ("export SMTP_PASS='kq8Zr2mW7x'", "password", "bypass = kq8Zr2mW7x"),
        ];
        for (secret, kind, look_alike) in cases {
            assert_eq!(kinds(secret), vec![*kind], "{secret}");
            assert!(
                find(look_alike).is_empty(),
                "{look_alike}: {:?}",
                find(look_alike)
            );
        }
    }

    /// Random hex under a secret-like name: the entropy floor sat near hex's maximum and let
    /// 19 of 20 through. Twenty values from a fixed generator: all found.
    #[test]
    fn random_hex_under_a_secret_name_is_found_every_time() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut found = 0;
        for _ in 0..20 {
            let hex: String = (0..32)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    char::from(b"0123456789abcdef"[(x % 16) as usize])
                })
                .collect();
            if kinds(&format!("API_TOKEN={hex}")) == vec!["generic-secret"] {
                found += 1;
            }
        }
        assert_eq!(found, 20);
    }

    /// Realistic values that are not secrets stay, alone and next to ordinary names.
    #[test]
    fn a_corpus_of_non_secrets_stays() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
        for text in [
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 file.tar",
            "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
            "commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 (HEAD -> main)",
            "01a2031c-aa28-755e-9ecf-bfbc78024ba4",
            "request_id=3f2b8c1e-7a4d-4e9b-8c2a-1d5e6f7a8b9c",
            "blob:sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            png,
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
            "integrity sha512-Xj9h3hO8dC7Bq5f0Y1mJ2uNvK4wL6tR8sE3aZ9cD1bG5hF7iQ0pW2xV4yU6nM8o==",
            "https://github.com/earendil-works/pi/blob/main/src/session.ts#L42",
            "postgres://localhost:5432/app",
            "ssh://git@github.com:22/owner/repo.git",
            "password_hash_algorithm = argon2id",
            "the max_tokens=4096 setting",
            "tokenizer = cl100k_base_tokenizer_v2",
            "secret_name: projects-production-database-credentials",
            "Authorization: Bearer",
            "let password = prompt();",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    /// What [`may_hold_secret`]'s proof assumes of the literals: ASCII, and none holds `=`
    /// (a member's `name=value` joins two strings with it) or a character that only an
    /// escape writes (`"`, `\`, a control character).
    #[test]
    fn the_literals_are_what_the_prefilter_assumes() {
        assert!(rules().len() <= 64, "a rule's bit in a u64");
        for rule in rules() {
            assert!(!rule.needs.is_empty(), "{}", rule.kind);
            for lit in rule.needs {
                // Found whole in one window of a long line (and `\uXXXX` too).
                assert!(
                    lit.len() < PREFILTER_OVERLAP && 6 < PREFILTER_OVERLAP,
                    "{lit:?}"
                );
                assert!(
                    lit.bytes()
                        .all(|b| b.is_ascii_graphic() && !matches!(b, b'=' | b'"' | b'\\')),
                    "{}: {lit:?}",
                    rule.kind
                );
            }
        }
    }

    /// The regex engine's `(?i)` matches an ASCII letter with exactly the characters of
    /// [`FOLDS_TO_ASCII`] (and the letter's other case): every other character is told apart
    /// from the literals by its bytes.
    #[test]
    fn only_two_characters_fold_to_ascii_letters() {
        let re = Regex::new("(?i)^[a-z]$").expect("regex");
        let folding: Vec<char> = (0x80u32..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|c| re.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert_eq!(folding, FOLDS_TO_ASCII.to_vec());
    }

    /// Each rule's secret, hidden from the raw bytes in each way a JSON line can hide it (an
    /// escape for one of its characters, a character that case folds to an ASCII letter):
    /// the prefilter sends the line to the full scan, which finds it.
    #[test]
    fn a_secret_spelled_with_escapes_or_folding_is_still_found() {
        let lines = [
            r#"{"t":"\u0067hp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"}"#,
            r#"{"t":"git clone https:\/\/oauth2:Xy7Gh2Kp9Lq4@gitlab.example.org\/r.git"}"#,
            r#"{"t":"https:\/\/hooks.slack.com\/services\/T00000000\/B00000000\/XXXXXXXXXXXXXXXXXXXXXXXXa1b2c3d4e5f6g7h8i9"}"#,
            "{\"t\":\"DB_PA\u{17F}\u{17F}WORD=Tr0ub4dor&3x!\"}",
            "{\"t\":\"\u{212A}EY_\u{17F}ECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e\"}",
            r#"{"t":"DB_PA\u017f\u017fWORD=Tr0ub4dor&3x!"}"#,
            r#"{"t":"\u0041KIAQWERTYUIOPASDFGH"}"#,
            r#"{"\u0074oken":"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc"}"#,
        ];
        for line in lines {
            assert!(may_hold_secret(line.as_bytes()), "{line}");
            assert_eq!(scan_line(line.as_bytes()).expect("json").len(), 1, "{line}");
        }
        assert!(!may_hold_secret(
            br#"{"t":"plain text\n\"quoted\" \\ \u001b[0m done"}"#
        ));
    }

    /// The full scan and redaction, without the prefilter.
    fn full_scan(line: &[u8]) -> Result<Vec<Found>, JsonError> {
        unfiltered(|| Ok(scan_value(&JsValue::parse(line)?)))
    }

    fn full_redact(line: &[u8]) -> Result<Option<(Vec<u8>, usize)>, JsonError> {
        unfiltered(|| {
            let mut v = JsValue::parse(line)?;
            let n = redact_value(&mut v);
            Ok((n > 0).then(|| (v.to_json(), n)))
        })
    }

    /// `f` with every rule run on every text.
    fn unfiltered<T>(f: impl FnOnce() -> T) -> T {
        UNFILTERED.with(|u| u.set(true));
        let out = f();
        UNFILTERED.with(|u| u.set(false));
        out
    }

    /// Pieces of raw JSON string text: secrets, literals and their look-alikes, escapes of
    /// every kind (some spelling a literal's character), characters that fold to ASCII, and
    /// bytes that make the line invalid.
    const PIECES: &[&str] = &[
        "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "\\u0067hp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "g\\u0068p_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "AKIAQWERTYUIOPASDFGH",
        "\\u0041KIAQWERTYUIOPASDFGH",
        "akiaqwertyuiopasdfgh",
        "sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9",
        "s\\u006b-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "postgres:\\/\\/app:s3cr3tPa55@db.internal\\/prod",
        "postgres://app:s3cr3tPa55@db.internal/prod",
        "https:\\/\\/hooks.slack.com\\/services\\/T00000000\\/B00000000\\/XXXXXXXXXXXXXXXXXXXXXXXXa1b2c3d4e5f6g7h8i9",
        "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA1234\\nabcd\\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN\\u0020RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA1234",
        "DB_PASSWORD=Tr0ub4dor&3x!",
        "DB_PA\u{17F}\u{17F}WORD=Tr0ub4dor&3x!",
        "DB_PA\\u017f\\u017fWORD=Tr0ub4dor&3x!",
        "DB_P\\u0041SS=Tr0ub4dor3x",
        "\u{212A}EY_SECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "CLIENT_SECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "CLIENT_SEC\\u0052ET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "Authorization: Bearer 4f9c2a7e1b3d5f6a8c0e2b4d6f8a0c1e",
        "\\\"api_key\\\": \\\"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc\\\"",
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc",
        "Tr0ub4dor3xQ",
        "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "hello world ",
        "let value = compute(&items[index]); ",
        "\\n",
        "\\t",
        "\\\"",
        "\\\\",
        "\\\\u0067",
        "\\/",
        "\\u001b[0m",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud800",
        "é",
        "ſ",
        "K",
        "=",
        ":",
        " ",
        "_",
        "-",
        "pass",
        "pw",
        "token",
        "aws",
        "sk-",
        "eyJ",
        "://",
        "\\x",
        "\\u12",
        // An escape that spells no literal's character (cut by a window, it must not count).
        "\\u00e9",
        "\"",
    ];
    const KEYS: &[&str] = &[
        "t",
        "password",
        "api_key",
        "to\\u006ben",
        "auth",
        "name",
        "AWS_SECRET",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The prefiltered scan and redaction of a line equal the full ones (the same
        /// findings, the same redacted bytes, the same error), on lines made of secrets,
        /// escapes that spell or hide them, characters that fold to ASCII and invalid bytes.
        #[test]
        fn prefilter_agrees_with_full_scan(
            members in proptest::collection::vec(
                (0..KEYS.len(), proptest::collection::vec(0..PIECES.len(), 0..6)),
                1..4,
            ),
            window in 1usize..40,
        ) {
            let mut line = String::from("{");
            for (n, (k, pieces)) in members.iter().enumerate() {
                if n > 0 {
                    line.push(',');
                }
                line.push_str(&format!("\"{}\":\"", KEYS[*k]));
                for p in pieces {
                    line.push_str(PIECES[*p]);
                }
                line.push('"');
            }
            line.push('}');
            let b = line.as_bytes();
            proptest::prop_assert_eq!(scan_line(b), full_scan(b), "{}", line);
            proptest::prop_assert_eq!(redact_line(b), full_redact(b), "{}", line);
            // A long line's prefilter, a window at a time, says what it says of the line
            // whole, wherever the windows cut a literal or an escape.
            // The shortest overlap that holds: the longest literal, and `\uXXXX`.
            let overlap = rules()
                .iter()
                .flat_map(|r| r.needs.iter().map(|l| l.len()))
                .max()
                .unwrap_or(0)
                .max(6);
            proptest::prop_assert_eq!(
                may_hold_secret_windows(b, window, overlap),
                may_hold_secret_windows(b, usize::MAX, 0),
                "{} (windows of {})", line, window
            );
        }
    }

    /// Decoded text: the rules `find` runs on a text (those whose literals it holds) find
    /// what every rule finds, with the case of a literal changed and folding characters in it.
    const TEXTS: &[&str] = &[
        "PaSsWoRd = Tr0ub4dor&3x!",
        "ApI_kEy: Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc",
        "\u{17F}ECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "AUTHORIZATION: bearer 4f9c2a7e1b3d5f6a8c0e2b4d6f8a0c1e",
        "Aws_Secret_Access_Key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ2mB8vNq1",
        "POSTGRES://app:s3cr3tPa55@db.internal/prod",
        "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "GHP_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\n",
        "totalTokens",
        " ",
        "\n",
        "=",
        "\"",
        "é",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn rules_run_only_where_their_literals_are_find_the_same(
            parts in proptest::collection::vec(0..TEXTS.len(), 1..6),
        ) {
            let text: String = parts.iter().map(|&i| TEXTS[i]).collect();
            proptest::prop_assert_eq!(find(&text), unfiltered(|| find(&text)), "{}", text);
        }
    }

    /// Decoded text for [`Finder`]: a secret of every rule, whole and cut into its name, its
    /// separator and its value (so that they straddle windows), private keys with and without
    /// their END line, look-alikes a rule turns down, whitespace runs, words that continue a
    /// name, characters that fold to ASCII and multi-byte ones.
    const STREAM: &[&str] = &[
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
        "-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "AKIAQWERTYUIOPASDFGH",
        "aws_secret_access_key = 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",
        "aws_secret_access_key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ2mB8vNq1",
        "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "ghp_",
        "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij",
        "glpat-aB3dE5fG7hI9jK1lM3nO5",
        "sk-ant-api03-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3hI5jK7l",
        "sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9",
        "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",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXXa1b2c3d4e5f6g7h8i9",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "hf_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        ".eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        "postgres://app:s3cr3tPa55@db.internal/prod",
        "postgres://app:",
        "s3cr3tPa55@db",
        "Authorization: Bearer 4f9c2a7e1b3d5f6a8c0e2b4d6f8a0c1e",
        "Authorization",
        ": Bearer ",
        "4f9c2a7e1b3d5f6a8c0e2b4d6f8a0c1e",
        "DB_PASSWORD=Tr0ub4dor&3x!",
        "DB_PASSWORD",
        "Tr0ub4dor&3x!",
        "password: \"hunter2hunter2\"",
        "CLIENT_SECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "CLIENT_SECRET",
        "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        "\"api_key\": \"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc\"",
        "api_key=API_TOKEN=522dd222500000003000610413437084",
        "password = <your password>",
        "my_token_count = 1234567890",
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc",
        "=",
        ": ",
        "\"",
        " ",
        "      ",
        "\n",
        "\n\n   \t",
        "abc_def",
        "_",
        "-",
        "let value = compute(&items[index]); ",
        "\u{17F}",
        "\u{212A}",
        "é",
        "😀",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// A text given in pieces and scanned in windows ([`Finder`]) has the secrets the
        /// whole text has: the same ranges, kinds and order, wherever the pieces and the
        /// windows cut a secret, a name from its value, a key block from its END line.
        #[test]
        fn windows_find_what_the_whole_text_holds(
            parts in proptest::collection::vec(0..STREAM.len(), 1..12),
            cuts in proptest::collection::vec(1usize..30, 1..8),
            window in 1usize..64,
        ) {
            let text: String = parts.iter().map(|&i| STREAM[i]).collect();
            let mut f = Finder::with_window(window);
            let mut at = 0;
            let mut k = 0;
            while at < text.len() {
                let mut end = (at + cuts[k % cuts.len()]).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                f.push(&text[at..end]);
                at = end;
                k += 1;
            }
            proptest::prop_assert_eq!(f.finish(), find(&text), "{:?} (windows of {})", text, window);
        }
    }

    /// What [`Finder`] holds of ordinary text (code, prose, secrets among them) stays near
    /// a window however long the text; a private key block whose END line does not come is
    /// held from its BEGIN line (any text may continue its body).
    #[test]
    fn the_text_held_stays_near_a_window() {
        let line =
            "    let value = compute(&items[index], options.clone()); // step 42, password: x\n";
        let secret = "token = ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\n";
        let window = 4096;
        let mut f = Finder::with_window(window);
        let mut most = 0;
        for k in 0..20_000 {
            f.push(if k % 997 == 0 { secret } else { line });
            most = most.max(f.buf.len());
        }
        assert!(most < 2 * window, "held {most} bytes");
        assert_eq!(f.finish().len(), 21);
        let mut f = Finder::with_window(window);
        f.push("-----BEGIN RSA PRIVATE KEY-----\n");
        for _ in 0..2_000 {
            f.push(line);
        }
        assert!(
            f.buf.len() > 2_000 * line.len(),
            "held {} bytes",
            f.buf.len()
        );
    }

    /// A value a rule turns down can hold a secret: `API_TOKEN=…` is not random as a whole
    /// under `api_key`, the hex after `API_TOKEN=` is (the search went on past the turned
    /// down value; found by `redaction.rs`'s property `a_redacted_fork_holds_nothing_secrets_reports`).
    #[test]
    fn a_secret_inside_a_turned_down_value_is_found() {
        let inner = "API_TOKEN=522dd222500000003000610413437084";
        assert_eq!(kinds(inner), vec!["generic-secret"]);
        let t = format!("{{\"api_key\": \"{inner}\"}}");
        assert_eq!(kinds(&t), vec!["generic-secret"], "{t}");
        assert!(!redact(&t).contains("522dd2225"), "{}", redact(&t));
    }

    #[test]
    fn overlapping_findings_are_redacted_once() {
        let t = "token=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 and AKIAQWERTYUIOPASDFGH";
        let r = redact(t);
        assert_eq!(r.matches("[REDACTED:").count(), 2, "{r}");
        assert!(!r.contains("ghp_") && !r.contains("AKIA"), "{r}");
    }
}
