//! `arbor` / `arbor browse`: the full-screen session browser (ratatui over crossterm; fuzzy
//! matching by nucleo-matcher, full-text search by the catalog's FTS5).
//!
//! The picker lists the sessions of this project or of all projects; typing filters titles
//! and first messages (fuzzy) and searches every text of every session (hits shown under their
//! session, with the entry, its role and whether it is on the current branch); a preview shows
//! the turns around the hit, or the session's last turns, from the catalog. Enter opens the
//! tree navigator on the session (on the hit's entry). From there, a session is resumed in its
//! own agent, continued from an earlier entry in a new branched session, or forked at a user
//! message (the new session ends at the message's parent; the message is handed over).
//!
//! All state changes go through [`App::key`] and [`App::mouse`], which return what the event
//! loop must do ([`Effect`]); drawing is [`ui::draw`]. Tests drive both without a terminal.
mod handoff;
mod navigator;
mod picker;
#[cfg(test)]
mod tests;
mod ui;

pub use handoff::resume;

use crate::term::Term;
use anyhow::Result;
use arbor_core::Dialect;
use arbor_index::{Catalog, IndexedText};
use arbor_store::locate::{Locator, Scope as LocScope};
use crossterm::event::{
    self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};
use navigator::{Filter, Navigator};
use picker::{Picker, Scope};
use ratatui::layout::Rect;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What the browser needs from the command line.
pub struct Ctx {
    /// Where sessions are.
    pub loc: Locator,
    /// `--catalog`.
    pub catalog: Option<PathBuf>,
    /// "Now" for ages (fixed in tests).
    pub now_ms: f64,
    /// `--agent`: only this agent's sessions (as `arbor ls`).
    pub agent: Option<crate::cli::Tool>,
    /// Where other agents' sessions are (`ForeignRoots::from_env`); `None`: none are listed.
    pub others: Option<arbor_index::ForeignRoots>,
}

/// Which screen is shown.
pub enum Mode {
    /// The session list.
    Picker,
    /// One session's tree.
    Tree(Box<Navigator>),
}

/// A question over the screen.
pub enum Dialog {
    /// Move a session to the trash?
    ConfirmDelete {
        /// The session.
        file: PathBuf,
        /// Its title.
        title: String,
    },
    /// Yes or no before an action.
    Confirm {
        /// The question.
        question: String,
        /// What yes does.
        then: Pending,
    },
    /// A line of text (a name, a label).
    Input {
        /// What is asked.
        prompt: String,
        /// The text so far.
        value: String,
        /// What Enter does with it.
        then: Pending,
    },
}

/// An action waiting for a dialog's answer.
#[derive(Debug, Clone)]
pub enum Pending {
    /// Rename the session.
    Rename(PathBuf),
    /// Set (or clear, when empty) the label of an entry.
    Label(String),
    /// Continue from an entry in a new branched session.
    ContinueFrom(String),
    /// Import another agent's session into pi's layout (`arbor import`'s function), then
    /// resume the imported file in pi.
    ImportResume {
        /// The agent.
        agent: arbor_agents::Agent,
        /// Its source (a file; opencode: its data directory).
        source: PathBuf,
        /// The session's id.
        id: String,
    },
}

/// How the browser ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Back to the shell.
    Quit,
    /// Run the session's agent on it; `handover` is the text of a forked message.
    Resume {
        /// The session.
        path: PathBuf,
        /// Its tool.
        tool: Dialect,
        /// The message text `/fork` hands over.
        handover: Option<String>,
    },
    /// Another agent's session was imported: say so, then run pi on the imported file.
    ResumeImported {
        /// The imported pi session.
        path: PathBuf,
        /// What was imported, and where.
        note: String,
    },
}

/// A preview's session and hit.
type PreviewKey = (PathBuf, Option<i64>);

/// What a background refresh hands back: other agents' rows of the scope, when it read them.
type Refreshed = Option<Vec<arbor_index::ForeignRow>>;

/// What the event loop does after an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Draw again.
    Redraw,
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Leave with this outcome.
    Exit(Outcome),
}

/// The browser's state.
pub struct App {
    /// Where sessions are, and "now".
    pub ctx: Ctx,
    cat: Catalog,
    /// The session list.
    pub picker: Picker,
    /// The screen.
    pub mode: Mode,
    /// The dialog over it.
    pub dialog: Option<Dialog>,
    /// The message on the last line.
    pub status: String,
    /// Colour on.
    pub color: bool,
    /// Where the list was last drawn, and the view position of each of its lines (mouse).
    pub list_area: Rect,
    /// See `list_area`.
    pub row_at: Vec<usize>,
    preview: Option<(PreviewKey, Vec<IndexedText>)>,
    last_click: Option<(Instant, usize)>,
    refreshing: Option<std::sync::mpsc::Receiver<Refreshed>>,
    /// The list came from the catalog unchecked: refresh once the first frame is drawn.
    stale: bool,
    /// Other agents' sessions of the picker's scope (the catalog's rows).
    foreign: Vec<arbor_index::ForeignRow>,
}

