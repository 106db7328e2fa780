//! Tools of this group (see the module's tools).
use crate::server::ArborServer;

#[rmcp::tool_router(router = session_router, allow_empty, vis = "pub(crate)")]
impl ArborServer {}
