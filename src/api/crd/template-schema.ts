/**
 * OpenAPI schema of a Template and the records inside it, for the CRDs.
 *
 * What is typed is the skeleton users most often get wrong: names, required fields, the kind
 * sections and their enums, int-or-string fields. The big open records (container field set,
 * volumes, affinity, artifacts, security contexts, metrics) are kept as opaque objects: the API
 * server keeps them unchanged and the engine's validator checks them with better messages than a
 * schema can give.
 */
import { MERGE_STRATEGIES, RESOURCE_ACTIONS, RETRY_POLICIES } from '../values/enums.js';
import { TEMPLATE_KINDS } from '../template.js';
import {
  anyValue,
  arr,
  bool,
  emptyObject,
  int32,
  int64,
  intOrString,
  keyedList,
  mapOf,
  obj,
  oneOfStrings,
  openObject,
  str,
  stringMap,
  type Schema,
} from './schema-builders.js';

/** Names of templates, steps and tasks: letters, digits and '-', starting with a letter or digit. */
export const FIELD_NAME_PATTERN = '^[a-zA-Z0-9][-a-zA-Z0-9]*$';
export const FIELD_NAME_MAX_LENGTH = 128;

function fieldName(description: string): Schema {
  return str({ description, pattern: FIELD_NAME_PATTERN, maxLength: FIELD_NAME_MAX_LENGTH });
}

const keySelector = obj({ key: str(), name: str(), optional: bool() }, { required: ['key'] });

/** AnyString: int, float, boolean or string on input. */
const anyString = anyValue();

export const valueFromSchema = obj({
  configMapKeyRef: keySelector,
  default: anyString,
  event: str({ description: 'Expression over the event (event bindings).' }),
  expression: str(),
  jqFilter: str(),
  jsonPath: str(),
  parameter: str(),
  path: str(),
  supplied: emptyObject(),
});

export const parameterSchema = obj(
  {
    name: str({ minLength: 1 }),
    default: anyString,
    description: anyString,
    enum: arr(anyString),
    globalName: str(),
    value: anyString,
    valueFrom: valueFromSchema,
  },
  { required: ['name'] },
);

/** Artifacts are open records, but every artifact has a name. */
export const artifactSchema = obj({ name: str() }, { required: ['name'], open: true });

export const argumentsSchema = obj({
  artifacts: arr(artifactSchema),
  parameters: arr(parameterSchema),
});

export const inputsSchema = argumentsSchema;

export const outputsSchema = obj({
  artifacts: arr(artifactSchema),
  exitCode: str(),
  parameters: arr(parameterSchema),
  result: str(),
});

export const templateRefSchema = obj({
  clusterScope: bool(),
  name: str(),
  template: str(),
});

const lifecycleHookSchema = obj({
  template: str(),
  templateRef: templateRefSchema,
  arguments: argumentsSchema,
  expression: str(),
});

export const lifecycleHooksSchema = mapOf(lifecycleHookSchema, {
  description: 'Hooks by name; `exit` runs when the step, task or workflow ends.',
});

const sequenceSchema = obj({
  count: intOrString(),
  start: intOrString(),
  end: intOrString(),
  format: str(),
});

/** Fields shared by steps and DAG tasks. */
function invocationFields(): Record<string, Schema> {
  return {
    arguments: argumentsSchema,
    continueOn: obj({ error: bool(), failed: bool() }),
    hooks: lifecycleHooksSchema,
    inline: openObject({ description: 'An inline template (not validated here; the engine checks it).' }),
    onExit: str({ description: 'Deprecated: use the exit hook.' }),
    template: str(),
    templateRef: templateRefSchema,
    when: str(),
    withItems: arr(anyValue()),
    withParam: str(),
    withSequence: sequenceSchema,
  };
}

const stepSchema = obj({ name: fieldName('Step name.'), ...invocationFields() });

const dagTaskSchema = obj(
  {
    name: fieldName('Task name, unique within the DAG.'),
    dependencies: arr(str()),
    depends: str(),
    ...invocationFields(),
  },
  { required: ['name'] },
);

const dagSchema = obj(
  {
    failFast: bool(),
    target: str(),
    tasks: keyedList(dagTaskSchema, 'name'),
  },
  { required: ['tasks'] },
);

const retryStrategySchema = obj({
  affinity: obj({ nodeAntiAffinity: emptyObject() }),
  backoff: obj({
    duration: str({ description: 'Seconds by default, or forms like 2m, 1h.' }),
    factor: intOrString(),
    maxDuration: str(),
    cap: str({ description: 'The longest one wait may grow to by the factor.' }),
  }),
  expression: str(),
  limit: intOrString(),
  retryPolicy: oneOfStrings(RETRY_POLICIES),
});

