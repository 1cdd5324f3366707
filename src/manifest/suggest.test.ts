import { describe, expect, it } from 'vitest';
import { checkManifest } from './check.js';
import { listTriggers } from './listing.js';
import { closestKey, editDistance } from './suggest.js';

const yaml = (text: string) => checkManifest('svc.yaml', text);

describe('misspelled keys: "did you mean"', () => {
  it('a misspelled required key is named in the missing-key issue', () => {
    const check = yaml('svc_version: 2\ndefault_agnet: build\nagents:\n  build: {}\n');
    expect(check.valid).toBe(false);
    expect(check.issues).toEqual([{ path: '/default_agent', message: 'is required (unknown key default_agnet: did you mean default_agent?)' }]);
    expect(check.warnings).toEqual([]);
  });

  it('a misspelled cron of a trigger, in the manifest check and in the trigger listing', () => {
    const check = yaml('svc_version: 2\ndefault_agent: build\nagents:\n  build: {}\ntriggers:\n  - slug: nightly\n    type: cron\n    crn: "0 0 3 * * *"\n    prompt: hi\n');
    expect(check.issues).toEqual([{ path: '/triggers/0/cron', message: 'a cron trigger needs cron (alias schedule) or run_at (alias runAt) (unknown key crn: did you mean cron?)' }]);
    expect(listTriggers(check).errors).toEqual([{ index: 0, slug: 'nightly', messages: ['cron: a cron trigger needs cron (alias schedule) or run_at (alias runAt) (unknown key crn: did you mean cron?)'] }]);
  });

  it('a misspelled alias counts for its field', () => {
    const check = yaml('svc_version: 2\ndefault_agent: build\nagents:\n  build: {}\ntriggers:\n  - slug: hook\n    type: webhook\n    secretEnvv: HOOK\n    prompt: hi\n');
    expect(check.issues[0]!.message).toMatch(/needs secret_env .* \(unknown key secretEnvv: did you mean secretEnv\?\)$/);
  });

  it('a key of a closed object (version 2 agent) gets the suggestion in its own issue', () => {
    const check = yaml('svc_version: 2\ndefault_agent: build\nagents:\n  build:\n    workspce: branch\n');
    expect(check.issues).toEqual([{ path: '/agents/build/workspce', message: 'is not an allowed key here: did you mean workspace?' }]);
  });

  it('an unknown key that only looks misspelled is a warning; the manifest stays valid (extra keys are allowed)', () => {
    const check = yaml('svc_version: 2\ndefault_agent: build\nagents:\n  build: {}\ntriggers:\n  - slug: nightly\n    type: cron\n    cron: "0 0 3 * * *"\n    timezon: Europe/Paris\n    prompt: hi\nprojet:\n  name: x\nmy_notes: free text\n');
    expect(check.valid).toBe(true);
    expect(check.issues).toEqual([]);
    expect(check.warnings).toEqual([
      { path: '/projet', message: 'unknown key: did you mean project? (unknown keys are allowed here and ignored)' },
      { path: '/triggers/0/timezon', message: 'unknown key: did you mean timezone? (unknown keys are allowed here and ignored)' },
    ]);
  });

  it('closestKey: small edits, case and separators; nothing for unrelated keys', () => {
    const known = ['default_agent', 'cron', 'run_at', 'agents', 'env'];
    expect(closestKey('default_agnet', known)).toBe('default_agent');
    expect(closestKey('defaultAgent', known)).toBe('default_agent');
    expect(closestKey('crn', known)).toBe('cron');
    expect(closestKey('runat', known)).toBe('run_at');
    expect(closestKey('cron', known)).toBeNull();
    expect(closestKey('my_notes', known)).toBeNull();
    expect(closestKey('abc', known)).toBeNull(); // short keys need to be very close
    expect(editDistance('agnet', 'agent')).toBe(1);
  });
});
