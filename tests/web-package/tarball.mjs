// Reads the .tgz that `npm pack` writes, for the package checks (packed-links.mjs,
// publish-dry-run.mjs) without unpacking it to disk.

import { gunzipSync } from "node:zlib";

/** The regular files of a gzipped tar as a Map from path (the `package/` prefix removed) to bytes. */
export function readTarball(bytes) {
  const tar = gunzipSync(bytes);
  const files = new Map();
  const text = (start, length) => tar.subarray(start, start + length).toString("utf8").replace(/\0.*$/s, "");
  let paxPath = null;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(text(at + 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = text(at + 345, 155);
    let name = paxPath ?? (prefix ? `${prefix}/${text(at, 100)}` : text(at, 100));
    paxPath = null;
    const body = tar.subarray(at + 512, at + 512 + size);
    if (type === "x") {
      // A pax extended header: its `path` record names the next entry.
      const match = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString("utf8"));
      if (match) paxPath = match[1];
    } else if (type === "0" || type === "7") {
      name = name.replace(/^[^/]+\//, ""); // npm packs everything under "package/"
      files.set(name, body);
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
