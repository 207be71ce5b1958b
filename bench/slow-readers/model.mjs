// The fake model of the slow-readers benchmark, in a process of its own (started by main.mjs with
// an IPC channel), so that its work lands neither on claw-server nor on the benchmark's clients:
// the FakeOpenAIServer of @claw/testing on 127.0.0.1 (an OS-chosen port). Every request gets the
// same long answer, streamed as fast as it can be: `deltas` text chunks of four characters.
//
// argv: deltas. IPC: it sends {type: 'ready', baseURL} once listening and exits on {type: 'exit'}
// (or when main.mjs goes away).
import { FakeOpenAIServer } from '@claw/testing/node';

const deltas = Number(process.argv[2] ?? 150_000);
// Four characters each, all different (base 36): the answer is 4 × `deltas` characters.
const pieces = Array.from({ length: deltas }, (_, index) => index.toString(36).padStart(4, '0'));

const server = await FakeOpenAIServer.start({
  turns: () => {
    // Its record of requests is not needed; it would only grow.
    server.requests.length = 0;
    return { textChunks: pieces, usage: { promptTokens: 100, completionTokens: deltas } };
  },
});

const exit = () => void server.close().finally(() => process.exit(0));
process.on('message', (message) => {
  if (message?.type === 'exit') exit();
});
process.on('disconnect', exit);
process.send({ type: 'ready', baseURL: server.baseURL });
