// playwright-core lives outside the repository, in a cache directory that
// scripts/test-www.sh fills with `npm install` ($SPECULA_WWW_TEST_DEPS, default
// ~/.cache/specula/web-tools/www-test); ES modules ignore NODE_PATH, so resolve it here.
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

const dir = process.env.SPECULA_WWW_TEST_DEPS ?? join(homedir(), ".cache/specula/web-tools/www-test");
const require = createRequire(join(dir, "package.json"));
export const { chromium } = require("playwright-core");
