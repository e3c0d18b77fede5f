/**
 * The layout of a step pod, shared by the pod builder (which writes it into the spec), the
 * executor (`plugflow executor install|wait`, which runs inside the pod) and the pod observer
 * (which reads what the pod reported). One place, so a path or a name is never spelled twice.
 *
 * How a step pod reports its outputs (no API writes from the pod):
 *   init     copies the static `emissary` binary into the shared emptyDir VAR_DIR, and fetches
 *            the input artifacts into VAR_DIR/inputs/<name> (mounted at their paths in main)
 *   main     runs `VAR_DIR/emissary -- <command> [script] <args>`; the emissary tees stdout,
 *            copies the declared output files, packs the output artifacts into
 *            VAR_DIR/artifacts/<name> and writes the exit code, then `main.done`
 *   wait     waits for `main.done`, uploads the packed artifacts, and writes a WaitReport (JSON)
 *            to its termination message file, which the kubelet copies into the pod status
 *   sidecars run under `emissary --sidecar`, which stops them once `main.done` appears
 */

/** The emptyDir shared by init, main, wait and the sidecars. */
export const VAR_VOLUME = 'plugflow-var';
export const VAR_DIR = '/var/run/plugflow';

/** Files inside VAR_DIR (the emissary writes them; see emissary/main.go). */
export const EMISSARY_PATH = `${VAR_DIR}/emissary`;
export const SCRIPT_PATH = `${VAR_DIR}/script`;
export const STDOUT_FILE = 'stdout';
export const OUTPUTS_DIR = 'outputs';
export const EXIT_CODE_FILE = 'main.exitcode';
export const DONE_FILE = 'main.done';
export const HEARTBEAT_FILE = 'main.alive';
/** archiveLogs: the main container's stdout and stderr, packed as the artifact main-logs. */
export const MAIN_LOG_FILE = `${VAR_DIR}/main.log`;
export const ENV_ARCHIVE_LOGS = 'PLUGFLOW_ARCHIVE_LOGS';
/** The artifact GC pod's main container: the locations to delete (JSON; src/pod-side/artifact-gc.ts). */
export const ENV_GC_ARTIFACTS = 'PLUGFLOW_GC_ARTIFACTS';

/** Environment variables the pod builder sets and the emissary / executor read. */
export const ENV_SCRIPT = 'PLUGFLOW_SCRIPT';
export const ENV_OUTPUTS = 'PLUGFLOW_OUTPUTS';
export const ENV_VAR_DIR = 'PLUGFLOW_VAR_DIR';
/** Artifact plans (src/artifacts/plan.ts): init fetches, the emissary packs, wait uploads. */
export const ENV_INPUT_ARTIFACTS = 'PLUGFLOW_INPUT_ARTIFACTS';
export const ENV_PACK_ARTIFACTS = 'PLUGFLOW_ARTIFACTS';
export const ENV_OUTPUT_ARTIFACTS = 'PLUGFLOW_OUTPUT_ARTIFACTS';
/** A data template's listing and transformation (DataPlan, JSON), for `plugflow executor data`. */
export const ENV_DATA = 'PLUGFLOW_DATA';
/**
 * Pod annotation with the output artifacts' records (JSON list, Secret references only): where
 * the wait container uploads them, read back by the pod observer once it reports them. On the
 * metadata, because the controller caches pods without their spec.
 */
export const ANNOTATION_OUTPUT_ARTIFACTS = 'workflows.plugflow.io/output-artifacts';
/** Inside VAR_DIR: fetched inputs (`inputs/<name>`) and packed outputs (`artifacts/<name>`). */
export const INPUT_ARTIFACTS_DIR = 'inputs';
export const PACKED_ARTIFACTS_DIR = 'artifacts';
/** Where `plugflow executor install` finds the emissary binary (set by images and the runner). */
export const ENV_EMISSARY = 'PLUGFLOW_EMISSARY';
/** The emissary's location inside the plugflow image, when ENV_EMISSARY is not set. */
export const DEFAULT_EMISSARY_SOURCE = '/usr/local/bin/plugflow-emissary';

/** Kubernetes' default terminationMessagePath, where the wait container writes its report. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** The kubelet keeps at most this many bytes of a container's termination message. */
export const TERMINATION_MESSAGE_LIMIT = 4096;

/** The wait container reads the heartbeat as dead after this long without main.done. */
export const HEARTBEAT_STALE_MS = 30_000;

/** One element of PLUGFLOW_OUTPUTS: an output parameter read from a file of the main container. */
export interface OutputFileSpec {
  name: string;
  path: string;
  /** Used when the file does not exist (the parameter's `valueFrom.default`). */
  default?: string;
}

/** Label value of LABEL_COMPONENT on step pods. */
export const COMPONENT_STEP = 'step';

/**
 * A resource template's `manifestFrom.artifact`: a pod of the step's own fetches that input
 * artifact like any other and prints it (`plugflow executor manifest`); the controller's
 * resource runner takes the text from the wait report, or from the container's log when the
 * report could hold only its beginning. Larger manifests are refused in the pod.
 */
export const MANIFEST_MAX_BYTES = 1024 * 1024;
