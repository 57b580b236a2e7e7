//! The opt-in stage profile of both host passes: off, it records nothing; on, its totals
//! count every pass and position, each stage's time is at most the pass's, and the logits
//! are bit for bit those of a pass without it.

use std::sync::Arc;
use std::time::Duration;

use burn::tensor::Device;
use specula_engine::{
    Clock, ForwardRequest, ForwardStage, LanguageModel, ManualClock, Query, Role, StageTimes,
    StdClock,
};
use specula_gguf::GgufModel;
use specula_gguf::synthetic::SyntheticLlama;
use specula_host::{DeviceLm, HostLlamaLm, HostLlamaPass, bundled};
use specula_model::{LlamaLm, ModelRole};

/// A cached prefix of `prefix` tokens, then `n` new positions (all queried).
fn requests(prefix: usize, n: usize) -> [ForwardRequest; 2] {
    let tokens: Vec<u32> = (0..(prefix + n) as u32).map(|i| (i * 7 + 3) % 40).collect();
    let ask = |len: usize, from: usize| ForwardRequest {
        role: Role::Target,
        committed_len: from,
        sequences: vec![tokens[..len].to_vec()],
        queries: (from + 1..=len)
            .map(|prefix_len| Query {
                sequence: 0,
                prefix_len,
            })
            .collect(),
    };
    [ask(prefix, 0), ask(prefix + n, prefix)]
}

/// The logits of the requests' second call, after the first.
fn second_logits(lm: &mut impl LanguageModel, prefix: usize, n: usize) -> Vec<f32> {
    let [first, second] = requests(prefix, n);
    lm.forward(&first).expect("the prefix runs");
    lm.forward(&second).expect("the new positions run").logits
}

fn check_totals(times: &StageTimes, passes: u64, positions: u64) {
    assert_eq!((times.passes, times.positions), (passes, positions));
    assert!(
        times.stage_sum() <= times.total,
        "stages {:?} over the total {:?}",
        times.stage_sum(),
        times.total
    );
    assert!(times.total > Duration::ZERO, "{times:?}");
    for stage in [ForwardStage::Qkv, ForwardStage::Head] {
        assert!(times.stage(stage) > Duration::ZERO, "{stage:?}: {times:?}");
    }
}

/// `lm` (a host pass, fresh) runs a 12-position prefix and then 5 positions: with the
/// profile on (a real clock) the same logits as off, counts of 2 passes and 17 positions.
fn profile_of(mut lm: DeviceLm, mut reference: DeviceLm) {
    let off = second_logits(&mut reference, 12, 5);
    assert_eq!(
        reference.stage_profile().expect("a host pass").times(),
        StageTimes::default(),
        "a profile that is off records nothing"
    );
    let clock: Arc<dyn Clock + Send + Sync> = Arc::new(StdClock::new());
    lm.stage_profile_mut().expect("a host pass").enable(clock);
    let on = second_logits(&mut lm, 12, 5);
    assert_eq!(
        on.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        off.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "the profile changes no logit"
    );
    let profile = lm.stage_profile_mut().expect("a host pass");
    check_totals(&profile.times(), 2, 17);
    profile.reset();
    assert_eq!(profile.times(), StageTimes::default());
    // The cache holds the 5 positions now: cut it back so that they run again.
    lm.truncate(12);
    let [_, second] = requests(12, 5);
    lm.forward(&second).expect("runs again");
    let profile = lm.stage_profile().expect("a host pass");
    assert!(profile.is_enabled());
    check_totals(&profile.times(), 1, 5);
}

#[test]
fn the_gpt_pass_profiles_its_stages_without_changing_a_logit() {
    let host = || DeviceLm::Host(bundled::load(ModelRole::Target).expect("the bundled target"));
    profile_of(host(), host());
}

fn llama() -> HostLlamaLm {
    let model = GgufModel::from_bytes(SyntheticLlama::tiny().build(), None).expect("loads");
    HostLlamaLm::from_pass(HostLlamaPass::new(&model).expect("the host pass"))
}

#[test]
fn the_llama_pass_profiles_its_stages_without_changing_a_logit() {
    profile_of(DeviceLm::HostLlama(llama()), DeviceLm::HostLlama(llama()));
}

#[test]
fn a_manual_clock_splits_the_pass_exactly() {
    // A clock that never moves: every stage and the total are zero, the counts still right.
    let mut lm = llama();
    let clock = ManualClock::new();
    lm.pass_mut()
        .stage_profile_mut()
        .enable(Arc::new(clock.clone()));
    second_logits(&mut lm, 4, 3);
    let times = lm.pass().stage_profile().times();
    assert_eq!((times.passes, times.positions), (2, 7));
    assert_eq!(times.total, Duration::ZERO);
    // Off again: later passes add nothing.
    lm.pass_mut().stage_profile_mut().disable();
    clock.advance(Duration::from_secs(1));
    second_logits(&mut lm, 4, 3);
    assert_eq!(lm.pass().stage_profile().times(), times);
}

#[test]
fn burn_passes_have_no_profile() {
    let model = GgufModel::from_bytes(SyntheticLlama::tiny().build(), None).expect("loads");
    let burn = LlamaLm::load(&model, &Device::flex()).expect("burn's pass");
    let mut lm = DeviceLm::Llama(burn);
    assert!(lm.stage_profile().is_none() && lm.stage_profile_mut().is_none());
}
