//! Reading a session file's bytes: a read-only memory map for large files, guarded against
//! the file being cut short under the map.
//!
//! Copying a large file into a fresh buffer costs page faults, zeroing and the copy; mapping
//! it costs a fraction of that (docs/performance.md, "Figures behind code decisions"). A map
//! has one danger: when another
//! process truncates the file (pi rewrites a session with `writeFileSync`, which truncates
//! first), touching a mapped page past the new end raises `SIGBUS`, which would kill the
//! process. [`FileBytes`] registers every map in a small table, and a `SIGBUS` handler that
//! finds the faulting address in a registered map replaces the rest of that map with zero
//! pages and marks it: the reader sees NUL bytes instead of crashing, and
//! [`FileBytes::is_intact`] tells it to read the file again. A `SIGBUS` anywhere else goes to
//! the handler that was installed before (Rust's own, or the default: the process ends).
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Files smaller than this are read into memory: a map costs more than it saves for them.
pub const MAP_THRESHOLD: u64 = 1 << 20;

/// The bytes of a file: owned, or a guarded read-only map.
pub struct FileBytes {
    inner: Inner,
}

enum Inner {
    Owned(Vec<u8>),
    Mapped { map: memmap2::Mmap, slot: usize },
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.inner {
            Inner::Owned(_) => "owned",
            Inner::Mapped { .. } => "mapped",
        };
        f.debug_struct("FileBytes")
            .field("kind", &kind)
            .field("len", &self.as_ref().len())
            .finish()
    }
}

impl AsRef<[u8]> for FileBytes {
    fn as_ref(&self) -> &[u8] {
        match &self.inner {
            Inner::Owned(v) => v,
            Inner::Mapped { map, .. } => map,
        }
    }
}

impl FileBytes {
    /// Reads `path`: files of at least `MAP_THRESHOLD` (1 MiB) bytes are mapped (pages populated up
    /// front), smaller ones read. Falls back to reading when a map cannot be made or guarded.
    pub fn open(path: &Path) -> io::Result<FileBytes> {
        Self::open_with(path, true)
    }

    /// [`FileBytes::open`], but a map's pages are not populated up front: the caller maps them
    /// in with [`FileBytes::populate`] (or lets them fault in), for example on another thread
    /// while it already reads the first pages.
    pub fn open_unpopulated(path: &Path) -> io::Result<FileBytes> {
        Self::open_with(path, false)
    }

    fn open_with(path: &Path, populate: bool) -> io::Result<FileBytes> {
        let mut file = crate::safe_fs::open_regular(path)?;
        let len = file.metadata()?.len();
        if len >= MAP_THRESHOLD && usize::try_from(len).is_ok() {
            if let Some(fb) = Self::try_map(&file, populate) {
                return Ok(fb);
            }
        }
        let mut v = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut v)?;
        Ok(FileBytes {
            inner: Inner::Owned(v),
        })
    }

    /// Reads `path` into memory, never mapping it.
    pub fn read(path: &Path) -> io::Result<FileBytes> {
        Ok(FileBytes {
            inner: Inner::Owned(crate::safe_fs::read_regular(path)?),
        })
    }

    fn try_map(file: &File, populate: bool) -> Option<FileBytes> {
        if !install_handler() {
            return None;
        }
        let slot = claim_slot()?;
        // SAFETY: the map is read-only and private; the one way its contents can fail under us
        // (the file truncated by another process) is turned from SIGBUS into zero pages by the
        // handler, for as long as the map is registered in `slot`.
        let mut options = memmap2::MmapOptions::new();
        if populate {
            options.populate();
        }
        // SAFETY: see above: read-only, private, guarded by the SIGBUS handler while
        // registered in `slot`.
        let map = match unsafe { options.map(file) } {
            Ok(m) => m,
            Err(_) => {
                release_slot(slot);
                return None;
            }
        };
        register(slot, map.as_ptr() as usize, map.len());
        Some(FileBytes {
            inner: Inner::Mapped { map, slot },
        })
    }

    /// Whether the bytes are what the file held: `false` when the file was cut short while
    /// mapped and the missing part reads as zeros (read the file again).
    pub fn is_intact(&self) -> bool {
        match &self.inner {
            Inner::Owned(_) => true,
            Inner::Mapped { slot, .. } => !SLOT_HIT[*slot].load(Ordering::Acquire),
        }
    }

    /// Whether any memory map that is still open was cut short by another process (its
    /// missing part reads as zeros). A command that printed data from a map checks this
    /// before it reports success: the output may be wrong, and must be run again.
    pub fn any_open_map_cut() -> bool {
        (0..SLOTS)
            .any(|i| SLOT_USED[i].load(Ordering::Acquire) && SLOT_HIT[i].load(Ordering::Acquire))
    }

    /// Maps in the pages of `range` of a map (`MADV_POPULATE_READ`: one call instead of a page
    /// fault per page); nothing for bytes read into memory. Errors are ignored: a page that
    /// cannot be mapped in (the file was cut) faults when it is read, as without this call.
    pub fn populate(&self, range: std::ops::Range<usize>) {
        let Inner::Mapped { map, .. } = &self.inner else {
            return;
        };
        let page = PAGE.load(Ordering::Relaxed).max(1);
        let end = range.end.min(map.len());
        let start = range.start / page * page;
        if start >= end {
            return;
        }
        // SAFETY: a range of our own read-only map (start rounded down to a page boundary,
        // inside the map); MADV_POPULATE_READ only maps pages in and changes no contents.
        unsafe {
            libc::madvise(
                map.as_ptr().add(start) as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_READ,
            );
        }
    }

    /// Whether the bytes are a memory map.
    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, Inner::Mapped { .. })
    }
}

