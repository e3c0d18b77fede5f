/**
 * Validation of resource templates (run by src/resources through the controller's resource
 * runner): the action and merge strategy, what each action needs, and — when they hold no
 * `{{…}}` tags — the conditions, flags and JSONPath outputs parsed exactly as they will be run,
 * so a mistake is refused on submit instead of failing the step later.
 */
import type { Template } from '../api/index.js';
import { FieldError } from '../api/index.js';
import { parseCondition } from './resource-conditions.js';
import { parseFlags } from './resource-flags.js';
import { parseJsonPath } from './resource-json-path.js';
import { errorMessage } from '../log/error-message.js';
import { tagged, type TemplateContext } from './validate-template.js';

const ACTIONS = ['get', 'create', 'apply', 'delete', 'replace', 'patch'];
const STRATEGIES = ['strategic', 'merge', 'json'];

export function validateResource(t: Template, where: string, ctx: TemplateContext): void {
  const r = t.resource;
  const outputs = t.outputs?.parameters ?? [];
  if (!r) {
    outputs.forEach((p, i) => {
      for (const key of ['jsonPath', 'jqFilter'] as const) {
        if (p.valueFrom?.[key] !== undefined) {
          ctx.add(`${where}.outputs.parameters[${i}].valueFrom.${key}`, 'reads the object of a resource template; this template has none');
        }
      }
    });
    return;
  }
  const at = `${where}.resource`;
  const add = (err: unknown): void => {
    if (err instanceof FieldError) ctx.add(err.field, err.detail);
    else ctx.add(at, errorMessage(err));
  };
  if (typeof r.action !== 'string' || !ACTIONS.includes(r.action)) {
    ctx.add(`${at}.action`, `must be one of ${ACTIONS.join(', ')}, got ${JSON.stringify(r.action)}`);
    return;
  }
  if (r.mergeStrategy !== undefined) {
    if (!STRATEGIES.includes(r.mergeStrategy))
      ctx.add(`${at}.mergeStrategy`, `must be one of ${STRATEGIES.join(', ')}, got ${JSON.stringify(r.mergeStrategy)}`);
    else if (r.action !== 'patch') ctx.add(`${at}.mergeStrategy`, `is for action patch, not ${r.action}`);
  }
  const hasManifest = typeof r.manifest === 'string' && r.manifest.trim() !== '';
  checkManifestFrom(t, where, hasManifest, ctx);
  if (['create', 'apply', 'replace', 'patch'].includes(r.action) && !hasManifest && r.manifestFrom === undefined) {
    ctx.add(`${at}.manifest`, `is required for action ${r.action}`);
  }
  if (!hasManifest && r.manifestFrom === undefined && (r.flags ?? []).length === 0) {
    ctx.add(at, 'needs a manifest or flags naming the object (as the peer: "Must provide at least one of flags or manifest")');
  }
  if (r.action === 'delete') {
    for (const key of ['successCondition', 'failureCondition'] as const) {
      if (r[key]) ctx.add(`${at}.${key}`, 'means nothing for action delete: the object is gone');
    }
    if (outputs.length > 0) ctx.add(`${where}.outputs.parameters`, 'a delete has no object to read outputs from');
  }
  if (r.setOwnerReference === true && !['create', 'apply', 'replace'].includes(r.action)) {
    ctx.add(`${at}.setOwnerReference`, `is for actions create, apply and replace, not ${r.action}`);
  }
  for (const key of ['successCondition', 'failureCondition'] as const) {
    const text = r[key];
    if (typeof text === 'string' && !tagged(text)) {
      try {
        parseCondition(text, `${at}.${key}`);
      } catch (err) {
        add(err);
      }
    }
  }
  if (r.flags !== undefined) {
    if (!Array.isArray(r.flags) || r.flags.some((f) => typeof f !== 'string')) ctx.add(`${at}.flags`, 'must be a list of strings');
    else if (!r.flags.some(tagged)) {
      try {
        parseFlags(r.flags, r.action, `${at}.flags`);
      } catch (err) {
        add(err);
      }
    }
  }
  outputs.forEach((p, i) => {
    const path = p.valueFrom?.jsonPath;
    if (typeof path === 'string' && !tagged(path)) {
      try {
        parseJsonPath(path, `${where}.outputs.parameters[${i}].valueFrom.jsonPath`);
      } catch (err) {
        add(err);
      }
    }
  });
}

/**
 * `manifestFrom.artifact` names one of the template's input artifacts, which needs a path (the
 * manifest pod places it there); `manifest` is then left out. A resource template runs no
 * container of the user's, so any other input artifact would be fetched for nothing.
 */
function checkManifestFrom(t: Template, where: string, hasManifest: boolean, ctx: TemplateContext): void {
  const at = `${where}.resource`;
  const from = t.resource?.manifestFrom;
  const inputs = t.inputs?.artifacts ?? [];
  const named = from?.artifact?.name;
  if (from !== undefined) {
    if (hasManifest) ctx.add(`${at}.manifestFrom`, 'give the manifest or manifestFrom, not both');
    if (typeof named !== 'string' || named === '')
      ctx.add(`${at}.manifestFrom.artifact.name`, 'must name an input artifact of the template');
    else {
      const input = inputs.find((a) => a.name === named);
      if (!input) {
        const have = inputs.map((a) => a.name).join(', ');
        ctx.add(`${at}.manifestFrom.artifact.name`, `names no input artifact of the template (inputs.artifacts: ${have || 'none'})`);
      } else if (!input.path) {
        ctx.add(
          `${at}.manifestFrom.artifact.name`,
          `names input artifact "${named}", which needs a path: the pod that fetches the manifest places it there`,
        );
      }
    }
  }
  inputs.forEach((a, i) => {
    if (a.name !== named)
      ctx.add(
        `${where}.inputs.artifacts[${i}]`,
        'a resource template runs no container to place it in; only the input artifact resource.manifestFrom.artifact names is read, as the manifest',
      );
  });
}
