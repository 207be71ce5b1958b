// The 50th client of the slow-reader phase, in a process of its own, so that what it receives
// (or does not) costs the benchmark's measuring clients nothing. It connects to claw-server's
// /ws, says hello, opens a session, and on {type: 'go', answer} prompts a long answer (`long: …`
// or `flood: …`, see model.mjs). At
// the answer's first text delta it tells the benchmark, and in mode `stop` it stops reading: the
// socket is paused (`ws.pause()`), so the kernel's buffers fill and then the server's outbound
// queue does. In mode `leave` it disconnects there (the task goes on with nobody watching: the
// server's load without the client). In mode `read` it reads and drops everything, as a client
// that keeps up.
//
// argv: port, token, mode. IPC out: {type: 'ready', localPort}, {type: 'streaming'},
// {type: 'closed', code, reason, bytes, events, lastSeq}. IPC in: {type: 'go'}, {type: 'resume'}
// (read again: what the kernel holds, then the end of the connection), {type: 'exit'}.
import { Client } from './harness.mjs';

const [port, token, mode] = process.argv.slice(2);
let bytes = 0;
let events = 0;
let lastSeq = 0;
let streaming = false;
const client = await Client.connect(Number(port), (text, type) => {
  bytes += text.length;
  events += 1;
  if (type === 'text_delta') {
    lastSeq = Number(/"seq":(\d+)/.exec(text)?.[1] ?? lastSeq);
    if (!streaming) {
      streaming = true;
      if (mode === 'stop') client.ws.pause();
      else if (mode === 'leave') client.ws.close(1000, 'leaving');
      process.send({ type: 'streaming' });
    }
  }
});
await client.hello(token);
await client.open();
void client.closed.then(({ code, reason }) => {
  process.send({ type: 'closed', code, reason, bytes, events, lastSeq });
});
process.on('message', (message) => {
  if (message?.type === 'go') {
    client.send({ type: 'prompt', content: `${message.answer}: write a long answer` });
  } else if (message?.type === 'resume') {
    client.ws.resume();
  } else if (message?.type === 'exit') {
    client.terminate();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', localPort: client.ws._socket.localPort });
