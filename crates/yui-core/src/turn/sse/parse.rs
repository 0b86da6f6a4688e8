//! The Server-Sent Events parser: the WHATWG "event stream interpretation" over network chunks
//! as they come, with no copy of a line that arrives whole in one chunk.
//!
//! Lines end in `\r\n`, `\n` or `\r` (a `\r` at the end of a chunk waits to see whether the
//! next chunk starts with `\n`); a leading byte order mark is skipped; `:` lines are comments;
//! `data` lines are joined with `\n`; `event` names the event (`message` when absent or empty);
//! a blank line dispatches the event unless it has no data. `id` and `retry` are read and
//! ignored: a turn never reconnects with `Last-Event-ID`. The whole stream must be UTF-8, and
//! one event may hold at most [`EVENT_MAX`](super::EVENT_MAX) bytes.
//!
//! It replaced `eventsource-stream`, which copied each chunk into a `String` and split a new
//! `String` off its buffer for every line: two thirds of a turn's per-event cost
//! (docs/PERFORMANCE.md).

use super::SseEvent;
use std::borrow::Cow;
use std::collections::VecDeque;

/// Why the stream could not be read as events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A line was not UTF-8.
    Utf8(std::str::Utf8Error),
    /// One event passed its size limit.
    TooLong,
}

/// One response's SSE parser state.
#[derive(Debug)]
pub struct Parser {
    /// A line begun in an earlier chunk and not yet ended.
    pending: Vec<u8>,
    /// The last chunk ended in `\r`: a `\n` starting the next one ends the same line.
    skip_lf: bool,
    /// The first line was read (a byte order mark is only skipped there).
    started: bool,
    /// The event being read: its data lines, each followed by `\n`, and its name.
    data: String,
    event: Option<String>,
    /// Events complete and not yet taken.
    ready: VecDeque<SseEvent>,
    limit: usize,
}

impl Parser {
    /// A parser whose events may hold at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            pending: Vec::new(),
            skip_lf: false,
            started: false,
            data: String::new(),
            event: None,
            ready: VecDeque::new(),
            limit,
        }
    }

    /// The next complete event, if any.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    /// Read one chunk of the body.
    pub fn feed(&mut self, mut b: &[u8]) -> Result<(), ParseError> {
        if b.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.skip_lf) && b[0] == b'\n' {
            b = &b[1..];
        }
        while let Some(i) = memchr::memchr2(b'\n', b'\r', b) {
            let (line, rest) = b.split_at(i);
            if self.pending.is_empty() {
                self.line(line)?;
            } else {
                let mut whole = std::mem::take(&mut self.pending);
                whole.extend_from_slice(line);
                self.line(&whole)?;
                whole.clear();
                self.pending = whole;
            }
            b = match rest {
                [b'\r', b'\n', tail @ ..] => tail,
                [b'\r'] => {
                    self.skip_lf = true;
                    &[]
                }
                [_, tail @ ..] => tail,
                [] => &[],
            };
        }
        self.pending.extend_from_slice(b);
        if self.pending.len() + self.data.len() > self.limit {
            return Err(ParseError::TooLong);
        }
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), ParseError> {
        let mut line = std::str::from_utf8(line).map_err(ParseError::Utf8)?;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch();
            return Ok(());
        }
        let (name, value) = match line.split_once(':') {
            // A comment.
            Some(("", _)) => return Ok(()),
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(ParseError::TooLong);
                }
                if self.data.is_empty() {
                    // Nearly every event has one data line: one allocation of the right size.
                    self.data.reserve_exact(value.len() + 1);
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self) {
        let event = self.event.take();
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        let event = match event {
            Some(e) if !e.is_empty() => Cow::Owned(e),
            _ => Cow::Borrowed("message"),
        };
        self.ready.push_back(SseEvent { event, data });
    }
}

#[cfg(test)]
mod tests {
    //! The spec's examples and the edge cases of chunking, as tables: chunks in, events out.
    use super::*;

