#!/usr/bin/env node
// Entry point of the `plugflow` command. Runs the compiled CLI from dist/ (`make build`).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const main = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error(`plugflow: ${main} is missing; run "make build" (or "npm run build") first`);
  process.exit(1);
}
await import(pathToFileURL(main).href);
