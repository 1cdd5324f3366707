/** `kubectl get` printer columns of every kind. */
import { CHANGE_REQUEST, PROJECT, SANDBOX, SESSION, TRIGGER, TRIGGER_FIRE } from '../resources/index.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const ready: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'The Ready condition.',
};
const reason: PrinterColumn = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
  priority: 1,
};

export const PRINTER_COLUMNS: Record<string, PrinterColumn[]> = {
  [PROJECT.kind]: [
    ready,
    { name: 'Branch', type: 'string', jsonPath: '.spec.defaultBranch' },
    { name: 'Manifest', type: 'string', jsonPath: '.status.manifest.summary', description: 'The default-branch manifest: valid or invalid, with its version, or missing.' },
    { name: 'Triggers', type: 'integer', jsonPath: '.status.triggerCount', description: 'How many valid triggers the default-branch manifest declares.' },
    { name: 'Sha', type: 'string', jsonPath: '.status.defaultBranchSha', priority: 1 },
    // the redacted copy: the spec may carry a credential (docs/api.md)
    { name: 'Repo', type: 'string', jsonPath: '.status.repoUrl', priority: 1 },
    reason,
    age,
  ],
  [SESSION.kind]: [
    { name: 'Status', type: 'string', jsonPath: '.status.status' },
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name' },
    { name: 'Agent', type: 'string', jsonPath: '.status.agent' },
    { name: 'Base', type: 'string', jsonPath: '.spec.baseRef', priority: 1 },
    { name: 'Trigger', type: 'string', jsonPath: '.spec.triggerRef.name', priority: 1 },
    reason,
    age,
  ],
  [SANDBOX.kind]: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Provider', type: 'string', jsonPath: '.spec.provider' },
    { name: 'Session', type: 'string', jsonPath: '.spec.sessionRef.name' },
    { name: 'Address', type: 'string', jsonPath: '.status.address', priority: 1 },
    { name: 'Restarts', type: 'integer', jsonPath: '.status.engineRestarts', priority: 1 },
    age,
  ],
  [TRIGGER.kind]: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Schedule', type: 'string', jsonPath: '.spec.cron' },
    { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
    { name: 'Last-Fired', type: 'date', jsonPath: '.status.lastFiredAt' },
    { name: 'Next-Fire', type: 'string', jsonPath: '.status.nextFireAt' },
    { name: 'Paused', type: 'boolean', jsonPath: '.status.paused' },
    { name: 'Run-At', type: 'string', jsonPath: '.spec.runAt', priority: 1 },
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', priority: 1 },
    age,
  ],
  [TRIGGER_FIRE.kind]: [
    { name: 'Trigger', type: 'string', jsonPath: '.spec.triggerRef.name' },
    { name: 'Source', type: 'string', jsonPath: '.spec.source' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Position', type: 'integer', jsonPath: '.status.queuePosition' },
    { name: 'Session', type: 'string', jsonPath: '.status.sessionName' },
    { name: 'Reason', type: 'string', jsonPath: '.status.reason', priority: 1 },
    { name: 'Fired-At', type: 'date', jsonPath: '.spec.firedAt', priority: 1 },
    age,
  ],
  [CHANGE_REQUEST.kind]: [
    { name: 'Number', type: 'integer', jsonPath: '.spec.number' },
    { name: 'Status', type: 'string', jsonPath: '.status.status' },
    { name: 'Head', type: 'string', jsonPath: '.spec.headRef' },
    { name: 'Base', type: 'string', jsonPath: '.spec.baseRef' },
    { name: 'Title', type: 'string', jsonPath: '.spec.title', priority: 1 },
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', priority: 1 },
    age,
  ],
};
