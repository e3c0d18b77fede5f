/**
 * Artifacts, on a real MinIO:
 *   1. a 1 GiB output artifact uploaded by the real wait program (`plugflow executor wait`, its own
 *      process) and read back by the real init program (`plugflow executor install`), each as a
 *      throughput ratio to a direct copy with the same client library (the AWS SDK's multipart
 *      Upload / GetObject) to the same server in the same run, and each process's peak RSS
 *      (streaming keeps it flat);
 *   2. 10,000 small files in one directory artifact: the emissary's tar+gzip pack vs `tar czf` of
 *      the same tree, and the init side's safe unpack vs `tar xzf`;
 *   3. the controller's API writes per 2-step workflow with and without passing an artifact
 *      (artifacts must not add writes: locations travel in the pod, not in extra status writes).
 *
 * Run: npx tsx bench/artifact-bench.ts (needs `make build`: the pod-side programs run from dist/).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CreateBucketCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import type { Workflow } from '../src/api/index.js';
import type { StoreLocation } from '../src/artifacts/plan.js';
import { PART_SIZE, storeClient } from '../src/artifacts/s3.js';
import { placeArtifact } from '../src/artifacts/unpack.js';
import { startObjectStore, type ObjectStore } from '../src/devenv/object-store.js';
import { CONFIGMAPS, SECRETS } from '../src/kube/resource.js';
import { ensureEmissaryBinary } from '../src/pod-side/emissary-binary.js';
import { startCountedController } from './counted-controller.js';
import type { Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const REPO = resolve(import.meta.dirname, '..');
const CLI = join(REPO, 'bin', 'plugflow.js');
const BUCKET = 'bench';
const GiB = 1024 ** 3;

/** Runs a process; resolves with its wall time and peak RSS (VmHWM, polled until it exits). */
function measured(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; peakMiB: number; output: string }> {
  return new Promise((resolveRun, reject) => {
    const t0 = performance.now();
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    let peak = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]) / 1024);
      } catch {
        // exited between polls
      }
    }, 20);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(poll);
      if (code !== 0) reject(new Error(`${file} ${args.join(' ')} exited ${code}:\n${output.slice(-2000)}`));
      else resolveRun({ ms: performance.now() - t0, peakMiB: peak, output });
    });
  });
}

async function directUpload(loc: StoreLocation, store: ObjectStore, file: string): Promise<number> {
  const client = storeClient(loc, { accessKey: store.accessKey, secretKey: store.secretKey });
  const t0 = performance.now();
  await new Upload({
    client,
    params: { Bucket: loc.bucket, Key: loc.key, Body: createReadStream(file) },
    partSize: PART_SIZE,
    queueSize: 2,
  }).done();
  client.destroy();
  return performance.now() - t0;
}

async function directDownload(loc: StoreLocation, store: ObjectStore, file: string): Promise<number> {
  const client = storeClient(loc, { accessKey: store.accessKey, secretKey: store.secretKey });
  const t0 = performance.now();
  const reply = await client.send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
  await pipeline(reply.Body as Readable, createWriteStream(file));
  client.destroy();
  return performance.now() - t0;
}

