// The README's screenshots of the page (used by run.mjs; readme-shots.mjs takes them): each
// one readme-shots.mjs takes is shown by the README, and each the README shows exists and
// stays under README_SHOT_BYTES. Reads files only: no browser, no new images.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The most a README screenshot may weigh (readme-shots.mjs crops to stay under it). */
export const README_SHOT_BYTES = 200_000;

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

export function addReadmeShotTests(tests, { check }) {
  tests.readmeShots = async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    // The names readme-shots.mjs gives its shots: shoot(page, selector, "name").
    const script = readFileSync(join(root, "tests/www/readme-shots.mjs"), "utf8");
    const taken = [...script.matchAll(/shoot\(page, "[^"]+", "([^"]+)"/g)].map((m) => m[1]);
    const shown = [...new Set([...readme.matchAll(/\(docs\/screenshots\/(readme-[\w-]+)\.png\)/g)].map((m) => m[1]))];
    const unshown = taken.filter((name) => !shown.includes(name));
    check(taken.length >= 3 && unshown.length === 0, `README: it shows each screenshot readme-shots.mjs takes (${taken.join(", ")})`, `not in the README: ${unshown.join(", ")}`);
    for (const name of shown) {
      const path = join(root, "docs/screenshots", `${name}.png`);
      const bytes = existsSync(path) ? statSync(path).size : null;
      check(bytes !== null && bytes > 0 && bytes < README_SHOT_BYTES, `README: docs/screenshots/${name}.png exists and is under ${README_SHOT_BYTES / 1000} KB (${bytes === null ? "missing" : `${(bytes / 1000).toFixed(0)} KB`})`);
    }
    check(["readme-race", "readme-bug", "readme-lab"].every((n) => shown.includes(n)), `README: it shows the race, a planted bug and the lab's verdict (${shown.join(", ")})`);
  };
}
