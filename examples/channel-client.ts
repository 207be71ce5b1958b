// A client of claw-server's channel protocol over WebSocket: send a prompt, print the streamed
// answer, answer approval questions. The schemas and types are @claw/channel's.
// Run: claw-server in a project, then
//   CLAW_SERVER_TOKEN=… node dist/channel-client.js "what is in this project?"
import { protocolVersion, serverEventSchema, type ClientMessage } from '@claw/channel/protocol';
import WebSocket from 'ws';

const socket = new WebSocket(process.env.CLAW_SERVER_URL ?? 'ws://127.0.0.1:8081/ws');
const send = (message: ClientMessage) => socket.send(JSON.stringify(message));

socket.on('open', () => {
  send({ type: 'hello', token: process.env.CLAW_SERVER_TOKEN ?? '', protocol: protocolVersion });
  // Without a session_id the server opens a new session for this connection.
  send({ type: 'prompt', content: process.argv[2] ?? 'What is in this project?' });
});

// Each message is one JSON event (ws hands text over as a Buffer).
socket.on('message', (data: Buffer) => {
  const parsed = serverEventSchema.safeParse(JSON.parse(data.toString('utf8')));
  if (!parsed.success) return; // a newer server's event: skip it
  const event = parsed.data;
  if (event.type === 'session_opened') console.log(`session ${event.session_id}`);
  if (event.type === 'text_delta') process.stdout.write(event.content);
  if (event.type === 'tool_call') console.log(`\n> ${event.tool_name} ${event.arguments}`);
  if (event.type === 'approval_request') {
    console.log(`\n? ${event.tool_name}: ${event.reason.split('\n')[0]} (allowing once)`);
    send({ type: 'approval_response', request_id: event.request_id, decision: 'allow_once' });
  }
  if (event.type === 'task_completed' || event.type === 'task_failed' || event.type === 'task_canceled') {
    console.log(`\n${event.type}`);
    socket.close();
  }
  if (event.type === 'error') {
    console.error(`\nserver: ${event.code}: ${event.message}`);
    process.exitCode = 1;
    socket.close();
  }
});
socket.on('error', (error) => {
  console.error(`cannot reach claw-server: ${error.message}`);
  process.exitCode = 1;
});
