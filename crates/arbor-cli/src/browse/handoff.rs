//! Handing a session over to its agent: `pi --session PATH` for pi files, `omp --session PATH`
//! for omp files (`$ARBOR_PI` / `$ARBOR_OMP` replace the command; words split on spaces, the
//! path added last), and OSC 52 for putting text on the terminal's clipboard.
use arbor_core::Dialect;
use std::io::Write;
use std::path::Path;

/// The agent command for a session of `tool`: program and arguments (the one
/// `arbor mcp`'s `fork_session` names too).
pub use arbor_store::locate::resume_command as agent_command;

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
    let shown = arbor_store::locate::shell_line(&cmd);
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
