#!/usr/bin/env node
// A small artifact driver plugin for the tests: a gRPC ArtifactService (proto/artifact.proto) on
// the unix socket given as the last argument, keeping artifacts as files and directories under the
// directory its configuration names (`dir: /some/where`, one line), at their key. Plain JavaScript
// so that the local pod runner can start it with `node` as a driver container's command.
//
//   node artifact-driver.js [--no-save-stream] SOCKET
//
// --no-save-stream: GetCapabilities answers UNIMPLEMENTED and SaveStream is not served, as an
// older driver does, so plugflow falls back to Save through the socket directory.
// Every call is appended to <dir>/calls.log (method and key), for the tests to check.
import { appendFileSync, cpSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';

const args = process.argv.slice(2);
const socket = args.at(-1);
const streams = !args.includes('--no-save-stream');
if (!socket) {
  console.error('usage: artifact-driver.js [--no-save-stream] SOCKET');
  process.exit(2);
}
const proto = fileURLToPath(new URL('../../proto/artifact.proto', import.meta.url));
const def = loader.loadSync(proto, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const { artifact } = grpc.loadPackageDefinition(def);

/** The store directory and the key's place in it; a key leaving the directory is refused. */
function place(a) {
  const conf = a?.plugin?.configuration ?? '';
  const dir = /^dir:\s*(.+?)\s*$/m.exec(conf)?.[1];
  if (!dir) throw new Error('the configuration names no dir');
  const key = a?.plugin?.key ?? '';
  const rel = normalize(key).replace(/^\/+/, '');
  if (!key || rel.startsWith('..') || relative(dir, join(dir, rel)).startsWith('..')) throw new Error(`bad key ${JSON.stringify(key)}`);
  return { dir, file: join(dir, 'data', rel), key };
}

function logCall(dir, method, key) {
  appendFileSync(join(dir, 'calls.log'), `${method} ${key}\n`);
}

/** A unary handler answering {success, error} from a function that may throw. */
function unary(method, fn) {
  return (call, cb) => {
    try {
      fn(call.request);
      cb(null, { success: true, error: '' });
    } catch (err) {
      console.error(`${method}: ${err.message}`);
      cb(null, { success: false, error: err.message });
    }
  };
}

const service = {
  Load: unary('Load', (req) => {
    const { dir, file, key } = place(req.input_artifact);
    logCall(dir, 'Load', key);
    if (!existsSync(file)) throw new Error(`no artifact at key ${key}`);
    mkdirSync(dirname(req.path), { recursive: true });
    cpSync(file, req.path, { recursive: true });
  }),
  Save: unary('Save', (req) => {
    const { dir, file, key } = place(req.output_artifact);
    logCall(dir, 'Save', key);
    rmSync(file, { recursive: true, force: true });
    mkdirSync(dirname(file), { recursive: true });
    cpSync(req.path, file, { recursive: true });
  }),
  Delete: unary('Delete', (req) => {
    const { dir, file, key } = place(req.artifact);
    logCall(dir, 'Delete', key);
    rmSync(file, { recursive: true, force: true });
  }),
  ListObjects: (call, cb) => {
    try {
      const { file } = place(call.request.artifact);
      cb(null, { objects: existsSync(file) && statSync(file).isDirectory() ? readdirSync(file, { recursive: true }) : [], error: '' });
    } catch (err) {
      cb(null, { objects: [], error: err.message });
    }
  },
  IsDirectory: (call, cb) => {
    try {
      const { file } = place(call.request.artifact);
      cb(null, { is_directory: existsSync(file) && statSync(file).isDirectory(), error: '' });
    } catch (err) {
      cb(null, { is_directory: false, error: err.message });
    }
  },
  OpenStream: (call) => {
    try {
      const { file } = place(call.request.artifact);
      call.write({ data: readFileSync(file), is_end: false, error: '' });
      call.write({ data: Buffer.alloc(0), is_end: true, error: '' });
    } catch (err) {
      call.write({ data: Buffer.alloc(0), is_end: true, error: err.message });
    }
    call.end();
  },
};

if (streams) {
  service.GetCapabilities = (_call, cb) => cb(null, { supports_save_stream: true });
  service.SaveStream = (call, cb) => {
    let out;
    let failed;
    call.on('data', (msg) => {
      if (failed) return;
      try {
        if (!out) {
          const { dir, file, key } = place(msg.output_artifact);
          logCall(dir, 'SaveStream', key);
          rmSync(file, { recursive: true, force: true });
          mkdirSync(dirname(file), { recursive: true });
          out = createWriteStream(file);
        } else if (msg.chunk?.length) out.write(msg.chunk);
      } catch (err) {
        failed = err;
      }
    });
    call.on('end', () => {
      if (failed || !out) return cb(null, { success: false, error: failed?.message ?? 'no artifact named' });
      out.end(() => cb(null, { success: true, error: '' }));
    });
  };
}

const server = new grpc.Server();
server.addService(artifact.ArtifactService.service, service);
rmSync(socket, { force: true });
server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) {
    console.error(`cannot listen on ${socket}: ${err.message}`);
    process.exit(1);
  }
  console.log(`artifact driver listening on ${socket}${streams ? '' : ' (no SaveStream)'}`);
});
process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