/// Keeps the resident part of a mapped session bounded while a reader goes through its lines
/// once, in any order (an export follows the tree, a scan the file): after every
/// [`crate::LEAN_WINDOW`] bytes of lines read, the whole map's pages are released with
/// [`release_pages`] (they come back from the page cache if read again). A line is mostly
/// shorter than a page, so releasing each line's own whole pages would release nothing.
///
/// ```
/// let bytes = b"{\"type\":\"session\"}\n".to_vec();
/// let mut resident = arbor_store::Resident::new(&bytes);
/// resident.read(&bytes[..]);
/// resident.done();
/// ```
pub struct Resident<'a> {
    map: &'a [u8],
    read: usize,
}

/// What one page fault may map of a file: the page and its neighbours up to Linux's
/// `fault_around_bytes` (64 KiB by default).
pub const FAULT_AROUND: usize = 64 << 10;

impl<'a> Resident<'a> {
    /// For the bytes of a session (a map made by [`FileBytes`]; other bytes are never
    /// released).
    pub fn new(map: &'a [u8]) -> Self {
        Resident { map, read: 0 }
    }

    /// `line` was read. It counts with the pages the kernel maps around each fault
    /// (`FAULT_AROUND`, 64 KiB): lines read out of file order (an export follows the tree) each map
    /// their neighbours too, so counting only their own bytes let 8 MB of lines keep 50-75 MB
    /// of the file mapped.
    pub fn read(&mut self, line: &[u8]) {
        self.read += line.len() + FAULT_AROUND;
        if self.read >= crate::LEAN_WINDOW {
            release_pages(self.map);
            self.read = 0;
        }
    }

    /// Reading is over: every page is released.
    pub fn done(self) {
        release_pages(self.map);
    }
}

/// Drops the page table entries of the whole pages of `bytes`, a part of an open memory map
/// that will not be read again (`MADV_DONTNEED`): the exit of the process then has fewer of
/// them to tear down. Reading those bytes again is still
/// correct: their pages fault back in from the file. Bytes that are not inside one map made
/// by [`FileBytes`] are left alone.
pub fn release_pages(bytes: &[u8]) {
    let start = bytes.as_ptr() as usize;
    let end = start + bytes.len();
    let inside = (0..SLOTS).any(|i| {
        let (s, l) = (
            SLOT_START[i].load(Ordering::Acquire),
            SLOT_LEN[i].load(Ordering::Acquire),
        );
        l > 0 && start >= s && end <= s + l
    });
    let page = PAGE.load(Ordering::Relaxed).max(1);
    let (a, b) = (start.div_ceil(page) * page, end / page * page);
    if !inside || a >= b {
        return;
    }
    // SAFETY: whole pages inside one of our own read-only shared file maps; MADV_DONTNEED only
    // unmaps their pages, which read the same bytes from the file when touched again.
    unsafe {
        libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_DONTNEED);
    }
}

impl Drop for FileBytes {
    fn drop(&mut self) {
        if let Inner::Mapped { slot, .. } = self.inner {
            // Unregister before the map (dropped right after this) is unmapped.
            release_slot(slot);
        }
    }
}

// ----- the guard table and the SIGBUS handler ------------------------------------------

const SLOTS: usize = 64;
static SLOT_USED: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static SLOT_START: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static SLOT_LEN: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static SLOT_HIT: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);

struct PrevAction(libc::sigaction);
// SAFETY: a plain C struct of integers (handler address, flags, mask), only read after it is set.
unsafe impl Sync for PrevAction {}
// SAFETY: as above: plain data, no thread affinity.
unsafe impl Send for PrevAction {}
static PREV: OnceLock<Option<PrevAction>> = OnceLock::new();

fn claim_slot() -> Option<usize> {
    (0..SLOTS).find(|&i| {
        SLOT_USED[i]
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    })
}

fn register(slot: usize, start: usize, len: usize) {
    // A long string in a map is skipped with its pages behind released.
    arbor_core::json::set_release_hook(release_pages);
    SLOT_HIT[slot].store(false, Ordering::Release);
    SLOT_START[slot].store(start, Ordering::Release);
    SLOT_LEN[slot].store(len, Ordering::Release);
}

fn release_slot(slot: usize) {
    SLOT_LEN[slot].store(0, Ordering::Release);
    SLOT_START[slot].store(0, Ordering::Release);
    SLOT_USED[slot].store(false, Ordering::Release);
}

