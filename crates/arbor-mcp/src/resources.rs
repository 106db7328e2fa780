//! Sessions as resources: `arbor://session/ID`, each session's readable Markdown
//! (`arbor_view::export`, Format::Md), redacted and bounded; list with cursors, read,
//! subscribe.
use crate::server::ArborServer;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

/// The resources clients subscribed to.
#[derive(Default)]
pub(crate) struct Subscriptions {}

/// `resources/list`.
pub(crate) async fn list(
    _server: &ArborServer,
    _request: Option<PaginatedRequestParams>,
    _ctx: RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    Ok(ListResourcesResult::default())
}

/// `resources/templates/list`.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::default()
}

/// `resources/read`.
pub(crate) async fn read(
    _server: &ArborServer,
    request: ReadResourceRequestParams,
    _ctx: RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, ErrorData> {
    Err(ErrorData::resource_not_found(
        format!("{}: no such resource", request.uri),
        None,
    ))
}

/// `resources/subscribe`.
pub(crate) async fn subscribe(
    _server: &ArborServer,
    _request: SubscribeRequestParams,
    _ctx: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    Ok(())
}

/// `resources/unsubscribe`.
pub(crate) async fn unsubscribe(
    _server: &ArborServer,
    _request: UnsubscribeRequestParams,
    _ctx: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    Ok(())
}
