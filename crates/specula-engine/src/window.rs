//! The sliding context window: how a generation longer than the models' context goes on.
//! When the prompt and the text fill `window` positions, both models start afresh from
//! the last `window / 2` tokens; each stretch between slides is one exact decode with its
//! own seed. The CLI and the wasm crate both drive their stretches through this one
//! definition of the policy.

use crate::config::DecodeConfig;

/// The context the models read before the first token: the prompt, or its last
/// `window / 2` tokens when it does not leave a position free (`window` is at least 2).
#[must_use]
pub fn window_start(prompt: &[u32], window: usize) -> &[u32] {
    let window = window.max(2);
    if prompt.len() < window {
        prompt
    } else {
        &prompt[prompt.len() - window / 2..]
    }
}

/// Slides `context` (the tokens the models have read, ending with the newest): keeps its
/// last `window / 2` tokens.
pub fn slide_context(context: &mut Vec<u32>, window: usize) {
    let keep = window.max(2) / 2;
    context.drain(..context.len().saturating_sub(keep));
}

/// The configuration of stretch number `stretch` (0 for the first), allowed
/// `max_new_tokens`: the first keeps `config`'s seed, so a run that never slides is
/// unchanged; later ones get their own stream.
#[must_use]
pub fn stretch_config(config: &DecodeConfig, stretch: u64, max_new_tokens: usize) -> DecodeConfig {
    let seed = config
        .seed()
        .wrapping_add(stretch.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    config
        .clone()
        .with_seed(seed)
        .with_max_new_tokens(max_new_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Method;

    #[test]
    fn a_short_prompt_is_read_whole_and_a_long_one_from_its_last_half_window() {
        assert_eq!(window_start(&[1, 2, 3], 4), &[1, 2, 3]);
        assert_eq!(window_start(&[1, 2, 3, 4, 5], 4), &[4, 5]);
    }

    #[test]
    fn sliding_keeps_the_last_half_window() {
        let mut context = vec![1, 2, 3, 4, 5, 6];
        slide_context(&mut context, 6);
        assert_eq!(context, vec![4, 5, 6]);
    }

    #[test]
    fn only_later_stretches_change_the_seed() {
        let config = DecodeConfig::builder(Method::Autoregressive)
            .seed(7)
            .build()
            .unwrap();
        assert_eq!(stretch_config(&config, 0, 5).seed(), 7);
        assert_eq!(stretch_config(&config, 0, 5).max_new_tokens(), 5);
        assert_ne!(stretch_config(&config, 1, 5).seed(), 7);
    }
}
