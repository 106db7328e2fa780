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
//!
//! # The public API
//!
//! - Stores: [`SqliteStore`] (and its file's [`STORE_APP_ID`]); with the `postgres` feature,
//!   `PgStore` (and `PG_SCHEMA_VERSION`), and [`connect_postgres`] either way.
//! - The tables: [`schema`].
//! - Showing a connection string: [`redact_url`].
//!
//! # Cargo features
//!
//! - `postgres` (default): the PostgreSQL store and its client and TLS stack (`postgres`,
//!   `tokio-postgres-rustls`, `rustls`, `rustls-native-certs`). Without it [`connect_postgres`]
//!   refuses every URL with a message naming the feature.
#![deny(missing_docs)]

mod conninfo;
#[cfg(feature = "postgres")]
mod pg;
pub mod schema;
mod sqlite;

pub use conninfo::redact_url;
#[cfg(feature = "postgres")]
pub use pg::{PgStore, PG_SCHEMA_VERSION};
pub use sqlite::{SqliteStore, STORE_APP_ID};

use arbor_store::backend::{BackendError, SessionStore};
use std::sync::Arc;

/// What [`connect_postgres`] says in an arbor built without the `postgres` feature.
pub const NO_POSTGRES: &str =
    "this arbor was built without PostgreSQL support (feature `postgres`)";

/// The PostgreSQL store a `postgres://` URL (or `host=… dbname=…` string) names, as
/// `PgStore::connect` opens it, behind the store trait: the one entry point that exists
/// whether or not this crate was built with the `postgres` feature.
///
/// # Errors
/// With the feature, `PgStore::connect`'s. Without it, always [`BackendError::Db`] whose
/// message is [`NO_POSTGRES`] (the store named by the URL with its password masked).
pub fn connect_postgres(url: &str) -> Result<Arc<dyn SessionStore>, BackendError> {
    #[cfg(feature = "postgres")]
    {
        Ok(Arc::new(PgStore::connect(url)?))
    }
    #[cfg(not(feature = "postgres"))]
    {
        Err(BackendError::Db {
            store: redact_url(url),
            message: NO_POSTGRES.to_string(),
        })
    }
}

/// How [`open_url`] opens a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read and write; a missing SQLite file is created (`sync push`).
    Create,
    /// Read and write a store that must exist (`sync pull`, `sync status`).
    Existing,
    /// Read only, never written, never migrated (`arbor serve --from`): SQLite's file opened
    /// with `SQLITE_OPEN_READ_ONLY`, PostgreSQL's session read-only.
    ReadOnly,
}

/// The store a URL names: `sqlite:PATH` (`~` expanded) or `postgres://…` /
/// `postgresql://…`, opened as `access` says. The one reading of a store URL, for `arbor
/// sync` and `arbor serve --from`. `Ok(None)`: the URL names no kind of store this knows.
///
/// # Errors
/// The store's: [`SqliteStore::open`], [`SqliteStore::open_existing`],
/// [`SqliteStore::open_read_only`], [`connect_postgres`], [`connect_postgres_read_only`].
pub fn open_url(url: &str, access: Access) -> Result<Option<Arc<dyn SessionStore>>, BackendError> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        let path = arbor_store::paths::expand_tilde(path);
        return Ok(Some(Arc::new(match access {
            Access::Create => SqliteStore::open(&path)?,
            Access::Existing => SqliteStore::open_existing(&path)?,
            Access::ReadOnly => SqliteStore::open_read_only(&path)?,
        })));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Some(match access {
            Access::ReadOnly => connect_postgres_read_only(url)?,
            Access::Create | Access::Existing => connect_postgres(url)?,
        }));
    }
    Ok(None)
}

/// [`connect_postgres`] read-only (`PgStore::connect_read_only`): never written, never
/// migrated.
///
/// # Errors
/// As [`connect_postgres`].
pub fn connect_postgres_read_only(url: &str) -> Result<Arc<dyn SessionStore>, BackendError> {
    #[cfg(feature = "postgres")]
    {
        Ok(Arc::new(PgStore::connect_read_only(url)?))
    }
    #[cfg(not(feature = "postgres"))]
    {
        Err(BackendError::Db {
            store: redact_url(url),
            message: NO_POSTGRES.to_string(),
        })
    }
}

#[cfg(all(test, not(feature = "postgres")))]
mod without_postgres {
    /// Without the feature a PostgreSQL URL is refused with the feature named, and the
    /// password never shown.
    #[test]
    fn a_postgres_url_names_the_missing_feature() {
        let Err(e) = super::connect_postgres("postgres://ann:S3kr1t@db.example/s") else {
            panic!("a PostgreSQL URL opened without the feature");
        };
        let shown = e.to_string();
        assert_eq!(
            shown,
            "postgres://ann:***@db.example/s: this arbor was built without PostgreSQL support (feature `postgres`)"
        );
    }
}
