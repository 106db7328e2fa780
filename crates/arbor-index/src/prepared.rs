//! A listing made once and handed over as bytes: what a live watcher (`arbor index --watch`,
//! see the module `watch`) prepares for `arbor ls` so that a command at 10,000 sessions does not
//! read and convert every catalog row itself.
//!
//! Two forms, both of a list already in pi's order ([`crate::sort_like_pi`]):
//!
//! - the JSON document of `arbor ls --json` ([`write_json_list`], the one writer of that array:
//!   `ls` streams its rows through it too);
//! - every field of each [`Listed`], in a binary form of arbor's own ([`encode_rows`],
//!   [`decode_rows`]), from which a command renders anything else (the table) as it would
//!   from the catalog.
//!
//! A live watcher answers searches in the same way: the question ([`encode_query`]) and the
//! hits ([`encode_hits`], [`decode_hits`]) in that binary form.
//!
//! Decoding never panics: input that is cut short or malformed is `None` (the command then reads
//! the catalog itself).
use crate::catalog::Listed;
use crate::search::{Hit, SearchQuery};
use crate::text::{Kind, Usage};
use arbor_core::json::JsStr;
use arbor_store::discover::SessionInfo;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Writes the JSON array of `arbor ls --json`: `[`, each row as `row` writes it into the
/// scratch buffer (cleared before each row), separated by commas, then `]` and a newline.
/// Each row goes to `out` as soon as it is written (one scratch buffer for the whole list).
///
/// # Errors
/// What `row` or writing to `out` returns.
pub fn write_json_list<T, E: From<std::io::Error>>(
    rows: impl IntoIterator<Item = T>,
    out: &mut impl std::io::Write,
    mut row: impl FnMut(T, &mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    let mut json = Vec::with_capacity(4096);
    out.write_all(b"[")?;
    for (k, r) in rows.into_iter().enumerate() {
        json.clear();
        if k > 0 {
            json.push(b',');
        }
        row(r, &mut json)?;
        out.write_all(&json)?;
    }
    out.write_all(b"]\n")?;
    Ok(())
}

/// The JSON document `arbor ls --json` prints for `listed` (pi's fields, no
/// `allMessagesText`).
pub fn json_of(listed: &[Listed]) -> Vec<u8> {
    let mut out = Vec::with_capacity(listed.len() * 1024 + 3);
    let r: Result<(), std::io::Error> = write_json_list(listed, &mut out, |l, json| {
        l.info.write_json(json, false);
        Ok(())
    });
    debug_assert!(r.is_ok(), "writing to a Vec does not fail");
    out
}

/// Every field of `listed`, in order, in arbor's binary form ([`decode_rows`] reads it).
pub fn encode_rows(listed: &[Listed]) -> Vec<u8> {
    let mut out = Vec::with_capacity(listed.len() * 1024 + 8);
    put_u64(&mut out, listed.len() as u64);
    for l in listed {
        encode(l, &mut out);
    }
    out
}

/// The rows [`encode_rows`] wrote, or `None` when `bytes` is not exactly such a list.
pub fn decode_rows(bytes: &[u8]) -> Option<Vec<Listed>> {
    let mut r = Reader(bytes);
    let n = r.u64()?;
    // Each row takes at least 100 bytes: a count larger than that allows is no list.
    if n > (bytes.len() / 100) as u64 + 1 {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        out.push(decode(&mut r)?);
    }
    r.0.is_empty().then_some(out)
}

/// Appends `v` in the binary form's way (8 bytes, little-endian); [`Reader::u64`] reads it.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` (its bits, as [`put_u64`]); [`Reader::f64`] reads it.
pub fn put_f64(out: &mut Vec<u8>, v: f64) {
    put_u64(out, v.to_bits());
}

/// Appends `b`, its length first; [`Reader::bytes`] reads it.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_bytes(out, s.as_bytes());
        }
    }
}

fn encode(l: &Listed, out: &mut Vec<u8>) {
    let i = &l.info;
    put_bytes(out, i.path.as_os_str().as_bytes());
    put_opt_str(out, i.id.as_deref());
    put_bytes(out, i.cwd.as_bytes());
    put_opt_str(out, i.name.as_deref());
    put_opt_str(out, i.parent_session_path.as_deref());
    match i.created_ms {
        None => out.push(0),
        Some(ms) => {
            out.push(1);
            put_f64(out, ms);
        }
    }
    put_f64(out, i.modified_ms);
    put_u64(out, i.message_count as u64);
    put_bytes(out, &i.first_message.0);
    put_bytes(out, &i.all_messages_text.0);
    put_bytes(out, l.file.as_os_str().as_bytes());
    for v in [l.size, l.branches, l.entries, l.labels] {
        put_u64(out, v);
    }
    put_u64(out, l.models.len() as u64);
    for m in &l.models {
        put_bytes(out, m.as_bytes());
    }
    let u = &l.usage;
    for v in [u.input, u.output, u.cache_read, u.cache_write, u.cost] {
        put_f64(out, v);
    }
    put_opt_str(out, l.title.as_deref());
    out.push(u8::from(l.omp));
    put_opt_str(out, l.session_id.as_deref());
    put_u64(out, l.version as u64);
    put_f64(out, l.mtime_ms);
}

