// A minimal static file server for the built page (no dependencies): 127.0.0.1 only.
// Usage as a module: `const { url, close } = await serve(dir, { mounts, port })`;
// as a command: `node tests/www/serve.mjs DIR [PORT]`.
// `cache: true` lets the browser cache every file for an hour (the first-load benchmark).
// Every response is cross-origin isolated (COOP and COEP), which the package's second
// worker (load option threads) needs, except a page requested with `isolation=0` in its
// query: the page as a host without those headers serves it.
// `mounts` maps a URL prefix to another directory (used in development to serve the
// npm package's dist/ at /specula/ without a Trunk build).
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { extname, join, normalize, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".bpk": "application/octet-stream",
  ".txt": "text/plain; charset=utf-8",
};

export function serve(root, { mounts = {}, port = 0, cache = false } = {}) {
  const roots = Object.entries(mounts)
    .map(([prefix, dir]) => [prefix, resolve(dir)])
    .sort((a, b) => b[0].length - a[0].length);
  const base = resolve(root);
  const requests = [];
  const server = createServer((req, res) => {
    const address = new URL(req.url, "http://x");
    const path = decodeURIComponent(address.pathname);
    const isolation =
      address.searchParams.get("isolation") === "0"
        ? {}
        : { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };
    requests.push(path);
    let dir = base;
    let rest = path;
    for (const [prefix, d] of roots) {
      if (path.startsWith(prefix)) {
        dir = d;
        rest = path.slice(prefix.length - 1);
        break;
      }
    }
    let file = normalize(join(dir, rest));
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = join(file, "index.html");
      const size = statSync(file).size;
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        "content-length": size,
        // The tests want every load fresh; the first-load benchmark measures a warm HTTP
        // cache too, as a deployment with caching headers would give.
        "cache-control": cache ? "max-age=3600" : "no-store",
        ...isolation,
      });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${path}`);
    }
  });
  return new Promise((resolveServer) => {
    server.listen(port, "127.0.0.1", () => {
      const { port: actual } = server.address();
      resolveServer({
        url: `http://127.0.0.1:${actual}/`,
        requests,
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir = ".", port = "8080", ...rest] = process.argv.slice(2);
  const mounts = {};
  for (const m of rest) {
    const [prefix, d] = m.split("=");
    mounts[prefix] = d;
  }
  const { url } = await serve(dir, { port: Number(port), mounts });
  console.log(`serving ${dir} on ${url}`);
}