impl App {
    /// Opens the catalog, brings it up to date for `scope`, and shows the picker (searching
    /// for `query` when given).
    pub fn new(ctx: Ctx, scope: Scope, query: Option<&str>, color: bool) -> Result<App> {
        let mut cat = crate::cmd::index::open_catalog(ctx.catalog.as_deref())?;
        // The first frame shows what the catalog holds; the files are looked at in the
        // background (one `stat` each, new bytes read) and the list follows when that is
        // done. A catalog that knows none of these sessions yet is brought up to date first.
        let dirs = scope_dirs(&ctx.loc, scope, ctx.agent)?;
        let stored = cat.listed_as_stored(&dirs).unwrap_or_default();
        let (listed, fresh) = if stored.is_empty() {
            (load(&ctx.loc, &mut cat, scope, ctx.agent)?.0, true)
        } else {
            (stored, false)
        };
        // Other agents' rows as the catalog holds them, the background refresh after the
        // first frame bringing them up to date; a catalog that holds none yet reads the
        // sources first (before the terminal is taken: a skipped source, or a first read of
        // a large history, is said on stderr).
        let stored_foreign = match &ctx.others {
            Some(_) => crate::cmd::agents::stored_in_scope(&cat, loc_scope(scope), ctx.agent)
                .map(|l| l.rows)
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let (foreign, foreign_fresh) = if stored_foreign.is_empty() {
            (
                foreign_rows(&mut cat, ctx.others.as_ref(), ctx.agent, scope, true)?,
                true,
            )
        } else {
            (stored_foreign, false)
        };
        let mut picker = Picker::new(scope, &[], &dirs);
        picker.load_all(scope, &listed, &foreign, &dirs);
        let mut app = App {
            ctx,
            cat,
            picker,
            mode: Mode::Picker,
            dialog: None,
            status: String::new(),
            color,
            list_area: Rect::default(),
            row_at: Vec::new(),
            preview: None,
            last_click: None,
            refreshing: None,
            stale: !fresh || !foreign_fresh,
            foreign,
        };
        if let Some(q) = query.filter(|q| !q.trim().is_empty()) {
            app.picker.query = q.to_string();
            app.picker.search(Some(&app.cat));
        }
        Ok(app)
    }

    /// The preview's texts for the selected session: around its hit, else its last turns.
    pub fn preview(&mut self) -> Vec<IndexedText> {
        let Some(file) = self.picker.selected_file().map(Path::to_path_buf) else {
            return Vec::new();
        };
        let seq = self
            .picker
            .selected_view()
            .and_then(|v| v.hit.as_ref().map(|h| h.seq));
        let key = (file.clone(), seq);
        if let Some((k, v)) = &self.preview {
            if *k == key {
                return v.clone();
            }
        }
        let texts = match (self.picker.selected_row(), seq) {
            // Another agent's session: its texts are not pi entries; the hit is shown.
            (Some(r), _) if r.agent.is_some() => self
                .picker
                .selected_view()
                .and_then(|v| v.hit.as_ref())
                .and_then(|h| {
                    Some(IndexedText {
                        seq: 0,
                        entry_id: None,
                        kind: arbor_index::Kind::ALL
                            .into_iter()
                            .find(|k| k.name() == h.role)?,
                        timestamp: None,
                        text: h.snippet.replace(['\u{e000}', '\u{e001}'], ""),
                    })
                })
                .into_iter()
                .collect(),
            (_, Some(s)) => self
                .cat
                .texts_near(&file, s - 4, s + 4, 12)
                .unwrap_or_default(),
            (_, None) => self.cat.last_texts(&file, 8).unwrap_or_default(),
        };
        self.preview = Some((key, texts.clone()));
        texts
    }

    /// Brings the catalog up to date for the picker's scope on another thread (its own
    /// connection), so that the screen never waits for it; `None` for a catalog in memory,
    /// which another connection cannot see.
    fn spawn_refresh(&self) -> Option<std::sync::mpsc::Receiver<Refreshed>> {
        if self.cat.report.in_memory_because.is_some() {
            return None;
        }
        let path = self.cat.path().to_path_buf();
        let dirs = scope_dirs(&self.ctx.loc, self.picker.scope, self.ctx.agent).ok()?;
        let (others, agent, scope) = (self.ctx.others.clone(), self.ctx.agent, self.picker.scope);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut cat = Catalog::open(&path).ok();
            // Other agents' sources: one `stat` each, a changed one read again (quietly:
            // the terminal is the browser's).
            let foreign = cat
                .as_mut()
                .and_then(|c| foreign_rows(c, others.as_ref(), agent, scope, false).ok());
            // A live `arbor index --watch` that vouches for these directories has the catalog
            // up to date already: no `stat` per file.
            let keys: Vec<String> = dirs.iter().map(|d| arbor_index::dir_key(d)).collect();
            if arbor_index::watch::vouches(&path, &keys) {
                let _ = tx.send(foreign);
                return;
            }
            if let Some(c) = &mut cat {
                let opts = arbor_index::RefreshOptions::default().with_texts(true);
                let _ = c.refresh_dirs(&dirs, opts, &mut |_| {});
            }
            let _ = tx.send(foreign);
        });
        Some(rx)
    }

    /// After the first frame: make the search haystacks and start the background refresh.
    pub fn after_first_frame(&mut self) {
        self.picker.prepare();
        if std::mem::take(&mut self.stale) && self.refreshing.is_none() {
            self.refreshing = self.spawn_refresh();
        }
    }

    /// Whether a background refresh finished: the list is then read again from the catalog.
    pub fn poll_refresh(&mut self) -> bool {
        let got = match self.refreshing.as_ref().map(|rx| rx.try_recv()) {
            None | Some(Err(std::sync::mpsc::TryRecvError::Empty)) => return false,
            Some(Ok(got)) => got,
            Some(Err(std::sync::mpsc::TryRecvError::Disconnected)) => None,
        };
        self.refreshing = None;
        if let Some(rows) = got {
            self.foreign = rows;
        }
        let _ = self.reload_stored();
        true
    }

    /// Waits for the background refresh (the benchmark reports how long it takes).
    pub fn wait_refresh(&mut self) {
        if let Some(rx) = self.refreshing.take() {
            if let Ok(Some(rows)) = rx.recv() {
                self.foreign = rows;
            }
            let _ = self.reload_stored();
        }
    }

    fn reload_stored(&mut self) -> Result<()> {
        let dirs = scope_dirs(&self.ctx.loc, self.picker.scope, self.ctx.agent)?;
        let listed = self.cat.listed_as_stored(&dirs)?;
        self.show_listing(&listed, &dirs);
        Ok(())
    }

    /// Puts a new listing in the picker, the search and the cursor kept.
    fn show_listing(&mut self, listed: &[arbor_index::Listed], dirs: &[PathBuf]) {
        self.picker
            .load_all(self.picker.scope, listed, &self.foreign, dirs);
        // Haystacks are made between keystrokes, not at the next one.
        self.picker.prepare();
        if !self.picker.query.trim().is_empty() {
            let keep = self.picker.selected;
            self.picker.search(Some(&self.cat));
            self.picker.select(keep);
        }
        self.preview = None;
    }

    /// Reloads the picker's sessions from the catalog, brought up to date now (after a write).
    pub fn reload(&mut self) -> Result<()> {
        let (listed, dirs) = load(
            &self.ctx.loc,
            &mut self.cat,
            self.picker.scope,
            self.ctx.agent,
        )?;
        self.foreign = foreign_rows(
            &mut self.cat,
            self.ctx.others.as_ref(),
            self.ctx.agent,
            self.picker.scope,
            false,
        )?;
        self.show_listing(&listed, &dirs);
        Ok(())
    }

    /// Handles a key.
    pub fn key(&mut self, k: KeyEvent) -> Effect {
        if k.kind == KeyEventKind::Release {
            return Effect::Redraw;
        }
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(k.code, KeyCode::Char('c')) {
            return Effect::Exit(Outcome::Quit);
        }
        if self.dialog.is_some() {
            return self.dialog_key(k);
        }
        self.status.clear();
        match self.mode {
            Mode::Picker => self.picker_key(k, ctrl),
            Mode::Tree(_) => self.tree_key(k, ctrl),
        }
    }

    fn page(&self) -> isize {
        (self.list_area.height.max(2) as isize) - 1
    }

    fn picker_key(&mut self, k: KeyEvent, ctrl: bool) -> Effect {
        match (k.code, ctrl) {
            (KeyCode::Esc, _) => {
                if self.picker.query.is_empty() {
                    return Effect::Exit(Outcome::Quit);
                }
                self.picker.query.clear();
                self.picker.search(Some(&self.cat));
            }
            (KeyCode::Char('q'), true) => return Effect::Exit(Outcome::Quit),
            (KeyCode::Up, _) | (KeyCode::Char('p' | 'k'), true) => self.picker.move_by(-1),
            (KeyCode::Down, _) | (KeyCode::Char('n' | 'j'), true) => self.picker.move_by(1),
            (KeyCode::PageUp, _) => self.picker.move_by(-self.page()),
            (KeyCode::PageDown, _) => self.picker.move_by(self.page()),
            (KeyCode::Home, _) => self.picker.select(0),
            (KeyCode::End, _) => self.picker.select(usize::MAX),
            (KeyCode::Tab | KeyCode::BackTab, _) => {
                let scope = match self.picker.scope {
                    Scope::Project => Scope::All,
                    Scope::All => Scope::Project,
                };
                let got = load(&self.ctx.loc, &mut self.cat, scope, self.ctx.agent).and_then(
                    |(listed, dirs)| {
                        let foreign = foreign_rows(
                            &mut self.cat,
                            self.ctx.others.as_ref(),
                            self.ctx.agent,
                            scope,
                            false,
                        )?;
                        Ok((listed, dirs, foreign))
                    },
                );
                match got {
                    Ok((listed, dirs, foreign)) => {
                        self.foreign = foreign;
                        self.picker.load_all(scope, &listed, &self.foreign, &dirs);
                        self.picker.search(Some(&self.cat));
                        self.preview = None;
                    }
                    Err(e) => {
                        self.status = format!("cannot list: {}", crate::report::error_text(&e))
                    }
                }
            }
            (KeyCode::Char('s'), true) => self.picker.cycle_sort(),
            (KeyCode::Enter, _) => return self.open_tree(),
            (KeyCode::Char('r'), true) => {
                if let Some(r) = self.picker.selected_row() {
                    if r.agent.is_some() {
                        self.dialog = Some(import_first(r));
                        return Effect::Redraw;
                    }
                    return Effect::Exit(Outcome::Resume {
                        path: r.file.clone(),
                        tool: r.tool,
                        handover: None,
                    });
                }
            }
            (KeyCode::Char('d'), true) | (KeyCode::Delete, _) => {
                if let Some(r) = self.picker.selected_row() {
                    if let Some(no) = refused(r, "delete") {
                        self.status = no;
                        return Effect::Redraw;
                    }
                    self.dialog = Some(Dialog::ConfirmDelete {
                        file: r.file.clone(),
                        title: r.title.clone(),
                    });
                }
            }
            (KeyCode::Char('e'), true) | (KeyCode::F(2), _) => {
                if let Some(r) = self.picker.selected_row() {
                    if let Some(no) = refused(r, "rename") {
                        self.status = no;
                        return Effect::Redraw;
                    }
                    // A session with no name starts empty: its first message is no name
                    // to edit, and typing after it made names that repeat the message.
                    self.dialog = Some(Dialog::Input {
                        prompt: "Name of the session:".into(),
                        value: if r.named {
                            r.title.clone()
                        } else {
                            String::new()
                        },
                        then: Pending::Rename(r.file.clone()),
                    });
                }
            }
            (KeyCode::Char('y'), true) => {
                if let Some(r) = self.picker.selected_row() {
                    let p = r.file.to_string_lossy().into_owned();
                    self.status = format!("copied {p}");
                    return Effect::Copy(p);
                }
            }
            (KeyCode::Char('t'), true) => {
                if let Some(id) = self
                    .picker
                    .selected_row()
                    .and_then(|r| r.session_id.clone())
                {
                    self.status = format!("copied {id}");
                    return Effect::Copy(id);
                }
            }
            (KeyCode::Char('u'), true) => {
                self.picker.query.clear();
                self.picker.search(Some(&self.cat));
            }
            (KeyCode::Backspace, _) if self.picker.query.pop().is_some() => {
                self.picker.search(Some(&self.cat));
            }
            (KeyCode::Char(c), false) => {
                self.picker.query.push(c);
                self.picker.search(Some(&self.cat));
            }
            _ => {}
        }
        Effect::Redraw
    }

    fn open_tree(&mut self) -> Effect {
        let Some(r) = self.picker.selected_row() else {
            return Effect::Redraw;
        };
        if let (Some(agent), Some(id)) = (r.agent, r.session_id.as_deref()) {
            let title = r.title.clone();
            match Navigator::open_foreign(agent, &r.file, id) {
                Ok(mut n) => {
                    if n.title.is_empty() {
                        n.title = title;
                    }
                    self.status = format!(
                        "{agent}'s session, read only (as arbor import makes it) · r: import, resume"
                    );
                    self.mode = Mode::Tree(Box::new(n));
                }
                Err(e) => self.status = crate::report::error_text(&e),
            }
            return Effect::Redraw;
        }
        let at = self
            .picker
            .selected_view()
            .and_then(|v| v.hit.as_ref())
            .and_then(|h| h.entry_id.clone());
        let title = r.title.clone();
        match Navigator::open(&r.file, at.as_deref()) {
            Ok(mut n) => {
                if n.title.is_empty() {
                    n.title = title;
                }
                self.mode = Mode::Tree(Box::new(n));
            }
            Err(e) => self.status = crate::report::error_text(&e),
        }
        Effect::Redraw
    }

    fn tree_key(&mut self, k: KeyEvent, ctrl: bool) -> Effect {
        let page = self.page();
        let Mode::Tree(nav) = &mut self.mode else {
            return Effect::Redraw;
        };
        if nav.searching {
            match k.code {
                KeyCode::Esc => {
                    nav.searching = false;
                    nav.search.clear();
                    nav.apply_search();
                }
                KeyCode::Enter => nav.searching = false,
                KeyCode::Backspace => {
                    nav.search.pop();
                    nav.apply_search();
                }
                KeyCode::Up => nav.move_by(-1),
                KeyCode::Down => nav.move_by(1),
                KeyCode::Char(c) if !ctrl => {
                    nav.search.push(c);
                    nav.apply_search();
                }
                _ => {}
            }
            return Effect::Redraw;
        }
        match k.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                if !nav.search.is_empty() {
                    nav.search.clear();
                    nav.apply_search();
                } else {
                    self.mode = Mode::Picker;
                }
            }
            KeyCode::Up | KeyCode::Char('k') => nav.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => nav.move_by(1),
            KeyCode::PageUp => nav.move_by(-page),
            KeyCode::PageDown => nav.move_by(page),
            KeyCode::Home | KeyCode::Char('g') => nav.selected = 0,
            KeyCode::End | KeyCode::Char('G') => nav.move_by(isize::MAX / 2),
            KeyCode::Left | KeyCode::Char('h') => nav.fold_or_up(),
            KeyCode::Right => nav.unfold_or_down(),
            KeyCode::Char(' ') => nav.toggle_fold(),
            KeyCode::Char('/') => nav.searching = true,
            KeyCode::Char('f') => nav.set_filter(nav.filter.next()),
            KeyCode::Char(c @ '1'..='5') => nav.set_filter(match c {
                '1' => Filter::Default,
                '2' => Filter::NoTools,
                '3' => Filter::UserOnly,
                '4' => Filter::Labeled,
                _ => Filter::All,
            }),
            KeyCode::Char('L' | 'F') if nav.foreign.is_some() => {
                let what = if k.code == KeyCode::Char('L') {
                    "label"
                } else {
                    "fork"
                };
                let agent = nav.foreign.as_ref().map(|f| f.0);
                if let Some(a) = agent {
                    self.status =
                        format!("no {what}: {a}'s session is read only (r: import it, resume)");
                }
            }
            // Resume, or continue from an entry: the import first (then the pi copy is
            // resumed; an earlier entry is continued from there).
            KeyCode::Char('r' | 'c') | KeyCode::Enter if nav.foreign.is_some() => {
                if let Some((agent, id)) = nav.foreign.clone() {
                    self.dialog = Some(import_first_of(agent, &nav.path, &id));
                }
            }
            KeyCode::Char('L') => {
                if let Some(i) = nav.selected_entry() {
                    if let Some(id) = nav.doc.entries()[i].id.clone() {
                        let current = nav.doc.index().labels.get(&id).unwrap_or("").to_string();
                        self.dialog = Some(Dialog::Input {
                            prompt: format!("Label of {id} (empty removes it):"),
                            value: current,
                            then: Pending::Label(id.to_string()),
                        });
                    }
                }
            }
            KeyCode::Char('r') => {
                return Effect::Exit(Outcome::Resume {
                    path: nav.path.clone(),
                    tool: nav.doc.dialect(),
                    handover: None,
                })
            }
            KeyCode::Enter | KeyCode::Char('c') => {
                let Some(i) = nav.selected_entry() else {
                    return Effect::Redraw;
                };
                if Some(i) == nav.doc.index().leaf {
                    return Effect::Exit(Outcome::Resume {
                        path: nav.path.clone(),
                        tool: nav.doc.dialect(),
                        handover: None,
                    });
                }
                if let Some(id) = nav.doc.entries()[i].id.clone() {
                    self.dialog = Some(Dialog::Confirm {
                        question: format!(
                            "Continue from {id} in a new session (the path up to it, labels kept) and resume it?"
                        ),
                        then: Pending::ContinueFrom(id.to_string()),
                    });
                }
            }
            KeyCode::Char('F') => return self.fork_at_message(),
            _ => {}
        }
        Effect::Redraw
    }

    /// `/fork`: a new session ending at the selected user message's parent, resumed, with the
    /// message's text handed over.
    fn fork_at_message(&mut self) -> Effect {
        let Mode::Tree(nav) = &self.mode else {
            return Effect::Redraw;
        };
        let Some(i) = nav.selected_entry() else {
            return Effect::Redraw;
        };
        let Some(text) = nav.user_text(i) else {
            self.status = "fork works on a user message: select one".into();
            return Effect::Redraw;
        };
        let parent = nav.doc.entries()[i]
            .parent_id
            .as_deref()
            .map(str::to_string);
        let path = nav.path.clone();
        let tool = nav.doc.dialect();
        let made = match parent {
            Some(p) => arbor_store::SessionManager::fork(
                &path,
                Some(&p),
                None,
                arbor_store::ManagerOptions::default(),
            ),
            // A root message: an empty session in the same project (pi's /fork of a root).
            None => new_empty_like(&nav.doc, &path),
        };
        match made.and_then(|sm| {
            let p = sm.session_file().map(Path::to_path_buf).unwrap_or_default();
            sm.close().map(|()| p)
        }) {
            Ok(new_path) => Effect::Exit(Outcome::Resume {
                path: new_path,
                tool,
                handover: Some(text),
            }),
            Err(e) => {
                self.status = format!("fork failed: {e}");
                Effect::Redraw
            }
        }
    }

    fn dialog_key(&mut self, k: KeyEvent) -> Effect {
        let Some(d) = self.dialog.take() else {
            return Effect::Redraw;
        };
        match d {
            Dialog::ConfirmDelete { file, title } => match k.code {
                KeyCode::Char('y' | 'Y') => match trash_session(&file) {
                    Ok(()) => {
                        self.status = format!("moved to the trash: {title} (arbor trash restore)");
                        if let Err(e) = self.reload() {
                            self.status = crate::report::error_text(&e);
                        }
                    }
                    Err(e) => {
                        self.status = format!("not deleted: {}", crate::report::error_text(&e))
                    }
                },
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {}
                _ => self.dialog = Some(Dialog::ConfirmDelete { file, title }),
            },
            Dialog::Confirm { question, then } => match k.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                    return self.run_pending(then, String::new())
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {}
                _ => self.dialog = Some(Dialog::Confirm { question, then }),
            },
            Dialog::Input {
                prompt,
                mut value,
                then,
            } => match k.code {
                KeyCode::Esc => {}
                KeyCode::Enter => return self.run_pending(then, value),
                KeyCode::Backspace => {
                    value.pop();
                    self.dialog = Some(Dialog::Input {
                        prompt,
                        value,
                        then,
                    });
                }
                KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    value.clear();
                    self.dialog = Some(Dialog::Input {
                        prompt,
                        value,
                        then,
                    });
                }
                KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                    value.push(c);
                    self.dialog = Some(Dialog::Input {
                        prompt,
                        value,
                        then,
                    });
                }
                _ => {
                    self.dialog = Some(Dialog::Input {
                        prompt,
                        value,
                        then,
                    })
                }
            },
        }
        Effect::Redraw
    }

    fn run_pending(&mut self, p: Pending, value: String) -> Effect {
        let result: Result<Option<Effect>> = (|| match p {
            Pending::Rename(file) => {
                let name = value.trim();
                if name.is_empty() {
                    anyhow::bail!("a name cannot be empty");
                }
                let mut sm = arbor_store::SessionManager::open(&file, Default::default())?;
                sm.set_session_name(name)?;
                sm.close()?;
                self.reload()?;
                self.status = format!("named \"{name}\"");
                Ok(None)
            }
            Pending::Label(target) => {
                let Mode::Tree(nav) = &mut self.mode else {
                    return Ok(None);
                };
                let mut sm = arbor_store::SessionManager::open(&nav.path, Default::default())?;
                let label = value.trim();
                sm.append_label_change(&target, (!label.is_empty()).then_some(label))?;
                sm.close()?;
                nav.refresh()?;
                self.status = if label.is_empty() {
                    format!("label of {target} removed")
                } else {
                    format!("labelled {target} [{label}]")
                };
                Ok(None)
            }
            Pending::ImportResume { agent, source, id } => {
                let (path, what) = import_for_resume(&self.ctx.loc, agent, &source, &id)?;
                Ok(Some(Effect::Exit(Outcome::ResumeImported {
                    note: format!(
                        "arbor: {agent} session {id} {what}: {} (the source was only read)",
                        path.display()
                    ),
                    path,
                })))
            }
            Pending::ContinueFrom(id) => {
                let Mode::Tree(nav) = &self.mode else {
                    return Ok(None);
                };
                let sm = arbor_store::SessionManager::fork(
                    &nav.path,
                    Some(&id),
                    None,
                    arbor_store::ManagerOptions::default(),
                )?;
                let path = sm.session_file().map(Path::to_path_buf).unwrap_or_default();
                sm.close()?;
                Ok(Some(Effect::Exit(Outcome::Resume {
                    path,
                    tool: nav.doc.dialect(),
                    handover: None,
                })))
            }
        })();
        match result {
            Ok(Some(e)) => e,
            Ok(None) => Effect::Redraw,
            Err(e) => {
                let busy = e.chain().any(|c| {
                    c.downcast_ref::<arbor_store::lock::LockError>().is_some()
                        || matches!(
                            c.downcast_ref::<arbor_store::StoreError>(),
                            Some(arbor_store::StoreError::Lock(_))
                        )
                });
                self.status = if busy {
                    "busy: another arbor writer holds this session; nothing was written".into()
                } else {
                    format!("not written: {}", crate::report::error_text(&e))
                };
                Effect::Redraw
            }
        }
    }

    /// Handles the mouse: the wheel scrolls, a click selects, a second click opens.
    pub fn mouse(&mut self, m: MouseEvent) -> Effect {
        if self.dialog.is_some() {
            return Effect::Redraw;
        }
        let step = match m.kind {
            MouseEventKind::ScrollUp => -3,
            MouseEventKind::ScrollDown => 3,
            MouseEventKind::Down(MouseButton::Left) => 0,
            _ => return Effect::Redraw,
        };
        if step != 0 {
            match &mut self.mode {
                Mode::Picker => self.picker.move_by(step),
                Mode::Tree(n) => n.move_by(step),
            }
            return Effect::Redraw;
        }
        let a = self.list_area;
        if m.column < a.x || m.column >= a.x + a.width || m.row < a.y || m.row >= a.y + a.height {
            return Effect::Redraw;
        }
        let Some(&pos) = self.row_at.get((m.row - a.y) as usize) else {
            return Effect::Redraw;
        };
        let double = self
            .last_click
            .is_some_and(|(t, p)| p == pos && t.elapsed() < Duration::from_millis(400));
        self.last_click = Some((Instant::now(), pos));
        match &mut self.mode {
            Mode::Picker => {
                self.picker.select(pos);
                if double {
                    return self.open_tree();
                }
            }
            Mode::Tree(n) => {
                n.selected = pos;
                if double {
                    n.toggle_fold();
                }
            }
        }
        Effect::Redraw
    }

    /// Picks up what changed on disk: the picker re-reads the catalog (one `stat` per file,
    /// appended bytes only); the tree reads appended lines.
    pub fn tick(&mut self) {
        match &mut self.mode {
            Mode::Picker => {
                if self.refreshing.is_none() {
                    self.refreshing = self.spawn_refresh();
                }
            }
            Mode::Tree(n) => {
                if let Ok(true) = n.refresh() {
                    self.status = "the session grew; new entries shown".into();
                }
            }
        }
    }
}

