// svc-agent entry point (bin/svc-agent.js): load the environment, start, stop on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config.js';
import { Agent } from './agent.js';
import { WARM_SETTINGS } from '../src/lib/warm-sandbox.js';
import { readWarmSettings, takeWarmSettings } from './warm.js';

async function main(): Promise<void> {
  if (process.env[WARM_SETTINGS] !== undefined) {
    // a warm sandbox: loaded ahead of its session, whose settings come now
    const settings = await readWarmSettings(process.stdin);
    if (settings === null) process.exit(0); // the operator went away: no session comes
    const unshown = takeWarmSettings(settings);
    if (unshown) process.stderr.write(`svc-agent: /proc/${process.pid}/environ keeps the warm sandbox's environment: ${unshown}\n`);
  }
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc-agent: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const agent = new Agent(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`svc-agent: ${signal}, stopping\n`);
    agent.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('exit', () => agent.engine.killNow());
  const port = await agent.start();
  process.stdout.write(`svc-agent listening on http://${config.serviceHost}:${port}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`svc-agent: ${err.message}\n`);
  process.exit(1);
});
