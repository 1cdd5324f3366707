// The daemon's health, the same for every provider: the schema and its reader live in
// src/lib/daemon-health.ts (shared with svc-agent, which writes it).
export {
  DaemonHealthSchema, engineBusy, readDaemonHealth, type DaemonCheckpoint, type DaemonHealth, type DaemonProgress,
} from '../lib/daemon-health.js';
