//! Ids and timestamps as pi and omp make them.
use arbor_core::doc::Dialect;
use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `new Date().toISOString()`.
pub fn now_iso() -> String {
    arbor_core::time::format_iso_ms(now_ms())
}

/// The timestamp part of a session file name: the ISO time with `:` and `.` replaced by `-`.
pub fn file_timestamp(iso: &str) -> String {
    iso.replace([':', '.'], "-")
}

/// A new session id: a UUIDv7, as pi 0.73 and omp 18 both make them.
pub fn new_session_id(_dialect: Dialect) -> String {
    uuid::Uuid::now_v7().to_string()
}

/// pi 1.5's `assertValidSessionId`: letters and digits, `.`, `_` and `-` inside, a letter or
/// digit at both ends (so the id is safe in a file name).
///
/// # Errors
/// [`StoreError::SessionId`](crate::StoreError::SessionId) with pi's message.
pub fn check_session_id(id: &str) -> Result<&str, crate::StoreError> {
    let b = id.as_bytes();
    let edge = |c: &u8| c.is_ascii_alphanumeric();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-');
    let ok = b.first().is_some_and(edge) && b.last().is_some_and(edge) && b.iter().all(inner);
    if ok {
        Ok(id)
    } else {
        Err(crate::StoreError::SessionId(id.to_string()))
    }
}

/// A new entry id not in `taken`: 8 random hex characters (pi: the first 8 of a UUIDv4,
/// omp: the last 8), up to 100 tries, then pi's fallback (a whole UUID) or omp's (16 hex).
pub fn new_entry_id(dialect: Dialect, taken: &dyn Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let u = uuid::Uuid::new_v4().to_string();
        let id = match dialect {
            Dialect::Pi => u[..8].to_string(),
            Dialect::Omp => u[u.len() - 8..].to_string(),
        };
        if !taken(&id) {
            return id;
        }
    }
    match dialect {
        Dialect::Pi => uuid::Uuid::new_v4().to_string(),
        Dialect::Omp => format!("{:016x}", rand::random::<u64>()),
    }
}

/// Convenience for id generation against a set.
pub fn new_entry_id_in(dialect: Dialect, set: &HashSet<String>) -> String {
    new_entry_id(dialect, &|id| set.contains(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_expected_shape() {
        let id = new_entry_id(Dialect::Pi, &|_| false);
        assert_eq!(id.len(), 8);
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        let sid = new_session_id(Dialect::Pi);
        assert_eq!(sid.len(), 36);
        assert_eq!(&sid[14..15], "7");
        assert_eq!(&new_session_id(Dialect::Omp)[14..15], "7");
        assert_eq!(
            file_timestamp("2024-12-03T14:00:00.000Z"),
            "2024-12-03T14-00-00-000Z"
        );
        // Every candidate taken: the fallback is longer than 8.
        assert_eq!(new_entry_id(Dialect::Pi, &|_| true).len(), 36);
        assert_eq!(new_entry_id(Dialect::Omp, &|_| true).len(), 16);
    }
}
