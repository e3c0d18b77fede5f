// Compiles the TypeScript example plugins (examples/plugins/*/main.ts) into OUT/examples/plugins/*/main.js
// for the plugflow image. Each file on its own, types stripped: they import the SDK as `plugflow/sdk`,
// which the image's /app/package.json exports (dist/sdk), so `node examples/plugins/progress/main.js`
// runs there with no TypeScript loader. A plugin author's image does the same with `npm i plugflow`.
//
//   npx tsx hack/image/compile-examples.ts OUT_DIR
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const out = process.argv[2];
if (!out) throw new Error('usage: npx tsx hack/image/compile-examples.ts OUT_DIR');
const plugins = fileURLToPath(new URL('../../examples/plugins', import.meta.url));
for (const name of readdirSync(plugins)) {
  const src = join(plugins, name, 'main.ts');
  if (!existsSync(src)) continue;
  const { outputText, diagnostics } = ts.transpileModule(readFileSync(src, 'utf8'), {
    fileName: src,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
  });
  if (diagnostics?.length) throw new Error(`${src}: ${ts.flattenDiagnosticMessageText(diagnostics[0].messageText, '\n')}`);
  mkdirSync(join(out, 'examples', 'plugins', name), { recursive: true });
  writeFileSync(join(out, 'examples', 'plugins', name, 'main.js'), outputText);
  console.log(`compiled examples/plugins/${name}/main.ts`);
}
