/**
 * How `plugflow dev` runs once the system is up, in both modes: the banner, the sample workflows,
 * then either --exit (stop, exit code from the samples) or run until Ctrl-C / SIGTERM, which stop
 * what was started before exiting.
 */
import { errorMessage } from '../log/error-message.js';

export const STOP_TIMEOUT_MS = 30_000;

/**
 * Both modes once they are up: Ctrl-C / SIGTERM stop them (a stop that hangs past
 * STOP_TIMEOUT_MS exits anyway, which kills the children: parent-death signal, kill on exit; a
 * second signal exits at once), the banner, the sample workflows, then --exit or run on.
 */
export async function serveUntilStopped(o: {
  flags: { submit: string[]; exit?: boolean };
  say: (line: string) => void;
  stopping: string;
  stop: () => Promise<void>;
  banner: string[];
  sample: (file: string) => Promise<boolean>;
}): Promise<number> {
  const { say } = o;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say(o.stopping);
    const timer = setTimeout(() => {
      say(`stopping took longer than ${STOP_TIMEOUT_MS / 1000}s; exiting, which kills what is left`);
      process.exit(code || 1);
    }, STOP_TIMEOUT_MS);
    await o.stop().catch((err: unknown) => say(errorMessage(err)));
    clearTimeout(timer);
    process.exit(code);
  };
  const onSignal = () => {
    if (!stopping) return void stop(0);
    say('second signal: exiting at once, which kills what is left');
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  console.log(['', ...o.banner, ''].join('\n'));
  let ok = true;
  for (const file of o.flags.submit) ok = (await o.sample(file)) && ok;
  if (o.flags.exit) {
    await stop(ok ? 0 : 1);
    return ok ? 0 : 1;
  }
  say('running; press Ctrl-C to stop');
  // A promise that never settles holds nothing open: with the controller and server in the cluster
  // (--node=kubelet) nothing else keeps this process alive, so a timer does until a signal stops it.
  setInterval(() => {}, 1 << 30);
  await new Promise(() => {});
  return 0;
}
