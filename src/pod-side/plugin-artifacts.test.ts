import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InputArtifactPlan, OutputArtifactPlan } from '../artifacts/plan.js';
import type { PluginLocation } from '../artifacts/plugin-driver.js';
import { tarGz } from '../../test/support/archives.js';
import { INPUT_ARTIFACTS_DIR, PACKED_ARTIFACTS_DIR } from '../pods/layout.js';
import { fetchInputs } from './input-artifacts.js';
import { uploadOutputs } from './output-artifacts.js';

const DRIVER = resolve(import.meta.dirname, '../../test/support/artifact-driver.js');
let root: string;
let store: string;
let child: ChildProcess;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pf-pa-'));
  store = mkdtempSync(join(tmpdir(), 'pf-pa-store-'));
  mkdirSync(join(root, 'dirstore'));
  child = spawn(process.execPath, [DRIVER, join(root, 'dirstore', 'socket')], { stdio: 'ignore' });
});
afterAll(() => new Promise<void>((done) => (child.once('exit', () => done()), child.kill('SIGTERM'))));

const loc = (key: string): PluginLocation => ({
  kind: 'plugin',
  name: 'dirstore',
  configuration: `dir: ${store}`,
  key,
  connectionTimeoutSeconds: 10,
});

describe('the init and wait containers with an artifact driver', () => {
  it('the wait side saves a packed output through the driver; the init side loads and unpacks it', async () => {
    const env = { PLUGFLOW_ARTIFACT_PLUGINS_DIR: root };
    const varDir = mkdtempSync(join(tmpdir(), 'pf-pa-var-'));
    mkdirSync(join(varDir, PACKED_ARTIFACTS_DIR));
    writeFileSync(join(varDir, PACKED_ARTIFACTS_DIR, 'out'), tarGz([{ name: 'out.txt', body: 'through the driver\n' }]));
    const outputs: OutputArtifactPlan[] = [
      {
        name: 'out',
        plugin: loc('wf/out.tgz'),
        record: { name: 'out', path: '/tmp/out.txt', plugin: { name: 'dirstore', key: 'wf/out.tgz' } },
      },
      { name: 'gone', optional: true, plugin: loc('wf/gone'), record: { name: 'gone', path: '/tmp/none' } },
    ];
    const up = await uploadOutputs(varDir, outputs, env);
    expect(up.errors).toEqual([]);
    expect(up.uploaded).toEqual(['out']);
    expect(up.log[0]).toMatch(
      /^uploaded output artifact "out" to artifact driver "dirstore" key wf\/out\.tgz \(SaveStream\): \d+ bytes, \d+ ms$/,
    );

    const inVar = mkdtempSync(join(tmpdir(), 'pf-pa-in-'));
    const inputs: InputArtifactPlan[] = [{ name: 'msg', path: '/in/msg.txt', source: { plugin: loc('wf/out.tgz') } }];
    const lines = await fetchInputs(inVar, inputs, env);
    expect(lines[0]).toBe('loaded input artifact "msg" through artifact driver "dirstore"');
    expect(readFileSync(join(inVar, INPUT_ARTIFACTS_DIR, 'msg'), 'utf8')).toBe('through the driver\n');

    await expect(fetchInputs(inVar, [{ name: 'x', path: '/x', source: { plugin: loc('nothing') } }], env)).rejects.toThrow(
      'input artifact "x": artifact driver "dirstore": Load failed: no artifact at key nothing',
    );
  });

  it('names the artifact and the driver when the driver never shows up', async () => {
    const varDir = mkdtempSync(join(tmpdir(), 'pf-pa-var-'));
    mkdirSync(join(varDir, PACKED_ARTIFACTS_DIR));
    writeFileSync(join(varDir, PACKED_ARTIFACTS_DIR, 'o'), 'x');
    const absent: PluginLocation = { ...loc('k'), name: 'absent', connectionTimeoutSeconds: 1 };
    mkdirSync(join(root, 'absent'));
    writeFileSync(join(root, 'absent', 'socket'), ''); // a file, not a socket: nothing answers
    const up = await uploadOutputs(varDir, [{ name: 'o', plugin: absent, record: { name: 'o', path: '/o' } }], {
      PLUGFLOW_ARTIFACT_PLUGINS_DIR: root,
    });
    expect(up.errors).toHaveLength(1);
    expect(up.errors[0]).toMatch(/^output artifact "o": artifact driver "absent": no connection on .*absent\/socket within 1s/);
  });
});
