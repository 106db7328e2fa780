//! The browser driven without a terminal: key sequences through `App::key`, screens drawn on
//! ratatui's test backend and compared with snapshots (insta) at 80×24 and 200×50.
use super::*;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const DAY: f64 = 86_400_000.0;
/// "Now" for ages: 2026-03-01.
const NOW: f64 = 1_772_323_200_000.0;

struct Fixture {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    catalog: PathBuf,
}

fn line(v: &str) -> String {
    format!("{v}\n")
}

fn msg(id: &str, parent: Option<&str>, day: u32, role: &str, text: &str) -> String {
    let p = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let ts = format!("2026-02-{day:02}T10:00:00.000Z");
    let ms = 1_769_940_000_000.0 + f64::from(day) * DAY;
    let content = if role == "assistant" {
        format!(r#"[{{"type":"text","text":"{text}"}}],"model":"claude-x","stopReason":"stop""#)
    } else {
        format!(r#""{text}""#)
    };
    line(&format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}","message":{{"role":"{role}","content":{content},"timestamp":{ms}}}}}"#
    ))
}

fn header(id: &str, cwd: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or(String::new(), |p| format!(r#","parentSession":"{p}""#));
    line(&format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-02-01T09:00:00.000Z","cwd":"{cwd}"{parent}}}"#
    ))
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    let d = agent.join("sessions/--work-walrus--");
    std::fs::create_dir_all(&d).expect("mkdir");
    let a = d.join("2026-02-01T09-00-00-000Z_0199a000-0000-7000-8000-00000000000a.jsonl");
    let mut s = header("0199a000-0000-7000-8000-00000000000a", "/work/walrus", None);
    s += &msg("u1", None, 2, "user", "migrate the walrus database");
    s += &msg(
        "a1",
        Some("u1"),
        2,
        "assistant",
        "I will look at the schema first",
    );
    s += &msg("u2", Some("a1"), 3, "user", "use postgres please");
    s += &msg(
        "a2",
        Some("u2"),
        3,
        "assistant",
        "switched the driver to postgres",
    );
    s += &msg("b2", Some("a1"), 4, "user", "actually keep sqlite");
    s += &msg(
        "b3",
        Some("b2"),
        4,
        "assistant",
        "kept sqlite and added an index",
    );
    std::fs::write(&a, s).expect("write");
    let b = d.join("2026-02-05T09-00-00-000Z_0199a000-0000-7000-8000-00000000000b.jsonl");
    let mut s = header(
        "0199a000-0000-7000-8000-00000000000b",
        "/work/walrus",
        Some(&a.to_string_lossy()),
    );
    s += &msg("c1", None, 6, "user", "fix the flaky timer test");
    s += &msg(
        "c2",
        Some("c1"),
        6,
        "assistant",
        "mocked the monotonic clock",
    );
    std::fs::write(&b, s).expect("write");
    let d2 = agent.join("sessions/--work-other--");
    std::fs::create_dir_all(&d2).expect("mkdir");
    let c = d2.join("2026-02-07T09-00-00-000Z_0199a000-0000-7000-8000-00000000000c.jsonl");
    let mut s = header("0199a000-0000-7000-8000-00000000000c", "/work/other", None);
    s += &msg("d1", None, 8, "user", "write release notes 日本語");
    std::fs::write(&c, s).expect("write");
    Fixture {
        catalog: tmp.path().join("catalog.db"),
        agent,
        _tmp: tmp,
    }
}

fn app(f: &Fixture) -> App {
    let ctx = Ctx {
        loc: Locator::new(Some(f.agent.clone())),
        catalog: Some(f.catalog.clone()),
        now_ms: NOW,
        agent: None,
        others: None,
    };
    App::new(ctx, Scope::All, None, false).expect("app")
}

fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| ui::draw(f, app)).expect("draw");
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        let mut l = String::new();
        let mut skip = 0;
        for x in 0..w {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            skip = crate::term::width(sym).saturating_sub(1);
            l.push_str(sym);
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out
}

fn keys(app: &mut App, s: &str) -> Effect {
    let mut last = Effect::Redraw;
    for c in s.chars() {
        last = app.key(KeyEvent::from(KeyCode::Char(c)));
    }
    last
}