/// The catalog listing of a scope, brought up to date (texts included, for the search).
fn load(
    loc: &Locator,
    cat: &mut Catalog,
    scope: Scope,
    agent: Option<crate::cli::Tool>,
) -> Result<(Vec<arbor_index::Listed>, Vec<PathBuf>)> {
    let dirs = scope_dirs(loc, scope, agent)?;
    let (listed, _) = crate::cmd::index::refreshed_listing(cat, &dirs, true)?;
    Ok((listed, dirs))
}

/// The project directories of a scope (none when `--agent` names another agent).
fn scope_dirs(
    loc: &Locator,
    scope: Scope,
    agent: Option<crate::cli::Tool>,
) -> Result<Vec<PathBuf>> {
    if !crate::cmd::agents::wants_pi(agent) {
        return Ok(Vec::new());
    }
    let dirs = loc.project_dirs(match scope {
        Scope::Project => LocScope::Current,
        Scope::All => LocScope::All,
    })?;
    // `--agent pi` / `--agent omp`: that tool's directories, as `arbor ls`.
    Ok(match agent {
        Some(crate::cli::Tool::Omp) => dirs
            .into_iter()
            .filter(|d| arbor_store::locate::is_omp_dir(d))
            .collect(),
        Some(crate::cli::Tool::Pi) => dirs
            .into_iter()
            .filter(|d| !arbor_store::locate::is_omp_dir(d))
            .collect(),
        _ => dirs,
    })
}

