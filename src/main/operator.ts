// The operator process: `node dist/src/main/operator.js`. Its settings and wiring: operator-root.ts.
import { compositionRoot } from './entry.js';

await import(compositionRoot(import.meta.url, 'operator').href);
