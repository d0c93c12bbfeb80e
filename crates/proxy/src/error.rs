//! The API's errors, with toxiproxy's messages and statuses (`{"error": ..., "status": ...}`).

use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub message: String,
    pub status: u16,
}

impl ApiError {
    pub fn new(message: impl Into<String>, status: u16) -> ApiError {
        ApiError {
            message: message.into(),
            status,
        }
    }

    pub fn bad_body(detail: String) -> ApiError {
        ApiError::new(format!("bad request body: {detail}"), 400)
    }

    pub fn missing(field: &str) -> ApiError {
        ApiError::new(format!("missing required field: {field}"), 400)
    }

    pub fn proxy_not_found() -> ApiError {
        ApiError::new("proxy not found", 404)
    }

    pub fn proxy_exists() -> ApiError {
        ApiError::new("proxy already exists", 409)
    }

    pub fn invalid_stream() -> ApiError {
        ApiError::new(
            "stream was invalid, can be either upstream or downstream",
            400,
        )
    }

    pub fn invalid_type(given: &str) -> ApiError {
        ApiError::new(
            format!(
                "invalid toxic type: {given:?} (one of latency, bandwidth, slow_close, timeout, \
                 reset_peer, slicer, limit_data, packet_loss, http)"
            ),
            400,
        )
    }

    pub fn toxic_exists() -> ApiError {
        ApiError::new("toxic already exists", 409)
    }

    pub fn toxic_not_found() -> ApiError {
        ApiError::new("toxic not found", 404)
    }

    pub fn to_json(&self) -> Value {
        json!({"error": self.message, "status": self.status})
    }
}
