//! What a listener heard of speech that was cut off: the first whole words of its text. The
//! stage's barge-in (speech by time) and the realtime transport (a share of a reply's audio) both
//! cut here.

/// The first `chars` characters of `text`, cut back to a whole word (the word still being spoken
/// is dropped; a text without spaces, such as CJK, is cut at the character), trimmed.
pub fn first_words(text: &str, chars: usize) -> String {
    if chars >= text.chars().count() {
        return text.trim().to_string();
    }
    let cut: String = text.chars().take(chars).collect();
    let at_boundary = text.chars().nth(chars).is_none_or(char::is_whitespace);
    let words = if at_boundary || !cut.contains(char::is_whitespace) {
        cut.as_str()
    } else {
        cut.rsplit_once(char::is_whitespace)
            .map(|(head, _)| head)
            .unwrap_or("")
    };
    words.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::first_words;

    #[test]
    fn whole_words_only_and_characters_for_text_without_spaces() {
        assert_eq!(first_words("one two three", 5), "one");
        assert_eq!(first_words("one two three", 7), "one two");
        assert_eq!(first_words("one two three", 99), "one two three");
        assert_eq!(first_words("one two", 0), "");
        assert_eq!(first_words("こんにちは世界", 3), "こんに");
    }
}
