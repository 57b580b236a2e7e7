// "Replay side by side": both lanes of the last race played at once, each at its own
// measured times. The lanes ran one after the other (race.js); here they start together,
// so the gap between them is the speed-up. A race of a few hundred milliseconds is too
// quick to watch, so both are slowed alike until the slower takes REPLAY_MS.
import { $, S } from "./state.js";

const REPLAY_MS = 6000;
let timers = [];

/** How many times slower than measured the replay plays (1: as measured). */
export const replaySlowdown = (race) => Math.max(1, REPLAY_MS / (1000 * Math.max(race.ar.seconds, race.spec.seconds)));

export function stopReplay() {
  for (const t of timers) clearTimeout(t);
  timers = [];
}

export function replayRace() {
  const race = S.race;
  if (!race) return;
  stopReplay();
  const slow = replaySlowdown(race);
  $("race-replay-note").textContent = slow > 1.05 ? `played ${slow.toFixed(1)}× slower than measured, both lanes alike; the clocks show measured time` : "";
  const started = performance.now();
  for (const key of ["ar", "spec"]) {
    const text = $(`race-${key}`);
    const clock = $(`race-${key}-time`);
    text.textContent = "";
    clock.textContent = "0.00 s";
    for (const [at, chunk] of race[key].timeline) {
      timers.push(setTimeout(() => {
        text.textContent += chunk;
        clock.textContent = `${((performance.now() - started) / slow / 1000).toFixed(2)} s`;
      }, at * slow));
    }
    timers.push(setTimeout(() => (clock.textContent = S.raceSummary[key]), race[key].seconds * 1000 * slow + 30));
  }
}
