/**
 * The shape of `plugin.yaml` (spec document 000 "ExecutorPlugin") and of the sidecar container
 * (document 002 "Container field set"), for strict reading: a field not listed here is a typo
 * or a field plugflow would silently drop, so it is an error.
 *
 * SecurityContext and Lifecycle are not detailed by the spec; their usual Kubernetes fields are
 * listed so that real plugins validate.
 */
import { any, bool, int, intOrString, list, map, obj, quantity, str, type Shape } from './strict-shape.js';

const keySelector = obj({ key: str, name: str, optional: bool }, ['key']);
const fieldSelector = obj({ apiVersion: str, fieldPath: str }, ['fieldPath']);
const resourceFieldSelector = obj({ containerName: str, divisor: quantity, resource: str }, ['resource']);

const envVar = obj(
  {
    name: str,
    value: str,
    valueFrom: obj({
      configMapKeyRef: keySelector,
      fieldRef: fieldSelector,
      resourceFieldRef: resourceFieldSelector,
      secretKeyRef: keySelector,
    }),
  },
  ['name'],
);

const envFrom = obj({
  configMapRef: obj({ name: str, optional: bool }),
  prefix: str,
  secretRef: obj({ name: str, optional: bool }),
});

const port = int(1, 65535);

const containerPort = obj({ containerPort: port, hostIP: str, hostPort: port, name: str, protocol: str }, ['containerPort']);

const volumeMount = obj(
  { mountPath: str, mountPropagation: str, name: str, readOnly: bool, subPath: str, subPathExpr: str, recursiveReadOnly: str },
  ['mountPath', 'name'],
);

const resources = obj({ limits: map(quantity), requests: map(quantity), claims: list(obj({ name: str, request: str }, ['name'])) });

const execAction = obj({ command: list(str) });
const httpGet = obj(
  { host: str, httpHeaders: list(obj({ name: str, value: str }, ['name', 'value'])), path: str, port: intOrString, scheme: str },
  ['port'],
);
const tcpSocket = obj({ host: str, port: intOrString }, ['port']);
const grpc = obj({ port, service: str }, ['port']);

const probe = obj({
  exec: execAction,
  failureThreshold: int(1),
  grpc,
  httpGet,
  initialDelaySeconds: int(0),
  periodSeconds: int(1),
  successThreshold: int(1),
  tcpSocket,
  terminationGracePeriodSeconds: int(1),
  timeoutSeconds: int(1),
});

const lifecycleHandler = obj({ exec: execAction, httpGet, tcpSocket, sleep: obj({ seconds: int(0) }, ['seconds']) });

const seLinuxOptions = obj({ level: str, role: str, type: str, user: str });
const seccompProfile = obj({ localhostProfile: str, type: str }, ['type']);
const vendorQOptions = obj({ gmsaCredentialSpec: str, gmsaCredentialSpecName: str, hostProcess: bool, runAsUserName: str });

const securityContext = obj({
  allowPrivilegeEscalation: bool,
  appArmorProfile: obj({ localhostProfile: str, type: str }, ['type']),
  capabilities: obj({ add: list(str), drop: list(str) }),
  privileged: bool,
  procMount: str,
  readOnlyRootFilesystem: bool,
  runAsGroup: int(0),
  runAsNonRoot: bool,
  runAsUser: int(0),
  seLinuxOptions,
  seccompProfile,
  vendorQOptions,
});

/** The container field set of spec document 002. */
export const containerShape: Shape = obj(
  {
    args: list(str),
    command: list(str),
    env: list(envVar),
    envFrom: list(envFrom),
    image: str,
    imagePullPolicy: str,
    lifecycle: obj({ postStart: lifecycleHandler, preStop: lifecycleHandler }),
    livenessProbe: probe,
    name: str,
    ports: list(containerPort),
    readinessProbe: probe,
    resources,
    securityContext,
    startupProbe: probe,
    stdin: bool,
    stdinOnce: bool,
    terminationMessagePath: str,
    terminationMessagePolicy: str,
    tty: bool,
    volumeDevices: list(obj({ devicePath: str, name: str }, ['devicePath', 'name'])),
    volumeMounts: list(volumeMount),
    workingDir: str,
  },
  ['name'],
);

/** Fields of ObjectMeta (spec document 3, "Metadata records"); the rest are written by the API server. */
export const WRITTEN_METADATA_FIELDS: readonly string[] = ['name', 'namespace', 'labels', 'annotations'];

const ownerReference = obj({ apiVersion: str, blockOwnerDeletion: bool, controller: bool, kind: str, name: str, uid: str }, [
  'apiVersion',
  'kind',
  'name',
  'uid',
]);

/** The full ObjectMeta, so that metadata copied from a real object (`creationTimestamp: null`) reads. */
const objectMeta = obj(
  {
    annotations: map(str),
    clusterName: str,
    creationTimestamp: str,
    deletionGracePeriodSeconds: int(0),
    deletionTimestamp: str,
    finalizers: list(str),
    generateName: str,
    generation: int(0),
    labels: map(str),
    managedFields: list(any),
    name: str,
    namespace: str,
    ownerReferences: list(ownerReference),
    resourceVersion: str,
    selfLink: str,
    uid: str,
  },
  ['name'],
);

/** `plugin.yaml`. */
export const executorPluginShape: Shape = obj(
  {
    apiVersion: str,
    kind: str,
    metadata: objectMeta,
    spec: obj({ sidecar: obj({ container: containerShape, automountServiceAccountToken: bool }, ['container']) }, ['sidecar']),
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);
