// The player of the run on screen: how far it has played (the rounds played to the end,
// the round on the stage and the step it is drawn to) and the transport's state (playing,
// a round being animated, the pacer of its pauses). Plain data, no DOM: run.js advances
// it, the stage, output and lesson read it.
export const player = {
  pacer: null, // the Pacer of the round being played (anim.js)
  playing: false, // Play is on: rounds follow one another
  animating: false, // a round is being played on the stage
  looping: false, // the play loop is running
  stepStop: false, // Step was pressed while playing: stop after this round
  shown: 0, // rounds played to the end
  stage: null, // the round on the stage: { index, trace, until, step }
  pendingChange: null, // the new run a changed setting queued (run.js settingChanged)
};
