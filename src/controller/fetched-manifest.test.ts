import { describe, expect, it } from 'vitest';
import { ManifestReadError, manifestText, withManifest } from './fetched-manifest.js';

/** A podLog that serves `log` in chunks of 7 bytes, honouring limitBytes, and records what it was asked. */
function logOf(log: string) {
  const asked: { namespace: string; pod: string; container?: string; limitBytes?: number }[] = [];
  return {
    asked,
    podLog: async (namespace: string, pod: string, o: { container?: string; limitBytes?: number }) => {
      asked.push({ namespace, pod, ...o });
      const data = Buffer.from(log).subarray(0, o.limitBytes);
      return (async function* () {
        for (let i = 0; i < data.length; i += 7) yield data.subarray(i, i + 7);
      })();
    },
  };
}

const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ünïcode}\n';
const bytes = Buffer.byteLength(manifest);

describe('manifestText', () => {
  it('takes a whole manifest from the report without reading the log', async () => {
    const client = logOf('never read');
    expect(await manifestText(client, 'ns', { podName: 'p', text: manifest, bytes, whole: true })).toBe(manifest);
    expect(client.asked).toEqual([]);
  });

  it("reads a shortened one from the main container's log, checked against its size and beginning", async () => {
    const client = logOf(manifest);
    expect(await manifestText(client, 'ns', { podName: 'p', text: manifest.slice(0, 20), bytes, whole: false })).toBe(manifest);
    expect(client.asked).toEqual([{ namespace: 'ns', pod: 'p', container: 'main', limitBytes: bytes + 200 }]);
  });

  it('refuses a log that is shorter, longer, or begins otherwise, saying what it found', async () => {
    const short = manifestText(logOf(manifest.slice(0, 30)), 'ns', { podName: 'p', text: 'apiVersion', bytes, whole: false });
    await expect(short).rejects.toThrow(
      new ManifestReadError(
        `the log of pod ns/p holds only 30 bytes of the ${bytes}-byte manifest the pod reported (was the log rotated?)`,
      ),
    );
    const long = manifestText(logOf(`${manifest}warning: stray\n`), 'ns', { podName: 'p', text: 'apiVersion', bytes, whole: false });
    await expect(long).rejects.toThrow(`goes on after the ${bytes}-byte manifest the pod reported: "warning: stray\\n"`);
    const other = manifestText(logOf(manifest), 'ns', { podName: 'p', text: 'kind: Secret', bytes, whole: false });
    await expect(other).rejects.toThrow('does not begin with the manifest the pod reported');
  });

  it('puts the text in place of manifestFrom', () => {
    const t = withManifest({ name: 't', resource: { action: 'create', manifestFrom: { artifact: { name: 'm' } } } }, 'kind: X');
    expect(t.resource).toEqual({ action: 'create', manifest: 'kind: X' });
  });
});
