//! The HTML export: one self-contained page of the whole tree.
use super::highlight::Highlighter;
use super::text::{self, Esc, Op, Src};
use super::{escape_html as esc, totals, when, write_pieces, Options, Report, Writer};
use arbor_core::doc::SessionDoc;
use arbor_core::entry::EntryType;
use arbor_core::json::JsValue;
use std::io::Write;

// The export's stylesheet in parts: the page's own (its grid, header, sidebar) and the
// conversation's entries' ([`ENTRY_STYLE`], which `arbor serve`'s session page uses too), so
// that both show an entry alike and the export's bytes stay what they were.
macro_rules! entry_vars {
    () => {
        concat!(r#":root{--bg:#fff;--fg:#1d1f21;--dim:#6a737d;--line:#e1e4e8;--user:#0b6b3a;--asst:#0550ae;--tool:#6f42c1;--err:#b31d28;--code:#f6f8fa;--cur:#fff8c5}"#, "\n", r#"@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--dim:#8b949e;--line:#30363d;--user:#3fb950;--asst:#58a6ff;--tool:#d2a8ff;--err:#f85149;--code:#161b22;--cur:#3b2e00}}"#, "\n")
    };
}
macro_rules! page_a {
    () => {
        concat!(
            r#"*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;display:grid;grid-template-columns:minmax(220px,300px) 1fr;grid-template-rows:auto 1fr}"#, "\n",
            r#"header{grid-column:1/3;padding:12px 20px;border-bottom:1px solid var(--line)}header h1{margin:0 0 4px;font-size:20px}header p{margin:0;color:var(--dim);font-size:13px}"#, "\n",
            r#"nav{padding:10px;border-right:1px solid var(--line);overflow:auto;max-height:calc(100vh - 70px);position:sticky;top:0;font-size:13px}"#, "\n",
            r#"nav ul{list-style:none;margin:0;padding-left:12px}nav>ul{padding-left:0}nav li{margin:2px 0}nav a{color:var(--fg);text-decoration:none}nav a{display:block;padding:1px 4px;overflow-wrap:anywhere;border-left:3px solid transparent}nav a.cur{border-left-color:var(--asst)}nav li.br>ul>li:first-child>a{margin-top:2px}nav .leaf{cursor:pointer;color:var(--asst);border:0;background:none;padding:0;font:inherit}"#, "\n",
            r#"main{padding:10px 24px;max-width:980px}"#
        )
    };
}
macro_rules! entry_a {
    () => {
        concat!(
            r#"section{border-bottom:1px solid var(--line);padding:8px 0;content-visibility:auto;contain-intrinsic-size:auto 120px}section:target{background:var(--cur)}"#, "\n",
            r#"section h3{margin:0 0 6px;font-size:13px;color:var(--dim);font-weight:500}section h3 b{font-size:14px}.r-user h3 b{color:var(--user)}.r-assistant h3 b{color:var(--asst)}.r-toolResult h3 b,.r-bashExecution h3 b{color:var(--tool)}"#, "\n",
            r#".off h3::after{content:" · other branch";color:var(--dim)}.js .off.hidden{display:none}"#, "\n",
            r#".text{white-space:pre-wrap;word-wrap:break-word}.err{color:var(--err);font-weight:600}"#, "\n",
            r#"pre{background:var(--code);padding:8px;overflow:auto;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;border-radius:4px}pre.code{margin:6px 0}"#, "\n"
        )
    };
}
macro_rules! entry_b {
    () => {
        concat!(r#"details summary{cursor:pointer;color:var(--dim)}img{max-width:100%}.note{color:var(--dim);font-style:italic}"#, "\n")
    };
}

const HTML_STYLE: &str = concat!(
    "\n",
    entry_vars!(),
    page_a!(),
    entry_a!(),
    r#".br{border-left:2px solid var(--line);padding-left:4px;margin-top:4px}"#,
    "\n",
    entry_b!(),
    r#"@media print{body{display:block}nav{display:none}section{break-inside:avoid}.js .off.hidden{display:none}}"#,
    "\n"
);

/// The stylesheet of the conversation's entries as [`html_entries`] writes them (the HTML
/// export's, without its page layout), light and dark, print: the rules a page that shows
/// entries adds to its own (with [`entries_css`]'s highlighting).
pub const ENTRY_STYLE: &str = concat!(
    entry_vars!(),
    entry_a!(),
    entry_b!(),
    "@media print{section{break-inside:avoid}}\n"
);

const HTML_SCRIPT: &str = r##"
document.body.classList.add('js');
var parent=Object.create(null),kids=Object.create(null),on=Object.create(null);
document.querySelectorAll('main section').forEach(function(s){var p=s.dataset.parent||'';parent[s.id]=p;if(p)(kids[p]=kids[p]||[]).push(s.id)});
function show(leaf){on=Object.create(null);for(var p=leaf,n=0;p&&!on[p]&&n<1e7;p=parent[p],n++)on[p]=1;
document.querySelectorAll('main section').forEach(function(s){s.classList.toggle('hidden',!on[s.id]);s.classList.toggle('off',!on[s.id])});
document.querySelectorAll('nav a').forEach(function(a){a.classList.toggle('cur',!!on[a.getAttribute('href').slice(1)])});}
document.querySelectorAll('nav .leaf').forEach(function(b){b.addEventListener('click',function(){show(b.dataset.leaf);history.replaceState(null,'',' ')})});
document.querySelectorAll('a.imgref').forEach(function(a){var i=document.getElementById(a.getAttribute('href').slice(1));if(i){var c=i.cloneNode();c.removeAttribute('id');a.replaceWith(c)}});
function fromHash(){var id=decodeURIComponent(location.hash.slice(1));
if(!id||!(id in parent)){if(!id)show(document.body.dataset.leaf);return}
if(!on[id]){var leaf=id,seen=Object.create(null);while(kids[leaf]&&!seen[leaf]){seen[leaf]=1;var k=kids[leaf],next=k[k.length-1];for(var j=0;j<k.length;j++)if(on[k[j]])next=k[j];leaf=next}show(leaf)}
var el=document.getElementById(id);if(el)el.scrollIntoView();var a=document.querySelector('nav a[href="#'+CSS.escape(id)+'"]'),nav=document.querySelector('nav');if(a&&nav)nav.scrollTop=a.offsetTop-nav.offsetTop-nav.clientHeight/3}
window.addEventListener('hashchange',fromHash);show(document.body.dataset.leaf);fromHash();
"##;

/// Writes the whole tree of `doc` as one self-contained HTML page: the conversation in the
/// HTML itself (readable without scripts: the current path, other branches marked), a tree
/// sidebar whose leaves show their branch, `#id` deep links, thinking and tool output in
/// `<details>`, images inline, light and dark themes, a print stylesheet. No request leaves
/// the page (its Content-Security-Policy allows none).
pub fn html(
    doc: &SessionDoc,
    file_name: &str,
    opts: &Options<'_>,
    out: impl Write,
) -> std::io::Result<Report> {
    let mut w = Writer::new(doc, opts, out);
    let tree = doc.index().tree(doc);
    let order = tree.preorder();
    let leaf = doc.index().leaf;
    let mut on_path = vec![false; doc.entries().len()];
    if let Some(l) = leaf {
        for i in doc.index().path(doc, l).entries {
            on_path[i] = true;
        }
    }
    let t = totals(doc, &order, &mut w.resident);
    let models = super::models(doc, &order, &mut w.resident);
    let title = super::title_of(
        doc,
        &leaf
            .map(|l| doc.index().path(doc, l).entries)
            .unwrap_or_default(),
        opts.redactions,
    );
    let title = if title.trim().is_empty() {
        file_name.to_string()
    } else {
        title
    };
    let title = esc(&title);
    let id_of = |i: usize| doc.entries()[i].id.as_deref().unwrap_or("").to_string();
    write!(
        w.out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{title}</title><style>{HTML_STYLE}{}</style></head>\n\
<body data-leaf=\"{}\"><header><h1>{title}</h1><p>{} · {} · {} · {} entries{} · {:.0} tokens in, {:.0} out, {:.0} cache read, {:.0} cache write · ${:.4}</p></header>\n<nav><ul>",
        super::highlight::css(),
        esc(&leaf.map(id_of).unwrap_or_default()),
        esc(&doc.session_id().unwrap_or_default()),
        esc(&doc.header_str("cwd").unwrap_or_default()),
        if doc.dialect() == arbor_core::Dialect::Omp { "omp" } else { "pi" },
        doc.entries().len(),
        if models.is_empty() {
            String::new()
        } else {
            format!(" · {}", esc(&models.join(", ")))
        },
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        t.cost
    )?;
    // The sidebar: where each user turn starts, summaries, branch points and leaves; each
    // branch of a branch point in a list of its own, each leaf with a button that shows it.
    enum Item {
        Node(usize),
        Open,
        Close,
    }
    let mut stack: Vec<Item> = Vec::new();
    for &r in tree.roots.iter().rev() {
        stack.extend([Item::Close, Item::Node(r), Item::Open]);
    }
    while let Some(item) = stack.pop() {
        let i = match item {
            Item::Open => {
                write!(w.out, "<li class=\"br\"><ul>")?;
                continue;
            }
            Item::Close => {
                write!(w.out, "</ul></li>")?;
                continue;
            }
            Item::Node(i) => i,
        };
        let e = &doc.entries()[i];
        w.resident.read(doc.entry_line(i));
        let kids = &tree.children[i];
        let shown = kids.len() != 1
            || e.role == Some(arbor_core::entry::Role::User)
            || matches!(
                e.etype,
                EntryType::Compaction | EntryType::BranchSummary | EntryType::Label
            );
        if shown {
            // A content whose long strings are redacted as they are read: described from a
            // redacted copy of its beginning (what the line redacted whole would show).
            let content = text::redacted_content(doc, i, opts.redactions);
            let described = crate::render::describe_with(
                doc,
                i,
                content.as_ref().map(|(raw, kind)| (raw.as_slice(), *kind)),
            );
            let label = crate::render::one_line(&described, 60);
            let label = esc(&label);
            let id = esc(&id_of(i));
            let cur = if on_path[i] { " class=\"cur\"" } else { "" };
            write!(w.out, "<li><a href=\"#{id}\"{cur}>{label}</a>")?;
            if kids.is_empty() {
                write!(
                    w.out,
                    " <button class=\"leaf\" data-leaf=\"{id}\" title=\"show this branch\">▸ branch</button>"
                )?;
            }
            write!(w.out, "</li>")?;
        }
        if kids.len() > 1 {
            for &k in kids.iter().rev() {
                stack.extend([Item::Close, Item::Node(k), Item::Open]);
            }
        } else if let Some(&k) = kids.first() {
            stack.push(Item::Node(k));
        }
    }
    writeln!(w.out, "</ul></nav>\n<main>")?;
    // One budget of highlighting for the whole page (see `highlight`).
    let mut hl = Highlighter::new();
    write_entries(doc, &order, |i| on_path[i], &mut w, &mut hl)?;
    writeln!(
        w.out,
        "</main>\n<script>{HTML_SCRIPT}</script></body></html>"
    )?;
    w.out.flush()?;
    Ok(w.report)
}

/// Writes entries `entries` of `doc`, in that order, as the HTML export writes them: each a
/// `<section id="ID" data-parent="PARENT" class="r-ROLE">` with its heading (role, model, a
/// link to its own anchor, time) and body (text with its code highlighted, thinking and tool
/// output in `<details>`, tool calls, images inline, compactions' and branch summaries' text,
/// other entries described in one line), every string from the session escaped by
/// [`super::escape_html`] and, with [`Options::redactions`], redacted as it is read. The one
/// renderer of an entry in HTML: the export's page ([`html`]) and `arbor serve`'s session page
/// both write entries with it. Entries are written as on the shown path (no `off` class);
/// images get anchors `{image_prefix}img-N` (a page that shows several parts gives each its
/// prefix), a repeated image a link to its first.
///
/// # Errors
/// Writing to `out` failed, or a line of the session could not be read as it is written.
pub fn html_entries(
    doc: &SessionDoc,
    entries: &[usize],
    image_prefix: &str,
    opts: &Options<'_>,
    out: impl Write,
) -> std::io::Result<Report> {
    let mut w = Writer::new(doc, opts, out);
    w.image_prefix = image_prefix.to_string();
    let mut hl = Highlighter::new();
    write_entries(doc, entries, |_| true, &mut w, &mut hl)?;
    w.out.flush()?;
    Ok(w.report)
}

/// [`html_entries`]' loop: each entry through [`html_entry`], `cur` saying which are on the
/// path shown.
fn write_entries<W: Write>(
    doc: &SessionDoc,
    entries: &[usize],
    cur: impl Fn(usize) -> bool,
    w: &mut Writer<'_, W>,
    hl: &mut Highlighter,
) -> std::io::Result<()> {
    for &i in entries {
        html_entry(doc, i, cur(i), w, hl)?;
        w.resident.read(doc.entry_line(i));
    }
    Ok(())
}

/// The highlighting stylesheet of [`html_entries`]' code blocks, light and dark (empty
/// without the `highlight` feature): with `ENTRY_STYLE`, what a page showing entries needs.
pub fn entries_css() -> String {
    format!("{ENTRY_STYLE}{}", super::highlight::css())
}

fn html_entry<W: Write>(
    doc: &SessionDoc,
    i: usize,
    cur: bool,
    w: &mut Writer<'_, W>,
    hl: &mut Highlighter,
) -> std::io::Result<()> {
    let e = &doc.entries()[i];
    let line = doc.line(&e.line);
    let id = esc(e.id.as_deref().unwrap_or(""));
    let parent = esc(e.parent_id.as_deref().unwrap_or(""));
    let ts = esc(&when(e.timestamp.as_deref()));
    // A long `content` string stays in the line, read in pieces.
    let text::Payload {
        value: m,
        content: long,
        blocks: long_blocks,
    } = text::message(e, line, true, w.opts.redactions);
    // Parsed: the map's pages of the line are not needed while it is written.
    arbor_store::release_pages(line);
    let s = |k: &str| {
        m.as_ref()
            .and_then(|m| m.get(k))
            .and_then(|v| v.as_str_lossy())
            .map(|v| v.into_owned())
            .unwrap_or_default()
    };
    let role = match e.etype {
        EntryType::Message => s("role"),
        ref t => t.name().to_string(),
    };
    let head = match role.as_str() {
        "user" => "User".to_string(),
        "assistant" => format!("Assistant {}", s("model")),
        "toolResult" => format!("Tool result {}", s("toolName")),
        "bashExecution" => "Bash".into(),
        "compaction" => "Compaction summary".into(),
        "branch_summary" => "Branch summary".into(),
        r => r.to_string(),
    };
    write!(
        w.out,
        "<section id=\"{id}\" data-parent=\"{parent}\" class=\"r-{}{}\"><h3><b>{}</b> · <a href=\"#{id}\">{id}</a> · {ts}</h3>",
        esc(&role),
        if cur { "" } else { " off" },
        esc(head.trim())
    )?;
    let mut body = |w: &mut Writer<'_, W>, t: &Src<'_>, class: &str| -> std::io::Result<()> {
        if class != "text" {
            let Src::Str(t) = t else { return Ok(()) };
            if t.trim().is_empty() {
                return Ok(());
            }
            write!(w.out, "<div class=\"{class}\">")?;
            write_pieces(&mut w.out, t.trim_end(), false, esc)?;
            return write!(w.out, "</div>");
        }
        text_html(&mut w.out, hl, t)
    };
    match e.etype {
        EntryType::Message => {
            let m = m.clone().unwrap_or(JsValue::Null);
            let stop = s("stopReason");
            if matches!(stop.as_str(), "error" | "aborted") {
                body(
                    w,
                    &format!("✗ {stop}: {}", s("errorMessage")).as_str().into(),
                    "err",
                )?;
            }
            if matches!(m.get("isError"), Some(JsValue::Bool(true))) {
                body(w, &"✗ error".into(), "err")?;
            }
            match role.as_str() {
                "toolResult" | "bashExecution" => {
                    let text = if role == "bashExecution" {
                        Src::Str(format!("$ {}\n{}", s("command"), s("output")).into())
                    } else if let Some(src) = long.clone() {
                        src
                    } else {
                        text::content(m.get("content"), &long_blocks)
                    };
                    let lines = text::line_count(&text)?;
                    let ops = vec![
                        Op::Lit(format!(
                            "<details{}><summary>{lines} lines</summary><pre>",
                            if lines <= 8 { " open" } else { "" }
                        )),
                        Op::Text(0..usize::MAX, Esc::Html),
                        Op::Lit("</pre></details>".into()),
                    ];
                    text::write_ops(&mut w.out, &text, ops, &text::Runs::default(), |_, _, _| {
                        Ok(())
                    })?;
                    html_images(m.get("content"), w)?;
                }
                _ => match (&long, m.get("content")) {
                    (Some(src), _) => body(w, src, "text")?,
                    (None, Some(JsValue::String(t))) => {
                        body(w, &Src::Str(t.to_string_lossy()), "text")?
                    }
                    (None, Some(JsValue::Array(blocks))) => {
                        for (k, b) in blocks.iter().enumerate() {
                            // Borrowed: a long text is not copied.
                            let bs = |k: &str| {
                                b.get(k).and_then(|v| v.as_str_lossy()).unwrap_or_default()
                            };
                            match b.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                                Some("text") => body(w, &long_blocks.text(k, b, "text"), "text")?,
                                Some("thinking") => {
                                    let t = long_blocks.text(k, b, "thinking");
                                    // Only whitespace: nothing (`layout` says where the last
                                    // other character is).
                                    let blank = match &t {
                                        Src::Str(s) => s.trim().is_empty(),
                                        _ => text::layout(&t, false)?
                                            .parts
                                            .first()
                                            .is_none_or(|p| p.last_non_ws.is_none()),
                                    };
                                    if !blank {
                                        let ops = vec![
                                            Op::Lit(
                                                "<details><summary>Thinking</summary><div class=\"text\">"
                                                    .into(),
                                            ),
                                            Op::Text(0..usize::MAX, Esc::Html),
                                            Op::Lit("</div></details>".into()),
                                        ];
                                        text::write_ops(
                                            &mut w.out,
                                            &t,
                                            ops,
                                            &text::Runs::default(),
                                            |_, _, _| Ok(()),
                                        )?;
                                    }
                                }
                                Some("toolCall") => {
                                    let args =
                                        long_blocks.json(k, b, "arguments").unwrap_or("".into());
                                    let hint =
                                        ["path", "file_path", "command", "pattern", "query", "url"]
                                            .iter()
                                            .find_map(|key| {
                                                long_blocks.str_in(k, b, "arguments", key)
                                            })
                                            .map(|h| text::one_line(&h, 80))
                                            .unwrap_or_default();
                                    write!(
                                        w.out,
                                        "<details><summary>Tool call <b>{}</b> {}</summary>",
                                        esc(&bs("name")),
                                        esc(&hint)
                                    )?;
                                    // Plain: highlighting JSON adds a span per token and little to read.
                                    let ops = vec![
                                        Op::Lit("<pre>".into()),
                                        Op::Text(0..usize::MAX, Esc::Html),
                                        Op::Lit("</pre></details>".into()),
                                    ];
                                    text::write_ops(
                                        &mut w.out,
                                        &args,
                                        ops,
                                        &text::Runs::default(),
                                        |_, _, _| Ok(()),
                                    )?;
                                }
                                _ => {}
                            }
                        }
                        html_images(m.get("content"), w)?;
                    }
                    _ => {}
                },
            }
        }
        EntryType::Compaction | EntryType::BranchSummary => {
            body(
                w,
                &Src::Str(e.fields.str(line, "summary").unwrap_or_default()),
                "text",
            )?;
        }
        _ => {
            let d = crate::render::one_line(&crate::render::describe(doc, i), 300);
            body(w, &d.as_str().into(), "note")?;
        }
    }
    writeln!(w.out, "</section>")
}

fn html_images<W: Write>(content: Option<&JsValue>, w: &mut Writer<'_, W>) -> std::io::Result<()> {
    if let Some(JsValue::Array(blocks)) = content {
        for b in blocks {
            if b.get("type").and_then(|t| t.as_str_lossy()).as_deref() == Some("image") {
                let data = b
                    .get("data")
                    .and_then(|v| v.as_str_lossy())
                    .unwrap_or_default();
                let mime = b
                    .get("mimeType")
                    .and_then(|v| v.as_str_lossy())
                    .unwrap_or_default();
                // Only base64 characters and a plain media type reach the attribute.
                let plain_mime = mime.starts_with("image/")
                    && mime.bytes().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'/' | b'+' | b'.' | b'-')
                    });
                let base64 = data
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
                // An omp blob reference still in place (see `unresolved_image`).
                if let Some(note) = super::unresolved_image(&data) {
                    write!(w.out, "<p class=\"note\">[{note}]</p>")?;
                    continue;
                }
                if !(plain_mime && base64) {
                    write!(
                        w.out,
                        "<p class=\"note\">[image {}: not shown]</p>",
                        esc(&mime)
                    )?;
                    continue;
                }
                // Each image once: a later copy links to the first (and the script shows it
                // there too).
                let key = arbor_store::blobs::sha256_hex(data.as_bytes());
                let n = w.images.len();
                match w.images.get(&key) {
                    Some(first) => write!(
                        w.out,
                        "<a class=\"imgref\" href=\"#{first}\">[the image shown at its first use]</a>"
                    )?,
                    None => {
                        let anchor = format!("{}img-{n}", w.image_prefix);
                        write!(
                            w.out,
                            "<img id=\"{anchor}\" alt=\"image\" src=\"data:{mime};base64,{data}\">"
                        )?;
                        w.images.insert(key, anchor);
                        w.report.images += 1;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Message text: the prose between its fenced code blocks in `<div class="text">`, each
/// block through [`code_block`] (a block too long to highlight escaped as it is read).
pub(super) fn text_html<W: Write>(
    out: &mut W,
    hl: &mut Highlighter,
    t: &Src<'_>,
) -> std::io::Result<()> {
    let text::Layout { parts, keep, runs } = text::layout(t, true)?;
    if keep == 0 {
        return Ok(());
    }
    let mut ops = Vec::new();
    let mut langs = Vec::new();
    for p in parts {
        match p.code {
            None if p.last_non_ws.is_some() => {
                ops.push(Op::Lit("<div class=\"text\">".into()));
                ops.push(Op::Text(p.first_non_nl..p.last_non_nl, Esc::Html));
                ops.push(Op::Lit("</div>".into()));
            }
            None => {}
            // What `Highlighter::code` refuses is escaped as it is read.
            Some(_) if p.range.len() > super::highlight::MAX_BYTES => {
                ops.push(Op::Lit("<pre class=\"code\"><code>".into()));
                ops.push(Op::Text(p.range, Esc::Html));
                ops.push(Op::Lit("</code></pre>".into()));
            }
            Some(lang) => {
                ops.push(Op::Whole(p.range, langs.len()));
                langs.push(lang);
            }
        }
    }
    text::write_ops(out, t, ops, &runs, |out, n, code| {
        code_block(out, hl, langs.get(n).map_or("", String::as_str), code)
    })
}

/// A code block, highlighted when its language is known (and the export's budget allows).
pub(super) fn code_block(
    out: &mut impl Write,
    hl: &mut Highlighter,
    lang: &str,
    code: &str,
) -> std::io::Result<()> {
    match hl.code(lang, code) {
        Some(h) => write!(out, "<pre class=\"code\"><code>{h}</code></pre>"),
        None => {
            write!(out, "<pre class=\"code\"><code>")?;
            write_pieces(out, code, false, esc)?;
            write!(out, "</code></pre>")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::text::{layout, Src};

    fn shape(t: &str) -> Vec<String> {
        layout(&Src::from(t), true)
            .expect("in memory")
            .parts
            .into_iter()
            .map(|p| match p.code {
                None => format!("T[{}]", &t[p.range]),
                Some(l) => format!("C{l}[{}]", &t[p.range]),
            })
            .collect()
    }

    #[test]
    fn fences_split_text_and_code() {
        assert_eq!(shape("plain"), ["T[plain]"]);
        assert_eq!(
            shape("a\n```rust\nfn x() {}\n```\nb"),
            ["T[a\n]", "Crust[fn x() {}\n]", "T[b]"]
        );
        // A longer closing fence closes; a shorter one or another character does not.
        assert_eq!(
            shape("````\n```\n~~~\n`````\nafter"),
            ["T[]", "C[```\n~~~\n]", "T[after]"]
        );
        // Unclosed: to the end. Inline backticks are not a fence.
        assert_eq!(shape("x\n~~~ py\nprint(1)"), ["T[x\n]", "Cpy[print(1)]"]);
        assert_eq!(shape("``` a ` b\nnot code"), ["T[``` a ` b\nnot code]"]);
        assert_eq!(shape("    ```\nindented"), ["T[    ```\nindented]"]);
    }
}