/// Other agents' sessions of a scope: the catalog's rows, as `arbor ls` has them
/// ([`crate::cmd::agents::in_scope_with`]); `say`: sources skipped are said on stderr (only
/// before the terminal is taken).
fn foreign_rows(
    cat: &mut Catalog,
    others: Option<&arbor_index::ForeignRoots>,
    agent: Option<crate::cli::Tool>,
    scope: Scope,
    say: bool,
) -> Result<Vec<arbor_index::ForeignRow>> {
    let Some(roots) = others else {
        return Ok(Vec::new());
    };
    Ok(crate::cmd::agents::in_scope_with(cat, roots, loc_scope(scope), agent, say)?.rows)
}

/// The locator's scope of the picker's.
fn loc_scope(scope: Scope) -> LocScope<'static> {
    match scope {
        Scope::Project => LocScope::Current,
        Scope::All => LocScope::All,
    }
}

/// What the browser says when asked to change another agent's session (`what`: delete,
/// rename, fork, label): it never writes there. `None` for pi's and omp's sessions.
fn refused(r: &picker::SessionRow, what: &str) -> Option<String> {
    let agent = r.agent?;
    Some(format!(
        "no {what}: {agent}'s session is read only (arbor import makes a pi copy)"
    ))
}

/// The question before resuming another agent's session: it is imported first.
fn import_first(r: &picker::SessionRow) -> Dialog {
    import_first_of(
        r.agent.unwrap_or(arbor_agents::Agent::Claude),
        &r.file,
        r.session_id.as_deref().unwrap_or_default(),
    )
}