fn press(app: &mut App, code: KeyCode) -> Effect {
    app.key(KeyEvent::from(code))
}

fn ctrl(app: &mut App, c: char) -> Effect {
    app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

#[test]
fn picker_screens_at_80x24_and_200x50() {
    let f = fixture();
    let mut a = app(&f);
    insta::assert_snapshot!("picker_80x24", screen(&mut a, 80, 24));
    insta::assert_snapshot!("picker_200x50", screen(&mut a, 200, 50));
}

#[test]
fn typing_searches_titles_and_every_text_with_the_hit_shown() {
    let f = fixture();
    let mut a = app(&f);
    keys(&mut a, "postgres");
    let s = screen(&mut a, 80, 24);
    insta::assert_snapshot!("search_postgres_80x24", s);
    assert_eq!(a.picker.view.len(), 1);
    let hit = a.picker.view[0].hit.as_ref().expect("hit");
    assert!(!hit.on_branch, "the postgres turn is on the other branch");
    // A phrase; a regex; no match.
    ctrl(&mut a, 'u');
    keys(&mut a, "\"monotonic clock\"");
    assert_eq!(a.picker.view.len(), 1);
    ctrl(&mut a, 'u');
    keys(&mut a, "re:sq.ite");
    assert_eq!(a.picker.view.len(), 1);
    ctrl(&mut a, 'u');
    keys(&mut a, "zzzqqq");
    assert!(a.picker.view.is_empty());
    assert!(screen(&mut a, 80, 24).contains("nothing matches"));
    // Esc clears, a second Esc quits.
    assert_eq!(press(&mut a, KeyCode::Esc), Effect::Redraw);
    assert_eq!(a.picker.view.len(), 3);
    assert_eq!(press(&mut a, KeyCode::Esc), Effect::Exit(Outcome::Quit));
}

#[test]
fn sorts_and_threaded_forks() {
    let f = fixture();
    let mut a = app(&f);
    let order = |a: &App| -> Vec<String> {
        a.picker
            .view
            .iter()
            .map(|v| format!("{}{}", "  ".repeat(v.depth), a.picker.rows[v.row].title))
            .collect()
    };
    assert_eq!(order(&a)[0], "write release notes 日本語");
    ctrl(&mut a, 's'); // created
    ctrl(&mut a, 's'); // threaded
    assert_eq!(a.picker.sort.name(), "threaded");
    let t = order(&a);
    let parent = t
        .iter()
        .position(|x| x == "migrate the walrus database")
        .expect("parent");
    assert_eq!(t[parent + 1], "  fix the flaky timer test", "{t:?}");
}

#[test]
fn enter_opens_the_tree_on_the_hit_and_filters_fold_and_label() {
    let f = fixture();
    let mut a = app(&f);
    keys(&mut a, "postgres");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &a.mode else {
        panic!("no tree")
    };
    let sel = nav.selected_entry().expect("selected");
    assert_eq!(
        nav.doc.entries()[sel].id.as_deref(),
        Some("u2"),
        "lands on the hit"
    );
    insta::assert_snapshot!("tree_80x24", screen(&mut a, 80, 24));
    insta::assert_snapshot!("tree_200x50", screen(&mut a, 200, 50));
    // Filters: user only keeps three lines.
    keys(&mut a, "3");
    let Mode::Tree(nav) = &a.mode else { panic!() };
    assert_eq!(nav.line_count(), 3);
    keys(&mut a, "1");
    // Fold the branch point (a1) and unfold it.
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let a1 = nav.doc.index().get("a1").expect("a1");
    nav.reveal(a1);
    let before = nav.line_count();
    press(&mut a, KeyCode::Char(' '));
    let Mode::Tree(nav) = &a.mode else { panic!() };
    assert_eq!(nav.line_count(), before - 4);
    press(&mut a, KeyCode::Char(' '));
    let Mode::Tree(nav) = &a.mode else { panic!() };
    assert_eq!(nav.line_count(), before);
    // Search within the session.
    keys(&mut a, "/sqlite");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &a.mode else { panic!() };
    assert_eq!(nav.line_count(), 2, "two entries mention sqlite");
    press(&mut a, KeyCode::Esc);
    // Label the selected entry: written as pi's label entry, shown at once.
    keys(&mut a, "L");
    keys(&mut a, "keep");
    press(&mut a, KeyCode::Enter);
    assert!(a.status.contains("labelled"), "{}", a.status);
    let Mode::Tree(nav) = &a.mode else { panic!() };
    assert_eq!(nav.doc.index().labels.iter().count(), 1);
    let text = std::fs::read_to_string(&nav.path).expect("read");
    assert!(text
        .lines()
        .last()
        .expect("line")
        .contains(r#""type":"label""#));
    // Back to the picker.
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert!(matches!(a.mode, Mode::Picker));
}

#[test]
fn continue_from_here_and_fork_at_a_message_make_sessions_and_resume_them() {
    let f = fixture();
    let mut a = app(&f);
    keys(&mut a, "walrus database");
    press(&mut a, KeyCode::Enter);
    // Continue from a1 (not the leaf): asks, then a new session ending at a1.
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let src = nav.path.clone();
    let a1 = nav.doc.index().get("a1").expect("a1");
    nav.reveal(a1);
    press(&mut a, KeyCode::Enter);
    assert!(matches!(a.dialog, Some(Dialog::Confirm { .. })));
    let Effect::Exit(Outcome::Resume {
        path,
        tool,
        handover,
    }) = keys(&mut a, "y")
    else {
        panic!("no resume")
    };
    assert_eq!(tool, Dialect::Pi);
    assert_eq!(handover, None);
    let text = std::fs::read_to_string(&path).expect("new session");
    assert!(
        text.contains(&*src.to_string_lossy()),
        "parentSession names the source"
    );
    let ids: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| {
            l.split("\"id\":\"")
                .nth(1)
                .unwrap_or("")
                .split('"')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["u1", "a1"]);
    // Fork at u2: ends at its parent a1, hands u2's text over.
    let mut a = app(&f);
    keys(&mut a, "walrus database");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let u2 = nav.doc.index().get("u2").expect("u2");
    nav.reveal(u2);
    let Effect::Exit(Outcome::Resume { path, handover, .. }) = keys(&mut a, "F") else {
        panic!("no fork")
    };
    assert_eq!(handover.as_deref(), Some("use postgres please"));
    let text = std::fs::read_to_string(&path).expect("fork");
    assert!(!text.contains("use postgres please"));
    assert!(text.contains("I will look at the schema first"));
    // Resume at the leaf: Enter on the leaf resumes the session itself.
    let mut a = app(&f);
    keys(&mut a, "walrus database");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let p = nav.path.clone();
    let leaf = nav.doc.index().leaf.expect("leaf");
    nav.reveal(leaf);
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        Effect::Exit(Outcome::Resume {
            path: p,
            tool: Dialect::Pi,
            handover: None
        })
    );
}

#[test]
fn rename_delete_restore_and_scope() {
    let f = fixture();
    let mut a = app(&f);
    // Tab: this project (the test's cwd has none), Tab again: all.
    press(&mut a, KeyCode::Tab);
    assert_eq!(a.picker.scope, Scope::Project);
    press(&mut a, KeyCode::Tab);
    assert_eq!(a.picker.scope, Scope::All);
    assert_eq!(a.picker.rows.len(), 3);
    // Rename the first row.
    ctrl(&mut a, 'e');
    for _ in 0..40 {
        press(&mut a, KeyCode::Backspace);
    }
    keys(&mut a, "Release notes");
    press(&mut a, KeyCode::Enter);
    assert!(a.status.contains("named"), "{}", a.status);
    assert!(a.picker.rows.iter().any(|r| r.title == "Release notes"));
    // Copy the path.
    let Effect::Copy(p) = ctrl(&mut a, 'y') else {
        panic!("no copy")
    };
    assert!(p.ends_with(".jsonl"));
    // Delete asks; n keeps it.
    let file = PathBuf::from(&p);
    ctrl(&mut a, 'd');
    keys(&mut a, "n");
    assert!(file.exists());
    // A writer holding the session makes the browser refuse to write.
    let lock = arbor_store::lock::WriterLock::acquire(&file, None).expect("lock");
    ctrl(&mut a, 'e');
    keys(&mut a, "!");
    press(&mut a, KeyCode::Enter);
    assert!(a.status.contains("busy"), "{}", a.status);
    drop(lock);
    // y moves it to the trash (in a private XDG data home).
    std::env::set_var("XDG_DATA_HOME", f.agent.parent().expect("tmp").join("data"));
    ctrl(&mut a, 'd');
    keys(&mut a, "y");
    assert!(!file.exists(), "{}", a.status);
    assert_eq!(a.picker.rows.len(), 2);
    let trashed = trash::os_limited::list().expect("trash");
    assert!(trashed.iter().any(|i| i.original_path() == file));
}

#[test]
fn a_session_that_grows_while_shown_is_read_from_where_it_stopped() {
    let f = fixture();
    let mut a = app(&f);
    keys(&mut a, "flaky");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &a.mode else { panic!() };
    let path = nav.path.clone();
    let n = nav.doc.entries().len();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    std::io::Write::write_all(
        &mut file,
        msg("c3", Some("c2"), 7, "user", "and the other test").as_bytes(),
    )
    .expect("append");
    std::io::Write::write_all(&mut file, b"{\"type\":\"message\",\"id\":\"c4\"").expect("torn");
    a.tick();
    let Mode::Tree(nav) = &a.mode else { panic!() };
    assert_eq!(nav.doc.entries().len(), n + 1, "the complete line only");
    assert!(a.status.contains("grew"));
}

#[test]
fn mouse_selects_scrolls_and_opens() {
    let f = fixture();
    let mut a = app(&f);
    screen(&mut a, 80, 24);
    let at = |row: u16, kind| MouseEvent {
        kind,
        column: 10,
        row,
        modifiers: KeyModifiers::NONE,
    };
    let y = a.list_area.y + 1;
    a.mouse(at(y, MouseEventKind::Down(MouseButton::Left)));
    assert_eq!(a.picker.selected, 1);
    a.mouse(at(y, MouseEventKind::ScrollDown));
    assert_eq!(a.picker.selected, 2);
    a.picker.select(1);
    a.mouse(at(y, MouseEventKind::Down(MouseButton::Left)));
    a.mouse(at(y, MouseEventKind::Down(MouseButton::Left)));
    assert!(matches!(a.mode, Mode::Tree(_)), "double click opens");
}

#[test]
fn agent_commands_follow_the_environment() {
    let p = Path::new("/s/x.jsonl");
    std::env::remove_var("ARBOR_PI");
    assert_eq!(agent_cmd(Dialect::Pi, p), ["pi", "--session", "/s/x.jsonl"]);
    assert_eq!(agent_cmd(Dialect::Omp, p)[0], "omp");
    std::env::set_var("ARBOR_OMP", "/opt/omp --yolo");
    assert_eq!(
        agent_cmd(Dialect::Omp, p),
        ["/opt/omp", "--yolo", "/s/x.jsonl"]
    );
    std::env::remove_var("ARBOR_OMP");
}

fn agent_cmd(d: Dialect, p: &Path) -> Vec<String> {
    handoff::agent_command(d, p)
}

/// The tree of session a, the cursor on its leaf (b3, an assistant turn).
fn tree_on_leaf(f: &Fixture) -> App {
    let mut a = app(f);
    keys(&mut a, "walrus database");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!("no tree")
    };
    let leaf = nav.doc.index().leaf.expect("leaf");
    nav.reveal(leaf);
    a
}

fn selected_id(a: &App) -> Option<String> {
    let Mode::Tree(nav) = &a.mode else {
        panic!("no tree")
    };
    nav.selected_entry()
        .and_then(|i| nav.doc.entries()[i].id.clone())
        .map(|id| id.to_string())
}

fn filter_of(a: &App) -> (Filter, usize) {
    let Mode::Tree(nav) = &a.mode else {
        panic!("no tree")
    };
    (nav.filter, nav.line_count())
}

#[test]
fn filters_apply_wherever_the_cursor_is_and_it_moves_to_the_nearest_kept_entry() {
    let f = fixture();
    // 3 from an assistant turn: user only, the cursor on the user message above it.
    let mut a = tree_on_leaf(&f);
    keys(&mut a, "3");
    assert_eq!(filter_of(&a), (Filter::UserOnly, 3));
    assert_eq!(selected_id(&a).as_deref(), Some("b2"));
    insta::assert_snapshot!("tree_user_only_from_leaf_80x24", screen(&mut a, 80, 24));
    // 4 with nothing labelled: the filter applies and shows that nothing is kept.
    keys(&mut a, "4");
    assert_eq!(filter_of(&a), (Filter::Labeled, 0));
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("filter: labelled"), "{s}");
    assert!(s.contains("nothing matches this filter"), "{s}");
    // f cycles through every filter from the leaf, none turning into "all" early.
    let mut a = tree_on_leaf(&f);
    let mut seen = Vec::new();
    for _ in 0..5 {
        keys(&mut a, "f");
        seen.push(filter_of(&a));
    }
    assert_eq!(
        seen,
        [
            (Filter::NoTools, 6),
            (Filter::UserOnly, 3),
            (Filter::Labeled, 0),
            (Filter::All, 6),
            (Filter::Default, 6),
        ]
    );
    // A label on a1: from the leaf, 4 keeps a1 and puts the cursor on it (its ancestor).
    let mut a = tree_on_leaf(&f);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let a1 = nav.doc.index().get("a1").expect("a1");
    nav.reveal(a1);
    keys(&mut a, "Lkeep");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let leaf = nav.doc.index().leaf.expect("leaf");
    nav.reveal(leaf);
    keys(&mut a, "4");
    assert_eq!(filter_of(&a), (Filter::Labeled, 1));
    assert_eq!(selected_id(&a).as_deref(), Some("a1"));
}

