//! Prints the instructions of a split of the on-policy data as a JSON array, in the chat
//! form the target answered them in: the prompts file of `specula bench --prompts` that
//! measures a trained draft on the instructions it never saw.
//!
//! `cargo run --release -p specula-train --example onpolicy_prompts -- [train|held-out]
//! [count]` (default: held-out, all 100). Fewer than all are a spread over tasks and
//! topics: every 7th instruction, wrapping around (7 is prime to both splits' sizes, so
//! none repeats).

use specula_train::onpolicy::prompts::{Split, chat, instructions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = match args.first().map_or("held-out", String::as_str) {
        "train" => Split::Train,
        "held-out" => Split::HeldOut,
        other => {
            return Err(format!(
                "usage: onpolicy_prompts [train|held-out] [count]: split {other:?}"
            )
            .into());
        }
    };
    let all = instructions(split);
    let count = args.get(1).map_or(Ok(all.len()), |c| c.parse())?;
    let prompts: Vec<String> = (0..count.min(all.len()))
        .map(|i| chat(&all[i * 7 % all.len()]))
        .collect();
    println!("{}", serde_json::to_string_pretty(&prompts)?);
    Ok(())
}