/// [`import_first`] for `agent`'s session `id` of `source`.
fn import_first_of(agent: arbor_agents::Agent, source: &Path, id: &str) -> Dialog {
    Dialog::Confirm {
        question: format!(
            "This is {agent}'s session: pi cannot resume it as it is. Import it into pi's sessions (arbor import {agent} {}; the source is only read) and resume the copy in pi?",
            arbor_view::one_line(id, 40),
        ),
        then: Pending::ImportResume {
            agent,
            source: source.to_path_buf(),
            id: id.to_string(),
        },
    }
}

/// Imports another agent's session with `arbor import`'s function (into pi's layout for
/// its cwd; a session imported before gets only what is new) and returns the pi file to
/// resume: the session's own, a subagent's among its parent's.
fn import_for_resume(
    loc: &Locator,
    agent: arbor_agents::Agent,
    source: &Path,
    id: &str,
) -> Result<(PathBuf, &'static str)> {
    // Claude Code and Codex: the source file (a Claude subagent's is its parent's session
    // file, imported with its subagents); opencode: the session in its data directory.
    let src = arbor_agents::open::source_of(agent, source, id);
    let session = src.read()?;
    let opts = crate::cmd::import::options(Dialect::Pi, loc)?;
    let done = arbor_agents::import::import(&session, &opts)?;
    fn find(i: &arbor_agents::import::Imported, id: &str) -> Option<PathBuf> {
        if i.source_id == id {
            return Some(i.file.clone());
        }
        i.children.iter().find_map(|c| find(c, id))
    }
    let what = match done.outcome {
        arbor_agents::import::Outcome::Created => "imported",
        arbor_agents::import::Outcome::Appended(_) => "imported before, new entries appended",
        arbor_agents::import::Outcome::UpToDate => "imported before, up to date",
    };
    Ok((find(&done, id).unwrap_or(done.file), what))
}

