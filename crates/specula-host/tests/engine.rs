//! The real models through the decoding engine, on the host forward pass and on burn's:
//! greedy speculative decoding (every method) must reproduce greedy autoregressive
//! decoding exactly.

use burn::tensor::Device;
use specula_engine::{
    DecodeConfig, Decoder, DraftShape, GammaPolicy, LanguageModel, Method, SamplingConfig,
    Selection, generate, generate_autoregressive,
};
use specula_host::{HostLm, HostPass};
use specula_model::{BurnLm, Gpt, ModelConfig};

fn shape(d_model: usize, n_layers: usize) -> ModelConfig {
    ModelConfig {
        vocab_size: 13,
        d_model,
        n_layers,
        n_heads: 4,
        d_ff: 2 * d_model,
        max_seq: 64,
    }
}

fn burn(d_model: usize, n_layers: usize, seed: u64) -> BurnLm {
    let config = shape(d_model, n_layers);
    let device = Device::flex();
    BurnLm::new(
        Gpt::new(&config, seed, 0.0, &device).unwrap(),
        config,
        device,
    )
    .unwrap()
}

fn host(d_model: usize, n_layers: usize, seed: u64) -> HostLm {
    let config = shape(d_model, n_layers);
    let model = Gpt::new(&config, seed, 0.0, &Device::flex()).unwrap();
    HostLm::from_pass(HostPass::new(&model, config).unwrap())
}

fn greedy(method: Method) -> DecodeConfig {
    DecodeConfig::builder(method)
        .sampling(SamplingConfig::greedy())
        .max_new_tokens(40)
        .build()
        .unwrap()
}

#[test]
fn greedy_speculative_equals_greedy_autoregressive() {
    greedy_speculative_equals_greedy_autoregressive_on(host);
    greedy_speculative_equals_greedy_autoregressive_on(burn);
}

fn greedy_speculative_equals_greedy_autoregressive_on<M: LanguageModel>(
    model: fn(usize, usize, u64) -> M,
) {
    let prompt = vec![1, 5, 2, 7];
    let mut target = model(32, 2, 11);
    let mut decoder = Decoder::new(greedy(Method::Autoregressive), prompt.clone()).unwrap();
    let reference = generate_autoregressive(&mut decoder, &mut target)
        .unwrap()
        .tokens;
    assert_eq!(reference.len(), 40);
    let methods = [
        Method::Speculative {
            gamma: 4,
            policy: GammaPolicy::Fixed,
        },
        Method::Speculative {
            gamma: 1,
            policy: GammaPolicy::Heuristic { max_gamma: 6 },
        },
        Method::SpecTr {
            drafts: DraftShape::Iid { k: 3, length: 3 },
            selection: Selection::KSeq,
        },
        Method::SpecTr {
            drafts: DraftShape::Tree {
                k: 4,
                branching: vec![2, 2, 1],
            },
            selection: Selection::Race,
        },
        Method::MultiRound {
            drafts: DraftShape::Iid { k: 2, length: 4 },
        },
        Method::Mentored {
            gamma: 3,
            kl_budget: 0.0,
            policy: GammaPolicy::Fixed,
        },
    ];
    for method in methods {
        let name = method.name();
        // A fresh target each time, and a draft that disagrees with it now and then.
        let mut target = model(32, 2, 11);
        let mut draft = model(16, 1, 12);
        let mut decoder = Decoder::new(greedy(method), prompt.clone()).unwrap();
        let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
        assert_eq!(out.tokens, reference, "{name}");
        // Both paths ran: some drafts accepted (fewer target calls than tokens), and some
        // rejected, with the target's token taken in their place.
        let m = &out.metrics;
        assert!(
            m.accepted_tokens > 0 && m.target_calls < 40,
            "{name}: {m:?}"
        );
        assert!(m.resampled_tokens > 0, "{name}: {m:?}");
    }
}

#[test]
fn a_draft_equal_to_the_target_is_always_accepted() {
    a_draft_equal_to_the_target_is_always_accepted_on(host);
    a_draft_equal_to_the_target_is_always_accepted_on(burn);
}

fn a_draft_equal_to_the_target_is_always_accepted_on<M: LanguageModel>(
    model: fn(usize, usize, u64) -> M,
) {
    let prompt = vec![3, 3, 1];
    let mut target = model(32, 2, 21);
    let mut draft = model(32, 2, 21);
    let config = DecodeConfig::builder(Method::Speculative {
        gamma: 4,
        policy: GammaPolicy::Fixed,
    })
    .max_new_tokens(30)
    .seed(5)
    .build()
    .unwrap();
    let mut decoder = Decoder::new(config, prompt).unwrap();
    let out = generate(&mut decoder, &mut draft, &mut target).unwrap();
    assert_eq!(out.tokens.len(), 30);
    assert_eq!(out.metrics.acceptance_rate(), Some(1.0));
}
