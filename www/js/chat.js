// SmolLM2-Instruct's chat form (ChatML), as its trained draft's data was written:
// specula_train::onpolicy::prompts::chat, of which this is a copy for the page (no
// imports, so Node can load it); crates/specula-cli/tests/page_chat.rs checks the two agree.

/** The system turn of every conversation (SmolLM2-Instruct's own default). */
export const SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

/** `instruction` as a conversation whose assistant turn is about to begin. */
export const chat = (instruction) =>
  `<|im_start|>system\n${SYSTEM}<|im_end|>\n<|im_start|>user\n${instruction}<|im_end|>\n<|im_start|>assistant\n`;