/// Moves a session and what belongs to it to the trash, when no arbor writer holds it.
fn trash_session(file: &Path) -> Result<()> {
    drop(arbor_store::lock::WriterLock::acquire(file, None)?);
    let (items, _) = crate::cmd::trash::with_belongings(file);
    crate::cmd::trash::to_trash(&items).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
}

/// A new empty session in the same directory and project as `doc` (its header written now).
fn new_empty_like(
    doc: &arbor_core::SessionDoc,
    path: &Path,
) -> std::result::Result<arbor_store::SessionManager, arbor_store::StoreError> {
    let cwd = doc.header_str("cwd").unwrap_or_default();
    arbor_store::SessionManager::create(
        &cwd,
        path.parent(),
        arbor_store::ManagerOptions::default().with_dialect(Some(doc.dialect())),
    )
}

/// `arbor browse` (and `arbor` alone on a terminal).
pub fn browse(
    all: bool,
    query: Option<&str>,
    agent: Option<crate::cli::Tool>,
    term: &Term,
    loc: Locator,
    catalog: Option<&Path>,
) -> Result<ExitCode> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "the browser needs a terminal (for a list: arbor ls; for a search: arbor search)"
        );
    }
    let ctx = Ctx {
        loc,
        catalog: catalog.map(Path::to_path_buf),
        now_ms: arbor_store::ids::now_ms() as f64,
        agent,
        others: Some(arbor_index::ForeignRoots::from_env()),
    };
    let scope = if all { Scope::All } else { Scope::Project };
    let mut app = App::new(ctx, scope, query, term.color)?;
    // A project with no sessions starts on all projects.
    if !all && app.picker.rows.is_empty() && query.is_none() {
        app.key(KeyEvent::from(KeyCode::Tab));
    }
    let outcome = run_terminal(&mut app)?;
    match outcome {
        Outcome::Quit => Ok(ExitCode::SUCCESS),
        Outcome::Resume {
            path,
            tool,
            handover,
        } => {
            if let Some(text) = &handover {
                handoff::copy_to_clipboard(text);
                say!("The forked message (also on the clipboard where the terminal allows):\n\n{text}\n");
            }
            let code = handoff::resume(tool, &path)?;
            Ok(ExitCode::from(
                u8::try_from(code.clamp(0, 255)).unwrap_or(1),
            ))
        }
        Outcome::ResumeImported { path, note } => {
            say!("{note}");
            let code = handoff::resume(Dialect::Pi, &path)?;
            Ok(ExitCode::from(
                u8::try_from(code.clamp(0, 255)).unwrap_or(1),
            ))
        }
    }
}