const resourceSchema = obj(
  {
    action: oneOfStrings(RESOURCE_ACTIONS),
    failureCondition: str(),
    flags: arr(str()),
    manifest: str(),
    manifestFrom: obj({ artifact: artifactSchema }, { required: ['artifact'] }),
    mergeStrategy: oneOfStrings(MERGE_STRATEGIES),
    setOwnerReference: bool(),
    successCondition: str(),
  },
  { required: ['action'] },
);

const httpSchema = obj(
  {
    body: str(),
    bodyFrom: obj({ bytes: str({ format: 'byte' }) }),
    headers: arr(
      obj(
        {
          name: str(),
          value: str(),
          valueFrom: obj({ secretKeyRef: keySelector }),
        },
        { required: ['name'] },
      ),
    ),
    insecureSkipVerify: bool(),
    method: str(),
    successCondition: str(),
    timeoutSeconds: int64(),
    url: str(),
  },
  { required: ['url'] },
);

const dataSchema = obj(
  {
    source: obj({ artifactPaths: openObject() }),
    transformation: arr(obj({ expression: str() }, { required: ['expression'] })),
  },
  { required: ['source', 'transformation'] },
);

const containerSetSchema = obj(
  {
    containers: arr(obj({ name: str(), dependencies: arr(str()) }, { required: ['name'], open: true })),
    retryStrategy: obj({ duration: str(), retries: intOrString() }, { required: ['retries'] }),
    volumeMounts: arr(openObject()),
  },
  { required: ['containers'] },
);

const pluginSchema = openObject({
  description: 'The plugin section: exactly one key, the plugin name, whose value is its configuration.',
  minProperties: 1,
  maxProperties: 1,
});

const metadataSchema = obj({ annotations: stringMap(), labels: stringMap() });

/** CEL rule: exactly one kind section. */
const exactlyOneKind = {
  rule: `${TEMPLATE_KINDS.map((k) => `(has(self.${k}) ? 1 : 0)`).join(' + ')} == 1`,
  message: `must have exactly one of ${TEMPLATE_KINDS.join(', ')}`,
};

/** The Template record. Unknown fields are pruned: the spec lists all of its fields. */
export const templateSchema: Schema = obj(
  {
    name: fieldName('Template name, unique within the workflow.'),
    activeDeadlineSeconds: intOrString(),
    affinity: openObject(),
    annotations: stringMap({ description: 'Metadata of the template; workflows.plugflow.io/display-name names its node.' }),
    archiveLocation: openObject(),
    automountServiceAccountToken: bool(),
    container: openObject({ description: 'The container field set.' }),
    containerSet: containerSetSchema,
    daemon: bool(),
    dag: dagSchema,
    data: dataSchema,
    executor: obj({ serviceAccountName: str() }),
    failFast: bool(),
    hostAliases: arr(openObject()),
    http: httpSchema,
    initContainers: arr(openObject()),
    inputs: inputsSchema,
    memoize: openObject(),
    metadata: metadataSchema,
    metrics: openObject(),
    nodeSelector: stringMap(),
    outputs: outputsSchema,
    parallelism: int64(),
    plugin: pluginSchema,
    podSpecPatch: str(),
    podResources: openObject({ description: "Kubernetes' ResourceRequirements: the step pod's pod-level resources." }),
    priority: int32(),
    priorityClassName: str(),
    resource: resourceSchema,
    resourceClaims: arr(openObject(), { description: "Kubernetes' PodResourceClaims: the step pod's DRA claims." }),
    retryStrategy: retryStrategySchema,
    schedulerName: str(),
    script: obj({ source: str() }, { description: 'The container field set plus source.', required: ['source'], open: true }),
    securityContext: openObject(),
    serviceAccountName: str(),
    sidecars: arr(openObject()),
    steps: arr(arr(stepSchema), { description: 'Groups of steps; the groups run in order, the steps of a group in parallel.' }),
    suspend: obj({ duration: str({ description: 'Seconds by default, or forms like 2m, 6h, 1d.' }) }),
    synchronization: openObject(),
    timeout: str(),
    tolerations: arr(openObject()),
    volumes: arr(openObject()),
  },
  { required: ['name'], 'x-kubernetes-validations': [exactlyOneKind] },
);

export { retryStrategySchema, metadataSchema };