/// Installs the SIGBUS handler once; `false` if it could not be installed.
fn install_handler() -> bool {
    PREV.get_or_init(|| {
        // SAFETY: plain libc calls with valid pointers; the handler only uses atomics and
        // async-signal-safe system calls (mmap, sigaction).
        unsafe {
            let ps = libc::sysconf(libc::_SC_PAGESIZE);
            if ps > 0 {
                PAGE.store(ps as usize, Ordering::Relaxed);
            }
            let mut new: libc::sigaction = std::mem::zeroed();
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                on_sigbus;
            new.sa_sigaction = handler as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
                return None;
            }
            Some(PrevAction(old))
        }
    })
    .is_some()
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let addr = if info.is_null() {
        0
    } else {
        // SAFETY: `info` is the kernel's siginfo for this signal, not null.
        unsafe { (*info).si_addr() as usize }
    };
    let page = PAGE.load(Ordering::Relaxed).max(1);
    for i in 0..SLOTS {
        let len = SLOT_LEN[i].load(Ordering::Acquire);
        if len == 0 {
            continue;
        }
        let start = SLOT_START[i].load(Ordering::Acquire);
        if addr >= start && addr < start + len {
            let from = addr & !(page - 1);
            let end = (start + len).div_ceil(page) * page;
            // SAFETY: replaces pages of our own read-only map (registered in slot i) with
            // anonymous zero pages; the map is unmapped as a whole when it is dropped.
            let r = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if r != libc::MAP_FAILED {
                SLOT_HIT[i].store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not one of our maps: hand the signal to the previous handler.
    match PREV.get() {
        Some(Some(PrevAction(prev))) => {
            let h = prev.sa_sigaction;
            if h == libc::SIG_DFL || h == libc::SIG_IGN {
                // Restore and return: the fault repeats and the default action ends the process.
                // SAFETY: restoring a disposition the kernel gave us.
                unsafe { libc::sigaction(sig, prev, std::ptr::null_mut()) };
            } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous handler was installed with SA_SIGINFO and this signature.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(h) };
                f(sig, info, ctx);
            } else {
                // SAFETY: a classic one-argument handler.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
                f(sig);
            }
        }
        _ => {
            // SAFETY: resetting to the default disposition.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn released_pages_read_the_file_again() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("big.jsonl");
        let data: Vec<u8> = (0..(3 << 20)).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &data).expect("write");
        let fb = FileBytes::open(&path).expect("open");
        assert!(fb.is_mapped());
        release_pages(&fb.as_ref()[1000..(2 << 20) + 17]);
        release_pages(&fb.as_ref()[..0]);
        assert_eq!(fb.as_ref(), &data[..]);
        // Not a map of ours: left alone.
        let v = data.clone();
        release_pages(&v);
        assert_eq!(v, data);
        assert!(fb.is_intact());
    }

    #[test]
    fn unpopulated_map_reads_the_file_with_or_without_populate() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("big.jsonl");
        let data: Vec<u8> = (0..(3 << 20)).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).expect("write");
        let fb = FileBytes::open_unpopulated(&path).expect("open");
        assert!(fb.is_mapped());
        fb.populate(5..(1 << 20));
        fb.populate(data.len() - 10..data.len() + 4096);
        let (from, to) = (7, 3);
        fb.populate(from..to);
        assert_eq!(fb.as_ref(), &data[..]);
        assert!(fb.is_intact());
    }

    #[test]
    fn small_files_are_read_large_files_mapped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let small = dir.path().join("small.jsonl");
        std::fs::write(&small, b"{\"type\":\"session\"}\n").expect("write");
        let fb = FileBytes::open(&small).expect("open");
        assert!(!fb.is_mapped());
        assert_eq!(fb.as_ref(), b"{\"type\":\"session\"}\n");
        let big = dir.path().join("big.jsonl");
        let content = vec![b'x'; (MAP_THRESHOLD as usize) + 10];
        std::fs::write(&big, &content).expect("write");
        let fb = FileBytes::open(&big).expect("open");
        assert!(fb.is_mapped());
        assert!(fb.is_intact());
        assert_eq!(fb.as_ref(), &content[..]);
    }

    #[test]
    fn truncation_under_a_map_reads_zeros_instead_of_crashing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("s.jsonl");
        let len = 4 * MAP_THRESHOLD as usize;
        let mut f = File::create(&p).expect("create");
        f.write_all(&vec![b'a'; len]).expect("write");
        drop(f);
        let fb = FileBytes::open(&p).expect("open");
        assert!(fb.is_mapped());
        // Another process rewrites the file: truncate, then write less.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .expect("open for truncate");
        f.set_len(1000).expect("truncate");
        let bytes = fb.as_ref();
        assert_eq!(bytes[10], b'a');
        // Past the new end: without the guard this access raises SIGBUS.
        let tail: u64 = bytes[len - 5000..].iter().map(|&b| u64::from(b)).sum();
        assert_eq!(tail, 0);
        assert!(!fb.is_intact());
        assert!(FileBytes::any_open_map_cut());
        drop(fb);
        // The slot is free again and a new map of the same file is intact.
        let fb = FileBytes::open(&p).expect("reopen");
        assert!(fb.is_intact());
        assert_eq!(fb.as_ref().len(), 1000);
    }
}
