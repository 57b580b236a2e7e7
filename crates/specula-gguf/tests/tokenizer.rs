//! The byte-level BPE tokenizer on a small hand-made GPT-2-style vocabulary: the 256
//! byte symbols, a few merges and a few special tokens.

use specula_gguf::{BpeTokenizer, GgufError, TokenizerSpec};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;

/// Merges as `(left, right)`, each making the token `left + right`, in priority order.
const MERGES: &[(&str, &str)] = &[
    ("Ġ", "t"),
    ("h", "e"),
    ("Ġt", "he"),
    ("1", "2"),
    ("12", "3"),
    ("'", "S"),
    ("l", "o"),
    ("lo", "w"),
];
const SPECIALS: &[(&str, i32)] = &[
    ("<|im_start|>", 3),
    ("<|im_end|>", 3),
    ("<think>", 4),
    // Not all byte symbols (the space is "Ġ" in those), so decoded as literal text.
    ("<|end of turn|>", 3),
];

/// The 256 byte symbols in code-point order, then the merged tokens, then the specials.
fn spec(pre: Option<&str>) -> TokenizerSpec {
    let mut alphabet: Vec<char> = ByteLevel::alphabet().into_iter().collect();
    alphabet.sort_unstable();
    let mut tokens: Vec<String> = alphabet.iter().map(char::to_string).collect();
    let mut token_types = vec![6; tokens.len()];
    for (a, b) in MERGES {
        tokens.push(format!("{a}{b}"));
        token_types.push(1);
    }
    for (text, ty) in SPECIALS {
        tokens.push((*text).to_owned());
        token_types.push(*ty);
    }
    let eos = id_in(&tokens, "<|im_end|>");
    TokenizerSpec {
        model: "gpt2".to_owned(),
        pre: pre.map(str::to_owned),
        tokens,
        token_types,
        merges: MERGES.iter().map(|(a, b)| format!("{a} {b}")).collect(),
        bos: Some(eos),
        eos: Some(eos),
        add_bos: false,
        chat_template: Some("{{ messages }}".to_owned()),
    }
}

fn id_in(tokens: &[String], token: &str) -> u32 {
    let at = tokens
        .iter()
        .position(|t| t == token)
        .expect("token in vocab");
    u32::try_from(at).expect("small vocab")
}

fn build(pre: Option<&str>) -> BpeTokenizer {
    BpeTokenizer::new(spec(pre)).expect("the hand-made spec builds")
}

fn pieces(tok: &BpeTokenizer, text: &str) -> Vec<String> {
    let ids = tok.encode(text).expect("encodes");
    ids.iter()
        .map(|&id| tok.token_text(id).expect("id in vocab"))
        .collect()
}

fn refusal(spec: TokenizerSpec) -> String {
    match BpeTokenizer::new(spec) {
        Err(GgufError::Tokenizer(message)) => message,
        other => panic!("expected a tokenizer error, got {other:?}"),
    }
}

#[test]
fn merges_apply_and_text_round_trips() {
    let tok = build(None);
    assert_eq!(tok.vocab_size(), 256 + MERGES.len() + SPECIALS.len());
    assert_eq!(pieces(&tok, "he the low"), ["he", " the", " ", "low"]);
    for text in [
        "",
        "he the low",
        "héllo, wörld! 日本語 🦀\n\ttabs  and  spaces\r\n",
        "\u{0}\u{7f}\u{ad} control bytes",
    ] {
        let ids = tok.encode(text).unwrap();
        assert_eq!(tok.decode(&ids).unwrap(), text);
        let bytes: Vec<u8> = ids
            .iter()
            .flat_map(|&id| tok.token_bytes(id).unwrap())
            .collect();
        assert_eq!(bytes, text.as_bytes());
    }
}

