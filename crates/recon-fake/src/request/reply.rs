//! What a handler answers: a status and body, `Warning`s, or a watch's stream of events.

use super::watch_stream::WatchStream;
use crate::wire::error::ApiError;

/// What a handler answers.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) warnings: Vec<String>,
    /// The events of a watch, which follow the (empty) body.
    pub(crate) stream: Option<WatchStream>,
    /// The `Content-Type` when it is not the one the body implies (JSON, or Go's plain text).
    pub(crate) content_type: Option<&'static str>,
}

impl Reply {
    pub(crate) fn json(status: u16, body: Vec<u8>) -> Self {
        Reply {
            status,
            body,
            warnings: Vec::new(),
            stream: None,
            content_type: None,
        }
    }

    /// A body of a media type of its own, such as aggregated discovery's.
    pub(crate) fn typed(content_type: &'static str, body: Vec<u8>) -> Self {
        Reply {
            content_type: Some(content_type),
            ..Reply::json(200, body)
        }
    }

    pub(crate) fn stream(stream: WatchStream) -> Self {
        Reply {
            stream: Some(stream),
            ..Reply::json(200, Vec::new())
        }
    }

    pub(crate) fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }
}

impl From<ApiError> for Reply {
    fn from(err: ApiError) -> Self {
        Reply::json(err.code(), err.to_status_json())
    }
}
