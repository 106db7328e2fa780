//! arbor's test helpers, in one dev crate (a dev-dependency of every crate's tests, and a
//! dependency of the sync benchmark) instead of `#[path]` reaches into other crates' test
//! directories:
//!
//! - [`pg`]: a throwaway PostgreSQL server (Debian's `postgresql`, Unix socket only), or
//!   `ARBOR_PG_URL`'s;
//! - [`skip`]: the tests' visible skip (and `ARBOR_REQUIRE_ALL=1`, which makes it fail);
//! - [`full_disk`]: a small full disk (a size-limited tmpfs, or `RLIMIT_FSIZE`);
//! - [`as_nobody`]: running a program as another user (root only);
//! - [`private_home`](mod@private_home): running `arbor` in a home of its own ([`private_home!`]);
//! - [`planted`]: sessions with secrets planted in random places (proptest strategies);
//! - [`goldens`]: the golden harness's readers and comparisons (pi and omp);
//! - [`catalog`]: catalog fixtures;
//! - [`no_links`]: a real file system without hard links (exFAT through FUSE, root only).
//!
//! The store conformance suite stays in `arbor_store::backend::conformance`: it is built with
//! arbor-store (a doc example runs it), and the SQLite and PostgreSQL stores' tests run it
//! from there.
pub mod as_nobody;
pub mod catalog;
pub mod full_disk;
pub mod goldens;
pub mod no_links;
pub mod pg;
pub mod planted;
pub mod private_home;
pub mod served;
pub mod skip;
pub mod webdriver;
