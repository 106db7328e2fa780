//! The session generator (see the crate documentation).
use arbor_core::json::{write_js_number, write_str_escaped};
use arbor_core::time::format_iso_ms;
use std::collections::HashSet;
use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenConfig {
    /// Stop after the first complete entry that brings the file to at least this many bytes.
    pub target_bytes: u64,
    /// Seed of the deterministic random stream.
    pub seed: u64,
    /// The header's `cwd`.
    pub cwd: String,
    /// Epoch milliseconds of the header; entries follow at 0.05 to 5 s intervals.
    pub start_ms: i64,
    /// A compaction every this many entries (0: none).
    pub compaction_every: u64,
    /// Chance per turn, in thousandths, of abandoning the last few entries and branching
    /// from an earlier one (with a `branch_summary` most of the time).
    pub branch_per_mille: u32,
}

impl GenConfig {
    /// The defaults used by the benchmarks: about 6.7 KB per entry (a 100 MB file holds about
    /// 15,000 entries), a compaction every 6,000 entries, a branch in about 1.5% of the turns.
    pub fn new(target_bytes: u64, seed: u64) -> GenConfig {
        GenConfig {
            target_bytes,
            seed,
            cwd: "/home/dev/projects/arbor".to_string(),
            start_ms: 1_763_681_581_000,
            compaction_every: 6_000,
            branch_per_mille: 15,
        }
    }
}

/// What [`generate`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenSummary {
    /// Bytes written.
    pub bytes: u64,
    /// Entries written (the header not counted).
    pub entries: u64,
    /// The header's session id.
    pub session_id: String,
    /// The id of the last entry (pi's leaf on open).
    pub leaf_id: String,
    /// Entries on the path from the root to the leaf.
    pub path_len: u64,
    /// Branch points (abandoned continuations).
    pub branches: u64,
    /// `compaction` entries.
    pub compactions: u64,
    /// Base64 images.
    pub images: u64,
    /// `label` entries.
    pub labels: u64,
    /// `message` entries.
    pub messages: u64,
}

/// A size given on the command line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid size {0:?} (expected a number with an optional unit: 500KB, 100MB, 1GB, 2GiB)")]
pub struct SizeError(pub String);

/// Reads `100MB`, `1GB`, `512KiB`, `1000000` (decimal units are powers of 1000, `iB` units
/// powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| SizeError(s.to_string()))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(SizeError(s.to_string())),
    };
    let v = n * mult;
    if !v.is_finite() || v < 0.0 {
        return Err(SizeError(s.to_string()));
    }
    Ok(v as u64)
}

/// Generates a session into memory.
pub fn generate_vec(cfg: &GenConfig) -> (Vec<u8>, GenSummary) {
    let mut out = Vec::with_capacity(cfg.target_bytes as usize + (1 << 20));
    // Writing to a Vec cannot fail.
    let summary = generate(cfg, &mut out).unwrap_or_default();
    (out, summary)
}

/// Writes a session of about `cfg.target_bytes` bytes to `out` (see the crate documentation).
pub fn generate<W: Write>(cfg: &GenConfig, out: W) -> io::Result<GenSummary> {
    let mut g = Gen::new(cfg, out);
    g.run()?;
    g.out.flush()?;
    Ok(g.summary)
}

/// SplitMix64: small, fast, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n.max(1))) >> 64) as u64
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
    /// Roughly log-uniform in `lo..=hi`: many small values, a few large ones.
    fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo.max(1) as f64).ln(), (hi.max(lo + 1) as f64).ln());
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (l + (h - l) * u).exp() as u64
    }
}

const PROSE: &[&str] = &[
    "the",
    "session",
    "manager",
    "refactor",
    "function",
    "tree",
    "branch",
    "context",
    "append",
    "parse",
    "file",
    "error",
    "test",
    "value",
    "index",
    "build",
    "lock",
    "entry",
    "message",
    "JSON",
    "byte",
    "line",
    "path",
    "cache",
    "fix",
    "bug",
    "because",
    "then",
    "we",
    "should",
    "check",
    "that",
    "it",
    "returns",
    "and",
    "a",
    "of",
    "to",
    "is",
    "in",
    "for",
    "with",
    "this",
    "ünïcödé",
    "naïve",
    "café",
    "日本語",
    "中文字符",
    "Ωmega",
    "→",
    "emoji😀",
    "🚀",
    "quote\"s",
    "back\\slash",
    "`code`",
    "</summary>",
    "null",
    "42",
    "0.5",
    "tab\tchar",
    "new\nline",
    "Grüße",
];

