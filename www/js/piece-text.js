// A token's text as the page draws it: pure (no page state), so that the stage's model
// (stage-model.js) and the Node tests can use it too.

/** A token's text as drawn: spaces as ␣, newlines as ↵, tabs as ⇥, other controls as ·, none as ∅. */
export function showPiece(text) {
  if (text === "") return "∅";
  return text.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥").replace(/\r/g, "␍").replace(/[\u0000-\u001f\u007f]/g, "·");
}

/** showPiece, at most `n` characters (a chart's label). */
export function shortPiece(text, n = 8) {
  const chars = [...showPiece(text)];
  return chars.length > n ? `${chars.slice(0, n - 1).join("")}…` : chars.join("");
}