#[test]
fn byte_tokens_are_raw_bytes() {
    let tok = build(None);
    let ids = tok.encode("é").unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(tok.token_bytes(ids[0]).unwrap(), [0xc3]);
    assert_eq!(tok.token_bytes(ids[1]).unwrap(), [0xa9]);
    // Half a character decodes lossily rather than failing.
    assert_eq!(tok.decode(&ids[..1]).unwrap(), "\u{fffd}");
    assert_eq!(tok.token_text(ids[0]).unwrap(), "\u{fffd}");
    let newline = tok.encode("\n").unwrap();
    assert_eq!(tok.token_text(newline[0]).unwrap(), "\n");
    assert_eq!(tok.token_text(u32::MAX), None);
    assert_eq!(tok.token_bytes(tok.vocab_size() as u32), None);
}

#[test]
fn digits_split_by_pre_tokenizer() {
    // GPT-2's split keeps a run of digits together, so the merges make "123".
    assert_eq!(pieces(&build(Some("default")), "1231"), ["123", "1"]);
    assert_eq!(pieces(&build(Some("gpt2")), "12"), ["12"]);
    // SmolLM and Qwen2 split digits one by one before any merge.
    assert_eq!(pieces(&build(Some("smollm")), "1231"), ["1", "2", "3", "1"]);
    assert_eq!(
        pieces(&build(Some("qwen2")), "1231 the"),
        ["1", "2", "3", "1", " the"]
    );
    // Llama 3 takes digits three at a time.
    assert_eq!(pieces(&build(Some("llama-bpe")), "123123"), ["123", "123"]);
    assert_eq!(pieces(&build(Some("llama3")), "1212"), ["12", "1", "2"]);
}

#[test]
fn llama3_contractions_ignore_case() {
    // Llama 3's split isolates "'S" (case-insensitively), so the merge applies; GPT-2's
    // splits the apostrophe from the letter.
    assert_eq!(pieces(&build(Some("llama-bpe")), "IT'S"), ["I", "T", "'S"]);
    assert_eq!(pieces(&build(None), "IT'S"), ["I", "T", "'", "S"]);
    for pre in ["llama-bpe", "qwen2", "smollm"] {
        let tok = build(Some(pre));
        let text = "IT'S 1234 he said,\n\n  then  left. 日本";
        assert_eq!(
            tok.decode(&tok.encode(text).unwrap()).unwrap(),
            text,
            "{pre}"
        );
    }
}

#[test]
fn llama3_takes_whole_pieces_in_the_vocabulary() {
    // "xyz" is a token no merge reaches: Llama 3 ignores merges for a piece in the
    // vocabulary, the others do not.
    let mut with_xyz = spec(Some("llama-bpe"));
    with_xyz.tokens.push("xyz".to_owned());
    with_xyz.token_types.push(1);
    let llama = BpeTokenizer::new(with_xyz.clone()).unwrap();
    assert_eq!(pieces(&llama, "xyz"), ["xyz"]);
    with_xyz.pre = Some("qwen2".to_owned());
    let qwen = BpeTokenizer::new(with_xyz).unwrap();
    assert_eq!(pieces(&qwen, "xyz"), ["x", "y", "z"]);
}

#[test]
fn special_tokens_match_their_text() {
    for pre in [None, Some("smollm"), Some("llama-bpe"), Some("qwen2")] {
        let tok = build(pre);
        let start = id_in(&spec(None).tokens, "<|im_start|>");
        let end = id_in(&spec(None).tokens, "<|im_end|>");
        let think = id_in(&spec(None).tokens, "<think>");
        let ids = tok.encode("<|im_start|>he<think><|im_end|>").unwrap();
        assert_eq!(ids.first(), Some(&start));
        assert_eq!(ids[1..ids.len() - 2], tok.encode("he").unwrap()[..]);
        assert_eq!(ids[ids.len() - 2..], [think, end]);
        assert_eq!(tok.decode(&ids).unwrap(), "<|im_start|>he<think><|im_end|>");
        assert_eq!(tok.token_text(start).unwrap(), "<|im_start|>");
        let turn = id_in(&spec(None).tokens, "<|end of turn|>");
        let ids = tok.encode("he<|end of turn|> the").unwrap();
        assert!(ids.contains(&turn));
        assert_eq!(tok.decode(&ids).unwrap(), "he<|end of turn|> the");
        let bytes: Vec<u8> = ids
            .iter()
            .flat_map(|&id| tok.token_bytes(id).unwrap())
            .collect();
        assert_eq!(bytes, b"he<|end of turn|> the");
    }
}

