/**
 * Bundles the web UI (ui/) into dist/ui for the server to serve (src/server/routes/ui.ts): one
 * minified ES module with preact, dagre and yaml inside, the stylesheet, the page and the icon.
 * Run by `make build`; prints what it wrote and the gzipped size of the script.
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--out <dir>`: the image build puts it into the image's /app/dist/ui.
const outAt = process.argv.indexOf('--out');
const out = outAt > 0 && process.argv[outAt + 1] ? resolve(process.argv[outAt + 1]) : join(root, 'dist', 'ui');
const started = Date.now();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: { app: 'ui/src/main.tsx' },
  outdir: out,
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(join(root, 'ui', 'src', 'style.css'), join(out, 'app.css'));
copyFileSync(join(root, 'ui', 'index.html'), join(out, 'index.html'));
copyFileSync(join(root, 'ui', 'favicon.svg'), join(out, 'favicon.svg'));
const js = readFileSync(join(out, 'app.js'));
console.log(
  `[build-ui] ${out}: app.js ${(js.length / 1024).toFixed(1)} KiB (${(gzipSync(js, { level: 9 }).length / 1024).toFixed(1)} KiB gzipped), in ${Date.now() - started} ms`,
);
