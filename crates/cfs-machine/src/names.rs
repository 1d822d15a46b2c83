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
