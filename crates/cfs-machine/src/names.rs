//! Names given on the command line or in files, and the hint a user gets
//! when one is mistyped.

/// The candidate closest to a mistyped `word` (case-insensitive
/// normalised Levenshtein similarity of at least 0.7), for "did you mean"
/// hints: `q660` → `q6600`, `2.6.26rc4` → `2.6.26-rc4`.
pub fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for &c in candidates {
        let score = strsim::normalized_levenshtein(&w, &c.to_ascii_lowercase());
        if score >= 0.7 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggest_takes_the_closest_name_above_the_threshold() {
        // normalised Levenshtein: 1 - distance / longer length.
        // "tigerto" against "tiger": 2 edits over 7, 0.71; against
        // "tigerton": 1 over 8, 0.875. Both pass 0.7; the closer one wins
        // in either order.
        assert_eq!(suggest("tigerto", &["tiger", "tigerton"]), Some("tigerton"));
        assert_eq!(suggest("tigerto", &["tigerton", "tiger"]), Some("tigerton"));
        // Case does not count: "Q660" is 1 edit over 5 from "q6600", 0.8.
        assert_eq!(suggest("Q660", &["x2", "q6600"]), Some("q6600"));
        // "vax" against "x2": 3 edits over 3, 0; nothing is offered.
        assert_eq!(suggest("vax", &["x2", "q6600"]), None);
        // "2.6.26rc4" against "2.6.26-rc4": 1 edit over 10, 0.9.
        assert_eq!(suggest("2.6.26rc4", &["2.6.25", "2.6.26-rc4"]), Some("2.6.26-rc4"));
    }
}
