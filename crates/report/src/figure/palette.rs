//! The one palette of herd's charts: colours that stay distinct for colour-blind readers
//! (Okabe and Ito) and in greyscale print. Colours are `#RRGGBB` strings; [`rgb`] gives the
//! channels to back ends that want numbers.

pub const BLUE: &str = "#0072B2";
pub const ORANGE: &str = "#E69F00";
pub const GREEN: &str = "#009E73";
pub const RED: &str = "#D55E00";
pub const PURPLE: &str = "#CC79A7";
pub const SKY: &str = "#56B4E9";
pub const GREY: &str = "#7A8290";
const CYCLE: [&str; 7] = [BLUE, ORANGE, GREEN, RED, PURPLE, SKY, "#3B3B3B"];
const ERRORS: [&str; 6] = [
    "#7B2D8E", "#B2182B", "#3B3B3B", "#CC79A7", "#8C510A", "#5E3C99",
];

/// The n-th colour of a set of series.
pub fn cycle(n: usize) -> &'static str {
    CYCLE[n % CYCLE.len()]
}

/// Status classes in the colours people expect: success green, client errors orange,
/// server errors red.
pub fn status(class: &str) -> &'static str {
    match class {
        "1xx" => SKY,
        "2xx" => GREEN,
        "3xx" => BLUE,
        "4xx" => ORANGE,
        "5xx" => RED,
        _ => GREY,
    }
}

/// Error classes: darker tones, apart from the status colours.
pub fn error(n: usize) -> &'static str {
    ERRORS[n % ERRORS.len()]
}

/// The red, green and blue channels of a `#RRGGBB` colour; black for anything else.
pub fn rgb(hex: &str) -> (u8, u8, u8) {
    let channel = |i: usize| {
        hex.get(1 + 2 * i..3 + 2 * i)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .unwrap_or(0)
    };
    (channel(0), channel(1), channel(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgb_reads_the_palette_hex() {
        assert_eq!(rgb(BLUE), (0x00, 0x72, 0xB2));
        assert_eq!(rgb("#E69F00"), (230, 159, 0));
        assert_eq!(rgb("nonsense"), (0, 0, 0));
    }
}
