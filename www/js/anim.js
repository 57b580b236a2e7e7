// Plays a round of the engine's trace on the stage: the stage's model (stage-model.js) at
// each step, drawn by stage-view.js, with a pause between steps as fast as the speed
// slider says (Pacer). The round's content is the model's; this module only paces it.
import { stageFrames, stageModel, phaseStep } from "./stage-model.js";
import { renderStage } from "./stage-view.js";
import { showPiece } from "./piece-text.js";

export class Cancelled extends Error {}

/** Speed steps of the speed slider; the last is "instant". */
export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, Infinity];

/** Pacing of one animation: respects speed, pause, skip (step) and cancel (reset). */
export class Pacer {
  constructor(getSpeed) {
    this.getSpeed = getSpeed;
    this.paused = false;
    this.skip = false;
    this.cancelled = false;
    this.wakers = new Set();
  }
  wake() {
    for (const w of this.wakers) w();
    this.wakers.clear();
  }
  async wait(ms) {
    if (this.cancelled) throw new Cancelled();
    const speed = this.getSpeed();
    if (!this.skip && Number.isFinite(speed)) {
      await new Promise((resolve) => {
        const t = setTimeout(done, ms / speed);
        const self = this;
        function done() {
          clearTimeout(t);
          self.wakers.delete(done);
          resolve();
        }
        this.wakers.add(done);
      });
    }
    while (this.paused && !this.skip && !this.cancelled) await new Promise((r) => this.wakers.add(r));
    if (this.cancelled) throw new Cancelled();
  }
}

/** A token's text as drawn: a character, or a GGUF token's piece (" the" as "␣the", "\n" as "↵"). */
export const showChar = showPiece;

/** Whether the pacer will not wait: "instant", or skipping to the end of the round. */
const instant = (pacer) => pacer.skip || !Number.isFinite(pacer.getSpeed());

/**
 * Plays round `trace` into `boxes` ({ stage, focus, notes }): the stage model at each
 * step, drawn, then the frame's pause (`timing` by kind, in ms at 1×). `options` as for
 * stageModel (alphabet, unit, pieces, bug, parallelDraft, dynamicGamma); `until` stops
 * after a phase: "drafts" (the guesses only) or "verify" (scored by the target, nothing
 * tested yet), as the lesson's first steps show it. Steps the pacer would not wait on are
 * not drawn one by one: the stage jumps to the next one it shows.
 */
export async function playRound(boxes, trace, options, pacer, timing, until = null) {
  const frames = stageFrames(trace, options);
  const end = until ? phaseStep(frames, until) : frames.length;
  let step = 0;
  renderStage(boxes, trace, stageModel(trace, 0, options, frames), options);
  while (step < end) {
    const frame = frames[step];
    step += 1;
    if (!instant(pacer) || step === end) renderStage(boxes, trace, stageModel(trace, step, options, frames), options);
    if (frame.pause) await pacer.wait(timing[frame.pause]);
  }
  return step;
}
