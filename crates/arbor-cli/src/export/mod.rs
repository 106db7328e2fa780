//! `arbor export`: a session as Markdown (stable bytes, for git and bug reports) or as arbor's
//! JSON schema, written as it is read (the session is mapped, the output streamed), with
//! secrets redacted unless `--no-redact`.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::EntryType;
use arbor_core::json::{JsValue, JsonObject};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One self-contained HTML page (the whole tree).
    Html,
    /// Markdown.
    Md,
    /// arbor's JSON export schema (`arbor-export/1`).
    Json,
}

/// How an export is made.
pub struct Options<'a> {
    /// Secrets replaced by `[REDACTED:kind]`.
    pub redact: bool,
    /// Where images go (`FILE.assets/`), `None`: placeholders only (stdout).
    pub assets: Option<&'a output::Assets>,
}

/// Counts kept while writing.
#[derive(Debug, Default)]
pub struct Report {
    /// Secrets redacted.
    pub redacted: usize,
    /// Images written (each once).
    pub images: usize,
}

struct Writer<'a, W: Write> {
    out: W,
    opts: &'a Options<'a>,
    report: Report,
    images: HashMap<String, String>,
    resident: Resident<'a>,
}

/// Keeps the resident part of a mapped session bounded while an export reads it: after every
/// [`arbor_store::LEAN_WINDOW`] bytes of lines read, the map's pages are released (they come
/// back from the page cache if read again). A 1 GB session then exports in a fraction of its
/// size in memory.
struct Resident<'a> {
    bytes: &'a [u8],
    read: usize,
}

impl<'a> Resident<'a> {
    fn new(doc: &'a SessionDoc) -> Self {
        Resident {
            bytes: doc.base_bytes(),
            read: 0,
        }
    }

    /// Entry `i`'s line was read.
    fn read(&mut self, doc: &SessionDoc, i: usize) {
        self.read += doc.entry_line(i).len();
        if self.read >= arbor_store::LEAN_WINDOW {
            arbor_store::map::release_pages(self.bytes);
            self.read = 0;
        }
    }
}

impl<'a, W: Write> Writer<'a, W> {
    fn new(doc: &'a SessionDoc, opts: &'a Options<'a>, out: W) -> Self {
        Writer {
            out,
            opts,
            report: Report::default(),
            images: HashMap::new(),
            resident: Resident::new(doc),
        }
    }

