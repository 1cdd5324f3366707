// svc-agent entry point (bin/svc-agent.js): load the environment, start, stop on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config.js';
import { Agent } from './agent.js';

async function main(): Promise<void> {
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