async function bigArtifact(store: ObjectStore, work: string): Promise<Figure[]> {
  const dir = join(work, 'wait');
  mkdirSync(join(dir, 'artifacts'), { recursive: true });
  // Incompressible data, written in 16 MiB blocks (not held in memory as a whole).
  const big = join(dir, 'artifacts', 'big');
  const block = Buffer.alloc(16 * 1024 * 1024);
  const out = createWriteStream(big);
  for (let i = 0; i < GiB / block.length; i++) {
    for (let j = 0; j < block.length; j += 4) block.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, j);
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  writeFileSync(join(dir, 'main.exitcode'), '0');
  writeFileSync(join(dir, 'main.done'), '');
  const loc: StoreLocation = {
    bucket: BUCKET,
    key: 'bench/big',
    endpoint: store.endpoint,
    insecure: true,
    accessKeyEnv: 'AK',
    secretKeyEnv: 'SK',
  };
  const env = { PATH: process.env.PATH ?? '', AK: store.accessKey, SK: store.secretKey };
  // Alternated, best of two each: the object store's own disk writes favour whoever goes first.
  const runWait = () =>
    measured(process.execPath, [CLI, 'executor', 'wait', '--dir', dir, '--termination-log', join(work, 'termination')], {
      ...env,
      PLUGFLOW_OUTPUT_ARTIFACTS: JSON.stringify([{ name: 'big', store: loc, record: { name: 'big' } }]),
    });
  const d1 = await directUpload({ ...loc, key: 'bench/big-direct' }, store, big);
  const w1 = await runWait();
  const d2 = await directUpload({ ...loc, key: 'bench/big-direct' }, store, big);
  const w2 = await runWait();
  const direct = Math.min(d1, d2);
  const wait = w1.ms <= w2.ms ? w1 : w2;
  wait.peakMiB = Math.max(w1.peakMiB, w2.peakMiB);
  const initDir = join(work, 'init');
  mkdirSync(initDir);
  const emissary = await ensureEmissaryBinary();
  const runInit = () =>
    measured(process.execPath, [CLI, 'executor', 'install', initDir, '--termination-log', join(work, 'init-termination')], {
      ...env,
      PLUGFLOW_EMISSARY: emissary,
      PLUGFLOW_INPUT_ARTIFACTS: JSON.stringify([{ name: 'big', path: '/in/big', source: { store: loc } }]),
    });
  const r1 = await directDownload(loc, store, join(work, 'direct-read'));
  const i1 = await runInit();
  const r2 = await directDownload(loc, store, join(work, 'direct-read'));
  const i2 = await runInit();
  const directRead = Math.min(r1, r2);
  const init = i1.ms <= i2.ms ? i1 : i2;
  init.peakMiB = Math.max(i1.peakMiB, i2.peakMiB);
  rmSync(big);
  rmSync(join(work, 'direct-read'));
  rmSync(initDir, { recursive: true });
  const mbps = (ms: number) => (GiB / 2 ** 20 / (ms / 1000)).toFixed(0);
  return [
    {
      name: '1 GiB output artifact: upload throughput, wait program / direct SDK upload',
      value: Number((direct / wait.ms).toFixed(2)),
      unit: 'x',
      goal: '≥ 0.8',
      met: direct / wait.ms >= 0.8,
      note: `best of 2 alternated: wait ${mbps(wait.ms)} MiB/s (process start, sha256 while streaming, report) vs direct ${mbps(direct)} MiB/s; archive none, MinIO on loopback`,
    },
    {
      name: '1 GiB upload: wait program peak RSS',
      value: Math.round(wait.peakMiB),
      unit: 'MiB',
      goal: '< 150 MiB',
      met: wait.peakMiB < 150,
    },
    {
      name: '1 GiB input artifact: download throughput, init program / direct SDK download',
      value: Number((directRead / init.ms).toFixed(2)),
      unit: 'x',
      goal: '≥ 0.8',
      met: directRead / init.ms >= 0.8,
      note: `best of 2 alternated: init ${mbps(init.ms)} MiB/s (process start, emissary copy, gzip sniff, place) vs direct ${mbps(directRead)} MiB/s`,
    },
    {
      name: '1 GiB download: init program peak RSS',
      value: Math.round(init.peakMiB),
      unit: 'MiB',
      goal: '< 150 MiB',
      met: init.peakMiB < 150,
    },
  ];
}

