// The lesson's guided presets: each sets a few controls to an extreme worth looking at and
// asks one question the page itself can answer; the answer stays folded until asked for.
import { $, h } from "./state.js";
import { rich } from "./glossary.js";

/** What a preset marks: the box of a control it sets, or the figure its question is about. */
const fieldOf = (id) => $(id).closest(".field, figure") ?? $(id);

export const PRESETS = [
  {
    id: "greedy",
    label: "Temperature 0",
    controls: { method: "speculative", temperature: 0 },
    spot: "temperature",
    question: "Press Play, then set the method to autoregressive and press Play again (or start the race below). Why are the two texts identical?",
    answer: "At temperature 0 each model puts all its probability on its most likely character ({argmax}), so nothing is random any more. A guess is kept exactly when it equals the target's argmax, and every replacement and bonus is the target's argmax too. Speculative decoding therefore writes what greedy decoding of the target writes, character for character; the draft only changes how many target passes it takes.",
  },
  {
    id: "gamma16",
    label: "γ = 16",
    controls: { method: "speculative", gamma: 16, dynamicGamma: false, temperature: 0.8 },
    spot: "chart-position",
    question: "Press Play and look at the per-position acceptance chart under the metrics (marked). Why does the acceptance fall from position to position?",
    answer: "The first rejection ends a round, so position i keeps a guess only if all the guesses before it were kept: with about the same chance α at each position that share is roughly α^i, which falls geometrically. Deeper guesses are also worse, since the draft builds on its own guesses. The expected characters per round level off near 1/(1 − α) while every round still pays for 16 draft calls — see the theory charts.",
  },
  {
    id: "budget5",
    label: "D = 5",
    controls: { method: "mentored", gamma: 4, kl: 5, temperature: 0.8 },
    spot: "kl",
    question: "Press Play: the acceptance is nearly perfect. What breaks?",
    answer: "A {kl} budget of 5 {nats} per character is so large that the draft's own distribution nearly always fits inside it (KL(target ‖ draft) ≤ D), so mentored decoding accepts almost every guess and the text follows the small draft model, not the target. It is fast, but the guarantee is gone: the lossless methods never trade the target's distribution for speed.",
  },
];

/**
 * The card of one preset: its button sets the controls (ctx.setControls) and shows the
 * question, with the answer in a <details>.
 */
export function presetCard(preset, ctx) {
  const card = h("div", "lesson-preset");
  card.dataset.preset = preset.id;
  const button = h("button", "", preset.label);
  button.type = "button";
  button.id = `lesson-preset-${preset.id}`;
  const question = h("p", "lesson-question");
  question.append(rich(preset.question));
  question.hidden = true;
  const answer = h("details", "lesson-answer");
  answer.append(h("summary", "", "Answer"));
  const text = h("p");
  text.append(rich(preset.answer));
  answer.append(text);
  answer.hidden = true;
  button.addEventListener("click", async () => {
    card.dataset.state = "setting";
    await ctx.setControls(preset.controls);
    for (const other of card.parentElement?.querySelectorAll(".lesson-preset") ?? []) other.classList.toggle("active", other === card);
    question.hidden = false;
    answer.hidden = false;
    card.dataset.state = "set";
    ctx.spot(fieldOf(preset.spot));
  });
  card.append(button, question, answer);
  return card;
}
