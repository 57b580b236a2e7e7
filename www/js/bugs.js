// A planted bug as the page tells it (the lab's bug menu; the package's BUGS, generated from
// the engine's Bug): its one-line description, and what it changes in the stage's
// sentences. A sentence the bug makes false says so and what the bug does instead; the
// engine carries the bug out, the page only names it.
import { S } from "./state.js";

/** The planted bug `name` (a run's `bug` option): { name, description }, or null for none. */
export function plantedBug(name) {
  if (!name) return null;
  const known = (S.pkg?.BUGS ?? []).find((b) => b.name === name);
  return { name, description: known?.description ?? "a deliberate mistake in the sampler" };
}

export { bugNote, bugSentence } from "./bug-notes.js";
