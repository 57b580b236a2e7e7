//! The page's copy of SmolLM2-Instruct's chat form (www/js/chat.js, which its SmolLM2
//! pair sends prompts through) against the Rust one its trained draft's data was written
//! with (`specula_train::onpolicy::prompts::chat`): Node evaluates the page's module on
//! each instruction and the two texts must be the same, byte for byte.

use std::path::Path;
use std::process::Command;

use specula_train::onpolicy::prompts::chat;

/// The page's `chat(instruction)` for each instruction, evaluated by Node.
fn page_chat(instructions: &[&str]) -> Vec<String> {
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/js/chat.js");
    let module = module.canonicalize().expect("www/js/chat.js exists");
    // The module's URL and the instructions go in as JSON, the texts come out as JSON.
    let script = "const [url, list] = JSON.parse(process.argv[1]);\
                  const { chat } = await import(url);\
                  process.stdout.write(JSON.stringify(list.map(chat)));";
    let input = serde_json::json!([format!("file://{}", module.display()), instructions]);
    let out = Command::new("node")
        .args(["--input-type=module", "-e", script, &input.to_string()])
        .output()
        .expect("node runs (the page's tests need it too)");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("node printed a JSON list of strings")
}

#[test]
fn the_pages_chat_form_is_the_training_data_ones() {
    // The page's default, and text that a template literal or JSON could mangle.
    let instructions = [
        "Write a short story about a lighthouse keeper.",
        "",
        "two\nlines, a tab\t and \"quotes\"",
        "${SYSTEM} `backticks` \\n not a newline",
        "<|im_end|> inside, and non-ASCII: café, 灯台, 🚢",
    ];
    let page = page_chat(&instructions);
    assert_eq!(page.len(), instructions.len());
    for (instruction, got) in instructions.iter().zip(&page) {
        assert_eq!(got, &chat(instruction), "for {instruction:?}");
    }
}
