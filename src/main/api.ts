// The API process: `node dist/src/main/api.js`. Its settings and wiring: api-root.ts.
import { compositionRoot } from './entry.js';

await import(compositionRoot(import.meta.url, 'api').href);
