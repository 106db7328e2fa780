//! A [`SessionStore`] in this process's memory: for tests, and sessions that need no disk.
use super::{
    check_lines, BackendError, Blobs, SessionMeta, SessionStore, SessionWriter, StoredSession,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Sessions in memory. Clones share the same sessions.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    sessions: Mutex<BTreeMap<String, Session>>,
    blobs: Mutex<BTreeMap<String, Vec<u8>>>,
    released: Condvar,
    lease: Duration,
}

#[derive(Debug)]
struct Session {
    meta: SessionMeta,
    lines: Vec<Vec<u8>>,
    bytes: u64,
    modified_ms: i64,
    /// The present writer: its fence token and when its lease ends.
    holder: Option<(u64, Instant)>,
    next_fence: u64,
}

/// How long a writer's lease lasts without an append, by default: another writer may take
/// the session after that (the first one is then fenced).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::with_lease(DEFAULT_LEASE)
    }

    /// An empty store whose writer leases last `lease` past each append.
    pub fn with_lease(lease: Duration) -> MemoryStore {
        MemoryStore {
            shared: Arc::new(Shared {
                sessions: Mutex::new(BTreeMap::new()),
                blobs: Mutex::new(BTreeMap::new()),
                released: Condvar::new(),
                lease,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Session>> {
        self.shared.lock()
    }

    fn blobs(&self) -> MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.shared.blobs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Session>> {
        // A panic while holding the lock leaves consistent data (every change is one step).
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn no_session(id: &str) -> BackendError {
    BackendError::NoSession {
        store: "memory".into(),
        id: id.to_string(),
    }
}

impl SessionStore for MemoryStore {
    fn describe(&self) -> String {
        "memory".into()
    }

    fn create(&self, meta: &SessionMeta, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines("memory", lines)?;
        let mut map = self.lock();
        if map.contains_key(&meta.id) {
            return Err(BackendError::Exists {
                store: "memory".into(),
                id: meta.id.clone(),
            });
        }
        map.insert(
            meta.id.clone(),
            Session {
                meta: meta.clone(),
                lines: lines.iter().map(|l| l.to_vec()).collect(),
                bytes: lines.iter().map(|l| l.len() as u64 + 1).sum(),
                modified_ms: now_ms(),
                holder: None,
                next_fence: 1,
            },
        );
        Ok(())
    }

    fn read_into(
        &self,
        id: &str,
        from: u64,
        out: &mut dyn std::io::Write,
    ) -> Result<(), BackendError> {
        let map = self.lock();
        let s = map.get(id).ok_or_else(|| no_session(id))?;
        let from = usize::try_from(from)
            .unwrap_or(usize::MAX)
            .min(s.lines.len());
        for l in &s.lines[from..] {
            super::write_line("memory", out, l)?;
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<StoredSession>, BackendError> {
        Ok(self
            .lock()
            .values()
            .map(|s| StoredSession {
                meta: s.meta.clone(),
                lines: s.lines.len() as u64,
                bytes: s.bytes,
                modified_ms: s.modified_ms,
            })
            .collect())
    }

    fn writer(
        &self,
        id: &str,
        wait: Option<Duration>,
    ) -> Result<Box<dyn SessionWriter>, BackendError> {
        let deadline = wait.map(|w| Instant::now() + w);
        let mut map = self.lock();
        loop {
            let s = map.get_mut(id).ok_or_else(|| no_session(id))?;
            let now = Instant::now();
            match s.holder {
                Some((fence, until)) if until > now => {
                    let left = deadline.map(|d| d.saturating_duration_since(now));
                    match left {
                        Some(left) if !left.is_zero() => {
                            let step = left.min(until - now);
                            map = self
                                .shared
                                .released
                                .wait_timeout(map, step)
                                .map(|(g, _)| g)
                                .unwrap_or_else(|p| p.into_inner().0);
                            continue;
                        }
                        _ => {
                            return Err(BackendError::Busy {
                                store: "memory".into(),
                                id: id.to_string(),
                                holder: format!("fence {fence}"),
                            })
                        }
                    }
                }
                _ => {
                    let fence = s.next_fence;
                    s.next_fence += 1;
                    s.holder = Some((fence, now + self.shared.lease));
                    return Ok(Box::new(MemoryWriter {
                        shared: self.shared.clone(),
                        id: id.to_string(),
                        fence,
                        len: s.lines.len() as u64,
                    }));
                }
            }
        }
    }

    fn set_name(&self, id: &str, name: &str) -> Result<(), BackendError> {
        let mut map = self.lock();
        let s = map.get_mut(id).ok_or_else(|| no_session(id))?;
        s.meta.name = Some(name.to_string());
        Ok(())
    }

    fn delete(&self, id: &str) -> Result<(), BackendError> {
        let mut map = self.lock();
        let s = map.get(id).ok_or_else(|| no_session(id))?;
        if let Some((fence, until)) = s.holder {
            if until > Instant::now() {
                return Err(BackendError::Busy {
                    store: "memory".into(),
                    id: id.to_string(),
                    holder: format!("fence {fence}"),
                });
            }
        }
        map.remove(id);
        Ok(())
    }
}

impl Blobs for MemoryStore {
    fn has_blob(&self, hash: &str) -> Result<bool, BackendError> {
        Ok(self.blobs().contains_key(hash))
    }

    fn put_blob(&self, hash: &str, bytes: &[u8]) -> Result<(), BackendError> {
        super::check_blob("memory", hash, bytes)?;
        self.blobs()
            .entry(hash.to_string())
            .or_insert_with(|| bytes.to_vec());
        Ok(())
    }

    fn get_blob(&self, hash: &str) -> Result<Option<Vec<u8>>, BackendError> {
        Ok(self.blobs().get(hash).cloned())
    }
}

/// The writer of a [`MemoryStore`] session.
#[derive(Debug)]
struct MemoryWriter {
    shared: Arc<Shared>,
    id: String,
    fence: u64,
    len: u64,
}

impl MemoryWriter {
    /// The session, when this writer still holds it and it is as long as expected.
    fn held<'m>(
        &self,
        map: &'m mut BTreeMap<String, Session>,
    ) -> Result<&'m mut Session, BackendError> {
        let fenced = || BackendError::Fenced {
            store: "memory".into(),
            id: self.id.clone(),
            fence: self.fence,
        };
        let s = map.get_mut(&self.id).ok_or_else(fenced)?;
        match s.holder {
            Some((f, _)) if f == self.fence => {}
            _ => return Err(fenced()),
        }
        if s.lines.len() as u64 != self.len {
            return Err(BackendError::Moved {
                store: "memory".into(),
                id: self.id.clone(),
                expected: self.len,
                found: s.lines.len() as u64,
            });
        }
        Ok(s)
    }
}

impl SessionWriter for MemoryWriter {
    fn len(&self) -> u64 {
        self.len
    }

    fn fence(&self) -> u64 {
        self.fence
    }

    fn append(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines("memory", lines)?;
        let lease = self.shared.lease;
        let mut map = self.shared.lock();
        let s = self.held(&mut map)?;
        s.lines.extend(lines.iter().map(|l| l.to_vec()));
        s.bytes += lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>();
        s.modified_ms = now_ms();
        s.holder = Some((self.fence, Instant::now() + lease));
        self.len = s.lines.len() as u64;
        Ok(())
    }

    fn replace_all(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines("memory", lines)?;
        let lease = self.shared.lease;
        let mut map = self.shared.lock();
        let s = self.held(&mut map)?;
        s.lines = lines.iter().map(|l| l.to_vec()).collect();
        s.bytes = lines.iter().map(|l| l.len() as u64 + 1).sum();
        s.modified_ms = now_ms();
        s.holder = Some((self.fence, Instant::now() + lease));
        self.len = s.lines.len() as u64;
        Ok(())
    }
}

impl Drop for MemoryWriter {
    fn drop(&mut self) {
        let mut map = self.shared.lock();
        if let Some(s) = map.get_mut(&self.id) {
            if matches!(s.holder, Some((f, _)) if f == self.fence) {
                s.holder = None;
            }
        }
        drop(map);
        self.shared.released.notify_all();
    }
}
