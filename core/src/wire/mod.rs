//! JSON-RPC 2.0 wire layer: ids, error objects, parsing with limits, and serialisation.
//!
//! Messages are classified by their keys (`method` + `id` is a request, `method` alone a
//! notification, `result`/`error` a response), never by serde's untagged variant order.

mod codes;
mod envelope;
mod escape;
mod hex;
mod id;
mod limits;
mod message;
mod outbound;
mod text;

pub use codes::{ErrorCode, ErrorObject};
pub(crate) use escape::push_json_string;
pub(crate) use hex::{hex, push_hex};
pub use id::RequestId;
pub use limits::{Limits, check_depth};
pub use message::{Frame, Inbound, Rejection, parse_frame};
pub(crate) use message::{Parsed, PlainCall, parse_inbound};
pub(crate) use outbound::{
    error_frame, notification_frame, request_frame, result_frame, result_frame_with,
};
// Binding plumbing, at home in `toolwire::host`; this path goes in the next release.
#[doc(hidden)]
pub use text::json_text;
