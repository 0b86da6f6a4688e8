//! The names under which other characters are offered to the model: the one helper behind
//! rate_relation's `toward` enum and address_character's `to` enum, so both list a character
//! under the same name.
//!
//! Rules (contract, rate_relation): a preset is listed by its trimmed name (its id when the name
//! is empty); a preset named `user` (any case) is listed as `<name> (character)`, so the bare
//! `user` always means the human; a label that would repeat an earlier one (or the reserved
//! `user`) gets ` (<id>)` appended, so every label maps to exactly one preset. A preset whose
//! label still collides after that (only a contrived set of names gets there) is left out rather
//! than making an entry ambiguous.

/// The label reserved for the human.
pub const USER: &str = "user";

/// `(preset id, label)` for each `(preset id, name)` in `presets`, in the given order.
pub fn labels<I, S>(presets: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (String, S)>,
    S: AsRef<str>,
{
    let mut out: Vec<(String, String)> = Vec::new();
    let taken = |out: &[(String, String)], label: &str| {
        label == USER || out.iter().any(|(_, l)| l == label)
    };
    for (id, name) in presets {
        let name = name.as_ref().trim();
        let mut label = if name.is_empty() {
            id.clone()
        } else if name.eq_ignore_ascii_case(USER) {
            format!("{name} (character)")
        } else {
            name.to_string()
        };
        if taken(&out, &label) {
            label = format!("{label} ({id})");
        }
        if taken(&out, &label) {
            continue;
        }
        out.push((id, label));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(names: &[(&str, &str)]) -> Vec<(String, String)> {
        labels(names.iter().map(|(id, n)| (id.to_string(), *n)))
    }

    #[test]
    fn a_preset_named_user_is_user_character() {
        assert_eq!(
            run(&[("kai", "Kai"), ("user", "user"), ("u2", "USER")]),
            vec![
                ("kai".into(), "Kai".into()),
                ("user".into(), "user (character)".into()),
                ("u2".into(), "USER (character)".into()),
            ]
        );
    }

    #[test]
    fn repeats_and_empty_names_stay_distinct() {
        assert_eq!(
            run(&[
                ("a", "Mio"),
                ("b", "Mio"),
                ("c", "  "),
                ("d", "user (character)"),
                ("e", "User")
            ]),
            vec![
                ("a".into(), "Mio".into()),
                ("b".into(), "Mio (b)".into()),
                ("c".into(), "c".into()),
                ("d".into(), "user (character)".into()),
                ("e".into(), "User (character)".into()),
            ]
        );
        // A bare `user` label can never come out of the helper.
        assert!(run(&[("user", "")]).iter().all(|(_, l)| l != USER));
    }
}