fn dialog_value(a: &App) -> String {
    match &a.dialog {
        Some(Dialog::Input { value, .. }) => value.clone(),
        _ => panic!("no input dialog"),
    }
}

#[test]
fn rename_starts_empty_without_a_name_and_ctrl_u_clears_the_dialogs() {
    let f = fixture();
    let mut a = app(&f);
    // The first row has no name: the dialog starts empty, not with the first message.
    assert_eq!(a.picker.rows[0].title, "write release notes 日本語");
    ctrl(&mut a, 'e');
    assert_eq!(dialog_value(&a), "");
    insta::assert_snapshot!("rename_unnamed_80x24", screen(&mut a, 80, 24));
    keys(&mut a, "Notes");
    press(&mut a, KeyCode::Enter);
    assert!(a.status.contains("named \"Notes\""), "{}", a.status);
    assert!(a.picker.rows.iter().any(|r| r.title == "Notes"));
    // Named: the dialog starts with the name; Ctrl-U clears it.
    let at = a
        .picker
        .view
        .iter()
        .position(|v| a.picker.rows[v.row].title == "Notes")
        .expect("row");
    a.picker.select(at);
    ctrl(&mut a, 'e');
    assert_eq!(dialog_value(&a), "Notes");
    ctrl(&mut a, 'u');
    assert_eq!(dialog_value(&a), "");
    keys(&mut a, "Release");
    assert_eq!(dialog_value(&a), "Release");
    press(&mut a, KeyCode::Esc);
    // The label dialog too.
    let mut a = tree_on_leaf(&f);
    keys(&mut a, "Lwip");
    assert_eq!(dialog_value(&a), "wip");
    ctrl(&mut a, 'u');
    assert_eq!(dialog_value(&a), "");
}

