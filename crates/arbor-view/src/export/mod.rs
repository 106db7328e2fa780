//! `arbor export`: a session as Markdown (stable bytes, for git and bug reports) or as arbor's
//! JSON schema, written as it is read (the session is mapped, the output streamed), with
//! secrets redacted unless `--no-redact`: the document is redacted first ([`redact`], the
//! same scanner as `arbor secrets` and `fork --redact`), and every format renders it.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::EntryType;
use arbor_core::json::{JsValue, JsonObject};
use arbor_store::usage::Tokens;
use arbor_store::Resident;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use text::{Esc, Op, Src};

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// One self-contained HTML page (the whole tree).
    Html,
    /// Markdown.
    Md,
    /// arbor's JSON export schema (`arbor-export/1`).
    Json,
}

/// How an export is made. [`Options::default`]: not redacted, images as placeholders.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Options<'a> {
    /// The document was redacted ([`redact`]): said in the JSON export.
    pub redact: bool,
    /// Where images go (`FILE.assets/`), `None`: placeholders only (stdout).
    pub assets: Option<&'a output::Assets>,
    /// The secrets [`redact`] left in long strings, replaced as they are read.
    pub redactions: Option<&'a Redactions>,
}

impl<'a> Options<'a> {
    /// An export of a document redacted by [`redact`]: said in the JSON export, and the
    /// secrets it left in long strings (`redactions`) replaced as they are read.
    pub fn redacted(mut self, redactions: &'a Redactions) -> Self {
        self.redact = true;
        self.redactions = Some(redactions);
        self
    }

    /// Images written to `assets` (a Markdown export to a file) instead of placeholders.
    pub fn with_assets(mut self, assets: &'a output::Assets) -> Self {
        self.assets = Some(assets);
        self
    }
}

/// Counts kept while writing.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Report {
    /// Images written (each once).
    pub images: usize,
}

struct Writer<'a, W: Write> {
    out: W,
    opts: &'a Options<'a>,
    report: Report,
    images: HashMap<String, String>,
    resident: Resident<'a>,
    /// What image anchors start with ([`html::html_entries`]).
    image_prefix: String,
}

impl<'a, W: Write> Writer<'a, W> {
    fn new(doc: &'a SessionDoc, opts: &'a Options<'a>, out: W) -> Self {
        Writer {
            out,
            opts,
            report: Report::default(),
            images: HashMap::new(),
            resident: Resident::new(doc.base_bytes()),
            image_prefix: String::new(),
        }
    }

    /// A fenced block whose fence is longer than any backtick run inside ([`md_fence`]).
    fn fence(&mut self, lang: &str, body: &Src<'_>) -> std::io::Result<()> {
        md_fence(&mut self.out, lang, body)
    }

    /// Message text ([`md_message_text`]).
    fn text(&mut self, t: &Src<'_>) -> std::io::Result<()> {
        md_message_text(&mut self.out, t)
    }

