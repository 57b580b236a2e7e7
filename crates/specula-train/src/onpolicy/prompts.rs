//! The instructions a real target answers to make its draft's training data: every task
//! template applied to every topic, in a fixed order, so that the set (and its hash in
//! MODELS.md) is reproducible from the code alone. The last [`HELD_OUT_TOPICS`] topics
//! are never trained on: acceptance is measured on them.

/// What is asked, with `{}` standing for the topic.
const TASKS: [&str; 10] = [
    "Explain {} to a curious twelve-year-old.",
    "Write a short paragraph about {}.",
    "What are three common misconceptions about {}?",
    "Give me five quick facts about {}.",
    "Write a haiku about {}.",
    "Summarize the history of {} in a few sentences.",
    "What should a beginner know before learning about {}?",
    "Write a short story in which {} plays a part.",
    "Compare {} with something similar and explain the difference.",
    "Answer briefly: why does {} matter?",
];

/// What it is asked about: everyday subjects, science, craft and culture.
const TOPICS: [&str; 60] = [
    "photosynthesis",
    "the water cycle",
    "volcanoes",
    "black holes",
    "the human heart",
    "honey bees",
    "the Roman Empire",
    "the printing press",
    "electric cars",
    "recycling",
    "the moon landing",
    "chess",
    "baking bread",
    "learning a new language",
    "the internet",
    "climate change",
    "the Great Wall of China",
    "dinosaurs",
    "the Olympic Games",
    "coffee",
    "sleep",
    "rainbows",
    "earthquakes",
    "the immune system",
    "jazz music",
    "the periodic table",
    "gardening",
    "public libraries",
    "the Amazon rainforest",
    "trains",
    "saving money",
    "the solar system",
    "friendship",
    "octopuses",
    "mountains",
    "the ocean tides",
    "computers",
    "Shakespeare",
    "the French Revolution",
    "vaccines",
    "bicycles",
    "tea",
    "snow",
    "the pyramids of Egypt",
    "magnets",
    "birds migrating",
    "painting with watercolors",
    "robots",
    "the stock market",
    "deserts",
    // Held out (the last ten): never in the training data.
    "lighthouses",
    "the violin",
    "glaciers",
    "ancient Greek theatre",
    "solar panels",
    "penguins",
    "the microscope",
    "board games",
    "city parks",
    "bridges",
];

/// Topics whose instructions only measure acceptance.
pub const HELD_OUT_TOPICS: usize = 10;

/// The system turn every instruction is asked under (SmolLM2-Instruct's own default).
pub const SYSTEM: &str = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

/// Which instructions: the training ones or the held-out ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Topics trained on.
    Train,
    /// Topics only measured on.
    HeldOut,
}

/// The instructions of `split`, task-major within each topic.
#[must_use]
pub fn instructions(split: Split) -> Vec<String> {
    let cut = TOPICS.len() - HELD_OUT_TOPICS;
    let topics = match split {
        Split::Train => &TOPICS[..cut],
        Split::HeldOut => &TOPICS[cut..],
    };
    topics
        .iter()
        .flat_map(|topic| TASKS.iter().map(move |task| task.replace("{}", topic)))
        .collect()
}

/// `instruction` as a ChatML conversation whose assistant turn is about to begin, the
/// form SmolLM2-Instruct was tuned on.
#[must_use]
pub fn chat(instruction: &str) -> String {
    format!(
        "<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{instruction}<|im_end|>\n\
         <|im_start|>assistant\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_splits_are_disjoint_and_cover_every_topic_and_task() {
        let train = instructions(Split::Train);
        let held = instructions(Split::HeldOut);
        assert_eq!(train.len(), 500);
        assert_eq!(held.len(), 100);
        assert!(held.iter().all(|h| !train.contains(h)));
        assert_eq!(
            train[0],
            "Explain photosynthesis to a curious twelve-year-old."
        );
        assert_eq!(held[99], "Answer briefly: why does bridges matter?");
        assert!(chat("Hi").ends_with("<|im_start|>assistant\n"));
    }
}