#[test]
fn dialogs_show_their_answer_keys_at_80_columns() {
    let f = fixture();
    let mut a = app(&f);
    // A long title wraps; the line that says which key confirms stays inside the dialog.
    ctrl(&mut a, 'e');
    keys(
        &mut a,
        "Release notes for the spring version with every change listed by area",
    );
    press(&mut a, KeyCode::Enter);
    a.status.clear();
    ctrl(&mut a, 'd');
    let s = screen(&mut a, 80, 24);
    insta::assert_snapshot!("delete_dialog_80x24", s);
    assert!(
        s.contains("y moves it to the trash · n or Esc keeps it"),
        "{s}"
    );
    press(&mut a, KeyCode::Esc);
    // Continue from here: a long question, the keys still shown.
    let mut a = tree_on_leaf(&f);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!()
    };
    let a1 = nav.doc.index().get("a1").expect("a1");
    nav.reveal(a1);
    press(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 80, 24);
    assert!(s.contains("y yes · n or Esc no"), "{s}");
}

#[test]
fn the_footer_keeps_the_way_out_at_80_columns() {
    let f = fixture();
    let mut a = app(&f);
    let s = screen(&mut a, 80, 24);
    let last = s.lines().last().expect("line");
    assert!(last.ends_with("· Esc quit"), "{last}");
    let mut a = tree_on_leaf(&f);
    let s = screen(&mut a, 80, 24);
    let last = s.lines().last().expect("line");
    assert!(last.ends_with("· Esc back"), "{last}");
    // Wide: every key; narrow: the way out alone.
    let all = ui::keys_line(&["a b", "c d"], "Esc quit", 200);
    assert_eq!(all, "a b · c d · Esc quit");
    assert_eq!(
        ui::keys_line(&["a b", "c d"], "Esc quit", 15),
        "a b · Esc quit"
    );
    assert_eq!(ui::keys_line(&["a b", "c d"], "Esc quit", 3), "Esc quit");
}

