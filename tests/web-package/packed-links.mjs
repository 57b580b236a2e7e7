// Every relative link of the packed package's Markdown must resolve inside the tarball:
// reads the .tgz that `npm pack` wrote (argument 1) and, for each .md file in it (the
// README), fails on a relative link or image whose file is not packed, that leaves the
// package (`../`), or whose `#anchor` names no heading of its target. Links with a scheme
// (https:, mailto:) are not checked. The check first proves itself on a README with known
// broken links, so a parser that finds nothing cannot pass.
// Usage: node tests/web-package/packed-links.mjs <specula-x.y.z.tgz>

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { posix } from "node:path";

import { readTarball } from "./tarball.mjs";

/** GitHub's heading anchors (as npm's and the repository's docs check make them). */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a Markdown text defines: heading slugs (duplicates numbered) and HTML ids. */
function anchors(markdown) {
  const found = new Set();
  for (const line of stripCode(markdown, { inline: false }).split("\n")) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      // The heading's text as rendered: link texts without their targets, no code or emphasis marks.
      const text = heading[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*]/g, "");
      const base = slug(text);
      let candidate = base;
      for (let n = 1; found.has(candidate); n++) candidate = `${base}-${n}`;
      found.add(candidate);
    }
    for (const m of line.matchAll(/\s(?:id|name)="([^"]+)"/g)) found.add(m[1]);
  }
  return found;
}

/** `markdown` with fenced code blocks blanked and (unless `inline` is false) inline code spans emptied; lines kept. */
function stripCode(markdown, { inline = true } = {}) {
  let fence = null;
  return markdown
    .split("\n")
    .map((line) => {
      const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
        return "";
      }
      if (open) {
        fence = open[1];
        return "";
      }
      return inline ? line.replace(/(`+)(?:(?!\1).)+?\1/g, "``") : line;
    })
    .join("\n");
}

/** Every link target of `markdown` with its line: inline links, images, reference definitions, HTML href/src. */
function links(markdown) {
  const found = [];
  stripCode(markdown)
    .split("\n")
    .forEach((line, i) => {
      const add = (target) => found.push({ target, line: i + 1 });
      for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) {
        add(m[1].replace(/^<|>$/g, ""));
      }
      const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
      if (definition) add(definition[1].replace(/^<|>$/g, ""));
      for (const m of line.matchAll(/\s(?:href|src)="([^"]+)"/g)) add(m[1]);
    });
  return found;
}

/**
 * The broken relative links of the Markdown file `name` among the packed `files` (a Map
 * from path to bytes; `readText(path)` gives a packed file's text): `{ line, target, why }`.
 */
function brokenLinks(name, files, readText) {
  const paths = [...files.keys()];
  const broken = [];
  for (const { target, line } of links(readText(name))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // https:, mailto:, …
    const [pathPart, anchor] = target.split("#", 2);
    let path = decodeURIComponent(pathPart.split("?")[0]);
    if (path === "") path = name; // "#anchor": this file
    else path = posix.normalize(posix.join(posix.dirname(name), path));
    if (path.startsWith("../") || path === ".." || posix.isAbsolute(path)) {
      broken.push({ line, target, why: "points outside the package" });
      continue;
    }
    const dir = path.replace(/\/$/, "");
    const isFile = files.has(dir);
    const isDir = dir === "." || paths.some((p) => p.startsWith(`${dir}/`));
    if (!isFile && !isDir) {
      broken.push({ line, target, why: `${dir} is not in the tarball` });
    } else if (anchor && isFile && dir.endsWith(".md") && !anchors(readText(dir)).has(anchor)) {
      broken.push({ line, target, why: `${dir} has no heading #${anchor}` });
    }
  }
  return broken;
}

/** The check on a made-up package: the broken links found must be exactly the planted ones. */
function selfTest() {
  const readme = [
    "# Pkg",
    "## Decode your own models",
    "### Models with a cache: `cachedModel()`",
    "[ok](examples/ok.js) [dir](dist/) [anchor](#decode-your-own-models) [code](#models-with-a-cache-cachedmodel) [web](https://example.com/x)",
    "![img](dist/a.png) [ref]: LICENSE-MIT",
    "[out](../docs/parallel-draft.md)",
    "[missing](examples/transformers-js.js)",
    "[bad anchor](#no-such-heading)",
    '<a href="dist/nope.js">x</a>',
    "`[code](not/checked.md)`",
    "```js",
    "[fenced](not/checked.md)",
    "```",
  ].join("\n");
  const files = new Map([
    ["README.md", Buffer.from(readme)],
    ["examples/ok.js", Buffer.from("")],
    ["dist/a.png", Buffer.from("")],
    ["dist/index.js", Buffer.from("")],
    ["LICENSE-MIT", Buffer.from("")],
  ]);
  const broken = brokenLinks("README.md", files, (name) => files.get(name).toString("utf8"));
  assert.deepEqual(
    broken.map((b) => b.target),
    ["../docs/parallel-draft.md", "examples/transformers-js.js", "#no-such-heading", "dist/nope.js"],
    `the check's self-test found ${JSON.stringify(broken)}`,
  );
}

const tarball = process.argv[2];
if (!tarball) {
  console.error("usage: node tests/web-package/packed-links.mjs <package .tgz>");
  process.exit(2);
}
selfTest();
const files = readTarball(readFileSync(tarball));
const readText = (name) => files.get(name).toString("utf8");
const markdown = [...files.keys()].filter((name) => name.endsWith(".md"));
assert.ok(markdown.includes("README.md"), `no README.md in ${tarball}: ${[...files.keys()].join(", ")}`);
let problems = 0;
let checked = 0;
for (const name of markdown) {
  checked += links(readText(name)).length;
  for (const { line, target, why } of brokenLinks(name, files, readText)) {
    console.error(`${name}:${line}: link ${target}: ${why}`);
    problems++;
  }
}
if (problems > 0) {
  console.error(`packed links: ${problems} broken link(s) in ${tarball}; ship the target (package.json "files") or name it as plain text`);
  process.exit(1);
}
console.log(`packed links: ${checked} link(s) in ${markdown.join(", ")} of ${files.size} packed files, all inside the tarball`);
