// What a planted bug changes in the stage's sentences: pure (no page state), for the
// stage's model (stage-model.js) and the Node tests; bugs.js names the bugs the package plants.

/** The sentence that names a planted bug and what it does (the settings, the stage, the lab). */
export const bugSentence = (bug) => `Planted bug ${bug.name}: ${bug.description}.`;

/**
 * What each bug changes in the stage's sentences, by where it acts: `propose` (the
 * drafts), `test` (each acceptance test), `residual` (the draw after a rejection). Each
 * says what the bug does instead of the correct step; {term} placeholders as glossary.js.
 */
const NOTES = {
  "resample-from-target": {
    residual: "drawn from the target itself by the planted bug resample-from-target; a correct decoder draws from the {residual}, what is left of the target after subtracting the draft.",
  },
  "argmax-draft": {
    propose: "each is the draft's most likely character, not a sample from it — the planted bug argmax-draft — yet the tests below treat them as samples.",
  },
  "shared-uniform": {
    test: "this {u} also drew the guess (the planted bug shared-uniform), so given the guess it is not uniform and the test is biased; a correct decoder flips a fresh coin.",
  },
  "unprocessed-target": {
    test: "target here is the target's raw softmax, at temperature 1 without top-k or top-p (the planted bug unprocessed-target), not the distribution the settings ask for.",
  },
  "filtered-draft": {
    test: "draft here is the draft's probability before top-k and top-p, though the guess was drawn after them (the planted bug filtered-draft).",
  },
  "cache-reset": {
    residual: "then the planted bug cache-reset resets the models' caches instead of rolling them back, so from this character on they read the text as if it started here.",
  },
};

/** The bug's note for the sentence at `where` ("propose", "test", "residual"), or null. */
export const bugNote = (bug, where) => (bug ? NOTES[bug.name]?.[where] ?? null : null);
