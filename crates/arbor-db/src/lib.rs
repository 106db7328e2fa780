//! Session stores in databases: [`SqliteStore`] (one database file holding many sessions)
//! behind arbor-store's [`arbor_store::backend::SessionStore`], so that a
//! [`arbor_store::SessionManager`] opens and writes sessions there as in files.
//!
//! Each line of a session is one row holding its exact bytes (so a session read back is
//! byte-identical to its file, malformed and unknown lines included), with its id, parent id,
//! type and timestamp extracted for queries (see [`schema`]). One writer per session is kept
//! by a lease row with a fence token: a writer whose lease was taken over cannot append.
//!
//! ```
//! use arbor_db::SqliteStore;
//! use arbor_store::backend::SessionStore;
//! use arbor_store::{ManagerOptions, SessionManager};
//! use std::sync::Arc;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
//! let mut sm = SessionManager::create_in(store.clone(), "/work/p", ManagerOptions::default()).unwrap();
//! sm.append_message(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
//! assert_eq!(store.list().unwrap()[0].lines, 2);
//! ```
mod pg;
pub mod schema;
mod sqlite;

pub use pg::{redact_url, PgStore, PG_SCHEMA_VERSION};
pub use sqlite::{SqliteStore, STORE_APP_ID};
