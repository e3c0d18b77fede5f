#!/usr/bin/env node
// Entry point of the `plugflow` command. Runs the compiled CLI from dist/ (`make build`).
// `plugflow executor …` (the init and wait containers of every step pod) goes to a small entry
// point that loads only the pod-side commands (src/pod-side), so steps do not pay the full CLI's start-up time.
import './early-signals.js';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const entry = process.argv[2] === 'executor' ? 'pod-side-main.js' : 'main.js';
const main = join(root, 'dist', 'cli', entry);
if (!existsSync(main)) {
  console.error(`plugflow: ${main} is missing; run "make build" (or "npm run build") first`);
  process.exit(1);
}
await import(pathToFileURL(main).href);
