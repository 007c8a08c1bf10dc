//! The browser's DevTools pipe in its CBOR mode (`--remote-debugging-pipe=cbor`): each
//! message is one CBOR envelope, nothing between them. Messages are handed up as the browser
//! wrote them: a reply is converted to JSON only if its reader asks for text, and the
//! snapshot and the screenshot read theirs as CBOR (the browser's own conversion to JSON was
//! a third of a large snapshot's time; see `devtools_cbor`).

use super::socket::Payload;
use devtools_cbor::{HEADER_LEN, content_len};
use serde_json::Value;
use std::io;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

/// No reply of the browser comes near this; a header announcing more is refused before
/// anything is allocated.
const MAX_MESSAGE: usize = 512 << 20;

/// The receiving end: whole messages, in order, as JSON text.
pub struct Reader {
    stream: BufReader<pipe::Receiver>,
}

impl Reader {
    pub fn new(receiver: pipe::Receiver) -> Reader {
        Reader {
            stream: BufReader::with_capacity(1 << 16, receiver),
        }
    }

    /// The next whole message, as CBOR; `None` once the browser closed the pipe.
    pub async fn next_message(&mut self) -> io::Result<Option<Payload>> {
        let mut header = [0u8; HEADER_LEN];
        if let Err(error) = self.stream.read_exact(&mut header).await {
            return match error.kind() {
                io::ErrorKind::UnexpectedEof => Ok(None),
                _ => Err(error),
            };
        }
        // Without a valid header the stream cannot be followed any further.
        let len = content_len(&header).map_err(io::Error::other)?;
        if len > MAX_MESSAGE {
            return Err(io::Error::other(format!(
                "the browser sent a message of more than {MAX_MESSAGE} bytes"
            )));
        }
        let mut message = Payload::zeroed(HEADER_LEN + len)?;
        message.bytes_mut()[..HEADER_LEN].copy_from_slice(&header);
        self.stream
            .read_exact(&mut message.bytes_mut()[HEADER_LEN..])
            .await?;
        Ok(Some(message))
    }
}

/// The sending end: commands, converted to CBOR.
pub struct Writer {
    stream: pipe::Sender,
}

impl Writer {
    pub fn new(sender: pipe::Sender) -> Writer {
        Writer { stream: sender }
    }

    pub async fn send(&mut self, message: &Value) -> io::Result<()> {
        let bytes = devtools_cbor::from_json(message).map_err(io::Error::other)?;
        self.stream.write_all(&bytes).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Our reading end, and a writer standing in for the browser.
    fn pipe_pair() -> (Reader, pipe::Sender) {
        let (from_browser, browser_writes) = std::io::pipe().expect("pipe");
        let receiver = pipe::Receiver::from_owned_fd(from_browser.into()).expect("receiver");
        let sender = pipe::Sender::from_owned_fd(browser_writes.into()).expect("sender");
        (Reader::new(receiver), sender)
    }

    #[tokio::test]
    async fn messages_arrive_whole_and_in_order_until_the_pipe_closes() {
        let (mut reader, mut browser) = pipe_pair();
        let big = "x".repeat(3 << 20);
        let messages = [
            json!({ "id": 1, "result": { "a": [1, "é"] } }),
            json!({ "method": "M", "params": { "big": big } }),
            json!({ "id": 2, "result": {} }),
        ];
        let encoded: Vec<Vec<u8>> = messages
            .iter()
            .map(|message| devtools_cbor::from_json(message).expect("encodes"))
            .collect();
        let writer = tokio::spawn(async move {
            browser.write_all(&encoded.concat()).await.expect("write");
        });
        for message in &messages {
            let read = reader
                .next_message()
                .await
                .expect("read")
                .expect("a message");
            let text = devtools_cbor::to_json(read.bytes()).expect("converts");
            assert_eq!(
                &serde_json::from_slice::<Value>(&text).expect("JSON"),
                message
            );
        }
        writer.await.expect("writer");
        assert!(
            reader.next_message().await.expect("read").is_none(),
            "end of file"
        );
    }

    #[tokio::test]
    async fn a_header_that_is_not_an_envelope_or_announces_too_much_ends_the_stream() {
        let (mut reader, mut browser) = pipe_pair();
        browser.write_all(b"{\"id\":1}\0").await.expect("write");
        let error = reader.next_message().await.err().expect("refused");
        assert!(error.to_string().contains("envelope"), "{error}");

        let (mut reader, mut browser) = pipe_pair();
        browser
            .write_all(&[0xd8, 0x18, 0x5a, 0xff, 0xff, 0xff, 0xff])
            .await
            .expect("write");
        let error = reader.next_message().await.err().expect("refused");
        assert!(error.to_string().contains("more than"), "{error}");
    }
}