async function manySmallFiles(work: string): Promise<Figure[]> {
  const tree = join(work, 'small', 'tree');
  mkdirSync(tree, { recursive: true });
  for (let i = 0; i < 10_000; i++) writeFileSync(join(tree, `f${i}.txt`), `file ${i} ${'x'.repeat(i % 200)}\n`);
  const emissary = await ensureEmissaryBinary();
  const varDir = join(work, 'small', 'var');
  mkdirSync(varDir);
  const pack = await measured(emissary, ['--', 'true'], {
    PATH: process.env.PATH ?? '',
    PLUGFLOW_VAR_DIR: varDir,
    PLUGFLOW_ARTIFACTS: JSON.stringify([{ name: 'tree', path: tree, archive: 'tar' }]),
  });
  const t0 = performance.now();
  execFileSync('tar', ['czf', join(work, 'small', 'ref.tgz'), '-C', join(work, 'small'), 'tree']);
  const tarMs = performance.now() - t0;
  const t1 = performance.now();
  await placeArtifact(join(varDir, 'artifacts', 'tree'), join(work, 'small', 'placed'), 'bench');
  const placeMs = performance.now() - t1;
  mkdirSync(join(work, 'small', 'x'));
  const t2 = performance.now();
  execFileSync('tar', ['xzf', join(work, 'small', 'ref.tgz'), '-C', join(work, 'small', 'x')]);
  const untarMs = performance.now() - t2;
  return [
    {
      name: '10,000 small files: emissary pack (tar+gzip) / `tar czf`',
      value: Number((pack.ms / tarMs).toFixed(2)),
      unit: 'x',
      goal: 'reported (< 1: faster)',
      met: true,
      note: `emissary ${pack.ms.toFixed(0)} ms (whole process) vs tar ${tarMs.toFixed(0)} ms`,
    },
    {
      name: '10,000 small files: init unpack (checked entries) / `tar xzf`',
      value: Number((placeMs / untarMs).toFixed(2)),
      unit: 'x',
      goal: 'reported (< 1: faster)',
      met: true,
      note: `placeArtifact ${placeMs.toFixed(0)} ms vs tar ${untarMs.toFixed(0)} ms`,
    },
  ];
}

const sh = (name: string, script: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...extra,
  container: { image: 'alpine:3', command: ['sh', '-c', script] },
});

function twoSteps(name: string, artifacts: boolean): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'a', template: 'a' }],
            [
              {
                name: 'b',
                template: 'b',
                ...(artifacts ? { arguments: { artifacts: [{ name: 'f', from: '{{steps.a.outputs.artifacts.f}}' }] } } : {}),
              },
            ],
          ],
        },
        sh('a', 'echo hi > /tmp/f', artifacts ? { outputs: { artifacts: [{ name: 'f', path: '/tmp/f' }] } } : {}),
        sh('b', artifacts ? 'cat /in/f' : 'echo hi', artifacts ? { inputs: { artifacts: [{ name: 'f', path: '/in/f' }] } } : {}),
      ],
    },
  };
}

async function writesPerWorkflow(store: ObjectStore, work: string, count = 5): Promise<Figure[]> {
  const stack = await startCountedController(work, async (client) => {
    await client.create(SECRETS, 'default', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'store' },
      stringData: { a: store.accessKey, s: store.secretKey },
    });
    await client.create(CONFIGMAPS, 'default', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'artifact-repositories' },
      data: {
        main: `vendorAObject: {bucket: ${BUCKET}, endpoint: "${store.endpoint}", insecure: true, accessKeySecret: {name: store, key: a}, secretKeySecret: {name: store, key: s}}\n`,
      },
    });
  });
  const many = (artifacts: boolean) => Array.from({ length: count }, (_, i) => twoSteps(`${artifacts ? 'art' : 'plain'}-${i}`, artifacts));
  try {
    const plain = (await stack.runEach(many(false))).writesPerWorkflow;
    const withArtifacts = (await stack.runEach(many(true))).writesPerWorkflow;
    return [
      {
        name: 'controller API writes per 2-step workflow passing an artifact',
        value: Number(withArtifacts.toFixed(1)),
        unit: 'writes',
        goal: '≤ the same workflow without the artifact',
        met: withArtifacts <= plain,
        note: `without the artifact ${plain.toFixed(1)} writes; ${count} workflows each, one after the other`,
      },
    ];
  } finally {
    await stack.stop();
  }
}

export async function runArtifactBench(): Promise<Figure[]> {
  const work = mkdtempSync(join(tmpdir(), 'plugflow-artifact-bench-'));
  const store = await startObjectStore({ dir: join(work, 'minio') });
  try {
    const client = storeClient(
      { bucket: BUCKET, key: '', endpoint: store.endpoint, insecure: true },
      { accessKey: store.accessKey, secretKey: store.secretKey },
    );
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    client.destroy();
    return [...(await bigArtifact(store, work)), ...(await manySmallFiles(work)), ...(await writesPerWorkflow(store, work))];
  } finally {
    await store.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection(
    'artifacts',
    'Artifacts (`npx tsx bench/artifact-bench.ts`; also part of `make bench`)',
    await runArtifactBench(),
    t0,
  );
}
