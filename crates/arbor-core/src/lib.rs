//! arbor-core: the pi / omp session format in Rust.
//!
//! Pure logic, no filesystem: the entry model, the lossless JSONL codec, migrations v1→v3,
//! the tree index, context building as pi's `buildSessionContext`, and LLM conversion.
#![deny(missing_docs)]

pub mod json;
