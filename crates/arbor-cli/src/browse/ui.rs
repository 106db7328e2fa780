//! Drawing the browser with ratatui. Only the terminal's own foreground and background are
//! used for text, colours only as accents and the selection as reversed video, so that light
//! and dark backgrounds both read; without colour (`NO_COLOR`, `--color never`) only bold,
//! dim and reverse remain.
use super::navigator::{Navigator, ReaderKind};
use super::picker::{Scope, Sort};
use super::{App, Dialog, Mode};
use crate::term::{fit, width};
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// The styles, with or without colour.
#[derive(Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }
    fn dim(&self) -> Style {
        Style::default().add_modifier(Modifier::DIM)
    }
    fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    fn accent(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    fn id(&self) -> Style {
        self.fg(Color::Yellow)
    }
    fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    fn hit(&self) -> Style {
        self.fg(Color::Red)
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    fn user(&self) -> Style {
        self.fg(Color::Green)
    }
    fn assistant(&self) -> Style {
        self.fg(Color::Blue)
    }
    fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame<'_>, app: &mut App) {
    let theme = Theme { color: app.color };
    let area = f.area();
    match &mut app.mode {
        Mode::Picker => draw_picker(f, app, area, theme),
        Mode::Tree(_) => draw_tree(f, app, area, theme),
    }
    if let Some(d) = &app.dialog {
        draw_dialog(f, d, area, theme);
    }
}

/// Splits the body into the list and the preview: side by side when wide, stacked otherwise.
fn split_body(body: Rect) -> (Rect, Rect) {
    if body.width >= 110 {
        let c = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([Constraint::Percentage(58), Constraint::Percentage(42)])
            .split(body);
        (c[0], c[1])
    } else {
        let preview = (body.height / 3).clamp(3, 10);
        let c = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Min(3), Constraint::Length(preview)])
            .split(body);
        (c[0], c[1])
    }
}

fn frame_rows(area: Rect) -> (Rect, Rect, Rect, Rect) {
    let c = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .split(area);
    (c[0], c[1], c[2], c[3])
}