#[test]
fn a_hit_on_another_branch_says_so_at_80_columns() {
    let f = fixture();
    // A long message on the branch that is not the current one (b4 keeps the leaf on b).
    let d = f.agent.join("sessions/--work-walrus--");
    let file = d.join("2026-02-01T09-00-00-000Z_0199a000-0000-7000-8000-00000000000a.jsonl");
    let mut text = std::fs::read_to_string(&file).expect("read");
    text += &msg(
        "u3",
        Some("a2"),
        5,
        "user",
        "now move every table of the zebra schema to postgres and keep the old names working for a while",
    );
    text += &msg(
        "u4",
        Some("u3"),
        5,
        "user",
        "and the zebra view should keep its old column names for every report we still send out",
    );
    text += &msg("b4", Some("b3"), 5, "user", "thanks");
    std::fs::write(&file, text).expect("write");
    let mut a = app(&f);
    keys(&mut a, "zebra");
    let s = screen(&mut a, 80, 24);
    let hit = s
        .lines()
        .find(|l| l.contains("↳ user (+1)"))
        .expect("hit line");
    assert!(hit.ends_with("  other branch"), "{hit}");
    insta::assert_snapshot!("hit_other_branch_80x24", s);
}

#[test]
fn a_filter_that_leaves_fewer_lines_fills_the_view_at_80_columns() {
    let f = fixture();
    // A long session: 40 turns in a line, the leaf at the bottom of a scrolled view.
    let d = f.agent.join("sessions/--work-long--");
    std::fs::create_dir_all(&d).expect("mkdir");
    let id = "0199a000-0000-7000-8000-00000000000d";
    let mut s = header(id, "/work/long", None);
    let mut parent: Option<String> = None;
    for n in 0..40 {
        let (role, text) = if n % 2 == 0 {
            ("user", format!("question {n}"))
        } else {
            ("assistant", format!("answer {n}"))
        };
        let eid = format!("t{n:02}");
        s += &msg(&eid, parent.as_deref(), 9, role, &text);
        parent = Some(eid);
    }
    std::fs::write(d.join(format!("2026-02-09T09-00-00-000Z_{id}.jsonl")), s).expect("write");
    let mut a = app(&f);
    keys(&mut a, "question 38");
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &mut a.mode else {
        panic!("no tree")
    };
    let leaf = nav.doc.index().leaf.expect("leaf");
    nav.reveal(leaf);
    screen(&mut a, 80, 24);
    keys(&mut a, "3");
    let s = screen(&mut a, 80, 24);
    let users = s.lines().filter(|l| l.contains(" user: question")).count();
    assert!(users >= 10, "the view shows {users} of 20 user lines:\n{s}");
    assert_eq!(selected_id(&a).as_deref(), Some("t38"));
}

