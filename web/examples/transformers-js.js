// Speculative decoding with two transformers.js causal language models that share a
// tokenizer, through Specula's decode(): the draft proposes, the target verifies, and the
// output follows the target exactly.
//
// Written against transformers.js v3's documented API (AutoTokenizer, AutoModelForCausalLM,
// Tensor, PreTrainedModel#getPastKeyValues, Tensor#slice) and not run here: no weights can
// be fetched where Specula is built and tested. What it relies on from Specula —
// cachedModel() and decode() — is tested in CI with synthetic models and the bundled pair
// (tests/web-package/decode-adapter.mjs). Usage:
//
//   import { speculate } from "./transformers-js.js";
//   for await (const text of speculate({
//     draft: "onnx-community/SmolLM2-135M-Instruct",
//     target: "onnx-community/SmolLM2-360M-Instruct",
//     prompt: "The capital of France is", gamma: 4, maxTokens: 32, seed: 1,
//   })) console.log(text);

import { AutoModelForCausalLM, AutoTokenizer, Tensor } from "@huggingface/transformers";
import { cachedModel, decode } from "specula";

/** int64 ids in a [1, n] tensor, as transformers.js models take them. */
function ids(tokens) {
  return new Tensor("int64", BigInt64Array.from(tokens, (t) => BigInt(t)), [1, tokens.length]);
}

/**
 * A decode() model over a transformers.js causal LM: each call runs only the tokens past
 * the cached prefix, with the key/value cache (`past_key_values`) of the positions before
 * them; rollback() cuts that cache back to the committed tokens.
 */
export async function transformersModel(id, options = {}) {
  const model = await AutoModelForCausalLM.from_pretrained(id, options);
  const vocabSize = model.config.vocab_size;
  return cachedModel({
    vocabSize,
    async step(cache, tokens) {
      const past = cache?.length ?? 0;
      const outputs = await model({
        input_ids: ids(tokens),
        attention_mask: new Tensor("int64", new BigInt64Array(past + tokens.length).fill(1n), [1, past + tokens.length]),
        past_key_values: cache?.pkv ?? null,
      });
      // logits: [1, tokens.length, vocabSize]. Some exports pad the vocabulary; keep the
      // first vocabSize entries of each row.
      const [, rows, width] = outputs.logits.dims;
      const data = outputs.logits.data;
      const logits = new Float32Array(rows * vocabSize);
      for (let r = 0; r < rows; r++) logits.set(data.subarray(r * width, r * width + vocabSize), r * vocabSize);
      return { logits, cache: { pkv: model.getPastKeyValues(outputs, cache?.pkv), length: past + tokens.length } };
    },
    truncate(cache, length) {
      // Each entry is [batch, heads, positions, headDim]: keep the first `length` positions.
      const pkv = {};
      for (const [name, tensor] of Object.entries(cache.pkv)) pkv[name] = tensor.slice(null, null, [0, length], null);
      return { pkv, length };
    },
  });
}

/**
 * Loads both models and the tokenizer, then yields the text of each round. Every option
 * of decode() applies (method, gamma, drafts, tree, temperature, topK, topP, seed, …).
 */
export async function* speculate({ draft, target, prompt, ...options }) {
  const tokenizer = await AutoTokenizer.from_pretrained(target);
  const [draftModel, targetModel] = await Promise.all([transformersModel(draft), transformersModel(target)]);
  const { input_ids } = await tokenizer(prompt);
  const promptIds = Array.from(input_ids.data, Number);
  const stop = tokenizer.eos_token_id === undefined ? undefined : [tokenizer.eos_token_id];
  for await (const round of decode({ ...options, draft: draftModel, target: targetModel, prompt: promptIds, stop })) {
    yield tokenizer.decode(round.tokens, { skip_special_tokens: true });
  }
}