fn draw_picker(f: &mut Frame<'_>, app: &mut App, area: Rect, t: Theme) {
    let (head, input, body, help) = frame_rows(area);
    let p = &app.picker;
    let scope = match p.scope {
        Scope::Project => "this project",
        Scope::All => "all projects",
    };
    let sort = if p.query.trim().is_empty() && p.sort == Sort::Relevance {
        Sort::Recent
    } else {
        p.sort
    };
    // `--agent`: whose sessions alone.
    let only = app
        .ctx
        .agent
        .map(|a| format!(" ({} only)", crate::cmd::ls::tool_name(a)))
        .unwrap_or_default();
    let header = Line::from(vec![
        Span::styled(" arbor ", t.accent()),
        Span::raw(format!(
            "· {scope}{only} · {} of {} · sort: {}",
            p.view.len(),
            arbor_view::count(p.rows.len() as u64, "session", "sessions"),
            sort.name()
        )),
        Span::styled(
            format!(
                "  Tab: {}",
                if p.scope == Scope::Project {
                    "all projects"
                } else {
                    "this project"
                }
            ),
            t.dim(),
        ),
    ]);
    f.render_widget(Paragraph::new(header), head);
    let mut spans = vec![
        Span::styled(" search ", t.bold()),
        Span::raw(p.query.clone()),
        Span::styled("█", t.dim()),
    ];
    if let Some(n) = &p.search_note {
        spans.push(Span::styled(format!("  {}", fit(n, 60)), t.error()));
    } else if p.query.is_empty() {
        spans.push(Span::styled(
            "  type to search titles and every word said (\"phrase\", prefix*, re:regex)",
            t.dim(),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), input);

    let (list, preview) = split_body(body);
    app.list_area = list;
    let h = list.height as usize;
    // Rows with a hit take two lines: scroll by rows until the cursor's row fits.
    let p = &mut app.picker;
    if p.selected < p.offset {
        p.offset = p.selected;
    }
    let rows_h = |v: &super::picker::ViewRow| 1 + usize::from(v.hit.is_some());
    while p.offset < p.selected
        && p.view[p.offset..=p.selected]
            .iter()
            .map(rows_h)
            .sum::<usize>()
            > h
    {
        p.offset += 1;
    }
    let w = list.width as usize;
    let mut lines: Vec<Line<'_>> = Vec::new();
    app.row_at.clear();
    let now = app.ctx.now_ms;
    // The TOOL column: as wide as the longest name shown (pi's and omp's alone: 3).
    let tool_w = p
        .rows
        .iter()
        .map(|r| r.tool_name().len())
        .max()
        .unwrap_or(3)
        .max(3);
    for (pos, v) in p.view.iter().enumerate().skip(p.offset) {
        if lines.len() >= h {
            break;
        }
        let r = &p.rows[v.row];
        let sel = pos == p.selected;
        let base = if sel { t.selected() } else { Style::default() };
        let tool = format!("{:<tool_w$}", r.tool_name());
        let age = crate::cmd::index::age(now - r.modified);
        let indent = if v.depth > 0 {
            format!("{}↳ ", "  ".repeat(v.depth.min(8) - 1))
        } else {
            String::new()
        };
        let left = format!(" {tool} {age:>4} {:>5}  {indent}", count5(r.messages));
        let project = crate::cmd::index::home_short(&r.cwd);
        let show_project = p.scope == Scope::All && w >= 70;
        let proj_w = if show_project {
            (w / 4).min(width(&project) + 2)
        } else {
            0
        };
        let title_w = w.saturating_sub(width(&left) + proj_w + 1);
        let mut title = fit(&r.title, title_w);
        title.push_str(&" ".repeat(title_w.saturating_sub(width(&title))));
        let mut spans = vec![
            Span::styled(
                left,
                base.patch(if sel { Style::default() } else { t.dim() }),
            ),
            Span::styled(title, base),
        ];
        if show_project {
            spans.push(Span::styled(
                format!(" {}", fit(&project, proj_w.saturating_sub(1))),
                base.patch(t.dim()),
            ));
        }
        lines.push(Line::from(spans));
        app.row_at.push(pos);
        if let Some(hit) = &v.hit {
            if lines.len() >= h {
                break;
            }
            let head = format!(
                "      ↳ {}{} ",
                hit.role,
                if v.hits > 1 {
                    format!(" (+{})", v.hits - 1)
                } else {
                    String::new()
                }
            );
            // The snippet gets what the head and the branch note leave: the note is what
            // tells a hit on another branch apart, so it is never cut off.
            let note = if hit.on_branch { "" } else { "  other branch" };
            let room = w.saturating_sub(width(&head) + width(note));
            let mut spans = vec![Span::styled(head, t.dim())];
            spans.extend(snippet_spans(&hit.snippet, room, t));
            if !note.is_empty() {
                spans.push(Span::styled(note, t.dim()));
            }
            lines.push(Line::from(spans));
            app.row_at.push(pos);
        }
    }
    if p.view.is_empty() {
        lines.push(Line::styled(
            if p.rows.is_empty() {
                "  no sessions here (Tab: all projects)"
            } else {
                "  nothing matches"
            },
            t.dim(),
        ));
    }
    f.render_widget(Paragraph::new(lines), list);

    // Preview.
    let inner = side_pane(f, preview, " preview ", t);
    let mut pl: Vec<Line<'_>> = Vec::new();
    if let Some(r) = app.picker.selected_row() {
        pl.push(Line::from(vec![Span::styled(
            fit(&r.title, inner.width as usize),
            t.bold(),
        )]));
        let about = match r.agent {
            // Another agent's: which, and its id (what `arbor import` takes).
            Some(a) => format!(
                "{} · {a} · {} · read only",
                crate::cmd::index::home_short(&r.cwd),
                r.session_id.as_deref().unwrap_or_default()
            ),
            None => format!(
                "{} · {} · {} · {}",
                crate::cmd::index::home_short(&r.cwd),
                arbor_view::count(r.branches, "branch", "branches"),
                crate::cmd::index::human_size(r.size),
                r.file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
        };
        pl.push(Line::styled(fit(&about, inner.width as usize), t.dim()));
        if r.first != r.title && !r.first.is_empty() {
            pl.push(Line::styled(
                fit(&format!("first: {}", r.first), inner.width as usize),
                t.dim(),
            ));
        }
        let hit_seq = app
            .picker
            .selected_view()
            .and_then(|v| v.hit.as_ref().map(|h| h.seq));
        for x in app.preview() {
            let style = match x.kind.name() {
                "user" => t.user(),
                "assistant" => t.assistant(),
                _ => t.dim(),
            };
            let mark = if Some(x.seq) == hit_seq { "▶ " } else { "" };
            pl.push(Line::from(vec![
                Span::styled(
                    format!("{mark}{}: ", x.kind.name()),
                    style.add_modifier(Modifier::BOLD),
                ),
                Span::raw(arbor_view::one_line(&x.text, 600)),
            ]));
        }
    }
    f.render_widget(Paragraph::new(pl).wrap(Wrap { trim: true }), inner);
    let keys: &[&str] = if app.picker.selected_row().is_some_and(|r| r.agent.is_some()) {
        &FOREIGN_PICKER_KEYS
    } else {
        &PICKER_KEYS
    };
    draw_status(f, &app.status, keys, "Esc quit", help, t);
}

/// The last line: the status message, else the keys.
/// Draws the frame of the right-hand pane (the picker's preview, the tree's entry reader)
/// and returns the area inside it.
fn side_pane(f: &mut Frame<'_>, area: Rect, title: &str, t: Theme) -> Rect {
    let block = Block::default()
        .borders(Borders::TOP | Borders::LEFT)
        .title(Span::styled(title.to_string(), t.dim()));
    let inner = block.inner(area);
    f.render_widget(block, area);
    inner
}

/// The picker's keys, most useful first: a narrow footer drops them from the end.
const PICKER_KEYS: [&str; 8] = [
    "Enter tree",
    "^R resume",
    "Tab scope",
    "^E rename",
    "^D delete",
    "^S sort",
    "^Y copy path",
    "↑↓ move",
];

/// The picker's keys on another agent's session (only read: no rename, no delete).
const FOREIGN_PICKER_KEYS: [&str; 6] = [
    "Enter read",
    "^R import+resume",
    "Tab scope",
    "^S sort",
    "^Y copy path",
    "↑↓ move",
];

/// The tree's keys on another agent's session.
const FOREIGN_TREE_KEYS: [&str; 3] = ["r import+resume", "←→ fold", "↑↓ move"];

/// The tree's keys, most useful first.
const TREE_KEYS: [&str; 6] = [
    "Enter continue here",
    "r resume",
    "F fork at message",
    "L label",
    "←→ fold",
    "↑↓ move",
];

/// The keys line for `cols` columns: as many of `keys` as fit, in order, then `last` (the
/// way out), which is always kept.
pub(super) fn keys_line(keys: &[&str], last: &str, cols: usize) -> String {
    let mut n = keys.len();
    loop {
        let mut parts: Vec<&str> = keys[..n].to_vec();
        parts.push(last);
        let line = parts.join(" · ");
        if n == 0 || width(&line) <= cols {
            return line;
        }
        n -= 1;
    }
}

fn draw_status(f: &mut Frame<'_>, status: &str, keys: &[&str], last: &str, area: Rect, t: Theme) {
    let room = (area.width as usize).saturating_sub(1);
    let keys = keys_line(keys, last, room);
    let text = if status.is_empty() { &keys } else { status };
    f.render_widget(
        Paragraph::new(Line::styled(format!(" {}", fit(text, room)), t.dim())),
        area,
    );
}

/// A count in at most five columns (148135 is `148k`): the message column stays aligned.
pub(super) fn count5(n: usize) -> String {
    if n <= 99_999 {
        return n.to_string();
    }
    let (mut v, mut unit) = (n, 0);
    while v > 9999 {
        v /= 1000;
        unit += 1;
    }
    format!("{v}{}", ["", "k", "M", "G", "T", "P", "E"][unit.min(6)])
}

/// A snippet with its match (between U+E000 and U+E001) highlighted, cut to `max` columns.
fn snippet_spans(s: &str, max: usize, t: Theme) -> Vec<Span<'static>> {
    let flat = arbor_view::one_line(s, 2000);
    let mut out = Vec::new();
    let mut used = 0;
    let mut rest = flat.as_str();
    let mut hot = false;
    while !rest.is_empty() && used < max {
        let (part, next, toggle) = match rest.find(['\u{e000}', '\u{e001}']) {
            Some(i) => (&rest[..i], &rest[i + '\u{e000}'.len_utf8()..], true),
            None => (rest, "", false),
        };
        let piece = fit(part, max - used);
        used += width(&piece);
        out.push(Span::styled(
            piece,
            if hot { t.hit() } else { Style::default() },
        ));
        rest = next;
        if toggle {
            hot = !hot;
        }
    }
    out
}

fn draw_tree(f: &mut Frame<'_>, app: &mut App, area: Rect, t: Theme) {
    let (head, input, body, help) = frame_rows(area);
    let Mode::Tree(nav) = &mut app.mode else {
        return;
    };
    let title = nav.title.clone();
    let tool = match &nav.foreign {
        Some((a, _)) => a.name(),
        None if nav.doc.dialect() == arbor_core::Dialect::Omp => "omp",
        None => "pi",
    };
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" tree ", t.accent()),
            Span::raw({
                // The filter and the counts are what change: the title gets what they leave.
                let rest = format!(
                    " · {tool} · {}, {} shown · filter: {}",
                    arbor_view::count(nav.doc.entries().len() as u64, "entry", "entries"),
                    nav.line_count(),
                    nav.filter.name()
                );
                let room = (head.width as usize).saturating_sub(6);
                let title_room = room.saturating_sub(width(&rest) + 2).clamp(8, 60);
                fit(
                    &format!(
                        "· {}{rest}",
                        fit(&arbor_view::one_line(&title, 400), title_room)
                    ),
                    room,
                )
            }),
        ])),
        head,
    );
    let search = if nav.searching || !nav.search.is_empty() {
        Line::from(vec![
            Span::styled(" search ", t.bold()),
            Span::raw(nav.search.clone()),
            Span::styled(if nav.searching { "█" } else { "" }, t.dim()),
        ])
    } else {
        Line::styled(
            " / search · f or 1-5 filter (default, no tools, user, labelled, all)",
            t.dim(),
        )
    };
    f.render_widget(Paragraph::new(search), input);
    let (list, reader) = split_body(body);
    app.list_area = list;
    let h = list.height as usize;
    nav.scroll_to_cursor(h);
    let w = list.width as usize;
    let leaf = nav.doc.index().leaf;
    let mut lines = Vec::with_capacity(h);
    app.row_at.clear();
    for (pos, l) in nav.iter_lines().enumerate().skip(nav.offset).take(h) {
        let e = &nav.doc.entries()[l.entry];
        let on = nav.on_path(l.entry);
        let sel = pos == nav.selected;
        let base = if sel { t.selected() } else { Style::default() };
        let mark = if nav.folded.contains(&l.entry) {
            "⊞ "
        } else if on {
            "● "
        } else {
            "○ "
        };
        let id_text = e.id_text(nav.doc.line(&e.line));
        let id: &str = &id_text;
        let label = Some(&e.key)
            .and_then(|k| nav.doc.index().labels.get_key(k))
            .map(|x| format!(" [{}]", arbor_view::one_line(x, 30)))
            .unwrap_or_default();
        let leaf_mark = if Some(l.entry) == leaf {
            " ◀ leaf"
        } else {
            ""
        };
        let prefix = if width(&l.prefix) > w / 2 {
            format!("↳{} ", l.prefix.matches(['├', '└']).count())
        } else {
            l.prefix.clone()
        };
        let room =
            w.saturating_sub(width(&prefix) + 2 + width(id) + 1 + width(&label) + width(leaf_mark));
        let desc = fit(
            &arbor_view::one_line(&arbor_view::describe(&nav.doc, l.entry), 400),
            room,
        );
        let style = match e.role.as_ref() {
            Some(arbor_core::entry::Role::User) => t.user(),
            Some(arbor_core::entry::Role::Assistant) => t.assistant(),
            _ => Style::default(),
        };
        let style = if on {
            style.add_modifier(Modifier::BOLD)
        } else {
            style.add_modifier(Modifier::DIM)
        };
        lines.push(Line::from(vec![
            Span::styled(prefix, base.patch(t.dim())),
            Span::styled(mark, base),
            Span::styled(id.to_string(), base.patch(t.id())),
            Span::styled(" ", base),
            Span::styled(desc, base.patch(style)),
            Span::styled(label, base.patch(t.accent())),
            Span::styled(leaf_mark, base.patch(t.accent())),
        ]));
        app.row_at.push(pos);
    }
    if nav.line_count() == 0 {
        lines.push(Line::styled("  nothing matches this filter", t.dim()));
    }
    f.render_widget(Paragraph::new(lines), list);
    let inner = side_pane(f, reader, " entry ", t);
    let rl: Vec<Line<'_>> = nav
        .selected_entry()
        .map(|i| reader_lines(nav, i, t))
        .unwrap_or_default();
    f.render_widget(Paragraph::new(rl).wrap(Wrap { trim: false }), inner);
    let keys: &[&str] = if nav.foreign.is_some() {
        &FOREIGN_TREE_KEYS
    } else {
        &TREE_KEYS
    };
    draw_status(f, &app.status, keys, "Esc back", help, t);
}