#[test]
fn big_message_counts_keep_the_picker_columns_aligned() {
    assert_eq!(ui::count5(99_999), "99999");
    assert_eq!(ui::count5(148_135), "148k");
    assert_eq!(ui::count5(123_456_789), "123M");
    for n in [
        0,
        7,
        99_999,
        100_000,
        148_135,
        99_999_999,
        100_000_000,
        usize::MAX,
    ] {
        assert!(ui::count5(n).len() <= 5, "{n}");
    }
}

/// Issue 26: the browser over the fixture's pi sessions and the goldens of Claude Code,
/// Codex and opencode (each agent's layout, read where they are: never written).
fn app_with_other_agents(f: &Fixture) -> App {
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents");
    let ctx = Ctx {
        loc: Locator::new(Some(f.agent.clone())),
        catalog: Some(f.catalog.clone()),
        // 2026-11-26, the goldens three weeks old.
        now_ms: 1_795_651_200_000.0,
        agent: None,
        others: Some(arbor_index::ForeignRoots {
            claude: g.join("claude/projects"),
            codex: g.join("codex"),
            opencode: g.join("opencode"),
        }),
    };
    App::new(ctx, Scope::All, None, false).expect("app")
}

#[test]
fn other_agents_sessions_are_listed_with_their_tool_newest_first() {
    let f = fixture();
    let mut a = app_with_other_agents(&f);
    let tools: Vec<&str> = a
        .picker
        .view
        .iter()
        .map(|v| a.picker.rows[v.row].tool_name())
        .collect();
    // ls's merge: last activity first (the goldens of November before February's pi
    // sessions), each agent's rows beside pi's.
    assert_eq!(
        tools,
        ["opencode", "opencode", "codex", "codex", "claude", "claude", "pi", "pi", "pi"],
        "{tools:?}"
    );
    let modified: Vec<f64> = a
        .picker
        .view
        .iter()
        .map(|v| a.picker.rows[v.row].modified)
        .collect();
    assert!(modified.windows(2).all(|w| w[0] >= w[1]), "{modified:?}");
    insta::assert_snapshot!("other_agents_80x24", screen(&mut a, 80, 24));
    // The search finds their texts as `arbor search` does (the Claude Code golden's
    // first prompt), the hit under its session.
    keys(&mut a, "failing test");
    let found: Vec<&str> = a
        .picker
        .view
        .iter()
        .map(|v| a.picker.rows[v.row].title.as_str())
        .collect();
    assert!(found.contains(&"add-test fix"), "{found:?}");
    let v = a
        .picker
        .view
        .iter()
        .find(|v| a.picker.rows[v.row].title == "add-test fix")
        .expect("row");
    assert_eq!(v.hit.as_ref().map(|h| h.role), Some("user"));
}