#[test]
fn unknown_ids_are_refused() {
    let tok = build(None);
    let n = tok.vocab_size() as u32;
    let message = match tok.decode(&[0, n + 5, n]) {
        Err(GgufError::Tokenizer(message)) => message,
        other => panic!("expected a tokenizer error, got {other:?}"),
    };
    assert!(message.contains(&(n + 5).to_string()), "{message}");
}

#[test]
fn accessors_and_vocabulary_identity() {
    let tok = build(None);
    let eos = id_in(&spec(None).tokens, "<|im_end|>");
    assert_eq!(
        (tok.bos(), tok.eos(), tok.add_bos()),
        (Some(eos), Some(eos), false)
    );
    assert_eq!(tok.chat_template(), Some("{{ messages }}"));
    // The pre-tokenizer is not part of the vocabulary.
    let other = build(Some("smollm"));
    assert!(tok.same_vocabulary(&other));
    assert_eq!(tok.fingerprint(), other.fingerprint());
    let mut fewer = spec(None);
    fewer.merges.pop();
    let fewer = BpeTokenizer::new(fewer).unwrap();
    assert!(!tok.same_vocabulary(&fewer));
    assert_ne!(tok.fingerprint(), fewer.fingerprint());
    assert!(format!("{tok:?}").contains("vocab_size"));
}

#[test]
fn bad_specs_are_refused() {
    let check = |edit: &dyn Fn(&mut TokenizerSpec), needle: &str| {
        let mut bad = spec(None);
        edit(&mut bad);
        let message = refusal(bad);
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    };
    check(&|s| s.model = "llama".to_owned(), "\"llama\"");
    check(
        &|s| s.pre = Some("deepseek-llm".to_owned()),
        "\"deepseek-llm\"",
    );
    check(
        &|s| {
            s.tokens.clear();
            s.token_types.clear();
            s.merges.clear();
            s.bos = None;
            s.eos = None;
        },
        "empty",
    );
    check(
        &|s| {
            s.token_types.pop();
        },
        "token_type",
    );
    check(&|s| s.merges.push("Ġ zz".to_owned()), "\"zz\"");
    check(&|s| s.merges.push("x y".to_owned()), "\"xy\"");
    check(&|s| s.merges.push("xy".to_owned()), "\"xy\"");
    check(
        &|s| {
            s.tokens.push("he".to_owned());
            s.token_types.push(1);
        },
        "twice",
    );
    check(&|s| s.bos = Some(100_000), "bos token id 100000");
    check(&|s| s.eos = Some(u32::MAX), "eos token id");
}

#[test]
fn text_with_a_byte_the_vocabulary_cannot_spell_is_refused_not_dropped() {
    let mut spec = spec(None);
    let a = id_in(&spec.tokens, "a") as usize;
    spec.tokens[a] = "⁇".to_owned();
    let tok = BpeTokenizer::new(spec).unwrap();
    let e = tok.encode("bab").unwrap_err().to_string();
    assert!(e.contains("'a'") && e.contains("position 1"), "{e}");
    assert!(tok.encode("bb").is_ok());
}

#[test]
fn an_unknown_token_stands_in_for_missing_bytes() {
    let mut spec = spec(None);
    let a = id_in(&spec.tokens, "a") as usize;
    spec.tokens[a] = "<unk>".to_owned();
    spec.token_types[a] = 2;
    let tok = BpeTokenizer::new(spec).unwrap();
    assert_eq!(
        tok.encode("ab").unwrap(),
        [a as u32, id_in(&tok_tokens(&tok), "b")]
    );
}

fn tok_tokens(tok: &BpeTokenizer) -> Vec<String> {
    (0..tok.vocab_size() as u32)
        .map(|id| tok.token_text(id).unwrap())
        .collect()
}