    /// An image: written once to the assets directory and linked, or a placeholder.
    fn image(&mut self, data: &str, mime: &str) -> std::io::Result<()> {
        // An omp blob reference still in place: marked missing, as `show` does; never decoded
        // as if it were base64.
        if let Some(note) = unresolved_image(data) {
            return writeln!(self.out, "*[{note}]*\n");
        }
        // A plain media type names the file and is shown; anything else is not written out.
        let plain = mime.starts_with("image/")
            && mime.len() <= 64
            && mime
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'+' | b'.' | b'-'));
        let mime = if plain { mime } else { "image" };
        let ext = mime
            .rsplit('/')
            .next()
            .filter(|e| plain && e.bytes().all(|c| c.is_ascii_alphanumeric()))
            .unwrap_or("bin");
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
                crate::render::human_size(size as u64)
            ),
        }
    }

    /// Message content: a string, or blocks (their long members in `long`: [`text::message`]).
    fn blocks(
        &mut self,
        content: Option<&JsValue>,
        long: &text::LongBlocks<'_>,
    ) -> std::io::Result<()> {
        match content {
            Some(JsValue::String(s)) => self.text(&Src::Str(s.to_string_lossy())),
            Some(JsValue::Array(blocks)) => {
                for (k, b) in blocks.iter().enumerate() {
                    // Borrowed: a long text is not copied.
                    let s = |k: &str| b.get(k).and_then(|v| v.as_str_lossy()).unwrap_or_default();
                    match b.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                        Some("text") => self.text(&long.text(k, b, "text"))?,
                        Some("thinking") => {
                            md_thinking(&mut self.out, &long.text(k, b, "thinking"))?
                        }
                        Some("toolCall") => {
                            writeln!(self.out, "**Tool call** {}\n", md_code(&s("name")))?;
                            let args = long.json(k, b, "arguments").unwrap_or("".into());
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

/// A thinking block in Markdown, unless it is only whitespace: in `<details>`, its text
/// without trailing whitespace through [`md_text`].
fn md_thinking(out: &mut impl Write, t: &Src<'_>) -> std::io::Result<()> {
    let (end, runs) = match t {
        // In memory: no pass to find where it ends (nor `Runs`: its lines are not cut).
        Src::Str(s) => (
            Some(s.trim_end().len()).filter(|_| !s.trim().is_empty()),
            text::Runs::default(),
        ),
        _ => {
            let l = text::layout(t, false)?;
            (l.parts.first().and_then(|p| p.last_non_ws), l.runs)
        }
    };
    let Some(end) = end else {
        return Ok(());
    };
    let ops = vec![
        Op::Lit("<details><summary>Thinking</summary>\n\n".into()),
        Op::Text(0..end, Esc::Md),
        Op::Lit("\n\n</details>\n\n".into()),
    ];
    text::write_ops(out, t, ops, &runs, |_, _, _| Ok(()))
}

/// A fenced block of `body` whose fence is longer than any backtick run inside.
fn md_fence(out: &mut impl Write, lang: &str, body: &Src<'_>) -> std::io::Result<()> {
    let l = text::layout(body, false)?;
    let ops = l
        .parts
        .iter()
        .flat_map(|p| fence_ops(lang, p.range.start..p.last_non_nl, p.backticks))
        .collect();
    text::write_ops(out, body, ops, &l.runs, |_, _, _| Ok(()))
}

/// Message text in Markdown: its fenced code blocks as fences of their own, the prose
/// between them through [`md_text`], so that nothing from the session (`</details>`,
/// `<script>`, an image or a `javascript:` link) is live in any Markdown renderer.
fn md_message_text(out: &mut impl Write, t: &Src<'_>) -> std::io::Result<()> {
    let l = text::layout(t, true)?;
    let mut ops = Vec::new();
    for p in l.parts {
        match &p.code {
            // Escaping adds no whitespace: trimmed before, it is trimmed after.
            None => {
                if let Some(end) = p.last_non_ws {
                    ops.push(Op::Text(p.first_non_nl..end, Esc::Md));
                    ops.push(Op::Lit("\n\n".into()));
                }
            }
            Some(lang) => ops.extend(fence_ops(lang, p.range.start..p.last_non_nl, p.backticks)),
        }
    }
    text::write_ops(out, t, ops, &l.runs, |_, _, _| Ok(()))
}

/// A fenced block of `body` (a range of the text, written as it is) whose fence is longer
/// than `backticks`, the longest backtick run inside; `lang` keeps only the characters of a
/// language name (the info string is arbor's or comes from the session).
fn fence_ops(lang: &str, body: std::ops::Range<usize>, backticks: usize) -> [Op; 3] {
    let lang: String = lang
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '.' | '_' | '-'))
        .collect();
    let f = "`".repeat((backticks + 1).max(3));
    [
        Op::Lit(format!("{f}{lang}\n")),
        Op::Text(body, Esc::Raw),
        Op::Lit(format!("\n{f}\n\n")),
    ]
}

/// Writes `escape` of `t` piece by piece (about 1 MB each), so that the escaped copy of a
/// long text is never whole in memory. With `lines`, pieces end at a line end (a line is
/// never cut: the Markdown escape looks at whole lines), else at any character.
pub(crate) fn write_pieces(
    out: &mut impl Write,
    t: &str,
    lines: bool,
    escape: impl Fn(&str) -> String,
) -> std::io::Result<()> {
    const PIECE: usize = 1 << 20;
    let mut rest = t;
    while !rest.is_empty() {
        let mut cut = rest.len().min(PIECE);
        if cut < rest.len() {
            if lines {
                cut = match rest[..cut].rfind('\n') {
                    Some(n) => n + 1,
                    None => rest[cut..].find('\n').map_or(rest.len(), |n| cut + n + 1),
                };
            } else {
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
            }
        }
        out.write_all(escape(&rest[..cut]).as_bytes())?;
        rest = &rest[cut..];
    }
    Ok(())
}

/// Text or an attribute value in HTML: the one HTML escape of the exports (the HTML page,
/// and the anchors of the Markdown).
pub fn escape_html(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Markdown prose from a session, inert in any CommonMark renderer: outside code spans, `\\`
/// is doubled (no escape from the session applies to arbor's text), `&` and `<` become
/// entities (no HTML, no autolink, no entity-spelled scheme), and a `]` followed by `(`, `[`
/// or `:` is escaped, so that no inline link or image, no reference and no definition can
/// form (a `[text]` alone links nowhere: there are no definitions). `[REDACTED:kind]` stays
/// readable. A code span closed on its own line is kept as it is: the renderer shows its
/// content verbatim.
///
/// The one Markdown escape of the exports ([`md_inline`] and [`md_code`] build on it).
pub(crate) fn md_text(t: &str) -> String {
    md_escape(t, false)
}

/// [`md_text`]; with `closed`, a `]` at the very end is escaped too (the text is followed
/// by arbor's own, which could start with `(`).
fn md_escape(t: &str, closed: bool) -> String {
    let mut out = String::with_capacity(t.len() + t.len() / 16);
    let mut e = MdEsc::new(0, closed);
    e.push(&mut out, t, 0, &mut |_, from, len| {
        run_follows(t, from, len).unwrap_or(false)
    });
    e.finish(&mut out);
    out
}

/// Whether a backtick run exactly `len` long starts at or after `from` on its line in `t`;
/// `None` when `t` ends before the line does and no such run was found.
pub(crate) fn run_follows(t: &str, from: usize, len: usize) -> Option<bool> {
    let b = t.as_bytes();
    let mut j = from;
    while let Some(&c) = b.get(j) {
        match c {
            b'\n' => return Some(false),
            b'`' => {
                let r = b[j..].iter().take_while(|&&c| c == b'`').count();
                if r == len {
                    return Some(true);
                }
                j += r;
            }
            _ => j += 1,
        }
    }
    None
}

/// The Markdown escape of [`md_text`], fed the text in chunks of any size (a long line is
/// never held whole): a backtick run opens a code span when a run as long follows on the
/// same line, which the caller answers (`opens(line, from, len)`: is there a run exactly
/// `len` long at or after `from` on the line that starts at `line`), the first such run
/// closes it.
pub(crate) struct MdEsc {
    closed: bool,
    /// Inside a code span opened by a run so long.
    span: Option<usize>,
    /// The backtick run being read: its length and where it starts.
    run: usize,
    run_at: usize,
    /// A `]` outside a code span, written when the next character is known.
    bracket: bool,
    /// Where the current line starts.
    line: usize,
}

impl MdEsc {
    /// For a text at `at` (a line's start); `closed` as [`md_escape`]'s.
    pub(crate) fn new(at: usize, closed: bool) -> Self {
        MdEsc {
            closed,
            span: None,
            run: 0,
            run_at: 0,
            bracket: false,
            line: at,
        }
    }

    /// Escapes `s`, the next chunk of the text, at `at`, onto `out`.
    pub(crate) fn push(
        &mut self,
        out: &mut String,
        s: &str,
        at: usize,
        opens: &mut impl FnMut(usize, usize, usize) -> bool,
    ) {
        for (i, c) in s.char_indices() {
            let pos = at + i;
            if c == '`' {
                if self.run == 0 {
                    self.run_at = pos;
                    if std::mem::take(&mut self.bracket) {
                        out.push(']');
                    }
                }
                self.run += 1;
                out.push('`');
                continue;
            }
            if self.run > 0 {
                let n = std::mem::take(&mut self.run);
                if self.span == Some(n) {
                    self.span = None;
                } else if self.span.is_none() && opens(self.line, self.run_at + n, n) {
                    self.span = Some(n);
                }
            }
            if c == '\n' {
                self.line = pos + 1;
            }
            if self.span.is_some() {
                out.push(c);
                continue;
            }
            if std::mem::take(&mut self.bracket) {
                out.push_str(if matches!(c, '(' | '[' | ':') {
                    "\\]"
                } else {
                    "]"
                });
            }
            match c {
                '\\' => out.push_str("\\\\"),
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                ']' => self.bracket = true,
                c => out.push(c),
            }
        }
    }

    /// The text has ended.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if std::mem::take(&mut self.bracket) {
            out.push_str(if self.closed { "\\]" } else { "]" });
        }
    }
}

/// A one-line field from a session (a model, a tool name, an error) in Markdown: line breaks
/// and control characters as spaces, then [`md_text`] (a `]` at its end escaped too).
pub(crate) fn md_inline(t: &str) -> String {
    let one: String = t
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    md_escape(&one, true)
}

/// A value from a session as a Markdown code span (ids, paths, tool names): delimited by a
/// backtick run longer than any inside it, on one line. Empty for an empty value.
pub(crate) fn md_code(t: &str) -> String {
    let one: String = t
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one.is_empty() {
        return String::new();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in one.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let f = "`".repeat(longest + 1);
    let pad = if one.starts_with('`') || one.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{f}{pad}{one}{pad}{f}")
}

/// An entry id as a URL fragment: every byte but letters, digits, `-` and `_`
/// percent-encoded.
fn fragment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The note an image gets in place of its picture when its `data` is still an omp blob
/// reference: a blob that is not here (a session pulled before its blob arrived), one
/// `--lenient` left in place (corrupt), or a malformed reference. `None` for image data.
/// Every reader (Markdown, HTML, `arbor show`) marks such an image with it and never decodes
/// the reference as if it were base64.
pub fn unresolved_image(data: &str) -> Option<String> {
    match arbor_core::blobref::parse_blob_ref(data.as_bytes()) {
        Ok(None) => None,
        Ok(Some(hash)) => Some(format!("image missing: blob {hash}")),
        Err(_) => Some("image missing: malformed blob reference".to_string()),
    }
}

/// Redacts `doc` for an export with [`crate::secrets::redact_doc_deferring`], the
/// scanner `arbor secrets` reports with: every entry (an export of one path still shows text
/// from others: the session's name is the last `session_info` entry of any branch, a label
/// names its target), the header and omp's title slot. The long strings the export reads in
/// pieces (`long_strings`) keep their line when they are its only secrets: their
/// secrets are returned ([`Redactions`], for [`Options::redactions`]) and replaced as each is
/// read. Every format then renders only redacted text. Returns how many secrets.
///
/// # Errors
/// A line that cannot be redacted (the export is then refused).
pub fn redact(doc: &mut SessionDoc) -> Result<(usize, Redactions), crate::secrets::RedactError> {
    let (n, deferred) = crate::secrets::redact_doc_deferring(doc, None, &text::long_strings)?;
    Ok((n, Redactions::new(doc, deferred)))
}

/// The entry lists an export writes: the path from the root to `leaf` (the session's leaf
/// when `None`), or with `tree` one path per leaf of the tree, in the tree's order.
pub fn paths_of(doc: &SessionDoc, leaf: Option<usize>, tree: bool) -> Vec<Vec<usize>> {
    let index = doc.index();
    if tree {
        let t = index.tree(doc);
        t.preorder()
            .into_iter()
            .filter(|&i| t.children[i].is_empty())
            .map(|l| index.path(doc, l).entries)
            .collect()
    } else {
        vec![leaf
            .or(index.leaf)
            .map(|l| index.path(doc, l).entries)
            .unwrap_or_default()]
    }
}

/// Writes `paths` ([`paths_of`]) of `doc`, the session read from `file`, in `format` to
/// `out`: [`markdown`], [`html`] (always the whole tree) or [`json`].
///
/// # Errors
/// Writing to `out` failed, or a line of the session could not be read as it is written.
pub fn export(
    doc: &SessionDoc,
    file: &Path,
    format: Format,
    paths: &[Vec<usize>],
    opts: &Options<'_>,
    out: impl Write,
) -> std::io::Result<Report> {
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match format {
        Format::Html => html(doc, &file_name, opts, out),
        Format::Md => markdown(doc, &file_name, paths, opts, out),
        Format::Json => json(doc, file, paths, opts, out),
    }
}

/// The session's token and cost totals over `entries` (assistant messages' `usage`).
fn totals(doc: &SessionDoc, entries: &[usize], resident: &mut Resident<'_>) -> Tokens {
    let mut t = Tokens::default();
    for &i in entries {
        let e = &doc.entries()[i];
        resident.read(doc.entry_line(i));
        if e.etype != EntryType::Message || e.role != Some(arbor_core::entry::Role::Assistant) {
            continue;
        }
        if let Some(u) = e
            .message
            .as_ref()
            .and_then(|m| m.value(doc.line(&e.line), "usage"))
        {
            t.add(&Tokens::of(&u));
        }
    }
    t
}

/// The session's name, or else its first user message on one line (80 columns).
pub fn title_of(doc: &SessionDoc, path: &[usize], red: Option<&Redactions>) -> String {
    doc.session_name().unwrap_or_else(|| {
        let first_user = path
            .iter()
            .find_map(|&i| {
                let e = &doc.entries()[i];
                if e.role != Some(arbor_core::entry::Role::User) {
                    return None;
                }
                let p = text::message(e, doc.line(&e.line), true, red);
                match (p.content, p.value) {
                    // One line of a long text: only as much of it as the line needs.
                    (Some(long), _) => Some(text::one_line(&long, 80)),
                    (None, m) => m.map(|m| match m.get("content") {
                        // One line of a text: not a copy of it all.
                        Some(JsValue::String(s)) => {
                            crate::render::one_line(&s.to_string_lossy(), 80)
                        }
                        c => text::one_line(&text::content(c, &p.blocks), 80),
                    }),
                }
            })
            .unwrap_or_default();
        first_user
    })
}

/// The models of the assistant messages among `entries`, in order of first use.
fn models(doc: &SessionDoc, entries: &[usize], resident: &mut Resident<'_>) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for &i in entries {
        let e = &doc.entries()[i];
        if e.role == Some(arbor_core::entry::Role::Assistant) {
            resident.read(doc.entry_line(i));
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
    let title = title_of(
        doc,
        paths.first().map(Vec::as_slice).unwrap_or_default(),
        opts.redactions,
    );
    // One line already (or the file's name), and nothing follows it on its line.
    let title = md_text(&crate::render::one_line(
        if title.is_empty() { file_name } else { &title },
        usize::MAX,
    ));
    writeln!(w.out, "# {title}\n")?;
    let models = models(doc, &all, &mut w.resident);
    let t = totals(doc, &all, &mut w.resident);
    writeln!(
        w.out,
        "- Session: {} ({})",
        md_code(&doc.session_id().unwrap_or_default()),
        md_inline(file_name)
    )?;
    writeln!(
        w.out,
        "- Project: {}",
        md_code(&doc.header_str("cwd").unwrap_or_default())
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
        let models: Vec<String> = models.iter().map(|m| md_inline(m)).collect();
        writeln!(w.out, "- Models: {}", models.join(", "))?;
    }
    if [t.input, t.output, t.cache_read, t.cache_write, t.cost]
        .iter()
        .any(|&x| x > 0.0)
    {
        writeln!(
            w.out,
            "- Tokens: {} in, {} out, {} cache read, {} cache write; cost ${:.4}",
            t.input, t.output, t.cache_read, t.cache_write, t.cost
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
            writeln!(w.out, "## Branch {} (leaf {})\n", k + 1, md_code(leaf))?;
            if let Some(&shared) = path.iter().rev().find(|i| printed.contains(i)) {
                let id = doc.entries()[shared].id.as_deref().unwrap_or("");
                writeln!(
                    w.out,
                    "*Continues after [{}](#{}).*\n",
                    md_code(id),
                    fragment(id)
                )?;
            }
        }
        for &i in path {
            if !printed.insert(i) {
                continue;
            }
            entry(doc, i, &mut w)?;
            w.resident.read(doc.entry_line(i));
        }
    }
    w.out.flush()?;
    Ok(w.report)
}

fn entry<W: Write>(doc: &SessionDoc, i: usize, w: &mut Writer<'_, W>) -> std::io::Result<()> {
    let e = &doc.entries()[i];
    let line = doc.line(&e.line);
    let raw_id = e.id.as_deref().unwrap_or("");
    let id = md_code(raw_id);
    let ts = md_inline(&when(e.timestamp.as_deref()));
    let anchor = format!("<a id=\"{}\"></a>", escape_html(&fragment(raw_id)));
    match e.etype {
        EntryType::Message => {
            // A long `content` string stays in the line, read in pieces.
            let text::Payload {
                value: m,
                content: long,
                blocks: long_blocks,
            } = text::message(e, line, true, w.opts.redactions);
            let m = m.unwrap_or(JsValue::Null);
            // Parsed: the map's pages of the line are not needed while it is written.
            arbor_store::release_pages(line);
            let s = |k: &str| {
                m.get(k)
                    .and_then(|v| v.as_str_lossy())
                    .map(|v| v.into_owned())
                    .unwrap_or_default()
            };
            let role = s("role");
            let head = match role.as_str() {
                "user" => "User".to_string(),
                "assistant" if !s("model").is_empty() => {
                    format!("Assistant · {}", md_inline(&s("model")))
                }
                "assistant" => "Assistant".to_string(),
                "toolResult" => format!("Tool result · {}", md_inline(&s("toolName"))),
                "bashExecution" => "Bash".to_string(),
                "system" => "System".to_string(),
                r => md_inline(r),
            };
            writeln!(w.out, "### {anchor}{head} · {id} · {ts}\n")?;
            let stop = s("stopReason");
            if matches!(stop.as_str(), "error" | "aborted") {
                let msg = md_text(s("errorMessage").trim_end()).replace('\n', "\n> ");
                writeln!(w.out, "> **{stop}**: {msg}\n")?;
            }
            match role.as_str() {
                "toolResult" => {
                    if matches!(m.get("isError"), Some(JsValue::Bool(true))) {
                        writeln!(w.out, "> **error**\n")?;
                    }
                    let text = match long {
                        Some(src) => src,
                        None => text::content(m.get("content"), &long_blocks),
                    };
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
                    w.fence("sh", &format!("$ {}", s("command")).as_str().into())?;
                    w.fence("", &s("output").as_str().into())?;
                }
                _ => match long {
                    Some(src) => w.text(&src)?,
                    None => w.blocks(m.get("content"), &long_blocks)?,
                },
            }
        }
        EntryType::Compaction | EntryType::BranchSummary => {
            let what = if e.etype == EntryType::Compaction {
                "Compaction summary"
            } else {
                "Branch summary"
            };
            writeln!(w.out, "### {anchor}{what} · {id} · {ts}\n")?;
            let summary = e.fields.str(line, "summary").unwrap_or_default();
            w.text(&Src::Str(summary))?;
        }
        EntryType::CustomMessage => {
            let ct = e.fields.str(line, "customType").unwrap_or_default();
            let ct = md_inline(&ct);
            writeln!(w.out, "### {anchor}Custom message · {ct} · {id} · {ts}\n")?;
            let c = e.fields.value(line, "content");
            w.blocks(c.as_ref(), &text::LongBlocks::default())?;
        }
        _ => {
            let d = crate::render::one_line(&crate::render::describe(doc, i), 300);
            let d = md_inline(&d).replace('*', "\\*");
            writeln!(w.out, "{anchor}*{d}* ({id})\n")?;
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
    let report = Report::default();
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
    let mut resident = Resident::new(doc.base_bytes());
    for &i in paths.iter().flatten() {
        if !seen.insert(i) {
            continue;
        }
        resident.read(doc.entry_line(i));
        let e = &doc.entries()[i];
        let line = doc.line(&e.line);
        // A long `content` string stays in the line, read in pieces.
        let text::Payload {
            value: m,
            content: long,
            blocks: long_blocks,
        } = text::message(e, line, true, opts.redactions);
        if m.is_some() {
            // Parsed: the map's pages of the line are not needed while it is written.
            arbor_store::release_pages(line);
        }
        // The entry as three parts: the members before its texts (`head`), the texts,
        // streamed (a long text is neither copied nor escaped whole in memory), and the
        // members after them (`tail`).
        let mut head = Vec::new();
        let mut tail = Vec::new();
        // Each text as its parts, joined by `\n` as they are written.
        let mut texts: Vec<(&str, Vec<Src<'_>>)> = Vec::new();
        // The tool calls (each its members before `arguments`, and the arguments): written
        // between the texts and `tail`, the arguments streamed.
        let mut calls: Vec<(Vec<u8>, Src<'_>)> = Vec::new();
        let mut o = JsonObject::new(&mut head);
        o.opt_str("id", e.id.as_deref())
            .opt_str("parentId", e.parent_id.as_deref())
            .str("type", e.etype.name())
            .opt_str("timestamp", e.timestamp.as_deref());
        let mut t = JsonObject::new(&mut tail);
        if let Some(m) = &m {
            let s = |k: &str| {
                m.get(k)
                    .and_then(|v| v.as_str_lossy())
                    .map(|v| v.into_owned())
            };
            o.opt_str("role", s("role").as_deref())
                .opt_str("model", s("model").as_deref())
                .opt_str("toolName", s("toolName").as_deref())
                .opt_str("stopReason", s("stopReason").as_deref());
            // Borrowed from the parsed message: a long text is not copied.
            let mut text: Vec<Src<'_>> = Vec::new();
            let mut thinking: Vec<Src<'_>> = Vec::new();
            match m.get("content") {
                Some(JsValue::String(t)) => text.push(Src::Str(t.to_string_lossy())),
                Some(JsValue::Array(blocks)) => {
                    for (k, bl) in blocks.iter().enumerate() {
                        let bs =
                            |k: &str| bl.get(k).and_then(|v| v.as_str_lossy()).unwrap_or_default();
                        match bl.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                            Some("text") => text.push(long_blocks.text(k, bl, "text")),
                            Some("thinking") => thinking.push(long_blocks.text(k, bl, "thinking")),
                            Some("toolCall") => {
                                // `{"id":…,"name":…` then the arguments, streamed.
                                let mut c = Vec::new();
                                JsonObject::new(&mut c)
                                    .str("id", &bs("id"))
                                    .str("name", &bs("name"));
                                c.pop();
                                calls.push((
                                    c,
                                    long_blocks
                                        .json(k, bl, "arguments")
                                        .unwrap_or("null".into()),
                                ));
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if let Some(src) = long {
                texts.push(("text", vec![src]));
            } else if !text.is_empty() {
                texts.push(("text", text));
            }
            if !thinking.is_empty() {
                texts.push(("thinking", thinking));
            }
            if let Some(JsValue::Bool(b)) = m.get("isError") {
                t.bool("isError", *b);
            }
            if let Some(u) = m.get("usage") {
                t.raw("usage", &u.to_json());
            }
        } else if let Some(s) = e.fields.str(line, "summary") {
            texts.push(("text", vec![Src::Str(s)]));
        }
        o.finish();
        t.finish();
        if !first {
            out.write_all(b",")?;
        }
        first = false;
        // `head` without its closing brace, then the texts, then `tail`'s members.
        head.pop();
        out.write_all(&head)?;
        for (k, v) in &texts {
            let mut key = vec![b','];
            arbor_core::json::write_str_escaped(k, &mut key);
            key.extend_from_slice(b":\"");
            out.write_all(&key)?;
            for (j, part) in v.iter().enumerate() {
                if j > 0 {
                    // The `\n` that joins two parts, escaped.
                    out.write_all(b"\\n")?;
                }
                let all = vec![Op::Text(0..usize::MAX, Esc::Json)];
                text::write_ops(
                    &mut out,
                    part,
                    all,
                    &text::Runs::default(),
                    |_, _, _| Ok(()),
                )?;
            }
            out.write_all(b"\"")?;
        }
        if !calls.is_empty() {
            out.write_all(b",\"toolCalls\":[")?;
            for (j, (c, args)) in calls.iter().enumerate() {
                if j > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(c)?;
                out.write_all(b",\"arguments\":")?;
                // The arguments as they are (redacted with the document, inside their
                // strings: still valid JSON).
                args.each(false, |_, p| out.write_all(p.as_bytes()))?;
                out.write_all(b"}")?;
            }
            out.write_all(b"]")?;
        }
        match tail.get(1..) {
            Some(members) if members != b"}" => {
                out.write_all(b",")?;
                out.write_all(members)?;
            }
            _ => out.write_all(b"}")?,
        }
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(report)
}

pub(crate) mod again;
mod highlight;
mod html;
pub mod output;
mod text;
pub use html::{entries_css, html, html_entries};
pub use text::Redactions;

#[cfg(test)]
mod tests {
    //! Redaction as a long string is read renders what the whole-line redaction renders.
    use super::*;
    use proptest::prelude::*;

    /// Every format of `doc` (the path to its leaf), as bytes.
    fn render_all(doc: &SessionDoc, red: Option<&Redactions>) -> Vec<Vec<u8>> {
        let leaf = doc.index().leaf.expect("a leaf");
        let paths = vec![doc.index().path(doc, leaf).entries];
        let opts = Options {
            redact: true,
            assets: None,
            redactions: red,
        };
        let mut md = Vec::new();
        markdown(doc, "s.jsonl", &paths, &opts, &mut md).expect("in memory");
        let mut page = Vec::new();
        html(doc, "s.jsonl", &opts, &mut page).expect("in memory");
        let mut js = Vec::new();
        json(doc, Path::new("s.jsonl"), &paths, &opts, &mut js).expect("in memory");
        vec![md, page, js]
    }

    const SECRETS: &[&str] = &[
        "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "token = ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "password: Tr0ub4dor&3x!",
        "Authorization: Bearer 4f9c2a7e1b3d5f6a8c0e2b4d6f8a0c1e",
        "postgres://app:s3cr3tPa55@db.internal/prod",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\n",
        "é😀 `x` ]( <b>",
        "CLIENT_SECRET=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

        /// A session whose long strings (a user's content, text, thinking, tool-call
        /// arguments, a tool result) hold secrets anywhere (around the 1 MB pieces too, at a
        /// string's start, where the sidebar and the title read): with the secrets replaced
        /// as each string is read, every format writes the bytes it writes from the lines
        /// redacted whole (`redact_doc`, the code before), and the same count.
        #[test]
        fn redacting_as_read_renders_as_redacting_whole(
            plants in proptest::collection::vec((0..SECRETS.len(), 0usize..5, 0usize..1_300_000), 1..5),
        ) {
            let line = "    let value = compute(&items[index], options.clone()); // step 42\n";
            let mut texts: Vec<String> = vec![line.repeat(1_200_000 / line.len()); 5];
            for (k, place, at) in &plants {
                let t = &mut texts[*place];
                let at = (*at).min(t.len());
                let at = (0..=at).rev().find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                t.insert_str(at, &format!(" {} ", SECRETS[*k]));
            }
            let j = |s: &str| {
                let mut v = Vec::new();
                arbor_core::json::write_str_escaped(s, &mut v);
                String::from_utf8(v).expect("utf-8")
            };
            let head = r#"{"type":"session","version":3,"id":"01a2031c-aa28-755e-9ecf-bfbc78024bb1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
            let msg = |id: &str, parent: &str, m: String| format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{m}}}"#
            );
            let lines = [
                head.to_string(),
                msg("u1", "null", format!(r#"{{"role":"user","content":{},"timestamp":1}}"#, j(&texts[0]))),
                msg("a1", "\"u1\"", format!(
                    r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":{}}},{{"type":"text","text":{}}},{{"type":"toolCall","id":"c1","name":"write","arguments":{{"path":"/p/a.rs","content":{}}}}}],"timestamp":2}}"#,
                    j(&texts[1]), j(&texts[2]), j(&texts[3])
                )),
                msg("r1", "\"a1\"", format!(
                    r#"{{"role":"toolResult","toolCallId":"c1","toolName":"write","content":[{{"type":"text","text":{}}},{{"type":"text","text":"ok"}}],"timestamp":3}}"#,
                    j(&texts[4])
                )),
            ];
            let bytes = (lines.join("\n") + "\n").into_bytes();
            let parse = || SessionDoc::parse(std::sync::Arc::new(bytes.clone())).expect("a session");
            let mut whole = parse();
            let n = crate::secrets::redact_doc(&mut whole, None).expect("redacts");
            let mut read = parse();
            let (m, red) = redact(&mut read).expect("redacts");
            prop_assert_eq!(n, m);
            // At least one when a secret was planted (SECRETS holds one text that is none).
            let planted = plants.iter().any(|(k, _, _)| !crate::secrets::find(SECRETS[*k]).is_empty());
            prop_assert!(n >= usize::from(planted), "{} secrets", n);
            let a = render_all(&whole, None);
            let b = render_all(&read, Some(&red));
            for (x, y) in a.iter().zip(&b) {
                prop_assert!(x == y, "{} / {} bytes differ", x.len(), y.len());
            }
        }
    }
}