/// A cursor over the bytes being decoded (what [`put_u64`], [`put_f64`] and [`put_bytes`]
/// wrote); each read is `None` when the input is cut short or malformed.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader(bytes)
    }
    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn flag(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    /// What [`put_u64`] wrote.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// What [`put_f64`] wrote.
    pub fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }
    /// What [`put_bytes`] wrote.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
    /// What [`put_bytes`] wrote, when it is UTF-8.
    pub fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    fn opt_string(&mut self) -> Option<Option<String>> {
        if self.flag()? {
            Some(Some(self.string()?))
        } else {
            Some(None)
        }
    }
    fn path(&mut self) -> Option<PathBuf> {
        Some(PathBuf::from(OsString::from_vec(self.bytes()?.to_vec())))
    }
}

fn decode(r: &mut Reader<'_>) -> Option<Listed> {
    let path = r.path()?;
    let id = r.opt_string()?;
    let cwd = r.string()?;
    let name = r.opt_string()?;
    let parent_session_path = r.opt_string()?;
    let created_ms = if r.flag()? { Some(r.f64()?) } else { None };
    let modified_ms = r.f64()?;
    let message_count = usize::try_from(r.u64()?).ok()?;
    let first_message = JsStr(r.bytes()?.to_vec());
    let all_messages_text = JsStr(r.bytes()?.to_vec());
    let file = r.path()?;
    let (size, branches, entries, labels) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
    let n_models = r.u64()?;
    if n_models > r.0.len() as u64 / 8 {
        return None;
    }
    let models = (0..n_models)
        .map(|_| r.string())
        .collect::<Option<Vec<_>>>()?;
    let usage = Usage {
        input: r.f64()?,
        output: r.f64()?,
        cache_read: r.f64()?,
        cache_write: r.f64()?,
        cost: r.f64()?,
    };
    let title = r.opt_string()?;
    let omp = r.flag()?;
    let session_id = r.opt_string()?;
    let version = r.u64()? as i64;
    let mtime_ms = r.f64()?;
    Some(Listed {
        info: SessionInfo {
            path,
            id,
            cwd,
            name,
            parent_session_path,
            created_ms,
            modified_ms,
            message_count,
            first_message,
            all_messages_text,
        },
        file,
        size,
        branches,
        entries,
        labels,
        models,
        usage,
        title,
        omp,
        session_id,
        version,
        mtime_ms,
    })
}