#[test]
fn another_agents_session_is_read_in_the_tree_and_never_written() {
    let f = fixture();
    let mut a = app_with_other_agents(&f);
    let at = a
        .picker
        .view
        .iter()
        .position(|v| a.picker.rows[v.row].title == "add-test fix")
        .expect("the Claude Code session");
    a.picker.select(at);
    let file = a.picker.rows[a.picker.view[at].row].file.clone();
    let before = std::fs::read(&file).expect("read");
    let mtime = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
    // Delete and rename: refused with a line naming arbor import, no dialog.
    ctrl(&mut a, 'd');
    assert!(a.dialog.is_none());
    assert_eq!(
        a.status,
        "no delete: claude's session is read only (arbor import makes a pi copy)"
    );
    press(&mut a, KeyCode::F(2));
    assert!(a.dialog.is_none());
    assert!(
        a.status.starts_with("no rename: claude's session"),
        "{}",
        a.status
    );
    // Enter reads it: the conversation as the import would make it, in memory.
    press(&mut a, KeyCode::Enter);
    let Mode::Tree(nav) = &a.mode else {
        panic!("not in the tree: {}", a.status)
    };
    assert_eq!(
        nav.foreign.as_ref().map(|f| f.0),
        Some(arbor_agents::Agent::Claude)
    );
    let s = screen(&mut a, 80, 24);
    assert!(
        s.contains("user: Use a Task agent to check the docs too") && s.contains("· claude ·"),
        "{s}"
    );
    insta::assert_snapshot!("other_agent_tree_80x24", s);
    // Fork and label: refused; resume: the import is offered first.
    press(&mut a, KeyCode::Char('F'));
    assert!(
        a.status.starts_with("no fork: claude's session"),
        "{}",
        a.status
    );
    press(&mut a, KeyCode::Char('L'));
    assert!(
        a.dialog.is_none() && a.status.starts_with("no label"),
        "{}",
        a.status
    );
    press(&mut a, KeyCode::Char('r'));
    assert!(
        matches!(
            &a.dialog,
            Some(Dialog::Confirm {
                then: Pending::ImportResume {
                    agent: arbor_agents::Agent::Claude,
                    ..
                },
                ..
            })
        ),
        "no import question"
    );
    press(&mut a, KeyCode::Esc);
    assert_eq!(std::fs::read(&file).expect("read"), before);
    assert_eq!(
        std::fs::metadata(&file).and_then(|m| m.modified()).ok(),
        mtime
    );
}