const IDENTS: &[&str] = &[
    "entries",
    "leaf_id",
    "parent",
    "by_id",
    "labels",
    "doc",
    "line",
    "bytes",
    "offset",
    "index",
    "path",
    "ctx",
    "session",
    "header",
    "timestamp",
    "children",
    "roots",
    "buf",
    "writer",
    "result",
    "err",
    "value",
    "scan",
    "members",
    "tree",
    "node",
    "config",
    "options",
    "args",
    "state",
    "cache",
    "fingerprint",
    "handle",
];

const FILES: &[&str] = &[
    "src/session-manager.ts",
    "src/core/agent.ts",
    "crates/arbor-core/src/doc.rs",
    "src/tui/editor.ts",
    "packages/coding-agent/src/modes/interactive.ts",
    "src/utils/shell.ts",
    "README.md",
    "package.json",
    "src/theme/theme.ts",
    "test/session.test.ts",
    "docs/compaction.md",
    "src/main.rs",
    "Cargo.toml",
];

const TOOLS: &[&str] = &[
    "read", "read", "read", "bash", "bash", "bash", "edit", "write", "grep", "find", "ls",
];
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct Gen<'c, W: Write> {
    cfg: &'c GenConfig,
    rng: Rng,
    out: W,
    line: Vec<u8>,
    s: String,
    ids: HashSet<u32>,
    now_ms: i64,
    /// Ids root → leaf of the current branch.
    path: Vec<String>,
    since_compaction: u64,
    tool_seq: u64,
    summary: GenSummary,
}

impl<'c, W: Write> Gen<'c, W> {
    fn new(cfg: &'c GenConfig, out: W) -> Self {
        Gen {
            cfg,
            rng: Rng(cfg.seed ^ 0x6172_626F_725F_6265),
            out,
            line: Vec::with_capacity(1 << 20),
            s: String::with_capacity(1 << 16),
            ids: HashSet::new(),
            now_ms: cfg.start_ms,
            path: Vec::new(),
            since_compaction: 0,
            tool_seq: 0,
            summary: GenSummary::default(),
        }
    }

    fn done(&self) -> bool {
        self.summary.bytes >= self.cfg.target_bytes
    }

    // ----- low-level writers -------------------------------------------------------------

    fn raw(&mut self, b: &[u8]) {
        self.line.extend_from_slice(b);
    }
    fn key(&mut self, k: &str) {
        self.line.push(b',');
        write_str_escaped(k, &mut self.line);
        self.line.push(b':');
    }
    fn str_member(&mut self, k: &str, v: &str) {
        self.key(k);
        write_str_escaped(v, &mut self.line);
    }
    fn num_member(&mut self, k: &str, v: f64) {
        self.key(k);
        write_js_number(v, &mut self.line);
    }
    /// Writes the scratch string `self.s` as a JSON string value.
    fn scratch_value(&mut self) {
        write_str_escaped(&self.s, &mut self.line);
    }

    fn new_id(&mut self) -> String {
        loop {
            let v = self.rng.next() as u32;
            if self.ids.insert(v) {
                return format!("{v:08x}");
            }
        }
    }

    fn tick(&mut self) -> i64 {
        self.now_ms += self.rng.log_range(50, 5_000) as i64;
        self.now_ms
    }

