// What the trigger routes and the webhook receiver need from the cluster (a port; the kube
// adapter is kube-store.ts). Every read a request makes is by key or by index: nothing here
// lists a namespace.
import type { FireAnswer, Project, Session, Trigger, TriggerFire } from '../../resources/index.js';

export interface TriggerStore {
  /** The API's one Project lookup (project-lookup.ts): undefined for an unknown Project or one being deleted. */
  findProject(namespace: string, uid: string): Promise<Project | undefined>;
  /** The Triggers the project owns. */
  triggers(project: Project): Trigger[];
  /** The value of one key of a Secret, if the Secret and the key exist (up to a few seconds old: a delivery's read). */
  secretValue(namespace: string, secretName: string, key: string): Promise<string | undefined>;
  /** The keys of a Secret with a non-empty value, read now (what a person is shown); empty when there is no Secret. */
  setSecretKeys(namespace: string, secretName: string): Promise<Set<string>>;
  /** The Sessions of the namespace that hold a slot of the cap. */
  slotHolders(namespace: string): Session[];
  /** The Sessions a trigger started (what a reuse fire re-prompts). */
  sessionsOf(trigger: Trigger): Session[];
  /** The pending fires of the namespace: the queue. */
  pendingFires(namespace: string): TriggerFire[];
  /** One fire by name, from the cache. */
  fire(namespace: string, name: string): TriggerFire | undefined;
  /** The fires a trigger owns. */
  firesOf(trigger: Trigger): TriggerFire[];
  /** The answer a pruned delivery fire was given (the delivery ledger), undefined when none is recorded. */
  prunedAnswer(namespace: string, fireName: string): FireAnswer | undefined;
  /** One fire read live (the cache may not have it yet), undefined when there is none. */
  readFire(namespace: string, name: string): Promise<TriggerFire | undefined>;
  /** One Session read live (the cache may not have it yet), undefined when there is none. */
  readSession(namespace: string, name: string): Promise<Session | undefined>;
  /** The account's concurrent-session cap. */
  cap(namespace: string): Promise<number>;
  /** Creates the fire; resolves with `existing` when a fire of that name is already there. */
  createFire(fire: TriggerFire): Promise<{ created: TriggerFire } | { existing: TriggerFire }>;
  /** Marks the trigger for resume (svc.dev/resume annotation). */
  resume(trigger: Trigger, token: string): Promise<Trigger>;
  recordEvent(obj: Trigger, event: { type: 'Normal' | 'Warning'; reason: string; message: string }): Promise<void>;
}