    fn clean<'t>(&mut self, t: &'t str) -> Cow<'t, str> {
        if !self.opts.redact {
            return Cow::Borrowed(t);
        }
        let r = arbor_store::secrets::redact(t);
        if let Cow::Owned(s) = &r {
            self.report.redacted += s.matches("[REDACTED:").count();
        }
        r
    }

    /// A fenced block whose fence is longer than any backtick run inside.
    fn fence(&mut self, lang: &str, body: &str) -> std::io::Result<()> {
        let body = self.clean(body).into_owned();
        let mut longest = 0;
        let mut run = 0;
        for c in body.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        let f = "`".repeat((longest + 1).max(3));
        writeln!(
            self.out,
            "{f}{lang}\n{}\n{f}\n",
            body.trim_end_matches('\n')
        )
    }

    /// Text outside fences: `&` and `<` escaped, so that text from the session (`</details>`,
    /// `<script>`) stays text in any Markdown renderer.
    fn text(&mut self, t: &str) -> std::io::Result<()> {
        let t = escape_html(&self.clean(t));
        if !t.trim().is_empty() {
            writeln!(self.out, "{}\n", t.trim_end())?;
        }
        Ok(())
    }

    /// An image: written once to the assets directory and linked, or a placeholder.
    fn image(&mut self, data: &str, mime: &str) -> std::io::Result<()> {
        let ext = mime.rsplit('/').next().unwrap_or("bin");
        let decoded = arbor_core::blobref::decode_base64_js(&arbor_core::json::JsStr::from(data));
        let bytes = (!decoded.is_empty()).then_some(decoded);
        let size = bytes.as_ref().map_or(data.len() * 3 / 4, Vec::len);
        match (&self.opts.assets, bytes) {
            (Some(assets), Some(bytes)) => {
                let rel = assets.rel();
                let hash = arbor_store::blobs::sha256_hex(&bytes);
                let name = format!("{}.{ext}", &hash[..16]);
                if !self.images.contains_key(&hash) {
                    assets.write(&name, &bytes)?;
                    self.report.images += 1;
                    self.images.insert(hash, name.clone());
                }
                writeln!(self.out, "![image {mime}]({rel}/{name})\n")
            }
            _ => writeln!(
                self.out,
                "*[image {mime}, {}]*\n",
                crate::cmd::index::human_size(size as u64)
            ),
        }
    }

    fn blocks(&mut self, content: Option<&JsValue>) -> std::io::Result<()> {
        match content {
            Some(JsValue::String(s)) => self.text(&s.to_string_lossy()),
            Some(JsValue::Array(blocks)) => {
                for b in blocks {
                    let s = |k: &str| {
                        b.get(k)
                            .and_then(|v| v.as_str_lossy())
                            .map(|v| v.into_owned())
                            .unwrap_or_default()
                    };
                    match b.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                        Some("text") => self.text(&s("text"))?,
                        Some("thinking") => {
                            let t = s("thinking");
                            if !t.trim().is_empty() {
                                let t = escape_html(&self.clean(&t));
                                writeln!(
                                    self.out,
                                    "<details><summary>Thinking</summary>\n\n{}\n\n</details>\n",
                                    t.trim_end()
                                )?;
                            }
                        }
                        Some("toolCall") => {
                            writeln!(self.out, "**Tool call** `{}`\n", s("name"))?;
                            let args = b
                                .get("arguments")
                                .map(|a| String::from_utf8_lossy(&a.to_json()).into_owned())
                                .unwrap_or_default();
                            self.fence("json", &args)?;
                        }
                        Some("image") => self.image(&s("data"), &s("mimeType"))?,
                        _ => {}
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn escape_html(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;")
}

/// The session's token and cost totals over `entries` (assistant messages' `usage`).
fn totals(doc: &SessionDoc, entries: &[usize], resident: &mut Resident<'_>) -> [f64; 5] {
    let mut t = [0.0; 5];
    for &i in entries {
        let e = &doc.entries()[i];
        resident.read(doc, i);
        if e.etype != EntryType::Message || e.role != Some(arbor_core::entry::Role::Assistant) {
            continue;
        }
        let Some(u) = e
            .message
            .as_ref()
            .and_then(|m| m.value(doc.line(&e.line), "usage"))
        else {
            continue;
        };
        let n = |v: Option<&JsValue>| match v {
            Some(JsValue::Number(x)) if x.is_finite() => *x,
            _ => 0.0,
        };
        t[0] += n(u.get("input"));
        t[1] += n(u.get("output"));
        t[2] += n(u.get("cacheRead"));
        t[3] += n(u.get("cacheWrite"));
        t[4] += n(u.get("cost").and_then(|c| c.get("total")));
    }
    t
}

/// The session's name, or else its first user message on one line (80 columns).
fn title_of(doc: &SessionDoc, path: &[usize]) -> String {
    doc.session_name().unwrap_or_else(|| {
        let first_user = path
            .iter()
            .find_map(|&i| {
                let e = &doc.entries()[i];
                (e.role == Some(arbor_core::entry::Role::User))
                    .then(|| e.fields.value(doc.line(&e.line), "message"))
                    .flatten()
                    .map(|m| crate::render::content_text(m.get("content")))
            })
            .unwrap_or_default();
        crate::render::one_line(&first_user, 80)
    })
}

/// The models of the assistant messages among `entries`, in order of first use.
fn models(doc: &SessionDoc, entries: &[usize], resident: &mut Resident<'_>) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for &i in entries {
        let e = &doc.entries()[i];
        if e.role == Some(arbor_core::entry::Role::Assistant) {
            resident.read(doc, i);
            if let Some(m) = e.message_str(doc.line(&e.line), "model") {
                if !models.iter().any(|x| x == m.as_ref()) {
                    models.push(m.into_owned());
                }
            }
        }
    }
    models
}

fn when(ts: Option<&str>) -> String {
    ts.map(|t| t.get(..19).unwrap_or(t).replace('T', " "))
        .unwrap_or_default()
}

/// Writes `paths` (root-to-leaf entry lists; several with `--tree`) of `doc` as Markdown.
pub fn markdown(
    doc: &SessionDoc,
    file_name: &str,
    paths: &[Vec<usize>],
    opts: &Options<'_>,
    out: impl Write,
) -> std::io::Result<Report> {
    let mut w = Writer::new(doc, opts, out);
    let all: Vec<usize> = {
        let mut v: Vec<usize> = paths.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let title = title_of(doc, paths.first().map(Vec::as_slice).unwrap_or_default());
    let title = escape_html(&w.clean(&title));
    writeln!(
        w.out,
        "# {}\n",
        if title.is_empty() { file_name } else { &title }
    )?;
    let models = models(doc, &all, &mut w.resident);
    let t = totals(doc, &all, &mut w.resident);
    writeln!(
        w.out,
        "- Session: `{}` ({file_name})",
        doc.session_id().unwrap_or_default()
    )?;
    writeln!(
        w.out,
        "- Project: `{}`",
        doc.header_str("cwd").unwrap_or_default()
    )?;
    writeln!(
        w.out,
        "- Tool: {}",
        if doc.dialect() == arbor_core::Dialect::Omp {
            "omp"
        } else {
            "pi"
        }
    )?;
    if !models.is_empty() {
        writeln!(w.out, "- Models: {}", models.join(", "))?;
    }
    if t.iter().any(|&x| x > 0.0) {
        writeln!(
            w.out,
            "- Tokens: {} in, {} out, {} cache read, {} cache write; cost ${:.4}",
            t[0], t[1], t[2], t[3], t[4]
        )?;
    }
    writeln!(w.out)?;
    let mut printed: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for (k, path) in paths.iter().enumerate() {
        if paths.len() > 1 {
            let leaf = path
                .last()
                .and_then(|&l| doc.entries()[l].id.as_deref())
                .unwrap_or("");
            writeln!(w.out, "## Branch {} (leaf `{leaf}`)\n", k + 1)?;
            if let Some(&shared) = path.iter().rev().find(|i| printed.contains(i)) {
                let id = doc.entries()[shared].id.as_deref().unwrap_or("");
                writeln!(w.out, "*Continues after [`{id}`](#{id}).*\n")?;
            }
        }
        for &i in path {
            if !printed.insert(i) {
                continue;
            }
            entry(doc, i, &mut w)?;
            w.resident.read(doc, i);
        }
    }
    w.out.flush()?;
    Ok(w.report)
}

fn entry<W: Write>(doc: &SessionDoc, i: usize, w: &mut Writer<'_, W>) -> std::io::Result<()> {
    let e = &doc.entries()[i];
    let line = doc.line(&e.line);
    let id = e.id.as_deref().unwrap_or("");
    let ts = when(e.timestamp.as_deref());
    let anchor = format!("<a id=\"{id}\"></a>");
    match e.etype {
        EntryType::Message => {
            let m = e.fields.value(line, "message").unwrap_or(JsValue::Null);
            let s = |k: &str| {
                m.get(k)
                    .and_then(|v| v.as_str_lossy())
                    .map(|v| v.into_owned())
                    .unwrap_or_default()
            };
            let role = s("role");
            let head = match role.as_str() {
                "user" => "User".to_string(),
                "assistant" if !s("model").is_empty() => format!("Assistant · {}", s("model")),
                "assistant" => "Assistant".to_string(),
                "toolResult" => format!("Tool result · {}", s("toolName")),
                "bashExecution" => "Bash".to_string(),
                "system" => "System".to_string(),
                r => r.to_string(),
            };
            writeln!(w.out, "### {anchor}{head} · `{id}` · {ts}\n")?;
            let stop = s("stopReason");
            if matches!(stop.as_str(), "error" | "aborted") {
                let msg = w.clean(&s("errorMessage")).into_owned();
                writeln!(w.out, "> **{stop}**: {msg}\n")?;
            }
            match role.as_str() {
                "toolResult" => {
                    if matches!(m.get("isError"), Some(JsValue::Bool(true))) {
                        writeln!(w.out, "> **error**\n")?;
                    }
                    let text = crate::render::content_text(m.get("content"));
                    w.fence("", &text)?;
                    if let Some(JsValue::Array(blocks)) = m.get("content") {
                        for b in blocks {
                            if b.get("type").and_then(|t| t.as_str_lossy()).as_deref()
                                == Some("image")
                            {
                                let d = b
                                    .get("data")
                                    .and_then(|v| v.as_str_lossy())
                                    .unwrap_or_default()
                                    .into_owned();
                                let mt = b
                                    .get("mimeType")
                                    .and_then(|v| v.as_str_lossy())
                                    .unwrap_or_default()
                                    .into_owned();
                                w.image(&d, &mt)?;
                            }
                        }
                    }
                }
                "bashExecution" => {
                    w.fence("sh", &format!("$ {}", s("command")))?;
                    w.fence("", &s("output"))?;
                }
                _ => w.blocks(m.get("content"))?,
            }
        }
        EntryType::Compaction | EntryType::BranchSummary => {
            let what = if e.etype == EntryType::Compaction {
                "Compaction summary"
            } else {
                "Branch summary"
            };
            writeln!(w.out, "### {anchor}{what} · `{id}` · {ts}\n")?;
            let summary = e.fields.str(line, "summary").unwrap_or_default();
            w.text(&summary)?;
        }
        EntryType::CustomMessage => {
            let ct = e.fields.str(line, "customType").unwrap_or_default();
            writeln!(w.out, "### {anchor}Custom message · {ct} · `{id}` · {ts}\n")?;
            let c = e.fields.value(line, "content");
            w.blocks(c.as_ref())?;
        }
        _ => {
            let d = crate::render::one_line(&crate::render::describe(doc, i), 300);
            let d = escape_html(&w.clean(&d)).replace('*', "\\*");
            writeln!(w.out, "{anchor}*{d}* (`{id}`)\n")?;
        }
    }
    Ok(())
}

/// Writes the entries of `paths` as arbor's JSON export (`arbor-export/1`): the session, then
/// each entry with its role, model, text, thinking, tool calls, tool name, error and usage.
pub fn json(
    doc: &SessionDoc,
    file: &Path,
    paths: &[Vec<usize>],
    opts: &Options<'_>,
    mut out: impl Write,
) -> std::io::Result<Report> {
    let mut report = Report::default();
    let mut clean = |t: &str| -> String {
        if !opts.redact {
            return t.to_string();
        }
        let r = arbor_store::secrets::redact(t);
        if let Cow::Owned(s) = &r {
            report.redacted += s.matches("[REDACTED:").count();
        }
        r.into_owned()
    };
    let mut head = Vec::new();
    {
        let mut o = JsonObject::new(&mut head);
        o.str("format", "arbor-export/1")
            .opt_str("sessionId", doc.session_id().as_deref())
            .str("file", &file.to_string_lossy())
            .opt_str("cwd", doc.header_str("cwd").as_deref())
            .opt_str("name", doc.session_name().as_deref())
            .str(
                "tool",
                if doc.dialect() == arbor_core::Dialect::Omp {
                    "omp"
                } else {
                    "pi"
                },
            )
            .bool("redacted", opts.redact);
        o.finish();
    }
    // The entries are streamed into the object: its closing brace comes after them.
    head.pop();
    head.extend_from_slice(b",\"entries\":[");
    out.write_all(&head)?;
    let mut seen = std::collections::HashSet::new();
    let mut first = true;
    let mut resident = Resident::new(doc);
    for &i in paths.iter().flatten() {
        if !seen.insert(i) {
            continue;
        }
        resident.read(doc, i);
        let e = &doc.entries()[i];
        let line = doc.line(&e.line);
        let mut b = Vec::new();
        let mut o = JsonObject::new(&mut b);
        o.opt_str("id", e.id.as_deref())
            .opt_str("parentId", e.parent_id.as_deref())
            .str("type", e.etype.name())
            .opt_str("timestamp", e.timestamp.as_deref());
        if let Some(m) = e.fields.value(line, "message") {
            let s = |k: &str| {
                m.get(k)
                    .and_then(|v| v.as_str_lossy())
                    .map(|v| v.into_owned())
            };
            o.opt_str("role", s("role").as_deref())
                .opt_str("model", s("model").as_deref())
                .opt_str("toolName", s("toolName").as_deref())
                .opt_str("stopReason", s("stopReason").as_deref());
            let mut text = Vec::new();
            let mut thinking = Vec::new();
            let mut calls = Vec::new();
            match m.get("content") {
                Some(JsValue::String(t)) => text.push(t.to_string_lossy().into_owned()),
                Some(JsValue::Array(blocks)) => {
                    for bl in blocks {
                        let bs = |k: &str| {
                            bl.get(k)
                                .and_then(|v| v.as_str_lossy())
                                .map(|v| v.into_owned())
                                .unwrap_or_default()
                        };
                        match bl.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                            Some("text") => text.push(bs("text")),
                            Some("thinking") => thinking.push(bs("thinking")),
                            Some("toolCall") => calls.push((
                                bs("id"),
                                bs("name"),
                                bl.get("arguments")
                                    .map(|a| String::from_utf8_lossy(&a.to_json()).into_owned())
                                    .unwrap_or_else(|| "null".into()),
                            )),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if !text.is_empty() {
                o.str("text", &clean(&text.join("\n")));
            }
            if !thinking.is_empty() {
                o.str("thinking", &clean(&thinking.join("\n")));
            }
            if !calls.is_empty() {
                let mut cb = Vec::new();
                let mut arr = arbor_core::json::JsonArray::new(&mut cb);
                for (cid, name, args) in &calls {
                    let args = clean(args);
                    // Redaction keeps the arguments valid JSON only when nothing was replaced
                    // inside a string; otherwise they are given as a string.
                    arr.object(|c| {
                        c.str("id", cid).str("name", name);
                        match JsValue::parse(args.as_bytes()) {
                            Ok(v) => c.raw("arguments", &v.to_json()),
                            Err(_) => c.str("arguments", &args),
                        };
                    });
                }
                arr.finish();
                o.raw("toolCalls", &cb);
            }
            if let Some(JsValue::Bool(b)) = m.get("isError") {
                o.bool("isError", *b);
            }
            if let Some(u) = m.get("usage") {
                o.raw("usage", &u.to_json());
            }
        } else if let Some(s) = e.fields.str(line, "summary") {
            o.str("text", &clean(&s));
        }
        o.finish();
        if !first {
            out.write_all(b",")?;
        }
        first = false;
        out.write_all(&b)?;
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(report)
}

mod highlight;
mod html;
pub mod output;
pub use html::html;
pub use output::assets_of;