fn reader_lines(nav: &Navigator, i: usize, t: Theme) -> Vec<Line<'static>> {
    nav.reader(i)
        .into_iter()
        .map(|(k, s)| {
            let style = match k {
                ReaderKind::Head => t.bold(),
                ReaderKind::Text => Style::default(),
                ReaderKind::Tool => t.fg(Color::Magenta),
                ReaderKind::Dim => t.dim(),
                ReaderKind::Error => t.error(),
                ReaderKind::Label => t.accent(),
            };
            Line::styled(arbor_view::sanitize_line(&s), style)
        })
        .collect()
}

/// `text` cut into lines of at most `cols` columns at spaces (a word longer than a line is
/// cut with `…`), so that a dialog knows how many lines it takes.
fn wrap_words(text: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let word = fit(word, cols);
        if !cur.is_empty() && width(&cur) + 1 + width(&word) > cols {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    out.push(cur);
    out
}

/// The last `cols` columns of `s` (`…` first when cut).
fn tail(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    let mut out: Vec<char> = Vec::new();
    let mut w = 1;
    for c in s.chars().rev() {
        let cw = width(c.encode_utf8(&mut [0; 4]));
        if w + cw > cols {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out.into_iter().rev().collect()
}

fn draw_dialog(f: &mut Frame<'_>, d: &Dialog, area: Rect, t: Theme) {
    let w = area.width.saturating_sub(4).min(64);
    // Inside the border.
    let inner = (w as usize).saturating_sub(2);
    let words = |s: &str| -> Vec<Line<'static>> {
        wrap_words(s, inner).into_iter().map(Line::raw).collect()
    };
    // The answer keys, each named with what it does.
    let answers = |yes: &str, no: &str| -> Line<'static> {
        Line::from(vec![
            Span::styled("y", t.bold()),
            Span::raw(format!(" {yes} · ")),
            Span::styled("n", t.bold()),
            Span::raw(" or "),
            Span::styled("Esc", t.bold()),
            Span::raw(format!(" {no}")),
        ])
    };
    let (title, body): (&str, Vec<Line<'_>>) = match d {
        Dialog::ConfirmDelete { title, .. } => {
            let mut b = words(&format!("Move \"{}\" to the trash?", fit(title, 50)));
            b.push(Line::styled(
                "(arbor trash restore brings it back)",
                t.dim(),
            ));
            b.push(Line::raw(""));
            b.push(answers("moves it to the trash", "keeps it"));
            (" delete ", b)
        }
        Dialog::Confirm { question, .. } => {
            let mut b = words(question);
            b.push(Line::raw(""));
            b.push(answers("yes", "no"));
            (" confirm ", b)
        }
        Dialog::Input { prompt, value, .. } => (
            " edit ",
            vec![
                Line::raw(prompt.clone()),
                // The end of a long value: where typing goes.
                Line::from(vec![
                    Span::raw(tail(value, inner.saturating_sub(1))),
                    Span::styled("█", t.dim()),
                ]),
                Line::raw(""),
                Line::styled("Enter save · Esc cancel · ^U clear", t.dim()),
            ],
        ),
    };
    let h = (body.len() as u16 + 2).min(area.height);
    let r = Rect {
        x: area.x + (area.width.saturating_sub(w)) / 2,
        y: area.y + (area.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    };
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(body).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(title, t.accent())),
        ),
        r,
    );
}