    /// Events as (name, data).
    type Events = Vec<(String, String)>;

    fn parse(chunks: &[&[u8]]) -> Result<Events, ParseError> {
        let mut p = Parser::new(1024);
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c)?;
            while let Some(e) = p.next_event() {
                out.push((e.event.into_owned(), e.data));
            }
        }
        Ok(out)
    }

    fn ev(event: &str, data: &str) -> (String, String) {
        (event.to_string(), data.to_string())
    }

    #[test]
    fn the_spec_examples_parse_as_the_spec_says() {
        let cases: &[(&[u8], Events)] = &[
            (
                b"data: YHOO\ndata: +2\ndata: 10\n\n",
                vec![ev("message", "YHOO\n+2\n10")],
            ),
            (
                b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
                vec![
                    ev("message", "first event"),
                    ev("message", "second event"),
                    ev("message", " third event"),
                ],
            ),
            (b"data\n\ndata\ndata\n\ndata:", vec![ev("message", ""), ev("message", "\n")]),
            (b"data:test\n\ndata: test\n\n", vec![ev("message", "test"), ev("message", "test")]),
            (
                b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n",
                vec![ev("add", "73857293"), ev("remove", "2153")],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                &parse(&[input]).unwrap(),
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn every_line_end_and_every_split_give_the_same_events() {
        let want = vec![ev("message", "a\nb"), ev("x", "c")];
        for text in [
            "data: a\ndata: b\n\nevent: x\ndata: c\n\n",
            "data: a\r\ndata: b\r\n\r\nevent: x\r\ndata: c\r\n\r\n",
            "data: a\rdata: b\r\revent: x\rdata: c\r\r",
            "\u{feff}data: a\ndata: b\n\nevent: x\ndata: c\n\n",
        ] {
            let b = text.as_bytes();
            assert_eq!(parse(&[b]).unwrap(), want, "{text:?} whole");
            for cut in 1..b.len() {
                assert_eq!(
                    parse(&[&b[..cut], &b[cut..]]).unwrap(),
                    want,
                    "{text:?} cut at {cut}"
                );
            }
            let bytes: Vec<&[u8]> = b.chunks(1).collect();
            assert_eq!(parse(&bytes).unwrap(), want, "{text:?} byte by byte");
        }
    }

    #[test]
    fn no_data_no_event_and_an_empty_event_name_is_message() {
        let got =
            parse(&[b"event: ping\n\nid: 3\nretry: 10\n\n: keep-alive\n\nevent:\ndata: x\n\n"]);
        assert_eq!(got.unwrap(), vec![ev("message", "x")]);
    }

    #[test]
    fn a_split_multibyte_character_is_joined_and_bad_utf8_is_an_error() {
        let text = "data: 日本\n\n".as_bytes();
        assert_eq!(
            parse(&[&text[..7], &text[7..]]).unwrap(),
            vec![ev("message", "日本")]
        );
        assert!(matches!(
            parse(&[b"data: \xff\n\n"]),
            Err(ParseError::Utf8(_))
        ));
    }

    #[test]
    fn an_event_over_the_limit_is_refused_whether_one_line_or_many() {
        let long = vec![b'a'; 2000];
        assert_eq!(parse(&[b"data: ", &long]), Err(ParseError::TooLong));
        let line = [b"data: ".as_slice(), &[b'a'; 100], b"\n"].concat();
        let many: Vec<&[u8]> = std::iter::repeat_n(line.as_slice(), 20).collect();
        assert_eq!(parse(&many), Err(ParseError::TooLong));
        // Under the limit, event after event, nothing accumulates.
        let ok = [line.as_slice(), b"\n"].concat();
        let events: Vec<&[u8]> = std::iter::repeat_n(ok.as_slice(), 50).collect();
        assert_eq!(parse(&events).unwrap().len(), 50);
    }
}
