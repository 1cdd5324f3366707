// The operator of bench/triggers, in its own process: the Trigger controller (status, retention,
// the delivery ledger) and the TriggerFire controller exactly as src/main/operator-root.ts composes
// them, on one namespace (BENCH_NAMESPACE). In place of the Session and Sandbox controllers, a
// stand-in ends every new Session at once (status `stopped`, as the Session controller writes it
// for a session stopped before it ran): fires finish and retention runs as in a deployment, and
// no git push or sandbox competes for the machine with what is measured. Prints "leading" when
// its caches synced. Run by bench/triggers/main.ts (node --import tsx).
import { triggerController } from '../../controllers/trigger/controller.js';
import { triggerFireController } from '../../controllers/triggerfire/controller.js';
import { KubeClient, loadClusterConfig } from '../../src/kube/index.js';
import { Manager, objectController } from '../../src/runtime/index.js';
import { DEFAULT_FIRE_HISTORY, SESSION, setCondition, type Session, type SessionStatus } from '../../src/resources/index.js';

const client = new KubeClient(loadClusterConfig({ file: process.env.KUBECONFIG! }), 'bench-operator');
const manager = new Manager({ client, namespace: process.env.BENCH_NAMESPACE, leaderElection: false, log: (line) => process.stderr.write(`${line}\n`) });
manager.add(triggerController({ history: Number(process.env.SVC_TRIGGER_FIRE_HISTORY ?? DEFAULT_FIRE_HISTORY) }));
manager.add(triggerFireController());
manager.add(objectController<Session, Record<string, never>>({
  name: 'session-stand-in',
  for: SESSION,
  concurrency: 16,
  observe: async () => ({}),
  compute: (session, _facts, now): { status: SessionStatus } => (session.status?.status ? { status: session.status } : {
    status: {
      status: 'stopped', reason: 'Stopped',
      conditions: setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Stopped', message: 'ended by the bench' }, now),
    },
  }),
}));
await manager.start();
process.stdout.write('bench operator: leading\n');
process.on('SIGTERM', () => { void manager.stop().then(() => process.exit(0)); });
