//! The body of a watch response: newline-delimited JSON events, as they come, until the timeout.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, StreamBody};
use tokio::sync::mpsc;

/// The event stream of a watch response.
#[derive(Debug)]
pub(crate) struct WatchStream {
    pub(crate) receiver: mpsc::UnboundedReceiver<Bytes>,
    pub(crate) timeout: Duration,
}

impl WatchStream {
    /// The response body: events as they come, until the timeout or until the server drops the
    /// watch.
    pub(crate) fn into_body(self) -> UnsyncBoxBody<Bytes, Infallible> {
        let events = futures::stream::unfold(self.receiver, |mut receiver| async move {
            let event = receiver.recv().await?;
            Some((Ok::<_, Infallible>(Frame::data(event)), receiver))
        });
        let deadline = tokio::time::sleep(self.timeout);
        StreamBody::new(events.take_until(deadline)).boxed_unsync()
    }
}

/// One event line: `{"type":…,"object":…}` and a newline.
pub(crate) fn frame(kind: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + kind.len() + 32);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_json_line() {
        assert_eq!(
            &frame("ADDED", br#"{"a":1}"#)[..],
            b"{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n"
        );
    }
}