/// A session another agent writes while the browser is open appears at the next refresh (read
/// on the refresh's thread, not the screen's).
#[test]
fn another_agents_new_session_appears_at_the_next_refresh() {
    let f = fixture();
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents");
    let projects = f.agent.parent().expect("tmp").join("claude-projects");
    std::fs::create_dir_all(projects.join("-work-app")).expect("mkdir");
    let name = "0b7c3f0e-1111-4222-8333-444455556666.jsonl";
    std::fs::copy(
        g.join("claude/projects/-work-app").join(name),
        projects.join("-work-app").join(name),
    )
    .expect("copy");
    let ctx = Ctx {
        loc: Locator::new(Some(f.agent.clone())),
        catalog: Some(f.catalog.clone()),
        now_ms: NOW,
        agent: Some(crate::cli::Tool::Claude),
        others: Some(arbor_index::ForeignRoots {
            claude: projects.clone(),
            codex: f.agent.join("no-codex"),
            opencode: f.agent.join("no-opencode"),
        }),
    };
    let mut a = App::new(ctx, Scope::All, None, false).expect("app");
    assert_eq!(
        a.picker.rows.len(),
        1,
        "--agent claude: the Claude Code session alone"
    );
    let real = "9ecbeb02-4f54-4380-9b7b-38cdf9a92eab.jsonl";
    let dir = projects.join("C--Users-Hardel-IdeaProjects-twichplay");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(
        g.join("claude-real/projects/C--Users-Hardel-IdeaProjects-twichplay")
            .join(real),
        dir.join(real),
    )
    .expect("copy");
    a.tick();
    a.wait_refresh();
    let ids: Vec<&str> = a
        .picker
        .rows
        .iter()
        .filter_map(|r| r.session_id.as_deref())
        .collect();
    assert!(
        ids.contains(&"9ecbeb02-4f54-4380-9b7b-38cdf9a92eab"),
        "{ids:?}"
    );
}

/// The first frame shows other agents' rows as the catalog holds them (no source read before
/// it); the refresh behind it brings them up to date: a session gone since is dropped then.
#[test]
fn other_agents_rows_come_from_the_catalog_first_and_the_refresh_follows() {
    let f = fixture();
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents");
    let codex = f.agent.parent().expect("tmp").join("codex");
    let day = codex.join("sessions/2026/11/02");
    std::fs::create_dir_all(&day).expect("mkdir");
    let name = "rollout-2026-11-02T09-00-00-019a4c1e-0000-7000-8000-00000000c0de.jsonl";
    std::fs::copy(
        g.join("codex/sessions/2026/11/02").join(name),
        day.join(name),
    )
    .expect("copy");
    let app_now = || {
        let ctx = Ctx {
            loc: Locator::new(Some(f.agent.clone())),
            catalog: Some(f.catalog.clone()),
            now_ms: NOW,
            agent: Some(crate::cli::Tool::Codex),
            others: Some(arbor_index::ForeignRoots {
                claude: f.agent.join("no-claude"),
                codex: codex.clone(),
                opencode: f.agent.join("no-opencode"),
            }),
        };
        App::new(ctx, Scope::All, None, false).expect("app")
    };
    assert_eq!(app_now().picker.rows.len(), 1, "read at the first start");
    std::fs::remove_file(day.join(name)).expect("rm");
    let mut a = app_now();
    assert_eq!(a.picker.rows.len(), 1, "the first frame: the catalog's row");
    a.after_first_frame();
    a.wait_refresh();
    assert_eq!(a.picker.rows.len(), 0, "the refresh drops the session gone");
}