/// Runs the event loop on the real terminal (alternate screen, raw mode, mouse), restoring the
/// terminal whatever happens.
fn run_terminal(app: &mut App) -> Result<Outcome> {
    use crossterm::{execute, terminal};
    terminal::enable_raw_mode()?;
    let mut out = std::io::stdout(); // the terminal, not a pipe
    let setup = execute!(
        out,
        terminal::EnterAlternateScreen,
        event::EnableMouseCapture
    );
    let restore = || {
        let _ = execute!(
            std::io::stdout(), // the terminal, not a pipe
            event::DisableMouseCapture,
            terminal::LeaveAlternateScreen
        );
        let _ = terminal::disable_raw_mode();
    };
    if let Err(e) = setup {
        restore();
        return Err(e.into());
    }
    let result = (|| -> Result<Outcome> {
        let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout()); // the terminal, not a pipe
        let mut terminal = ratatui::Terminal::new(backend)?;
        let mut last_tick = Instant::now();
        let mut first = true;
        loop {
            terminal.draw(|f| ui::draw(f, app))?;
            if std::mem::take(&mut first) {
                app.after_first_frame();
            }
            if event::poll(Duration::from_millis(250))? {
                let effect = match event::read()? {
                    Event::Key(k) => app.key(k),
                    Event::Mouse(m) => app.mouse(m),
                    _ => Effect::Redraw,
                };
                match effect {
                    Effect::Exit(o) => return Ok(o),
                    Effect::Copy(text) => handoff::copy_to_clipboard(&text),
                    Effect::Redraw => {}
                }
            }
            app.poll_refresh();
            if last_tick.elapsed() >= Duration::from_secs(2) {
                app.tick();
                last_tick = Instant::now();
            }
        }
    })();
    restore();
    result
}

