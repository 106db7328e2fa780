//! The tables, shared by the SQLite and PostgreSQL stores: a sessions table (id, cwd,
//! created, header line, name, parent session, tool, machine, the user who pushed it
//! (`pushed_by`, version 3), source path, counters, the writer lease) and an entries table with one row per line: the raw line exactly as
//! written (bytes, never only a parsed form, which would reorder keys and rewrite numbers)
//! and what is extracted from it for path walks and listing (id, parent id, type, timestamp;
//! NULL for a line that is not an object: [`arbor_core::entry::extract`]).

/// The schema's version, kept in `arbor_schema`; a database with another is migrated or
/// refused. 1: the tables; 3: who pushed each session ([`SQLITE_V3`]). (PostgreSQL's version
/// 2 changed only PostgreSQL's tables; the two kinds share the number from 3 on.)
pub const SCHEMA_VERSION: i64 = 3;

/// SQLite's migration to version 3: the OS user who pushed a session (`arbor sync push`;
/// NULL for rows pushed before, shown as unknown).
pub const SQLITE_V3: &str = "ALTER TABLE sessions ADD COLUMN pushed_by TEXT;";

/// SQLite's tables (version 1; [`SQLITE_V3`] brings them to version 3).
pub const SQLITE_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS arbor_schema (version INTEGER NOT NULL);
INSERT INTO arbor_schema (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM arbor_schema);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    created TEXT NOT NULL,
    header BLOB NOT NULL,
    name TEXT,
    parent_session TEXT,
    tool TEXT NOT NULL,
    machine TEXT,
    source_path TEXT,
    lines INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    modified_ms INTEGER NOT NULL,
    fence INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    lease_until_ms INTEGER
);
CREATE TABLE IF NOT EXISTS entries (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    line BLOB NOT NULL,
    entry_id TEXT,
    parent_id TEXT,
    type TEXT,
    timestamp TEXT,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_by_id ON entries (session_id, entry_id);
CREATE INDEX IF NOT EXISTS entries_by_parent ON entries (session_id, parent_id);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, modified_ms);
"#;

/// SQLite's blob table (omp's content-addressed images and outputs), made on every open: a
/// database from before it gains it.
pub const SQLITE_BLOBS: &str =
    "CREATE TABLE IF NOT EXISTS blobs (hash TEXT PRIMARY KEY, bytes BLOB NOT NULL);";
