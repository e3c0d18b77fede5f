/**
 * Import rules of src/, derived from the layers in hack/layout/layers.cjs (`make lint` runs
 * `npx depcruise src`): no import of a folder of the same layer or above, and no reaching past a
 * barrel (index.ts) from outside its folder. Tests may reach inside a folder and combine layers.
 */
const layers = require('./hack/layout/layers.cjs');

const ranked = layers.flatMap((l, rank) =>
  Object.entries(l.folders).map(([folder, v]) => ({ folder, rank, layer: l.layer, barrel: typeof v === 'object' && v.barrel === true })),
);
/** Tests and their support: not shipped, and free to combine layers (a test of two layers' seam). */
const TESTS = ['\\.test\\.tsx?$', '/testing/'];
const quote = (s) => s.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');
const any = (names) => `^src/(${names.map(escape).join('|')})/`;

const layerRules = ranked
  .map(({ folder, rank, layer }) => {
    const above = ranked.filter((o) => o.folder !== folder && o.rank >= rank);
    if (above.length === 0) return undefined;
    return {
      name: `layer-${folder}`,
      comment: `src/${folder} (layer "${layer}") imports only its own files and lower layers (hack/layout/layers.cjs)`,
      severity: 'error',
      from: { path: `^src/${quote(folder)}/`, pathNot: TESTS },
      to: { path: any(above.map((o) => o.folder)) },
    };
  })
  .filter(Boolean);

const barrelRules = ranked
  .filter((f) => f.barrel)
  .map(({ folder }) => ({
    name: `barrel-${folder}`,
    comment: `code outside src/${folder} imports it through src/${folder}/index.ts`,
    severity: 'error',
    from: { path: '^src/', pathNot: [`^src/${quote(folder)}/`, ...TESTS] },
    to: { path: `^src/${quote(folder)}/`, pathNot: `^src/${quote(folder)}/index\\.ts$` },
  }));

module.exports = {
  forbidden: [
    ...layerRules,
    ...barrelRules,
    {
      name: 'undeclared-folder',
      comment: 'every folder of src/ is declared in hack/layout/layers.cjs',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: any(ranked.map((o) => o.folder)) },
      to: {},
    },
    {
      name: 'not-to-test-code',
      comment: 'shipped code does not import test support (test/, src/**/testing/)',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: ['^test/', '/testing/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^dist/', '^node_modules/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.json'] },
  },
};