/// `arbor browse --measure QUERY [--measure-tree SESSION]` (hidden; `bench/browse.sh` runs it):
/// the browser without a terminal, drawn on ratatui's test backend at 200×50, timed: the
/// first frame from process start, each keystroke of QUERY (the fuzzy filter alone, then with
/// the full-text search, then the frame), opening a session's tree, a page of scrolling and a
/// fold in it, and the peak memory. Prints one JSON object.
pub fn measure(
    query: &str,
    tree: Option<&Path>,
    loc: Locator,
    catalog: Option<&Path>,
    started: Instant,
) -> Result<ExitCode> {
    use ratatui::backend::TestBackend;
    let mut term = ratatui::Terminal::new(TestBackend::new(200, 50))?;
    let ctx = Ctx {
        loc,
        catalog: catalog.map(Path::to_path_buf),
        now_ms: arbor_store::ids::now_ms() as f64,
        agent: None,
        others: Some(arbor_index::ForeignRoots::from_env()),
    };
    let mut app = App::new(ctx, Scope::All, None, true)?;
    term.draw(|f| ui::draw(f, &mut app))?;
    let first_frame = started.elapsed().as_secs_f64() * 1e3;
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    // What runs behind the first frame: the haystacks, then the refresh until the list is
    // current.
    let t = Instant::now();
    app.after_first_frame();
    let prepared = ms(t);
    let t = Instant::now();
    app.wait_refresh();
    let refreshed = ms(t);
    let mut keys = Vec::new();
    for (i, _) in query.char_indices().skip(1).chain([(query.len(), ' ')]) {
        app.picker.query = query[..i].to_string();
        let t = Instant::now();
        app.picker.search(None);
        let fuzzy = ms(t);
        let t = Instant::now();
        app.picker.search(Some(&app.cat));
        let full = ms(t);
        let t = Instant::now();
        term.draw(|f| ui::draw(f, &mut app))?;
        keys.push((
            query[..i].to_string(),
            fuzzy,
            full,
            ms(t),
            app.picker.view.len(),
        ));
    }
    let p95 = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 * 0.95).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
    };
    let mut out = Vec::new();
    let mut o = arbor_core::json::JsonObject::new(&mut out);
    o.uint("sessions", app.picker.rows.len() as u64)
        .raw("firstFrameMs", format!("{first_frame:.2}").as_bytes())
        .raw("prepareMs", format!("{prepared:.2}").as_bytes())
        .raw("backgroundRefreshMs", format!("{refreshed:.2}").as_bytes())
        .raw(
            "p95FuzzyMs",
            format!("{:.3}", p95(keys.iter().map(|k| k.1).collect())).as_bytes(),
        )
        .raw(
            "p95FullTextMs",
            format!("{:.3}", p95(keys.iter().map(|k| k.2).collect())).as_bytes(),
        )
        .raw(
            "p95FrameMs",
            format!("{:.3}", p95(keys.iter().map(|k| k.3).collect())).as_bytes(),
        )
        .uint("matches", keys.last().map_or(0, |k| k.4) as u64);
    if let Some(path) = tree {
        let t = Instant::now();
        let nav = Navigator::open(path, None)?;
        app.mode = Mode::Tree(Box::new(nav));
        term.draw(|f| ui::draw(f, &mut app))?;
        let open = ms(t);
        // Scrolling: 200 pages down, a frame each.
        let mut pages = Vec::new();
        for _ in 0..200 {
            let t = Instant::now();
            app.key(KeyEvent::from(KeyCode::PageDown));
            term.draw(|f| ui::draw(f, &mut app))?;
            pages.push(ms(t));
        }
        // Folding: the first branch point, folded and unfolded, a frame each.
        let mut folds = Vec::new();
        if let Mode::Tree(n) = &mut app.mode {
            let first = n.iter_lines().position(|l| l.foldable);
            if let Some(pos) = first {
                n.selected = pos;
            }
        }
        for _ in 0..20 {
            let t = Instant::now();
            app.key(KeyEvent::from(KeyCode::Char(' ')));
            term.draw(|f| ui::draw(f, &mut app))?;
            folds.push(ms(t));
        }
        let entries = match &app.mode {
            Mode::Tree(n) => n.doc.entries().len(),
            Mode::Picker => 0,
        };
        o.uint("treeEntries", entries as u64)
            .raw("treeOpenMs", format!("{open:.2}").as_bytes())
            .raw("p95PageMs", format!("{:.3}", p95(pages)).as_bytes())
            .raw("p95FoldMs", format!("{:.3}", p95(folds)).as_bytes());
    }
    // Peak RSS counts the mapped session and catalog pages (the page cache's, given back under
    // pressure); RssAnon is the memory the process itself holds.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
            .unwrap_or(0)
    };
    let hwm = field("VmHWM:");
    o.uint("anonRssKb", field("RssAnon:"));
    o.uint("peakRssKb", hwm);
    o.finish();
    out.push(b'\n');
    std::io::Write::write_all(&mut crate::report::stdout(), &out)?;
    Ok(ExitCode::SUCCESS)
}
