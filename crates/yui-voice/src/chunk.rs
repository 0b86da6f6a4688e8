//! Sentence chunking of streamed speech, so speaking can start with the first complete sentence
//! while the model is still writing the rest.
//!
//! A sentence ends at `.`, `!`, `?`, `…` (and runs of them) followed by a space or the end of a
//! line, and at once after CJK full stops and marks (`。！？` and their half/full-width kin), which
//! are not followed by spaces; closing quotes and brackets stay with their sentence. A line break
//! ends a sentence too. `3.14`, `e.g.x` and `...` inside a word do not end one. A sentence with
//! no letter or digit (a lone "…") is joined to the next.

/// Characters that end a sentence when followed by white space or the end of the text.
const LATIN_ENDS: &[char] = &['.', '!', '?', '…'];
/// Characters that end a sentence at once (CJK writing has no space after them).
const CJK_ENDS: &[char] = &['。', '！', '？', '｡', '︒', '﹒', '﹗', '﹖'];
/// Closers kept with the sentence they close.
const CLOSERS: &[char] = &[
    '"', '\'', ')', ']', '}', '”', '’', '」', '』', '）', '】', '》', '〉',
];

/// Cuts streamed text into sentences.
#[derive(Debug, Default, Clone)]
pub struct SentenceChunker {
    buf: String,
}

impl SentenceChunker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add streamed text; returns the sentences it completed, in order.
    pub fn push(&mut self, text: &str) -> Vec<String> {
        self.buf.push_str(text);
        let mut out = Vec::new();
        while let Some(end) = find_end(&self.buf, false) {
            let s: String = self.buf.drain(..end).collect();
            out.push(s.trim().to_string());
        }
        out
    }

    /// The stream ended: what is left, if it says anything.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buf);
        let t = rest.trim();
        t.chars().any(char::is_alphanumeric).then(|| t.to_string())
    }
}

fn says_something(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

/// The byte index just past the first sentence end in `s`, if one is certain now. `at_end`:
/// the text is complete (an end mark at the very end counts).
fn find_end(s: &str, at_end: bool) -> Option<usize> {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        if c == '\n' {
            let next = chars.get(i + 1).map_or(s.len(), |(b, _)| *b);
            if !says_something(&s[..chars[i].0]) {
                i += 1;
                continue;
            }
            return Some(next);
        }
        let cjk = CJK_ENDS.contains(&c);
        if cjk || LATIN_ENDS.contains(&c) {
            // Take the run of end marks and closers.
            let mut j = i + 1;
            while j < chars.len()
                && (LATIN_ENDS.contains(&chars[j].1)
                    || CJK_ENDS.contains(&chars[j].1)
                    || CLOSERS.contains(&chars[j].1))
            {
                j += 1;
            }
            let end = chars.get(j).map_or(s.len(), |(b, _)| *b);
            if !says_something(&s[..end]) {
                // A bare "…" joins the sentence after it.
                i = j;
                continue;
            }
            match chars.get(j) {
                Some((_, n)) if n.is_whitespace() => return Some(end),
                Some(_) if cjk => return Some(end),
                None if cjk || at_end => return Some(end),
                // The stream may go on ("3." then "14"): wait for the next character.
                None => return None,
                Some(_) => i = j,
            }
            continue;
        }
        i += 1;
    }
    None
}

/// Every sentence of a whole text.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = text.to_string();
    while let Some(end) = find_end(&buf, true) {
        let s: String = buf.drain(..end).collect();
        out.push(s.trim().to_string());
    }
    let t = buf.trim();
    if t.chars().any(char::is_alphanumeric) {
        out.push(t.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_latin_sentences_come_out_as_soon_as_they_are_certain() {
        let mut c = SentenceChunker::new();
        assert!(c.push("Hello there").is_empty());
        assert_eq!(c.push("! How are"), vec!["Hello there!"]);
        assert!(c.push(" you").is_empty());
        assert_eq!(c.push("? It is 3"), vec!["How are you?"]);
        assert!(c.push(".").is_empty(), "\"3.\" may go on as 3.14");
        assert_eq!(
            c.push("14 now. \"Really?\" she said… ok"),
            vec!["It is 3.14 now.", "\"Really?\"", "she said…"]
        );
        assert_eq!(c.finish().as_deref(), Some("ok"));
        assert_eq!(c.finish(), None);
    }

    #[test]
    fn cjk_sentences_end_at_their_marks_without_spaces() {
        let mut c = SentenceChunker::new();
        let mut got = c.push("こんにちは。今日はいい天気ですね！「本当？」と");
        got.extend(c.push("聞いた"));
        got.extend(c.finish());
        assert_eq!(
            got,
            vec![
                "こんにちは。",
                "今日はいい天気ですね！",
                "「本当？」",
                "と聞いた"
            ]
        );
        assert_eq!(
            sentences("你好。你好吗？我很好"),
            vec!["你好。", "你好吗？", "我很好"]
        );
    }

    #[test]
    fn line_breaks_end_sentences_and_marks_alone_join_the_next() {
        assert_eq!(
            sentences("First line\nSecond line.\n\n… And then."),
            vec!["First line", "Second line.", "… And then."]
        );
        assert_eq!(sentences("Wait... what?!"), vec!["Wait...", "what?!"]);
        assert!(sentences("  ... ").is_empty());
    }
}