/// A search's question in the request line's form: every field of `q` but its directories
/// (the question names those itself), in the binary form, as lowercase hex (no tab, no
/// newline, whatever the query holds). [`decode_query`] reads it.
pub fn encode_query(q: &SearchQuery) -> String {
    let mut b = Vec::with_capacity(q.query.len() + 96);
    put_bytes(&mut b, q.query.as_bytes());
    match &q.kinds {
        None => b.push(0),
        Some(ks) => {
            b.push(1);
            put_u64(&mut b, ks.len() as u64);
            for k in ks {
                put_u64(&mut b, k.code() as u64);
            }
        }
    }
    match q.since_ms {
        None => b.push(0),
        Some(t) => {
            b.push(1);
            put_f64(&mut b, t);
        }
    }
    put_u64(&mut b, q.limit as u64);
    put_bytes(&mut b, q.marks.0.as_bytes());
    put_bytes(&mut b, q.marks.1.as_bytes());
    put_u64(&mut b, u64::from(q.snippet_words));
    put_u64(&mut b, q.rank_window as u64);
    b.push(u8::from(q.check_index));
    b.push(u8::from(q.count_total));
    put_u64(&mut b, q.count_cap as u64);
    let mut hex = String::with_capacity(b.len() * 2);
    for byte in b {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 15)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The search [`encode_query`] wrote (its directories `None`), or `None` when `hex` is not
/// exactly such a question.
pub fn decode_query(hex: &str) -> Option<SearchQuery> {
    let h = hex.as_bytes();
    if !h.len().is_multiple_of(2) {
        return None;
    }
    let nib = |c: u8| HEX.iter().position(|&x| x == c).map(|v| v as u8);
    let bytes = h
        .chunks_exact(2)
        .map(|p| Some((nib(p[0])? << 4) | nib(p[1])?))
        .collect::<Option<Vec<u8>>>()?;
    let mut r = Reader(&bytes);
    let query = r.string()?;
    let kinds = if r.flag()? {
        let n = r.u64()?;
        if n > bytes.len() as u64 / 8 {
            return None;
        }
        let ks = (0..n)
            .map(|_| Kind::from_code(i64::try_from(r.u64()?).ok()?))
            .collect::<Option<Vec<Kind>>>()?;
        Some(ks)
    } else {
        None
    };
    let since_ms = if r.flag()? { Some(r.f64()?) } else { None };
    let limit = usize::try_from(r.u64()?).ok()?;
    let marks = (r.string()?, r.string()?);
    let snippet_words = u32::try_from(r.u64()?).ok()?;
    let rank_window = usize::try_from(r.u64()?).ok()?;
    let check_index = r.flag()?;
    let count_total = r.flag()?;
    let count_cap = usize::try_from(r.u64()?).ok()?;
    r.is_empty().then_some(SearchQuery {
        query,
        kinds,
        since_ms,
        dirs: None,
        limit,
        marks,
        snippet_words,
        rank_window,
        check_index,
        count_total,
        count_cap,
    })
}

/// A search's answer (the hits, and the number of matches in all, as
/// [`crate::Catalog::search_with_total`] gives them) in the binary form; [`decode_hits`]
/// reads it.
pub fn encode_hits(hits: &[Hit], total: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(hits.len() * 512 + 16);
    put_u64(&mut out, total);
    put_u64(&mut out, hits.len() as u64);
    for h in hits {
        put_bytes(&mut out, h.path.as_os_str().as_bytes());
        put_opt_str(&mut out, h.session_id.as_deref());
        put_opt_str(&mut out, h.session_name.as_deref());
        put_opt_str(&mut out, h.entry_id.as_deref());
        put_u64(&mut out, h.kind.code() as u64);
        put_opt_str(&mut out, h.timestamp.as_deref());
        out.push(u8::from(h.on_current_branch));
        put_bytes(&mut out, h.snippet.as_bytes());
        put_f64(&mut out, h.rank);
        put_u64(&mut out, h.seq as u64);
    }
    out
}

/// The answer [`encode_hits`] wrote, or `None` when `bytes` is not exactly such an answer.
pub fn decode_hits(bytes: &[u8]) -> Option<(Vec<Hit>, u64)> {
    let mut r = Reader(bytes);
    let total = r.u64()?;
    let n = r.u64()?;
    // Each hit takes at least 60 bytes.
    if n > (bytes.len() / 60) as u64 + 1 {
        return None;
    }
    let mut hits = Vec::with_capacity(n as usize);
    for _ in 0..n {
        hits.push(Hit {
            path: r.path()?,
            session_id: r.opt_string()?,
            session_name: r.opt_string()?,
            entry_id: r.opt_string()?,
            kind: Kind::from_code(i64::try_from(r.u64()?).ok()?)?,
            timestamp: r.opt_string()?,
            on_current_branch: r.flag()?,
            snippet: r.string()?,
            rank: r.f64()?,
            seq: r.u64()? as i64,
        });
    }
    r.is_empty().then_some((hits, total))
}

/// The request line's form of a directory: its catalog key and the path as the command
/// names it (rows show `path` under the latter), or `None` when either holds a tab, a newline
/// or bytes that are not UTF-8 (the command then reads the catalog itself).
pub(crate) fn dir_field(dir: &Path) -> Option<(String, String)> {
    let key = crate::dir_key(dir);
    let shown = dir.to_str()?.to_string();
    if [&key, &shown].iter().any(|s| s.contains(['\t', '\n'])) {
        return None;
    }
    Some((key, shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Listed {
        Listed {
            info: SessionInfo {
                path: PathBuf::from(OsString::from_vec(b"/s/\xffodd/a.jsonl".to_vec())),
                id: Some("\"abc\"".into()),
                cwd: "/home/dev/p".into(),
                name: Some("a name".into()),
                parent_session_path: Some("\"/x/y.jsonl\"".into()),
                created_ms: Some(1.5e12),
                modified_ms: f64::NAN,
                message_count: 42,
                // A lone surrogate, as WTF-8.
                first_message: JsStr(b"hi \xed\xa0\xbd there".to_vec()),
                all_messages_text: JsStr(b"all".to_vec()),
            },
            file: PathBuf::from(OsString::from_vec(b"/s/\xffodd/a.jsonl".to_vec())),
            size: 123_456,
            branches: 3,
            entries: 99,
            labels: 2,
            models: vec!["openai/gpt-5".into(), "anthropic/claude".into()],
            usage: Usage {
                input: 1.0,
                output: 2.0,
                cache_read: 3.0,
                cache_write: 4.0,
                cost: 0.125,
            },
            title: Some("omp title".into()),
            omp: true,
            session_id: Some("sid".into()),
            version: -3,
            mtime_ms: 1.7e12 + 0.5,
        }
    }

    fn sparse() -> Listed {
        let mut l = full();
        l.info.id = None;
        l.info.name = None;
        l.info.parent_session_path = None;
        l.info.created_ms = None;
        l.info.modified_ms = 12.0;
        l.models.clear();
        l.title = None;
        l.omp = false;
        l.session_id = None;
        l
    }

    #[test]
    fn rows_come_back_field_for_field() {
        let rows = vec![full(), sparse(), full()];
        let back = decode_rows(&encode_rows(&rows)).expect("decodes");
        // `Listed` has no `PartialEq` (NaN): its debug form shows every field.
        assert_eq!(format!("{back:?}"), format!("{rows:?}"));
        assert_eq!(
            decode_rows(&encode_rows(&[])).map(|v| v.len()),
            Some(0),
            "an empty list"
        );
    }

    #[test]
    fn cut_or_padded_input_is_no_list() {
        let bytes = encode_rows(&[full(), sparse()]);
        for n in 0..bytes.len() {
            assert!(decode_rows(&bytes[..n]).is_none(), "cut at {n}");
        }
        let mut more = bytes.clone();
        more.push(0);
        assert!(decode_rows(&more).is_none(), "a byte too many");
        // A count no input could hold.
        let mut huge = bytes;
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_rows(&huge).is_none());
    }

    #[test]
    fn the_json_list_is_what_ls_prints() {
        let rows = vec![full(), sparse()];
        let mut want = b"[".to_vec();
        rows[0].info.write_json(&mut want, false);
        want.push(b',');
        rows[1].info.write_json(&mut want, false);
        want.extend_from_slice(b"]\n");
        assert_eq!(json_of(&rows), want);
        assert_eq!(json_of(&[]), b"[]\n");
    }

    #[test]
    fn a_search_and_its_hits_come_back_field_for_field() {
        let mut q = SearchQuery::new("Ωmeg* \"a\tphrase\"\nNEAR(x y)");
        q.kinds = Some(vec![Kind::User, Kind::Label, Kind::ContextEdit]);
        q.since_ms = Some(1.5e12);
        q.limit = 7;
        q.marks = ("\u{e000}".into(), "\u{e001}".into());
        q.snippet_words = 9;
        q.rank_window = 0;
        q.check_index = false;
        q.count_total = true;
        q.count_cap = 0;
        let hex = encode_query(&q);
        assert!(!hex.contains(['\t', '\n']), "one field of a request line");
        assert_eq!(decode_query(&hex), Some(q.clone()));
        q.kinds = None;
        q.since_ms = None;
        assert_eq!(decode_query(&encode_query(&q)), Some(q));
        for bad in [
            &hex[..hex.len() - 2],
            &hex[..hex.len() - 1],
            "zz",
            &format!("{hex}00"),
        ] {
            assert!(decode_query(bad).is_none(), "{bad}");
        }

        let hits = vec![
            Hit {
                path: PathBuf::from(OsString::from_vec(b"/s/\xffodd/a.jsonl".to_vec())),
                session_id: Some("sid".into()),
                session_name: None,
                entry_id: Some("e1".into()),
                kind: Kind::Assistant,
                timestamp: Some("2026-01-01T00:00:00.000Z".into()),
                on_current_branch: false,
                snippet: "a \u{e000}match\u{e001} here".into(),
                rank: -1.25,
                seq: 42,
            },
            Hit {
                path: PathBuf::from("/b.jsonl"),
                session_id: None,
                session_name: Some("named".into()),
                entry_id: None,
                kind: Kind::Name,
                timestamp: None,
                on_current_branch: true,
                snippet: String::new(),
                rank: f64::MIN_POSITIVE,
                seq: -1,
            },
        ];
        let bytes = encode_hits(&hits, 1021);
        assert_eq!(decode_hits(&bytes), Some((hits.clone(), 1021)));
        assert_eq!(decode_hits(&encode_hits(&[], 0)), Some((Vec::new(), 0)));
        for n in 0..bytes.len() {
            assert!(decode_hits(&bytes[..n]).is_none(), "cut at {n}");
        }
        let mut more = bytes;
        more.push(0);
        assert!(decode_hits(&more).is_none(), "a byte too many");
    }
}
