// Running totals over the rounds shown so far, with the engine's (vLLM's) definitions —
// a port of specula-engine's Metrics::record, so the page's numbers equal the engine's
// summary at the end of a run — and the closed-form theory of speculative decoding.

export function emptyMetrics() {
  return {
    rounds: 0,
    draftedTokens: 0,
    acceptedTokens: 0,
    resampledTokens: 0,
    bonusTokens: 0,
    emittedTokens: 0,
    draftCalls: 0,
    targetCalls: 0,
    draftedPerPosition: [],
    acceptedPerPosition: [],
    acceptedLengthHistogram: [],
    timing: { draftNanos: 0, targetNanos: 0, selectionNanos: 0 },
  };
}

const grow = (v, n) => {
  while (v.length < n) v.push(0);
};

/** Adds one round's trace (same rules as the engine). */
export function record(m, trace) {
  m.rounds += 1;
  m.draftedTokens += trace.drafts.length;
  m.acceptedTokens += trace.counts.accepted;
  m.resampledTokens += trace.counts.resampled;
  m.bonusTokens += trace.counts.bonus;
  m.emittedTokens += trace.emitted.length;
  m.draftCalls += trace.draftCalls;
  m.targetCalls += trace.targetCalls;
  const depth = trace.branching.length;
  grow(m.draftedPerPosition, depth);
  grow(m.acceptedPerPosition, depth);
  for (let i = 0; i < depth; i++) m.draftedPerPosition[i] += 1;
  trace.sources.forEach((source, i) => {
    if (source === "accepted" && i < m.acceptedPerPosition.length) m.acceptedPerPosition[i] += 1;
  });
  grow(m.acceptedLengthHistogram, trace.counts.accepted + 1);
  m.acceptedLengthHistogram[trace.counts.accepted] += 1;
  m.timing.draftNanos += trace.timing.draftNanos;
  m.timing.targetNanos += trace.timing.targetNanos;
  m.timing.selectionNanos += trace.timing.selectionNanos;
  return m;
}

const ratio = (a, b) => (b > 0 ? a / b : null);

export function summarize(m) {
  const total = m.timing.draftNanos + m.timing.targetNanos + m.timing.selectionNanos;
  return {
    acceptanceRate: ratio(m.acceptedTokens, m.draftedTokens),
    meanAcceptanceLength: m.rounds > 0 ? 1 + m.acceptedTokens / m.rounds : null,
    perPositionAcceptance: m.acceptedPerPosition.map((a, i) => ratio(a, m.draftedPerPosition[i]) ?? 0),
    blockEfficiency: ratio(m.emittedTokens, m.targetCalls),
    tokensPerSecond: total > 0 ? (m.emittedTokens / total) * 1e9 : null,
    // c: the cost of one draft call relative to one target call, both measured.
    costRatio:
      m.draftCalls > 0 && m.targetCalls > 0 && m.timing.targetNanos > 0
        ? m.timing.draftNanos / m.draftCalls / (m.timing.targetNanos / m.targetCalls)
        : null,
  };
}

/** Expected tokens per target call with per-token acceptance alpha and γ drafts: (1 − α^{γ+1})/(1 − α). */
export function expectedTokens(alpha, gamma) {
  if (alpha >= 1) return gamma + 1;
  return (1 - alpha ** (gamma + 1)) / (1 - alpha);
}

/** Walltime improvement factor over autoregressive decoding: E[tokens]/(γc + 1). */
export function walltimeFactor(alpha, gamma, c) {
  return expectedTokens(alpha, gamma) / (gamma * c + 1);
}
