//! What a handler answers: a status and body, `Warning`s, or a watch's stream of events.

use bytes::Bytes;

use super::watch_stream::WatchStream;
use crate::wire::error::ApiError;
use crate::wire::object::type_meta_head;

/// What a handler answers.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Body,
    pub(crate) warnings: Vec<String>,
    /// The events of a watch, which follow the (empty) body.
    pub(crate) stream: Option<WatchStream>,
    /// The `Content-Type` when it is not the one the body implies (JSON, or Go's plain text).
    pub(crate) content_type: Option<&'static str>,
}

impl Reply {
    pub(crate) fn json(status: u16, body: impl Into<Body>) -> Self {
        Reply {
            status,
            body: body.into(),
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
            ..Reply::json(200, Body::default())
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

/// A response body: `head`, then `tail`. An object served as it is stored is its `TypeMeta` (the
/// head) before the stored bytes, and the tail is those bytes, shared with the store: the
/// request log keeps the body so, and the two are joined only for the client.
#[derive(Debug, Clone, Default)]
pub(crate) struct Body {
    head: Box<[u8]>,
    tail: Bytes,
}

impl Body {
    /// `stored`, an object without `apiVersion` and `kind`, with them written first (as
    /// [`with_type_meta`](crate::wire::object::with_type_meta) writes them).
    pub(crate) fn typed(api_version: &str, kind: &str, stored: &Bytes) -> Body {
        let (head, tail) = type_meta_head(api_version, kind, stored);
        Body {
            head: head.into_boxed_slice(),
            tail: stored.slice(tail..),
        }
    }

    /// The body in one piece.
    pub(crate) fn to_bytes(&self) -> Bytes {
        if self.head.is_empty() {
            return self.tail.clone();
        }
        let mut whole = Vec::with_capacity(self.head.len() + self.tail.len());
        whole.extend_from_slice(&self.head);
        whole.extend_from_slice(&self.tail);
        Bytes::from(whole)
    }
}

impl From<Vec<u8>> for Body {
    fn from(body: Vec<u8>) -> Body {
        Body {
            head: Box::default(),
            tail: Bytes::from(body),
        }
    }
}

impl From<Bytes> for Body {
    fn from(tail: Bytes) -> Body {
        Body {
            head: Box::default(),
            tail,
        }
    }
}
