// git credential helper: `credential-helper.js <socket> <get|store|erase>`. Relays git's request
// to the daemon's credential broker over its unix socket and prints the answer for git.
import net from 'node:net';

const [socketPath, operation] = process.argv.slice(2);
if (!socketPath || !operation) {
  process.stderr.write('usage: credential-helper.js <socket> <get|store|erase>\n');
  process.exit(2);
}
if (operation === 'store') process.exit(0);

let request = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { request += chunk; });
process.stdin.on('end', () => {
  const socket = net.connect(socketPath);
  let reply = '';
  socket.setEncoding('utf8');
  socket.on('connect', () => socket.end(`${operation}\n${request}`));
  socket.on('data', (chunk) => { reply += chunk; });
  socket.on('end', () => process.stdout.write(reply));
  // no answer means git falls back to its other helpers (none) and fails without prompting
  socket.on('error', () => process.exit(0));
});
