//! Handing a session over to its agent: `pi --session PATH` for pi files, `omp --session PATH`
//! for omp files (`$ARBOR_PI` / `$ARBOR_OMP` replace the command; words split on spaces, the
//! path added last), and OSC 52 for putting text on the terminal's clipboard.
use arbor_core::Dialect;
use std::io::Write;
use std::path::Path;

/// The agent command for a session of `tool`: program and arguments.
pub fn agent_command(tool: Dialect, session: &Path) -> Vec<String> {
    let (var, default) = match tool {
        Dialect::Pi => ("ARBOR_PI", "pi --session"),
        Dialect::Omp => ("ARBOR_OMP", "omp --session"),
    };
    let spec = std::env::var(var)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.to_string());
    let mut words: Vec<String> = spec.split_whitespace().map(str::to_string).collect();
    words.push(session.to_string_lossy().into_owned());
    words
}

/// Whether `prog` can be run (a path that exists, or a name found on `$PATH`).
fn runnable(prog: &str) -> bool {
    if prog.contains('/') {
        return Path::new(prog).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(prog).is_file()))
}

/// Runs the agent on `session` in this terminal and returns its exit status, or prints the
/// command when the agent is not installed (exit status 0: nothing failed).
pub fn resume(tool: Dialect, session: &Path) -> std::io::Result<i32> {
    let cmd = agent_command(tool, session);
    let shown = cmd
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    if !runnable(&cmd[0]) {
        say!(
            "{} is not installed; to resume the session run:\n  {shown}",
            cmd[0]
        );
        return Ok(0);
    }
    say_err!("arbor: {shown}");
    let status = std::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .status()?;
    Ok(status.code().unwrap_or(1))
}

fn shell_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Puts `text` on the clipboard of the terminal (and of the machine the terminal runs on,
/// over ssh too) with OSC 52, where the terminal allows it. Written to the controlling
/// terminal (`/dev/tty`), not to stdout; nothing happens without one.
pub fn copy_to_clipboard(text: &str) {
    let payload = arbor_core::blobref::encode_base64(text.as_bytes());
    let seq = format!("\x1b]52;c;{payload}\x07");
    if let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        let _ = tty.write_all(seq.as_bytes());
        let _ = tty.flush();
    }
}