    fn uuid(&mut self) -> String {
        let a = self.rng.next();
        let b = self.rng.next();
        let ms = (self.cfg.start_ms as u64) & 0xFFFF_FFFF_FFFF;
        format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            ms >> 16,
            ms & 0xFFFF,
            a & 0xFFF,
            0x8000 | ((a >> 12) & 0x3FFF),
            b & 0xFFFF_FFFF_FFFF
        )
    }

    /// `{"type":T,"id":..,"parentId":..,"timestamp":..` (pi's order for most entry types).
    fn begin(&mut self, etype: &str) -> String {
        let id = self.new_id();
        let ts = format_iso_ms(self.tick());
        self.line.clear();
        self.raw(b"{\"type\":");
        write_str_escaped(etype, &mut self.line);
        self.base(&id, &ts);
        id
    }

    fn base(&mut self, id: &str, ts: &str) {
        self.str_member("id", id);
        self.key("parentId");
        match self.path.last() {
            Some(p) => write_str_escaped(p, &mut self.line),
            None => self.line.extend_from_slice(b"null"),
        }
        self.str_member("timestamp", ts);
    }

    fn finish(&mut self, id: String) -> io::Result<()> {
        self.line.extend_from_slice(b"}\n");
        self.out.write_all(&self.line)?;
        self.summary.bytes += self.line.len() as u64;
        self.summary.entries += 1;
        self.since_compaction += 1;
        self.path.push(id);
        Ok(())
    }

    // ----- text ------------------------------------------------------------------------

    fn prose(&mut self, words: u64) {
        self.s.clear();
        for k in 0..words {
            if k > 0 {
                self.s.push(if self.rng.chance(40) { '\n' } else { ' ' });
            }
            let w = self.rng.pick(PROSE);
            self.s.push_str(w);
        }
    }

    fn code_line(&mut self, n: u64) {
        let indent = self.rng.below(4) as usize;
        for _ in 0..indent {
            self.s.push(if n.is_multiple_of(7) { '\t' } else { ' ' });
            self.s.push_str("   ");
        }
        let a = self.rng.pick(IDENTS);
        let b = self.rng.pick(IDENTS);
        let c = self.rng.pick(IDENTS);
        match self.rng.below(6) {
            0 => {
                self.s.push_str("let ");
                self.s.push_str(a);
                self.s.push_str(" = ");
                self.s.push_str(b);
                self.s.push('.');
                self.s.push_str(c);
                self.s.push_str("(\"");
                self.s.push_str(self.rng.pick(PROSE));
                self.s.push_str("\")?;");
            }
            1 => {
                self.s.push_str("// ");
                for _ in 0..self.rng.range(3, 12) {
                    let w = self.rng.pick(PROSE);
                    if w.contains('\n') {
                        continue;
                    }
                    self.s.push_str(w);
                    self.s.push(' ');
                }
            }
            2 => {
                self.s.push_str("if ");
                self.s.push_str(a);
                self.s.push_str(".len() > ");
                self.s.push_str(&(n * 3).to_string());
                self.s.push_str(" { return Err(");
                self.s.push_str(b);
                self.s.push_str("); }");
            }
            3 => {
                self.s.push_str("const ");
                self.s.push_str(a);
                self.s.push_str(" = `${");
                self.s.push_str(b);
                self.s.push_str("}\\n` + '");
                self.s.push_str(c);
                self.s.push_str("';");
            }
            4 => {
                self.s.push_str(a);
                self.s.push_str(": Vec<");
                self.s.push_str(b);
                self.s.push_str(">,");
            }
            _ => self.s.push('}'),
        }
        self.s.push('\n');
    }

    fn bash_line(&mut self, n: u64) {
        match self.rng.below(5) {
            0 => {
                self.s.push_str("\u{1b}[32m✓\u{1b}[0m test ");
                self.s.push_str(self.rng.pick(IDENTS));
                self.s.push_str("::");
                self.s.push_str(self.rng.pick(IDENTS));
                self.s.push_str(" ... ok (");
                self.s.push_str(&(n % 97).to_string());
                self.s.push_str("ms)");
            }
            1 => {
                self.s.push_str("-rw-r--r--  1 dev dev ");
                self.s.push_str(&(self.rng.below(90_000) + 10).to_string());
                self.s.push_str(" Nov 22 11:37 ");
                self.s.push_str(self.rng.pick(FILES));
            }
            2 => {
                self.s
                    .push_str("\u{1b}[1;31merror[E0308]\u{1b}[0m: mismatched types in `");
                self.s.push_str(self.rng.pick(IDENTS));
                self.s.push_str("`\n  --> ");
                self.s.push_str(self.rng.pick(FILES));
                self.s.push(':');
                self.s.push_str(&n.to_string());
                self.s.push_str(":17");
            }
            3 => {
                self.s.push_str(self.rng.pick(FILES));
                self.s.push(':');
                self.s.push_str(&n.to_string());
                self.s.push_str(":    ");
                self.s.push_str(self.rng.pick(IDENTS));
                self.s.push_str(" => \"");
                self.s.push_str(self.rng.pick(PROSE));
                self.s.push('"');
            }
            _ => {
                self.s.push_str("  ");
                for _ in 0..self.rng.range(2, 10) {
                    let w = self.rng.pick(PROSE);
                    self.s.push_str(w);
                    self.s.push(' ');
                }
            }
        }
        self.s.push('\n');
    }

    /// Tool output of about `bytes` bytes in `self.s`.
    fn tool_output(&mut self, tool: &str, bytes: usize) {
        self.s.clear();
        let mut n = 1;
        while self.s.len() < bytes {
            match tool {
                "read" | "write" | "edit" => {
                    self.s.push_str(&format!("{n:>5}\t"));
                    self.code_line(n);
                }
                _ => self.bash_line(n),
            }
            n += 1;
        }
    }

    fn base64(&mut self, chars: usize) {
        self.line.reserve(chars);
        let mut left = chars;
        while left > 0 {
            let mut r = self.rng.next();
            for _ in 0..left.min(10) {
                self.line.push(B64[(r & 63) as usize]);
                r >>= 6;
                left -= 1;
            }
        }
    }

    // ----- entries ---------------------------------------------------------------------

    fn header(&mut self) -> io::Result<()> {
        let id = self.uuid();
        self.line.clear();
        self.raw(b"{\"type\":\"session\",\"version\":3");
        self.str_member("id", &id);
        self.str_member("timestamp", &format_iso_ms(self.cfg.start_ms));
        let cwd = self.cfg.cwd.clone();
        self.str_member("cwd", &cwd);
        self.line.extend_from_slice(b"}\n");
        self.out.write_all(&self.line)?;
        self.summary.bytes += self.line.len() as u64;
        self.summary.session_id = id;
        Ok(())
    }

    fn user(&mut self) -> io::Result<()> {
        let id = self.begin("message");
        let words = self.rng.log_range(3, 400);
        self.prose(words);
        self.key("message");
        self.raw(b"{\"role\":\"user\",\"content\":");
        let image = self.rng.chance(25);
        if !image && self.rng.chance(300) {
            self.scratch_value();
        } else {
            self.raw(b"[{\"type\":\"text\",\"text\":");
            self.scratch_value();
            self.raw(b"}");
            if image {
                self.raw(b",{\"type\":\"image\",\"data\":\"");
                let chars = self.rng.log_range(40_000, 400_000) as usize / 4 * 4;
                self.base64(chars);
                self.raw(b"\",\"mimeType\":\"image/png\"}");
                self.summary.images += 1;
            }
            self.raw(b"]");
        }
        let t = self.now_ms as f64;
        self.num_member("timestamp", t);
        self.raw(b"}");
        self.summary.messages += 1;
        self.finish(id)
    }

    /// An assistant message; returns its tool calls (id, tool name).
    fn assistant(&mut self, last_round: bool) -> io::Result<Vec<(String, &'static str)>> {
        let id = self.begin("message");
        self.key("message");
        self.raw(b"{\"role\":\"assistant\",\"content\":[");
        let mut first = true;
        if self.rng.chance(600) {
            let words = self.rng.log_range(10, 600);
            self.prose(words);
            self.raw(b"{\"type\":\"thinking\",\"thinking\":");
            self.scratch_value();
            self.raw(b",\"thinkingSignature\":\"");
            let chars = self.rng.range(300, 1200) as usize;
            self.base64(chars);
            self.raw(b"\"}");
            first = false;
        }
        if self.rng.chance(850) {
            if !first {
                self.raw(b",");
            }
            let words = self.rng.log_range(2, 300);
            self.prose(words);
            self.raw(b"{\"type\":\"text\",\"text\":");
            self.scratch_value();
            self.raw(b"}");
            first = false;
        }
        let mut calls = Vec::new();
        let n_calls = if last_round { 0 } else { self.rng.range(1, 3) };
        for _ in 0..n_calls {
            if !first {
                self.raw(b",");
            }
            first = false;
            self.tool_seq += 1;
            let call_id = format!("toolu_{:016x}{:08x}", self.rng.next(), self.tool_seq);
            let tool: &'static str = TOOLS[self.rng.below(TOOLS.len() as u64) as usize];
            self.raw(b"{\"type\":\"toolCall\",\"id\":");
            write_str_escaped(&call_id, &mut self.line);
            self.str_member("name", tool);
            self.raw(b",\"arguments\":{");
            let file = self.rng.pick(FILES);
            match tool {
                "bash" => {
                    let cmd = format!(
                        "cd {} && cargo test -- {} 2>&1 | tail -50",
                        self.cfg.cwd,
                        self.rng.pick(IDENTS)
                    );
                    self.raw(b"\"command\":");
                    write_str_escaped(&cmd, &mut self.line);
                    self.num_member("timeout", 120.0);
                }
                "edit" | "write" => {
                    self.raw(b"\"path\":");
                    write_str_escaped(file, &mut self.line);
                    let size = self.rng.log_range(40, 3000) as usize;
                    self.tool_output("edit", size);
                    self.key(if tool == "edit" { "oldText" } else { "content" });
                    self.scratch_value();
                    if tool == "edit" {
                        let size = self.rng.log_range(40, 3000) as usize;
                        self.tool_output("edit", size);
                        self.key("newText");
                        self.scratch_value();
                    }
                }
                "grep" => {
                    self.raw(b"\"pattern\":\"fn \\\\w+\\\\(\",\"path\":\"src\"");
                }
                _ => {
                    self.raw(b"\"path\":");
                    write_str_escaped(file, &mut self.line);
                    if self.rng.chance(300) {
                        let o = self.rng.range(1, 900) as f64;
                        self.num_member("offset", o);
                        self.num_member("limit", 200.0);
                    }
                }
            }
            self.raw(b"}}");
            calls.push((call_id, tool));
        }
        self.raw(b"]");
        let anthropic = self.rng.chance(700);
        let (api, provider, model) = if anthropic {
            (
                "anthropic-messages",
                "anthropic",
                if self.rng.chance(500) {
                    "claude-sonnet-4-5"
                } else {
                    "claude-opus-4-1"
                },
            )
        } else {
            ("openai-responses", "openai", "gpt-5.1-codex")
        };
        self.str_member("api", api);
        self.str_member("provider", provider);
        self.str_member("model", model);
        let input = self.rng.range(1, 9000) as f64;
        let output = self.rng.range(10, 4000) as f64;
        let cache_read = self.rng.range(0, 180_000) as f64;
        let cache_write = self.rng.range(0, 9000) as f64;
        self.raw(b",\"usage\":{\"input\":");
        write_js_number(input, &mut self.line);
        self.num_member("output", output);
        self.num_member("cacheRead", cache_read);
        self.num_member("cacheWrite", cache_write);
        self.num_member("totalTokens", input + output + cache_read + cache_write);
        let r6 = |x: f64| (x * 1e6).round() / 1e6;
        let (ci, co, cr, cw) = (
            r6(input * 3e-6),
            r6(output * 15e-6),
            r6(cache_read * 0.3e-6),
            r6(cache_write * 3.75e-6),
        );
        self.raw(b",\"cost\":{\"input\":");
        write_js_number(ci, &mut self.line);
        self.num_member("output", co);
        self.num_member("cacheRead", cr);
        self.num_member("cacheWrite", cw);
        self.num_member("total", ci + co + cr + cw);
        self.raw(b"}}");
        self.str_member(
            "stopReason",
            if calls.is_empty() { "stop" } else { "toolUse" },
        );
        let t = self.now_ms as f64;
        self.num_member("timestamp", t);
        self.raw(b"}");
        self.summary.messages += 1;
        self.finish(id)?;
        Ok(calls)
    }

    fn tool_result(&mut self, call_id: &str, tool: &str) -> io::Result<()> {
        let id = self.begin("message");
        let size = match tool {
            "read" => self.rng.log_range(800, 100_000),
            "bash" => self.rng.log_range(100, 60_000),
            "grep" | "find" | "ls" => self.rng.log_range(200, 20_000),
            _ => 60,
        } as usize;
        let is_error = self.rng.chance(60);
        match tool {
            "edit" | "write" => {
                self.s.clear();
                self.s.push_str("Successfully replaced text in ");
                self.s.push_str(self.rng.pick(FILES));
                self.s.push('.');
            }
            _ => self.tool_output(tool, size),
        }
        self.key("message");
        self.raw(b"{\"role\":\"toolResult\",\"toolCallId\":");
        write_str_escaped(call_id, &mut self.line);
        self.str_member("toolName", tool);
        self.raw(b",\"content\":[{\"type\":\"text\",\"text\":");
        self.scratch_value();
        if tool == "bash" && self.rng.chance(30) {
            // Output cut in the middle of a surrogate pair, as JSON.stringify writes it.
            self.line.pop();
            self.line.extend_from_slice(b"\\ud83d\"");
        }
        self.raw(b"}]");
        if tool == "edit" {
            let size = self.rng.log_range(100, 4000) as usize;
            self.tool_output("edit", size);
            self.s.insert_str(0, "--- a\n+++ b\n@@ -1,7 +1,9 @@\n");
            self.raw(b",\"details\":{\"diff\":");
            self.scratch_value();
            let l = self.rng.range(1, 800) as f64;
            self.num_member("firstChangedLine", l);
            self.raw(b"}");
        } else if tool == "bash" && size > 30_000 {
            self.raw(b",\"details\":{\"truncation\":{\"truncated\":true,\"truncatedBy\":\"bytes\",\"totalLines\":");
            write_js_number(self.rng.range(2000, 90_000) as f64, &mut self.line);
            self.raw(b",\"outputLines\":2000},\"fullOutputPath\":\"/tmp/pi-bash-");
            let n = self.rng.next() as u32;
            self.raw(format!("{n:08x}.log\"}}").as_bytes());
        }
        self.raw(if is_error {
            b",\"isError\":true"
        } else {
            b",\"isError\":false"
        });
        let t = self.now_ms as f64;
        self.num_member("timestamp", t);
        self.raw(b"}");
        self.summary.messages += 1;
        self.finish(id)
    }

    fn bash_execution(&mut self) -> io::Result<()> {
        let id = self.begin("message");
        let size = self.rng.log_range(20, 8000) as usize;
        self.tool_output("bash", size);
        self.key("message");
        self.raw(b"{\"role\":\"bashExecution\",\"command\":\"git status --short && git log --oneline -5\",\"output\":");
        self.scratch_value();
        self.raw(b",\"exitCode\":0,\"cancelled\":false,\"truncated\":false");
        let t = self.now_ms as f64;
        self.num_member("timestamp", t);
        self.raw(b"}");
        self.summary.messages += 1;
        self.finish(id)
    }

    fn thinking_level(&mut self) -> io::Result<()> {
        let id = self.begin("thinking_level_change");
        let level = self
            .rng
            .pick(&["off", "minimal", "low", "medium", "high", "xhigh"]);
        self.str_member("thinkingLevel", level);
        self.finish(id)
    }

    fn model_change(&mut self) -> io::Result<()> {
        let id = self.begin("model_change");
        let (p, m) = if self.rng.chance(500) {
            ("anthropic", "claude-opus-4-1")
        } else {
            ("openai", "gpt-5.1-codex")
        };
        self.str_member("provider", p);
        self.str_member("modelId", m);
        self.finish(id)
    }

    fn label(&mut self) -> io::Result<()> {
        let back = self.rng.range(1, 200).min(self.path.len() as u64) as usize;
        let Some(target) = self
            .path
            .len()
            .checked_sub(back)
            .map(|i| self.path[i].clone())
        else {
            return Ok(());
        };
        let id = self.begin("label");
        self.str_member("targetId", &target);
        if !self.rng.chance(150) {
            let l = format!(
                "{} {}",
                self.rng
                    .pick(&["checkpoint", "bug", "good", "revisit", "✓ works"]),
                self.summary.labels
            );
            self.str_member("label", &l);
        }
        self.summary.labels += 1;
        self.finish(id)
    }

    fn custom(&mut self) -> io::Result<()> {
        let id = self.new_id();
        let ts = format_iso_ms(self.tick());
        self.line.clear();
        self.raw(b"{\"type\":\"custom\",\"customType\":\"todo-state\",\"data\":{\"items\":[");
        for k in 0..self.rng.range(1, 8) {
            if k > 0 {
                self.raw(b",");
            }
            self.prose(6);
            self.raw(b"{\"text\":");
            self.scratch_value();
            let done = self.rng.chance(400);
            self.raw(if done {
                b",\"done\":true}"
            } else {
                b",\"done\":false}"
            });
        }
        self.raw(b"],\"version\":2}");
        self.base(&id, &ts);
        self.finish(id)
    }

    fn custom_message(&mut self) -> io::Result<()> {
        let id = self.new_id();
        let ts = format_iso_ms(self.tick());
        self.line.clear();
        self.raw(b"{\"type\":\"custom_message\",\"customType\":\"file-watcher\",\"content\":");
        let words = self.rng.log_range(5, 200);
        self.prose(words);
        if self.rng.chance(500) {
            self.scratch_value();
        } else {
            self.raw(b"[{\"type\":\"text\",\"text\":");
            self.scratch_value();
            self.raw(b"}]");
        }
        let display = self.rng.chance(700);
        self.raw(if display {
            b",\"display\":true"
        } else {
            b",\"display\":false"
        });
        self.raw(b",\"details\":{\"changed\":[");
        let f = self.rng.pick(FILES);
        write_str_escaped(f, &mut self.line);
        self.raw(b"]}");
        self.base(&id, &ts);
        self.finish(id)
    }

    fn session_info(&mut self) -> io::Result<()> {
        let id = self.begin("session_info");
        let name = format!(
            "arbor: {} {}",
            self.rng.pick(IDENTS),
            self.rng
                .pick(&["refactor", "perf", "fix ünïcödé", "日本語"])
        );
        self.str_member("name", &name);
        self.finish(id)
    }

    fn compaction(&mut self) -> io::Result<()> {
        let back = self.rng.range(10, 60).min(self.path.len() as u64) as usize;
        let Some(kept) = self
            .path
            .len()
            .checked_sub(back)
            .map(|i| self.path[i].clone())
        else {
            return Ok(());
        };
        let id = self.begin("compaction");
        let words = self.rng.log_range(200, 1500);
        self.prose(words);
        self.s
            .insert_str(0, "## Goal\nMake arbor fast.\n\n## Progress\n");
        self.key("summary");
        self.scratch_value();
        self.str_member("firstKeptEntryId", &kept);
        let tb = self.rng.range(120_000, 199_000) as f64;
        self.num_member("tokensBefore", tb);
        self.raw(b",\"details\":{\"readFiles\":[");
        for k in 0..self.rng.range(1, 12) {
            if k > 0 {
                self.raw(b",");
            }
            let f = self.rng.pick(FILES);
            write_str_escaped(f, &mut self.line);
        }
        self.raw(b"],\"modifiedFiles\":[\"src/main.rs\"]}");
        self.since_compaction = 0;
        self.summary.compactions += 1;
        self.finish(id)
    }

    /// Abandons the last few entries: the leaf moves back to an earlier entry of the path,
    /// and most of the time a `branch_summary` records what was left.
    fn branch(&mut self) -> io::Result<()> {
        let back = self.rng.range(2, 40) as usize;
        if self.path.len() <= back + 1 {
            return Ok(());
        }
        self.path.truncate(self.path.len() - back);
        self.summary.branches += 1;
        if self.rng.chance(700) {
            let from = self.path.last().cloned().unwrap_or_default();
            let id = self.begin("branch_summary");
            self.str_member("fromId", &from);
            let words = self.rng.log_range(20, 300);
            self.prose(words);
            self.s
                .insert_str(0, "The user explored an alternative approach: ");
            self.key("summary");
            self.scratch_value();
            self.finish(id)?;
        }
        Ok(())
    }

    fn run(&mut self) -> io::Result<()> {
        self.header()?;
        self.session_info()?;
        self.thinking_level()?;
        self.model_change()?;
        while !self.done() {
            if self.cfg.compaction_every > 0 && self.since_compaction >= self.cfg.compaction_every {
                self.compaction()?;
            }
            if self.rng.chance(self.cfg.branch_per_mille) {
                self.branch()?;
            }
            if self.rng.chance(30) {
                self.thinking_level()?;
            }
            if self.rng.chance(30) {
                self.model_change()?;
            }
            if self.rng.chance(80) {
                self.custom()?;
            }
            if self.rng.chance(50) {
                self.label()?;
            }
            if self.rng.chance(40) {
                self.custom_message()?;
            }
            if self.rng.chance(30) {
                self.bash_execution()?;
            }
            if self.rng.chance(5) {
                self.session_info()?;
            }
            self.user()?;
            let rounds = self.rng.log_range(1, 9);
            for r in 0..rounds {
                let calls = self.assistant(r + 1 == rounds)?;
                for (call_id, tool) in calls {
                    self.tool_result(&call_id, tool)?;
                }
                if self.done() {
                    break;
                }
            }
        }
        self.summary.leaf_id = self.path.last().cloned().unwrap_or_default();
        self.summary.path_len = self.path.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_core::context::{build_session_context, LeafSel};
    use arbor_core::doc::SessionDoc;
    use std::sync::Arc;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert_eq!(parse_size("1.5M"), Ok(1_500_000));
        assert_eq!(parse_size("123"), Ok(123));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn deterministic_and_sized() {
        let cfg = GenConfig::new(2_000_000, 7);
        let (a, sa) = generate_vec(&cfg);
        let (b, sb) = generate_vec(&cfg);
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        assert_eq!(sa.bytes as usize, a.len());
        assert!(a.len() >= 2_000_000 && a.len() < 3_000_000, "{}", a.len());
        let (c, _) = generate_vec(&GenConfig::new(2_000_000, 8));
        assert_ne!(a, c);
    }

    #[test]
    fn output_is_a_clean_session_with_everything() {
        let mut cfg = GenConfig::new(8_000_000, 1);
        cfg.compaction_every = 150;
        cfg.branch_per_mille = 80;
        let (bytes, s) = generate_vec(&cfg);
        let doc = SessionDoc::parse(Arc::new(bytes)).expect("a session");
        assert!(doc.report().is_clean(), "{:?}", doc.report());
        assert_eq!(doc.entries().len() as u64, s.entries);
        assert_eq!(doc.index().id_count() as u64, s.entries, "ids are unique");
        let leaf = doc.index().leaf.expect("a leaf");
        assert_eq!(doc.entries()[leaf].id.as_deref(), Some(s.leaf_id.as_str()));
        assert_eq!(
            doc.index().path(&doc, leaf).entries.len() as u64,
            s.path_len
        );
        assert!(s.compactions > 0 && s.branches > 0 && s.labels > 0, "{s:?}");
        let names: std::collections::HashSet<&str> =
            doc.entries().iter().map(|e| e.type_name()).collect();
        for t in [
            "message",
            "compaction",
            "branch_summary",
            "label",
            "custom",
            "custom_message",
            "session_info",
            "model_change",
            "thinking_level_change",
        ] {
            assert!(names.contains(t), "missing {t}");
        }
        let ctx = build_session_context(&doc, LeafSel::Current);
        assert!(ctx.message_count() > 10);
        let mut out = Vec::new();
        ctx.write_json(&doc, &mut out);
        assert!(out.starts_with(b"{\"messages\":[{\"role\":\"compactionSummary\""));
    }
}
